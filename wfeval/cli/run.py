"""``python -m wfeval``: compose the config with Hydra and run one evaluation per job.

Config errors (unknown option, typo, wrong type, bad override) print one paragraph and exit 2;
``HYDRA_FULL_ERROR=1`` shows the full traceback instead. SIGINT / SIGTERM exit 130 / 143 and
leave a resumable run; a storage error or a model whose setup() fails exits 1 (docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from typing import Any, Callable

import hydra
from omegaconf import DictConfig

from wfeval.config import ConfigError
from wfeval.config.errors import friendly_message
from wfeval.pipeline.failure import CleanError, describe_os_error, interruption, signals_raise
from wfeval.schemas import register_schemas

register_schemas()

_USER_FULL_ERROR = os.environ.get("HYDRA_FULL_ERROR")


@hydra.main(version_base="1.3", config_path="pkg://wfeval.conf", config_name="config")
def _run_job(cfg: DictConfig) -> None:
    _restore_full_error_setting()
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from wfeval.pipeline.runner import run_from_config
    from wfeval.utils.allocator import keep_freed_memory

    keep_freed_memory()  # a run allocates and frees large arrays over and over; also in a launcher's workers
    hydra_cfg = HydraConfig.get()
    try:
        run_from_config(cfg, output_dir=hydra_cfg.runtime.output_dir)
    except Exception as exc:
        if hydra_cfg.mode == RunMode.MULTIRUN:
            # one failed job must not hide the others: its manifest says "failed" with the error,
            # the sweep goes on, and the sweep summary lists it (exit status 1 at the end)
            message = friendly_message(exc) or (str(exc) if isinstance(exc, CleanError) else None) or \
                "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            print(f"job {hydra_cfg.job.num} failed: {message}", file=sys.stderr)
            return
        from wfeval.pipeline.generate import GenerationStopped

        if _USER_FULL_ERROR == "1" or not isinstance(exc, (ConfigError, GenerationStopped, CleanError, OSError)):
            raise
        if isinstance(exc, CleanError):  # storage, model setup: the path or the model and the cause
            print(f"wfeval: {exc}", file=sys.stderr)
            sys.exit(exc.exit_code)
        if isinstance(exc, OSError) and friendly_message(exc) is None:
            print(f"wfeval: storage error: {describe_os_error(exc)}", file=sys.stderr)
            sys.exit(1)
        if isinstance(exc, GenerationStopped):  # the run's own failure policy: a result, not a bug
            print(f"Run stopped: {exc}\n(manifest.json records it; finished samples stay cached)", file=sys.stderr)
            sys.exit(1)
        print(friendly_message(exc), file=sys.stderr)
        sys.exit(2)


def _restore_full_error_setting() -> None:
    if _USER_FULL_ERROR is None:
        os.environ.pop("HYDRA_FULL_ERROR", None)
    else:
        os.environ["HYDRA_FULL_ERROR"] = _USER_FULL_ERROR


def _format_config_groups(self: Any, predicate: Callable[[str], bool], compact: bool = True) -> str:
    """Hydra's group listing for ``--help``, from one config repository instead of one per group
    (Hydra copies its config repository for each of the ~95 groups it walks, and ``--help`` lists
    twice: Hydra's groups, then the app's) and without the internal ``schema/*`` groups, which are
    not options a user picks."""
    options_of = self.__dict__.get("_wfeval_group_options")
    if options_of is None:
        options_of = self.__dict__["_wfeval_group_options"] = _group_options(self.config_loader)
    lines = []
    for group in sorted(g for g in options_of if predicate(g)):
        options = options_of[group]
        lines.append(f"{group}: {', '.join(options)}" if compact
                     else f"{group}:\n" + "\n".join(f"  {o}" for o in options))
    return "".join(line + "\n" for line in lines)


def _group_options(config_loader: Any) -> dict[str, list[str]]:
    """Every config group that has options (``schema/*`` left out) → its sorted options."""
    from hydra.core.object_type import ObjectType

    _, repo = config_loader._parse_overrides_and_create_caching_repo(None, [])

    def walk(parent: str) -> list[str]:
        found = []
        for group in repo.get_group_options(parent, ObjectType.GROUP):
            name = f"{parent}/{group}" if parent else group
            if name.split("/")[0] == "schema":
                continue
            if repo.get_group_options(name, ObjectType.CONFIG):
                found.append(name)
            found += walk(name)
        return found

    return {group: sorted(repo.get_group_options(group, ObjectType.CONFIG)) for group in walk("")}


_MODES = {"--run": "--run", "-r": "--run", "--multirun": "--multirun", "-m": "--multirun", "--cfg": "--cfg",
          "-c": "--cfg", "--info": "--info", "-i": "--info", "--shell-completion": "--shell-completion",
          "-sc": "--shell-completion"}


def _conflicting_modes(argv: list[str]) -> str | None:
    """A usage error for Hydra modes that cannot go together (Hydra raises a bare ValueError)."""
    modes = list(dict.fromkeys(_MODES[a.split("=", 1)[0]] for a in argv if a.split("=", 1)[0] in _MODES))
    if len(modes) < 2:
        return None
    hint = (" To see one sweep job's config, give that job's overrides without -m (e.g. python -m wfeval "
            "model=oracle --cfg job)." if "--multirun" in modes and "--cfg" in modes else "")
    return f"wfeval: usage error: {' and '.join(modes)} cannot be combined (Hydra runs one mode at a time).{hint}"


def main() -> None:
    """Console entry (``wfeval`` and ``python -m wfeval``)."""
    conflict = _conflicting_modes(sys.argv[1:])
    if conflict:
        print(conflict, file=sys.stderr)
        sys.exit(2)
    if {"--help", "-h", "--hydra-help"} & set(sys.argv[1:]):
        from hydra._internal.hydra import Hydra

        Hydra.format_config_groups = _format_config_groups  # type: ignore[method-assign]
    # Let Hydra raise instead of printing and exiting 1, so config errors can exit 2 here.
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        from wfeval.config import trust

        policy = trust.policy_for_argv(sys.argv[1:])  # None: --help, --cfg, ... build nothing
        with signals_raise(), (trust.enforced(policy) if policy else contextlib.nullcontext()):
            _run_job()
        from wfeval.cli.sweep import FAILED_JOBS

        if FAILED_JOBS:
            print(f"{len(FAILED_JOBS)} sweep job(s) failed: {', '.join(FAILED_JOBS)}", file=sys.stderr)
            sys.exit(1)
    except KeyboardInterrupt as exc:
        _restore_full_error_setting()
        stop = interruption(exc)
        run_dir = getattr(exc, "run_dir", None)
        where = (f"; {run_dir} keeps what finished (status 'interrupted'): python -m wfeval.resume {run_dir}"
                 if run_dir else "")
        print(f"wfeval: {stop}{where}", file=sys.stderr)
        sys.exit(stop.exit_code)
    except CleanError as exc:
        _restore_full_error_setting()
        if _USER_FULL_ERROR == "1":
            raise
        print(f"wfeval: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except Exception as exc:
        _restore_full_error_setting()
        message = friendly_message(exc)
        if message is None and isinstance(exc, OSError) and _USER_FULL_ERROR != "1":
            # e.g. Hydra could not create the run folder (Hydra's own config errors are OSErrors too,
            # and have a message above)
            print(f"wfeval: storage error: {describe_os_error(exc)}", file=sys.stderr)
            sys.exit(1)
        if message is None or _USER_FULL_ERROR == "1":
            raise
        print(message, file=sys.stderr)
        sys.exit(2)
    finally:
        _restore_full_error_setting()


if __name__ == "__main__":
    main()
