"""One table for tiny-jepa on orby (docs/latent-models.md): pixels, controllability and probes
(observed and imagined), beside the calibration rows, from real runs.

Run: ``python perf/latent_table.py [--trajectories 8] [--train-episodes 32] [--out table.md]``
(needs ``pip install 'wfeval[tinyjepa]'``; offline, CPU, a few minutes at the default size).
Rows: ``tiny_jepa`` (its latents, and its decoded dreams for the pixel measures), ``static`` (the
first frame held: the pixel floor), ``state_oracle`` (the exact state: the probes' ceiling),
``random_projection`` and ``pixels_pca`` (untrained encoders). Columns: PSNR and SSIM of the
decoded video against the true one (open loop), action_sensitivity (ΔtPSNR between true and
counterfactual actions), probe R² on observed frames and on latents imagined k = 1, 4, 16 steps
ahead, and latent planning (``task=goal_reaching``: goal success and SPL in the true world). A cell
is ``—`` where the measure does not apply (a calibration encoder draws no pixels; ``static`` has no
latents; ``pixels_pca`` is fit on probing's training episodes only). The row ``static predictor``
(the exact state, never moved by a plan: every candidate ties, so the first random plan runs) is
the planning floor; the row ``tiny_jepa (cem)`` plans with ``protocol.planner.method=cem``. Under the
table, :func:`distances`: how far tiny-jepa's predictor moves a latent in one step against how far
the goal is (the page's last paragraph on it); :func:`variables`: tiny-jepa's probe R² per state
variable (the components of ``metrics.jsonl``, averaged over the samples) and how far its own agent head
(``perceive_agent``) places the agent from where it is (the page's paragraph "What each measure says").
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # perf/ is not a package
from _tables import cell, run_results  # noqa: E402

PIXELS = ("tiny_jepa", "static")
LATENTS = ("tiny_jepa", "state_oracle", "random_projection", "pixels_pca")
HORIZONS = (1, 4, 16)
PLANNERS = {"tiny_jepa": ["model=tiny_jepa"], "state_oracle": ["model=state_oracle"],
            "random_projection": ["model=random_projection"],
            "static predictor": ["model=state_oracle", "model.predictor=static"],
            "tiny_jepa (cem)": ["model=tiny_jepa", "protocol.planner.method=cem"]}


def table(trajectories: int = 8, train_episodes: int = 32, root: Path | None = None, candidates: int = 64) -> str:
    root = Path(root or tempfile.mkdtemp(prefix="wfeval-latent-"))
    base = [f"run.store_dir={root / 'store'}", "run.progress=off", "run.report=false", "benchmark=orby",
            f"benchmark.num_trajectories={trajectories}"]
    pixels = {m: run_results([*base, f"model={m}", "metric=[psnr,ssim]"], root / f"pixels-{m}") for m in PIXELS}
    control = {m: run_results([*base, f"model={m}", "task=controllability", "metric=[action_sensitivity]"],
                       root / f"control-{m}") for m in PIXELS}
    probes = {m: run_results([*base, f"model={m}", "task=probing", f"protocol.train_episodes={train_episodes}",
                       "metric=[probe_r2,imagined_probe_r2]",  # one metric, a measurement per horizon
                       f"metric.imagined_probe_r2.horizons=[{','.join(map(str, HORIZONS))}]"],
                      root / f"probing-{m}") for m in LATENTS}
    plans = {m: run_results([*base, *o, "task=goal_reaching", f"protocol.planner.candidates={candidates}",
                      "metric=[goal_success,spl]"], root / f"planning-{i}") for i, (m, o) in enumerate(PLANNERS.items())}
    head = ["model", "PSNR dB", "SSIM", "action_sensitivity dB", "probe R² observed",
            *[f"probe R² imagined k={k}" for k in HORIZONS], "goal success", "SPL"]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    for model in dict.fromkeys([*PIXELS, *LATENTS, *PLANNERS]):
        cells = [model, cell(pixels.get(model), "psnr"), cell(pixels.get(model), "ssim", 3),
                 cell(control.get(model), "action_sensitivity", 3), cell(probes.get(model), "probe_r2"),
                 *[cell(probes.get(model), f"imagined_probe_r2_k{k}") for k in HORIZONS],
                 cell(plans.get(model), "goal_success"), cell(plans.get(model), "spl")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def distances(trajectories: int = 8, root: Path | None = None, candidates: int = 64) -> dict[str, float]:
    """Why tiny-jepa plans no better than random (the page's last paragraph), on orby's goal samples:
    the median ``‖predict(z_0, stay) − z_0‖`` (how far one imagined step moves a latent), the median
    ``‖z_0 − z_g‖`` (how far the goal is: the start and goal images encoded) and the median best plan
    score of its planning run (``best_score_latent`` of every executed step: the best imagined
    distance to the goal in units of the present one)."""
    import json

    import numpy as np
    from hydra import compose, initialize_config_module

    from wfeval.config import register_schemas
    from wfeval.pipeline import build
    from wfeval.pipeline.select import select_requests
    from wfeval.storage.artifacts import ArtifactStore, read_array

    root = Path(root or tempfile.mkdtemp(prefix="wfeval-latent-"))
    overrides = [f"run.store_dir={root / 'store'}", "run.progress=off", "run.report=false", "benchmark=orby",
                 f"benchmark.num_trajectories={trajectories}", "task=goal_reaching", "model=tiny_jepa"]
    register_schemas()
    with initialize_config_module("wfeval.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    store = ArtifactStore(root / "store")
    requests = select_requests(build.build_benchmark(cfg), store=store, task=build.build_task(cfg),
                               protocol=build.build_protocol(cfg), limit=None, shard=None)
    model = build.build_model(cfg).model
    start = np.stack([read_array(r.inputs["image"], store=store) for r in requests])
    goal = np.stack([read_array(r.inputs["goal_image"], store=store) for r in requests])
    z0, zg = np.asarray(model.encode(start), dtype=np.float64), np.asarray(model.encode(goal), dtype=np.float64)
    stay = np.asarray(model.predict(z0, np.zeros((len(z0), 1), dtype=np.int64)), dtype=np.float64)[:, -1]
    run_results([*overrides, f"protocol.planner.candidates={candidates}", "metric=[goal_success]"], root / "plans")
    records = [json.loads(line) for line in (root / "plans" / "generations.jsonl").read_text().splitlines()]
    scores = [s["best_score_latent"] for r in records for s in r["result"]["metadata"].get("steps", [])
              if s.get("best_score_latent") is not None]
    return {"step": float(np.median(np.linalg.norm(stay - z0, axis=1))),
            "goal": float(np.median(np.linalg.norm(z0 - zg, axis=1))), "best_score": float(np.median(scores)),
            "samples": len(requests)}


def variables(trajectories: int = 8, train_episodes: int = 32, root: Path | None = None) -> dict[str, Any]:
    """tiny-jepa's observed probe R² per variable (the mean of each component over the samples) on orby, and
    the median distance in pixels between its agent head's reading (``perceive_agent``, batched) and the
    true agent position over every frame of the evaluation episodes (``agent_head_px``) and of 16 episodes
    of the package's own data policy (``collect_episodes``, seed 0: ``agent_head_px_own``)."""
    import json

    import numpy as np
    from hydra import compose, initialize_config_module
    from tiny_jepa.model import CANVAS

    from wfeval.config import register_schemas
    from wfeval.pipeline import build
    from wfeval.pipeline.select import select_requests
    from wfeval.storage.artifacts import ArtifactStore

    root = Path(root or tempfile.mkdtemp(prefix="wfeval-latent-"))
    overrides = [f"run.store_dir={root / 'store'}", "run.progress=off", "run.report=false", "benchmark=orby",
                 f"benchmark.num_trajectories={trajectories}", "task=probing", "model=tiny_jepa",
                 f"protocol.train_episodes={train_episodes}", "metric=[probe_r2]"]
    run_results(overrides, root / "probes")
    rows = [json.loads(line) for line in (root / "probes" / "metrics.jsonl").read_text().splitlines()]
    components = [r["components"] for r in rows if r["metric_id"] == "probe_r2" and r.get("components")]
    bench_names = [k for k in components[0] if k not in ("effective_rank", "latent_dim")]
    per_variable = {k: float(np.mean([c[k] for c in components])) for k in bench_names}
    register_schemas()
    with initialize_config_module("wfeval.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    bench = build.build_benchmark(cfg)
    requests = select_requests(bench, store=ArtifactStore(root / "store"), task=build.build_task(cfg),
                               protocol=build.build_protocol(cfg), limit=None, shard=None)
    names = [v.name for v in bench.state_variables()]
    xy = [names.index("agent_x"), names.index("agent_y")]
    package = build.build_model(cfg).model.model
    misses = []
    for request in requests:
        episode = bench.probe_episode(request)
        frames = np.asarray(episode.frames)[..., 0].astype(np.float32) / 255.0
        seen = package.nets["agenth"].forward(package.encode_batch(frames)) * CANVAS
        misses.extend(np.linalg.norm(seen - np.asarray(episode.states, dtype=np.float64)[:, xy], axis=1))
    from tiny_jepa._orby import collect_episodes  # the package's own episodes (its greedy data policy), beside

    own = collect_episodes(16, 32, seed=0)
    seen = package.nets["agenth"].forward(package.encode_batch(own["frames"].reshape(-1, CANVAS, CANVAS))) * CANVAS
    return {"per_variable": per_variable, "agent_head_px": float(np.median(misses)), "frames": len(misses),
            "agent_head_px_own": float(np.median(np.linalg.norm(seen - own["agentxy"].reshape(-1, 2), axis=1)))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, default=8)
    parser.add_argument("--train-episodes", type=int, default=32)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    text = table(args.trajectories, args.train_episodes)
    d = distances(args.trajectories)
    text += (f"\ntiny-jepa on {d['samples']} goal samples: median ‖predict(z_0, stay) − z_0‖ = {d['step']:.2f}, "
             f"median ‖z_0 − z_g‖ = {d['goal']:.2f}, median best plan score {d['best_score']:.1f} × the present "
             "distance\n")
    v = variables(args.trajectories, args.train_episodes)
    text += ("tiny-jepa's probe R² per variable: " + ", ".join(f"{k} {x:.2f}" for k, x in v["per_variable"].items())
             + f"; its agent head misses the agent by a median {v['agent_head_px']:.1f} px over {v['frames']} frames "
             f"(on the package's own episodes: {v['agent_head_px_own']:.1f} px)\n")
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
