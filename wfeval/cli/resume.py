"""``python -m wfeval.resume RUN_DIR [--trust PREFIX]... [--trust-programs]``: finish an interrupted run in its folder.

It re-runs the run's own command line (``.hydra/overrides.yaml`` and the Hydra overrides in
``.hydra/hydra.yaml``) with ``hydra.run.dir=RUN_DIR``: finished generations come from the
artifact store and finished metric rows from ``metrics.jsonl``, so only the rest is computed.
The command is printed first. A run folder is a file anyone could have written: its overrides
do not count as your command line, so an override naming code (``…_target_=``, ``model.object=``)
or granting trust (``run.trust=``) must pass the same rule as a config file (docs/trust.md):
trust it with ``--trust PREFIX`` (or ``WFEVAL_TRUST``), or the resume is refused (exit 2). A
command that would run a *program* -- a composed ``model.argv`` or ``model.step_argv``, from an
override or a config file on the folder's search path -- or set the environment programs run with
(``hydra.job.env_set``) is refused the same way unless ``--trust-programs`` says you read the printed
command and trust the programs it names. A folder holding a symbolic link where a run writes is
refused before anything is written (exit 1).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import yaml

from wfeval.cli.command import command
from wfeval.storage.rundir import FILES


def resume_argv(run_dir: Path) -> list[str]:
    hydra_dir = run_dir / FILES.hydra
    if not (run_dir / FILES.overrides).is_file() or not (run_dir / FILES.manifest).is_file():
        raise SystemExit(f"wfeval.resume: {run_dir} is not a wfeval run directory "
                         "(needs manifest.json and .hydra/overrides.yaml)")
    try:
        with (run_dir / FILES.overrides).open(encoding="utf-8") as handle:
            task = yaml.safe_load(handle) or []
        hydra_cfg = {}
        if (run_dir / FILES.hydra_config).is_file():
            with (run_dir / FILES.hydra_config).open(encoding="utf-8") as handle:
                hydra_cfg = yaml.safe_load(handle)
    except yaml.YAMLError as exc:
        from wfeval.config.errors import yaml_error_message

        print(f"wfeval.resume: {yaml_error_message(exc)}", file=sys.stderr)
        raise SystemExit(2) from None
    hydra_overrides = ((hydra_cfg or {}).get("hydra", {}).get("overrides", {}) or {}).get("hydra", []) or []
    if not isinstance(task, list) or not all(isinstance(o, str) for o in [*task, *hydra_overrides]):
        raise SystemExit(f"wfeval.resume: {hydra_dir} does not hold lists of override strings")
    kept = [o for o in hydra_overrides if not o.startswith(("hydra.run.dir=", "hydra.sweep.", "hydra.mode="))]
    return [*task, *kept, f"hydra.run.dir={run_dir}"]


#: model options that name a program to run
PROGRAM_OPTIONS = ("argv", "step_argv")
ENV_KEY = "hydra.job.env_set"  # the environment every program of the job runs with


def program_overrides(overrides: list[str]) -> list[str]:
    """What of a run folder's command would run a program (the composed model's ``argv`` /
    ``step_argv``, wherever they come from) or set the environment programs run with: run only with
    ``--trust-programs``."""
    refused = [f"{text}  (sets the environment programs run with)" for text in overrides
               if text.split("=", 1)[0].lstrip("+~").strip().startswith(ENV_KEY)]
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    from wfeval.config import register_schemas

    register_schemas()
    try:
        with initialize_config_module("wfeval.conf", version_base="1.3"):
            model = compose("config", overrides=list(overrides)).get("model")
        model = OmegaConf.to_container(model, resolve=False) if model is not None else {}
    except Exception:  # noqa: BLE001 - a command that does not compose: the run itself reports why
        return refused
    for key in PROGRAM_OPTIONS:
        value = model.get(key) if isinstance(model, dict) else None
        if value not in (None, "???"):
            refused.append(f"model.{key}={value}  (a program to run)")
    return refused


@command("wfeval.resume")
def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m wfeval.resume", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--trust", action="append", default=[], metavar="PREFIX",
                        help="trust code under PREFIX (e.g. my_pkg.) for this resume, like WFEVAL_TRUST")
    parser.add_argument("--trust-programs", action="store_true",
                        help="run the programs the folder names (model.argv, model.step_argv, ...): only for a "
                             "folder you trust, after reading the printed command")
    args = parser.parse_args(argv)
    run_dir = args.run_dir.expanduser().resolve()
    overrides = resume_argv(run_dir)
    from wfeval.config.trust import ENV_VAR, env_prefixes, refused_overrides

    prefixes = (*env_prefixes(), *args.trust)
    command = shlex.join(["python", "-m", "wfeval", *overrides])
    from wfeval.pipeline.failure import describe_os_error
    from wfeval.storage.rundir import check_no_links

    try:
        check_no_links(run_dir)
    except OSError as exc:
        print(f"wfeval.resume: cannot use the run folder: {describe_os_error(exc)}", file=sys.stderr)
        raise SystemExit(1) from None
    refused = refused_overrides(overrides[:-1], prefixes)
    programs = [] if args.trust_programs or refused else program_overrides(overrides[:-1])
    if programs:
        print(f"wfeval.resume: would run: {command}\nRefused: {run_dir / '.hydra'} names programs to run (a run "
              "folder is a file anyone could have written, e.g. one copied from elsewhere):\n  "
              + "\n  ".join(programs) + "\nIf this folder is yours and you trust these programs, rerun with "
              "--trust-programs; see docs/trust.md.", file=sys.stderr)
        raise SystemExit(2)
    if refused:
        print(f"wfeval.resume: would run: {command}\nRefused: {run_dir / '.hydra'} names code you have not "
              "trusted (a run folder does not count as your command line):\n  " + "\n  ".join(refused)
              + "\nIf you trust it, rerun with --trust PREFIX (e.g. --trust my_pkg.) or WFEVAL_TRUST=PREFIX; "
              "see docs/trust.md.", file=sys.stderr)
        raise SystemExit(2)
    print(f"wfeval.resume: running: {command}", file=sys.stderr, flush=True)
    if args.trust:
        os.environ[ENV_VAR] = ",".join(prefixes)  # the caller's environment again after the command
    from wfeval.cli.run import resume

    return resume(overrides, recorded_metrics(run_dir))  # recorded before Hydra writes .hydra/


def recorded_metrics(run_dir: Path) -> tuple[dict, dict] | None:
    """(``.hydra/config.yaml``, the manifest's ``metric_selection``) of a run folder whose metrics were
    selected before it stopped; None when it stopped before (a run selects them then)."""
    from wfeval.results.record import read_manifest

    try:
        manifest = read_manifest(run_dir)
        with (run_dir / FILES.config).open(encoding="utf-8") as handle:
            recorded = yaml.safe_load(handle)
    except (OSError, ValueError, yaml.YAMLError):
        return None
    rules = manifest.metric_selection if manifest is not None else None
    return (recorded, rules) if isinstance(rules, dict) and rules and isinstance(recorded, dict) else None


if __name__ == "__main__":
    sys.exit(main())
