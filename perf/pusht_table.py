"""The calibration of benchmark=pusht (docs/pusht.md): one table of the baselines from real runs.

Run: ``python perf/pusht_table.py [--trajectories 8] [--windows 4] [--goal-trajectories 2] [--out table.md]``
(needs ``pip install 'wfeval[pusht]'``; offline, CPU). Each cell is one real run on the benchmark's
first ``trajectories`` recorded starts (all their windows): ``psnr`` and ``ssim`` (task=action_video,
the default), ``action_sensitivity`` (task=controllability, 3 counterfactuals answered by the
simulator), ``policy_rank_correlation`` and ``return_error`` (task=policy_evaluation: the four scripted
pushers run inside the model and in the simulator), ``probe_r2`` (task=probing; latent calibration
models only) and ``goal_success`` (task=goal_reaching on ``goal_trajectories`` starts: CEM, 32
candidates × 5 steps × 2 iterations, imagined with the model, acted in the true simulator), each
with its 95% interval. ``—``: the
model does not run that task (a pixel baseline has no latent, a latent encoder no frames).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

#: model -> the tasks it is measured on (action_video, controllability, policy_evaluation, probing, goal_reaching)
MODELS = {
    "oracle": ("action_video", "controllability", "policy_evaluation", "goal_reaching"),
    "noisy": ("action_video", "controllability", "policy_evaluation"),
    "lagged": ("action_video", "controllability", "policy_evaluation"),
    "static": ("action_video", "controllability", "policy_evaluation"),
    "random_actions": ("action_video", "controllability", "policy_evaluation", "goal_reaching"),
    "state_oracle": ("probing",),
    "random_projection": ("probing",),
}
METRICS = {"action_video": ["psnr", "ssim"], "controllability": ["action_sensitivity"], "probing": ["probe_r2"],
           "policy_evaluation": ["policy_rank_correlation", "return_error"], "goal_reaching": ["goal_success"]}
PLANNER = ["protocol.planner.method=cem", "protocol.planner.candidates=32", "protocol.planner.horizon=5",
           "protocol.planner.iterations=2", "protocol.planner.elites=6"]
COLUMNS = ("psnr", "ssim", "action_sensitivity", "policy_rank_correlation", "return_error", "probe_r2", "goal_success")
DIGITS = {"ssim": 3, "probe_r2": 3, "return_error": 3}  # others: 2


def _run(overrides: list[str], folder: Path) -> dict[str, Any]:
    from hydra import compose, initialize_config_module

    from wfeval.config import register_schemas
    from wfeval.pipeline.runner import run_from_config

    register_schemas()
    with initialize_config_module("wfeval.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    summary = run_from_config(cfg, output_dir=folder)
    return {key.split(".", 1)[1]: agg.to_dict() for key, agg in summary.results.items()}


def _cell(agg: dict[str, Any] | None, digits: int) -> str:
    if not agg or agg["diagnostics"].get("value") is None:
        return "—"
    value, ci = agg["diagnostics"]["value"], agg.get("confidence_interval") or {}
    if ci.get("low") is None:
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{ci['low']:.{digits}f}, {ci['high']:.{digits}f}]"


def table(trajectories: int = 8, windows: int = 4, goal_trajectories: int = 2,
          models: dict[str, tuple[str, ...]] | None = None, root: Path | None = None) -> str:
    """The Markdown table (a row per model, a column per measure); the last line gives sizes and times."""
    root = Path(root or tempfile.mkdtemp(prefix="wfeval-pusht-table-"))
    base = [f"run.store_dir={root / 'store'}", "run.progress=off", "run.report=false", "benchmark=pusht",
            f"benchmark.windows_per_trajectory={windows}"]
    cells: dict[str, dict[str, Any]] = {}
    seconds: dict[str, float] = {}
    for model, tasks in (models or MODELS).items():
        started, cells[model] = time.perf_counter(), {}
        for task in tasks:
            n = goal_trajectories if task == "goal_reaching" else trajectories
            extra = PLANNER if task == "goal_reaching" else []
            results = _run([*base, f"benchmark.num_trajectories={n}", f"task={task}", f"model={model}",
                            f"metric=[{','.join(METRICS[task])}]", *extra], root / f"{model}-{task}")
            cells[model].update({m: results.get(m) for m in METRICS[task]})
        seconds[model] = time.perf_counter() - started
    head = ["model", "psnr (dB)", "ssim", "action_sensitivity (dB)", "policy_rank_correlation", "return_error",
            "probe_r2", "goal_success"]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    for model, row in cells.items():
        lines.append("| " + " | ".join([model, *[_cell(row.get(c), DIGITS.get(c, 2)) for c in COLUMNS]]) + " |")
    lines.append("")
    lines.append(f"pusht, {trajectories} start(s) × {windows} window(s); goal_reaching on {goal_trajectories} "
                 f"start(s) × {windows}; wall seconds per model: " + ", ".join(f"{m} {s:.0f}" for m, s in seconds.items()))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trajectories", type=int, default=8)
    parser.add_argument("--windows", type=int, default=4)
    parser.add_argument("--goal-trajectories", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    text = table(args.trajectories, args.windows, args.goal_trajectories)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text, end="")


if __name__ == "__main__":
    main()
