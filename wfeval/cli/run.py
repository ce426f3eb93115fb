"""``python -m wfeval``: compose the config with Hydra and run one evaluation per job.

How a command ends (exit status, message) is decided in one place, :mod:`wfeval.cli.exits`:
config errors exit 2 with one paragraph (``HYDRA_FULL_ERROR=1`` shows the traceback), SIGINT /
SIGTERM exit 130 / 143 and leave a resumable run, a storage error or a failing ``setup()``
exits 1 (docs/reliability.md). In a sweep, a failed job is printed and the sweep goes on; the
sweep's summary (:mod:`wfeval.cli.sweep`) ends it with status 1.
"""

from __future__ import annotations

import sys
from typing import Any

from wfeval.cli.command import command
from wfeval.cli.help import print_help

_MODES = {"--run": "--run", "-r": "--run", "--multirun": "--multirun", "-m": "--multirun", "--cfg": "--cfg",
          "-c": "--cfg", "--info": "--info", "-i": "--info", "--shell-completion": "--shell-completion",
          "-sc": "--shell-completion"}


def _job(cfg: Any) -> None:
    """One job of ``hydra.main`` (:func:`hydra_app`): its run config made at the boundary, then run."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from wfeval.cli.exits import describe
    from wfeval.pipeline.runner import run_from_config
    from wfeval.utils.allocator import keep_freed_memory
    from wfeval.utils.openmp import idle_threads_sleep

    keep_freed_memory()  # a run allocates and frees large arrays over and over; also in a launcher's workers
    idle_threads_sleep()  # torch's idle OpenMP threads must not spin on the cores the run's other threads need
    hydra_cfg = HydraConfig.get()
    try:
        run_from_config(run_config_of_job(cfg, hydra_cfg), output_dir=hydra_cfg.runtime.output_dir)
    except Exception as exc:
        if hydra_cfg.mode != RunMode.MULTIRUN:
            raise  # ends the command: wfeval.cli.exits
        # one failed job must not hide the others: its manifest says "failed" with the error,
        # the sweep goes on, and the sweep summary lists it (exit status 1 at the end)
        print(f"job {hydra_cfg.job.num} failed: {describe(exc)}", file=sys.stderr)


def hydra_app() -> Any:
    """The Hydra application of ``python -m wfeval`` (Hydra imported only when a command runs)."""
    import hydra

    from wfeval.config import register_schemas

    register_schemas()
    return hydra.main(version_base="1.3", config_path="pkg://wfeval.conf", config_name="config")(_job)


def run_config_of_job(cfg: Any, hydra_cfg: Any) -> Any:
    """The boundary: the job's composed config and what Hydra knows of it (choices, overrides, search
    path) made into the one run config, its metrics selected (:mod:`wfeval.pipeline.metric_nodes`);
    nothing below ``cli/`` reads Hydra's job state."""
    from omegaconf import OmegaConf

    from wfeval.config.run_config import JobChoices, RunConfig
    from wfeval.pipeline.metric_nodes import with_metric_nodes

    from wfeval.pipeline.metric_nodes import with_recorded_metric_nodes

    job = JobChoices(choices=OmegaConf.to_container(hydra_cfg.runtime.choices, resolve=False),
                     overrides=tuple(str(o) for o in hydra_cfg.overrides.task),
                     searchpath=tuple(str(p) for p in hydra_cfg.searchpath), known=True)
    from wfeval.cli.boundary import composed_job

    checked = composed_job(job.overrides)  # the boundary's run config of this job, when it made one
    config = checked if checked is not None else RunConfig.resolve(cfg, job=job)
    if _RESUMED:  # python -m wfeval.resume: the metric nodes the run folder recorded, none composed again
        recorded, rules = _RESUMED[-1]
        return with_recorded_metric_nodes(config, recorded, rules)
    return with_metric_nodes(config)


#: while :func:`resume` runs: (the run folder's recorded config, the manifest's metric_selection)
_RESUMED: list[tuple[dict, dict]] = []


def _conflicting_modes(argv: list[str]) -> str | None:
    """A usage error for Hydra modes that cannot go together (Hydra raises a bare ValueError)."""
    modes = list(dict.fromkeys(_MODES[a.split("=", 1)[0]] for a in argv if a.split("=", 1)[0] in _MODES))
    if len(modes) < 2:
        return None
    hint = (" To see one sweep job's config, give that job's overrides without -m (e.g. python -m wfeval "
            "model=oracle --cfg job)." if "--multirun" in modes and "--cfg" in modes else "")
    return f"wfeval: usage error: {' and '.join(modes)} cannot be combined (Hydra runs one mode at a time).{hint}"


def check_run_dir(argv: list[str]) -> None:
    """Before Hydra writes ``.hydra/*.yaml`` into an existing ``hydra.run.dir``: refuse a folder holding a
    symbolic link where a run writes (StorageError, exit 1): a run folder is data anyone could have written."""
    given = [a.split("=", 1)[1] for a in argv if a.startswith("hydra.run.dir=")]
    if not given or "${" in given[-1]:
        return
    from pathlib import Path

    from wfeval.pipeline.failure import storage_error
    from wfeval.storage.rundir import check_no_links

    try:
        check_no_links(Path(given[-1].strip("'\"")).expanduser())
    except OSError as exc:
        raise storage_error(exc, "cannot use the run folder:") from None


@command("wfeval")
def main(argv: list[str]) -> int | None:
    """Console entry (``wfeval`` and ``python -m wfeval``): ``main(argv) -> int`` (:mod:`wfeval.cli.command`)."""
    conflict = _conflicting_modes(argv)
    if conflict:
        print(conflict, file=sys.stderr)
        return 2
    if print_help(argv):
        return 0
    from wfeval.cli.boundary import checked
    from wfeval.cli.exits import hydra_raises
    from wfeval.pipeline.failure import signals_raise

    # composed once and trust-checked; a plain run runs on that composition, anything else through hydra.main
    with hydra_raises(), signals_raise(), checked(argv, keep=True, task=_job) as run_composed:
        check_run_dir(argv)
        run_composed() if run_composed is not None else hydra_app()()  # hydra.main reads the command's sys.argv
    return 0


def resume(overrides: list[str], recorded: tuple[dict, dict] | None) -> int:
    """``python -m wfeval OVERRIDES`` finishing a run folder (``python -m wfeval.resume``): with the metric
    nodes the folder ``recorded`` (its config, the manifest's ``metric_selection``) when it has them."""
    _RESUMED[:] = [recorded] if recorded else []
    try:
        return main(overrides)
    finally:
        _RESUMED.clear()
