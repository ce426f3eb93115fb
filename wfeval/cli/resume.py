"""``python -m wfeval.resume RUN_DIR [--trust PREFIX]...``: finish an interrupted run in its own directory.

It re-runs the run's own command line (``.hydra/overrides.yaml`` and the Hydra overrides in
``.hydra/hydra.yaml``) with ``hydra.run.dir=RUN_DIR``: finished generations come from the
artifact store and finished metric rows from ``metrics.jsonl``, so only the rest is computed.
The command is printed first. A run folder is a file anyone could have written: its overrides
do not count as your command line, so an override naming code (``…_target_=``, ``model.object=``)
or granting trust (``run.trust=``) must pass the same rule as a config file (docs/trust.md):
trust it with ``--trust PREFIX`` (or ``WFEVAL_TRUST``), or the resume is refused (exit 2).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import yaml

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


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m wfeval.resume", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--trust", action="append", default=[], metavar="PREFIX",
                        help="trust code under PREFIX (e.g. my_pkg.) for this resume, like WFEVAL_TRUST")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    run_dir = args.run_dir.expanduser().resolve()
    overrides = resume_argv(run_dir)
    from wfeval.config.trust import ENV_VAR, env_prefixes, refused_overrides

    prefixes = (*env_prefixes(), *args.trust)
    command = shlex.join(["python", "-m", "wfeval", *overrides])
    refused = refused_overrides(overrides[:-1], prefixes)
    if refused:
        print(f"wfeval.resume: would run: {command}\nRefused: {run_dir / '.hydra'} names code you have not "
              "trusted (a run folder does not count as your command line):\n  " + "\n  ".join(refused)
              + "\nIf you trust it, rerun with --trust PREFIX (e.g. --trust my_pkg.) or WFEVAL_TRUST=PREFIX; "
              "see docs/trust.md.", file=sys.stderr)
        raise SystemExit(2)
    print(f"wfeval.resume: running: {command}", file=sys.stderr, flush=True)
    if args.trust:
        os.environ[ENV_VAR] = ",".join(prefixes)
    sys.argv = ["wfeval", *overrides]
    from wfeval.cli.run import main as wfeval_main

    wfeval_main()


if __name__ == "__main__":
    main()
