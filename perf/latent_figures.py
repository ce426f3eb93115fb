"""The measured tables of docs/latent-models.md for the simulators' probes and latent planning, from
real runs (the tiny-jepa table is perf/latent_table.py's; the widths table perf/probe_widths.py's).

Run: ``python perf/latent_figures.py [--samples 16] [--train-episodes 32] [--goals 32] [--out tables.md]``
(offline, CPU, a few minutes at the default size; Atari Pong's rows need the ``games`` extra, else
they are left out and said so). Two tables, pasted into the page as printed:

- **probes**: per benchmark and encoder, ``probe_r2`` and ``probe_accuracy`` with its chance level,
  the imagined probe R² at k = 1, 2, 4, 8 and the training latents' effective rank (RankMe).
  Gridworld with ``--train-episodes`` training episodes; Pong with half as many (its episodes are
  longer). The encoders are the calibration ones: ``state_oracle`` (the ceiling) with the oracle and
  the static predictor, ``random_projection`` at width 64 and at width 1024 (the same chance at
  another width: a matched-width baseline is ``model.dim=<the width of the model under test>``) and
  ``pixels_pca``;
- **planning**: gridworld ``task=goal_reaching`` on ``--goals`` samples: goal success (95 % Wilson
  interval) and SPL for the latent planners (``state_oracle``, ``random_projection``, the hand-made
  ``CellEncoder`` of the page, the static predictor) and the pixel planner with ``model=oracle``.

``--atariari`` prints a third table instead (seconds; the ``games`` extra): the Pong probes of
``protocol.probe=atariari`` at the page's sizes (:data:`ATARIARI`): ``probe_f1`` with its interval, the
F1 over all scored frames at once (AtariARI's one test set) per variable, the variables dropped as
near-constant and the evaluation frames removed as copies of a training frame.

``--mlp`` prints a fourth table instead: gridworld's probes by ridge (``protocol.probe=ridge``) beside the
small-MLP probes (``protocol.probe=mlp``) for the calibration encoders (:data:`MLP_ROWS`), the same
samples and training episodes, with the seconds each whole run took (minutes at 1024 wide).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # perf/ is not a package
from _tables import cell, run_results  # noqa: E402

HORIZONS = (1, 2, 4, 8)
PROBES = {  # row label -> (benchmark, overrides)
    "state_oracle": ("gridworld", ["model=state_oracle"]),
    "state_oracle, static predictor": ("gridworld", ["model=state_oracle", "model.predictor=static"]),
    "random_projection (dim 64)": ("gridworld", ["model=random_projection"]),
    "random_projection (dim 1024)": ("gridworld", ["model=random_projection", "model.dim=1024"]),
    "pixels_pca (dim 64)": ("gridworld", ["model=pixels_pca"]),
    "Pong: state_oracle": ("atari_pong", ["model=state_oracle"]),
    "Pong: random_projection (dim 64)": ("atari_pong", ["model=random_projection"]),
}
#: row label -> (trajectories (4 evaluation episodes each), training episodes, overrides)
ATARIARI = {
    "random_projection (dim 64)": (2, 16, ["model=random_projection"]),
    "state_oracle": (1, 8, ["model=state_oracle"]),
    "random_projection (dim 64), small": (1, 8, ["model=random_projection"]),
}
MLP_ROWS = {label: PROBES[label][1] for label in
            ("state_oracle", "random_projection (dim 64)", "random_projection (dim 1024)", "pixels_pca (dim 64)")}
PLANNERS = {
    "state_oracle": ["model=state_oracle"],
    "random_projection": ["model=random_projection"],
    "CellEncoder": ["model=python", "model.object._target_=latent_figures.CellEncoder"],
    "state_oracle, static predictor": ["model=state_oracle", "model.predictor=static"],
    "oracle (pixel planner)": ["model=oracle"],
}


class CellEncoder:
    """The page's hand-made latent model of gridworld (``my_models/cells.py`` there)."""

    name = "cells"
    version = "1"

    def encode(self, frames):
        from wfeval.benchmarks.gridworld import world

        colour = np.asarray(world.agent_color(), dtype=np.int64)
        out = []
        for frame in np.asarray(frames, dtype=np.int64):
            ys, xs = np.nonzero((frame == colour).all(axis=-1))
            out.append([ys.mean() / 8.0, xs.mean() / 8.0])
        return np.asarray(out)

    def predict(self, z, actions):
        deltas = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]], dtype=np.float64)
        return np.asarray(z)[:, None, :] + np.cumsum(deltas[np.asarray(actions)], axis=1)


def _level(results: dict[str, Any] | None, metric: str, key: str, digits: int = 2) -> str:
    value = ((results or {}).get(metric) or {}).get("diagnostics", {}).get(key)
    return "—" if value is None else f"{value:.{digits}f}"


def _games() -> bool:
    try:
        import ale_py  # noqa: F401
    except ImportError:
        return False
    return True


def _table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


def probes_table(samples: int = 16, train_episodes: int = 32, root: Path | None = None,
                 rows: dict[str, tuple[str, list[str]]] | None = None) -> str:
    """The probes table; ``samples`` per benchmark (a game: ``samples // 4`` trajectories of 4 windows)."""
    root = Path(root or tempfile.mkdtemp(prefix="wfeval-latent-figures-"))
    base = [f"run.store_dir={root / 'store'}", "run.progress=off", "run.report=false", "task=probing",
            "metric=[probe_r2,probe_accuracy,imagined_probe_r2]",
            f"metric.imagined_probe_r2.horizons=[{','.join(map(str, HORIZONS))}]"]
    out = []
    for i, (label, (benchmark, overrides)) in enumerate((rows or PROBES).items()):
        if benchmark.startswith("atari") and not _games():
            continue
        episodes = train_episodes if benchmark == "gridworld" else max(2, train_episodes // 2)
        # a recorded game: 4 windows per trajectory
        size = f"benchmark.num_samples={samples}" if benchmark == "gridworld" else \
            f"benchmark.num_trajectories={max(1, samples // 4)}"
        r = run_results([*base, f"benchmark={benchmark}", size, f"protocol.train_episodes={episodes}", *overrides],
                 root / f"probes-{i}")
        width = r["probe_r2"]["diagnostics"].get("latent_dim")
        out.append([label, cell(r, "probe_r2"), cell(r, "probe_accuracy", interval=False),
                    _level(r, "probe_accuracy", "chance"),
                    *[cell(r, f"imagined_probe_r2_k{k}", interval=False) for k in HORIZONS],
                    f"{_level(r, 'probe_r2', 'effective_rank', 1)} of {width}"])
    head = ["encoder", "probe R² observed", "accuracy", "chance (accuracy)",
            *[f"R² imagined k={k}" for k in HORIZONS], "effective rank"]
    return _table(head, out)


def planning_table(goals: int = 32, root: Path | None = None, candidates: int = 64) -> str:
    root = Path(root or tempfile.mkdtemp(prefix="wfeval-latent-figures-"))
    base = [f"run.store_dir={root / 'store'}", "run.progress=off", "run.report=false", "task=goal_reaching",
            f"benchmark.num_samples={goals}", f"protocol.planner.candidates={candidates}", "metric=[goal_success,spl]"]
    out = []
    for i, (label, overrides) in enumerate(PLANNERS.items()):
        r = run_results([*base, *overrides], root / f"planning-{i}")
        out.append([label, cell(r, "goal_success"), cell(r, "spl", interval=False)])
    return _table(["planner", "goal success", "SPL"], out)


def atariari_overrides(root: Path, trajectories: int, episodes: int, overrides: list[str]) -> list[str]:
    """The overrides of one row of the AtariARI table (``root``: where its store is)."""
    return [f"run.store_dir={root / 'store'}", "run.progress=off", "run.report=false", "task=probing",
            "benchmark=atari_pong", "protocol.probe=atariari", "metric=[probe_f1]",
            f"benchmark.num_trajectories={trajectories}", f"protocol.train_episodes={episodes}", *overrides]


def atariari_table(root: Path | None = None, rows: dict[str, tuple[int, int, list[str]]] | None = None,
                   done: dict[str, Path] | None = None) -> str:
    """The AtariARI protocol's Pong table (``protocol.probe=atariari``): deterministic, so the page's
    figures are this text as printed. ``done``: row label -> the folder of a run of that row's
    :func:`atariari_overrides` made before (a test's run shared with another test): read, not run again."""
    import json

    root = Path(root or tempfile.mkdtemp(prefix="wfeval-latent-figures-"))
    out = []
    for i, (label, (trajectories, episodes, overrides)) in enumerate((rows or ATARIARI).items()):
        folder = Path((done or {}).get(label) or root / f"atariari-{i}")
        if label in (done or {}):
            saved = json.loads((folder / "results.json").read_text(encoding="utf-8"))["results"]
            r = {key.split(".", 1)[1]: agg for key, agg in saved.items()}
        else:
            r = run_results(atariari_overrides(root, trajectories, episodes, overrides), folder)
        pooled = r["probe_f1"]["diagnostics"]["pooled"]
        infos = [json.loads(line)["result"]["metadata"]["probing"]["atariari"]
                 for line in (folder / "generations.jsonl").read_text(encoding="utf-8").splitlines()]
        split = infos[0]["split"]
        per = ", ".join(f"{name.replace('_', ' ')} {value:.2f}" for name, value in sorted(pooled["per_variable"].items()))
        dropped = ", ".join(f"{name.replace('_', ' ')} ({value:.2f})" for name, value in infos[0]["dropped"].items())
        removed = sum(i["duplicates_removed"] for i in infos)
        frames = removed + sum(i["frames_scored"] for i in infos)
        out.append([label, f"{len(infos)} / {split['train']} / {split['validation']}", cell(r, "probe_f1"),
                    f"{pooled['mean']:.2f}", per, dropped or "none", f"{removed} of {frames}"])
    head = ["encoder", "episodes test / train / validation", "probe_f1", "pooled F1", "pooled F1 per variable",
            "dropped (entropy, nats)", "frames removed as duplicates"]
    return _table(head, out)


def mlp_table(samples: int = 16, train_episodes: int = 32, root: Path | None = None,
              rows: dict[str, list[str]] | None = None, extra: list[str] | None = None) -> str:
    """Gridworld's ridge probes beside the small-MLP ones (``extra``: overrides of every MLP run)."""
    import time

    root = Path(root or tempfile.mkdtemp(prefix="wfeval-latent-figures-"))
    base = [f"run.store_dir={root / 'store'}", "run.progress=off", "run.report=false", "task=probing",
            "metric=[probe_r2,probe_accuracy]", f"benchmark.num_samples={samples}",
            f"protocol.train_episodes={train_episodes}"]
    out = []
    for i, (label, overrides) in enumerate((rows or MLP_ROWS).items()):
        cells, seconds = [], []
        for probe in ("ridge", "mlp"):
            start = time.perf_counter()
            more = (extra or []) if probe == "mlp" else []
            r = run_results([*base, *overrides, f"protocol.probe={probe}", *more], root / f"mlp-{i}-{probe}")
            seconds.append(f"{time.perf_counter() - start:.0f} s")
            cells.append(r)
        ridge, mlp = cells
        out.append([label, cell(ridge, "probe_r2"), cell(mlp, "probe_r2"),
                    cell(ridge, "probe_accuracy", interval=False), cell(mlp, "probe_accuracy", interval=False),
                    _level(mlp, "probe_accuracy", "chance"), " / ".join(seconds)])
    head = ["encoder", "probe R² ridge", "probe R² MLP", "accuracy ridge", "accuracy MLP", "chance (accuracy)",
            "run ridge / MLP"]
    return _table(head, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--train-episodes", type=int, default=32)
    parser.add_argument("--goals", type=int, default=32)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--atariari", action="store_true", help="the AtariARI protocol's Pong table only")
    parser.add_argument("--mlp", action="store_true", help="gridworld's ridge probes beside the MLP ones only")
    args = parser.parse_args()
    if args.atariari or args.mlp:
        text = atariari_table() if args.atariari else mlp_table(args.samples, args.train_episodes)
        print(text)
        if args.out:
            args.out.write_text(text, encoding="utf-8")
        return
    # the CellEncoder row: this file's class, served by model=python (trusted here, the caller)
    os.environ["WFEVAL_TRUST"] = "latent_figures."
    text = probes_table(args.samples, args.train_episodes) + "\n" + planning_table(args.goals)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
