"""``python -m wfeval.resume RUN_DIR``: finish an interrupted run in its own directory.

It re-runs the run's own command line (``.hydra/overrides.yaml`` and the Hydra overrides in
``.hydra/hydra.yaml``) with ``hydra.run.dir=RUN_DIR``: finished generations come from the
artifact store and finished metric rows from ``metrics.jsonl``, so only the rest is computed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml


def resume_argv(run_dir: Path) -> list[str]:
    hydra_dir = run_dir / ".hydra"
    if not (hydra_dir / "overrides.yaml").is_file() or not (run_dir / "manifest.json").is_file():
        raise SystemExit(f"wfeval.resume: {run_dir} is not a wfeval run directory "
                         "(needs manifest.json and .hydra/overrides.yaml)")
    task = yaml.safe_load((hydra_dir / "overrides.yaml").read_text()) or []
    hydra_cfg = yaml.safe_load((hydra_dir / "hydra.yaml").read_text()) if (hydra_dir / "hydra.yaml").is_file() else {}
    hydra_overrides = ((hydra_cfg or {}).get("hydra", {}).get("overrides", {}) or {}).get("hydra", []) or []
    kept = [o for o in hydra_overrides if not o.startswith(("hydra.run.dir=", "hydra.sweep.", "hydra.mode="))]
    return [*task, *kept, f"hydra.run.dir={run_dir}"]


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[0].strip("`"), file=sys.stderr)
        raise SystemExit(2)
    run_dir = Path(args[0]).expanduser().resolve()
    sys.argv = ["wfeval", *resume_argv(run_dir)]
    from wfeval.__main__ import main as wfeval_main

    wfeval_main()


if __name__ == "__main__":
    main()
