"""``python -m wfeval``: compose the config with Hydra and run one evaluation per job.

Config errors (unknown option, typo, wrong type, bad override) print one paragraph and exit 2;
``HYDRA_FULL_ERROR=1`` shows the full traceback instead.
"""

from __future__ import annotations

import os
import sys

import hydra
from omegaconf import DictConfig

from wfeval.config import ConfigError, register_schemas
from wfeval.config.errors import friendly_message

register_schemas()

_USER_FULL_ERROR = os.environ.get("HYDRA_FULL_ERROR")


@hydra.main(version_base="1.3", config_path="pkg://wfeval.conf", config_name="config")
def _run_job(cfg: DictConfig) -> None:
    _restore_full_error_setting()
    from hydra.core.hydra_config import HydraConfig

    from wfeval.pipeline.runner import run_from_config

    try:
        run_from_config(cfg, output_dir=HydraConfig.get().runtime.output_dir)
    except ConfigError as exc:
        if _USER_FULL_ERROR == "1":
            raise
        print(friendly_message(exc), file=sys.stderr)
        sys.exit(2)


def _restore_full_error_setting() -> None:
    if _USER_FULL_ERROR is None:
        os.environ.pop("HYDRA_FULL_ERROR", None)
    else:
        os.environ["HYDRA_FULL_ERROR"] = _USER_FULL_ERROR


def main() -> None:
    """Console entry (``wfeval`` and ``python -m wfeval``)."""
    # Let Hydra raise instead of printing and exiting 1, so config errors can exit 2 here.
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        _run_job()
    except Exception as exc:
        _restore_full_error_setting()
        message = friendly_message(exc)
        if message is None or _USER_FULL_ERROR == "1":
            raise
        print(message, file=sys.stderr)
        sys.exit(2)
    finally:
        _restore_full_error_setting()


if __name__ == "__main__":
    main()
