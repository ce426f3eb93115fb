"""Probes at real latent widths, side by side (docs/latent-models.md, "Probes at real widths").

Run: ``python perf/probe_widths.py [--widths 64 256 1024 4096] [--old-up-to 1024] [--runs [--repeats N]]``.
What ``task=probing`` fits at its default size (32 training episodes × 33 frames = 1,056 frames; four
continuous state variables and two discrete ones), on latents of each width:

- **search**: the penalty chosen by 4-fold cross-validation over episodes for every variable — as it
  was (one normal-equations solve per penalty, fold and variable: 8 × 4 × 6 = 192 solves of
  (D+1)²) beside :func:`wfeval.functional.probing.choose_alphas` (one decomposition per fold), and
  whether both choose the same penalties;
- **fit**: the six final probes — the direct solve beside :class:`~wfeval.functional.probing.RidgePath`
  (which ``fit_ridge`` uses above ``DIRECT_WIDTH``), and how far apart their weights are.

- **runs** (``--runs``): the whole command ``python -m wfeval task=probing model=random_projection
  model.dim=W`` on gridworld at its default size, each width in a fresh store (nothing served from a
  cache): wall and CPU seconds of the process, the ratio to the narrowest width, and its ``probe_r2``;
  with ``--baseline REV`` (a commit, unpacked with ``git archive``) that commit's run of each width
  beside it, and the largest difference between the two runs' numbers; with ``--repeats N``, N rounds of
  every width and the medians.

- **encode** (``--encode``): what is left of a 4096-wide run — the ``random_projection`` baseline's own
  projection of 2,112 gridworld frames (64 of its probe-training episodes of 33 frames, 64×64×3 pixels):
  drawing its matrix; the whole product of the distinct frames (as before issue 51's round 5) beside
  their differences to anchor frames (:func:`~wfeval.models.latent_baselines.project_differences`) and how
  far apart the two latents are; and ``encode`` in one call beside 64 calls of 33 frames, in CPU seconds
  of this process.

The old search is run only up to ``--old-up-to`` (the issue measured a whole run at 4096 past 536 s).
Seconds are wall time of one run on this machine; the ratios are what to read.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parents[1]

from wfeval.functional.probing import ALPHAS, RidgePath, choose_alphas  # noqa: E402


def _direct(z: np.ndarray, targets: np.ndarray, alpha: float) -> np.ndarray:
    x = (z - z.mean(0)) / np.where(z.std(0) > 0, z.std(0), 1.0)
    x1 = np.concatenate([x, np.ones((len(x), 1))], axis=1)
    penalty = alpha * np.eye(x1.shape[1])
    penalty[-1, -1] = 0.0
    return np.linalg.lstsq(x1.T @ x1 + penalty, x1.T @ targets, rcond=None)[0]


def _targets(y: np.ndarray, discrete: bool) -> tuple[np.ndarray, np.ndarray | None]:
    classes = np.unique(y) if discrete else None
    return ((y[:, None] == classes[None]).astype(float) if discrete else y[:, None]), classes


def old_search(z, states, groups, discrete) -> list[float]:
    """The search as it was: every penalty refit on every fold for every variable."""
    ids = np.unique(groups)
    fold = np.array([{g: i % 4 for i, g in enumerate(ids)}[g] for g in groups])
    chosen = []
    for j, d in enumerate(discrete):
        losses = []
        for alpha in ALPHAS:
            per_fold = []
            for f in np.unique(fold):
                train, test = fold != f, fold == f
                targets, classes = _targets(states[train, j], d)
                w = _direct(z[train], targets, alpha)
                x = (z[test] - z[train].mean(0)) / z[train].std(0)
                scores = np.concatenate([x, np.ones((len(x), 1))], axis=1) @ w
                per_fold.append(-np.mean(classes[np.argmax(scores, 1)] == states[test, j]) if d
                                else np.mean((scores[:, 0] - states[test, j]) ** 2))
            losses.append(np.mean(per_fold))
        chosen.append(float(ALPHAS[int(np.argmin(losses))]))
    return chosen


def _numbers(value, path=""):
    """Every number of a results document, by its path."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _numbers(item, f"{path}[{i}]")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path, float(value)


def _run(tree: Path, width: int, run: Path) -> tuple[float, float, dict]:
    """One whole probing run at ``width`` with ``tree``'s wfeval: wall and CPU seconds, its results."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "wfeval", "task=probing", "model=random_projection",
                    f"model.dim={width}", f"hydra.run.dir={run}", f"run.store_dir={run}/store"],
                   check=True, stdout=subprocess.DEVNULL, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads((run / "results.json").read_text(encoding="utf-8"))["results"]


def whole_runs(widths: list[int], baseline: str | None = None, repeats: int = 1) -> None:
    """Each width's whole probing run in a fresh process and store, side by side; with ``baseline`` (a
    commit), that commit's run of each width just before this checkout's, and how far their numbers are
    apart (the largest difference over every number of ``results.json``'s results, relative to the
    number's size where it is above 1). With ``repeats`` > 1 every width is run that many rounds (the widths
    alternating in each), each round's rows printed, then the median of each column and the ratios of those
    medians."""
    print(f"load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    print(("" if baseline is None else f"{'baseline wall s':>15}  {'cpu s':>7}  ") +
          f"{'width':>6}  {'wall s':>7}  {'cpu s':>7}  {'wall ratio':>10}  {'cpu ratio':>9}  {'probe_r2':>16}"
          + ("" if baseline is None else f"  {'max |Δ| vs baseline':>20}"))
    times: dict[int, list[tuple[float, ...]]] = {width: [] for width in widths}
    with tempfile.TemporaryDirectory() as tmp:
        old = None
        if baseline is not None:
            from cli_startup import unpack  # noqa: PLC0415 - perf/ is not a package

            old = unpack(baseline, Path(tmp) / "baseline")
        for turn in range(repeats):
            first: tuple[float, float] | None = None
            for width in widths:
                side, measured = "", ()
                if old is not None:
                    old_wall, old_cpu, old_results = _run(old, width, Path(tmp) / f"old{width}-{turn}")
                    side, measured = f"{old_wall:>15.2f}  {old_cpu:>7.2f}  ", (old_wall, old_cpu)
                wall, cpu, results = _run(ROOT, width, Path(tmp) / f"w{width}-{turn}")
                times[width].append((*measured, wall, cpu))
                first = first or (wall, cpu)
                r2 = results["gridworld.probe_r2"]["raw_stats"]["mean"]
                apart = ""
                if old is not None:
                    new, before = dict(_numbers(results)), dict(_numbers(old_results))
                    gap, where = max(((abs(new[k] - before[k]) / max(1.0, abs(before[k])), k) for k in new.keys()
                                      & before.keys() if not any(t in k for t in ("seconds", "time"))),
                                     default=(0.0, ""))
                    apart = f"  {gap:>20.1e}" + ("" if new.keys() == before.keys() else " (other keys)") + \
                        (f" at {where}" if gap else "")
                print(f"{side}{width:>6}  {wall:>7.2f}  {cpu:>7.2f}  {wall / first[0]:>10.2f}  {cpu / first[1]:>9.2f}  "
                      f"{r2:>16.12f}{apart}", flush=True)
    if repeats > 1:
        print(f"median of {repeats} rounds (load average now {os.getloadavg()[0]:.1f}):")
        medians = {width: np.median(np.array(rows), axis=0) for width, rows in times.items()}
        base = medians[widths[0]][-2:]
        for width, m in medians.items():
            side = "" if old is None else f"{m[0]:>15.2f}  {m[1]:>7.2f}  "
            print(f"{side}{width:>6}  {m[-2]:>7.2f}  {m[-1]:>7.2f}  {m[-2] / base[0]:>10.2f}  {m[-1] / base[1]:>9.2f}")


def encode_cost(width: int, episodes: int = 64, frames: int = 33) -> dict:
    """CPU seconds of ``random_projection`` at ``width`` on ``episodes × frames`` gridworld frames (its probe
    training episodes): the matrix's draw; the distinct frames' whole product beside their differences'
    (``whole``, ``differences``; ``apart``: their largest difference relative to the largest latent); and
    ``encode`` in one call, then in one call per episode (``same``: the two agree to round-off)."""
    from wfeval.benchmarks.gridworld.adapter import GridworldBenchmark
    from wfeval.functional.rank import distinct_rows
    from wfeval.models.latent_baselines import RandomProjection, _pixels, project_differences

    pixels = np.concatenate([e.frames for e in GridworldBenchmark().probe_training(episodes, frames)])
    model = RandomProjection(dim=width)
    started = time.process_time()
    model.encode(pixels[:1])  # draws the matrix
    draw = time.process_time() - started
    distinct = pixels[distinct_rows(pixels.reshape(len(pixels), -1))[0]].reshape(-1, pixels[0].size)
    started = time.process_time()
    whole = _pixels(distinct) @ model._matrix
    whole_s = time.process_time() - started
    started = time.process_time()
    differences = project_differences(distinct, model._matrix)
    differences_s = time.process_time() - started
    apart = float("nan") if differences is None else float(np.abs(differences - whole).max() / np.abs(whole).max())
    started = time.process_time()
    one = model.encode(pixels)
    one_call = time.process_time() - started
    started = time.process_time()
    parts = [model.encode(pixels[i:i + frames]) for i in range(0, len(pixels), frames)]
    per_episode = time.process_time() - started
    return {"draw": draw, "whole": whole_s, "differences": differences_s, "apart": apart, "distinct": len(distinct),
            "one_call": one_call, "per_episode": per_episode, "frames": len(pixels), "calls": len(parts),
            "same": bool(np.allclose(np.concatenate(parts), one, rtol=1e-12, atol=1e-12))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[64, 256, 1024, 4096])
    parser.add_argument("--old-up-to", type=int, default=1024)
    parser.add_argument("--runs", action="store_true", help="time whole probing runs instead")
    parser.add_argument("--encode", action="store_true", help="time the random projection's encode instead")
    parser.add_argument("--baseline", default=None, help="with --runs: a commit run beside this checkout")
    parser.add_argument("--repeats", type=int, default=1, help="with --runs: rounds of every width, then medians")
    args = parser.parse_args()
    if args.runs:
        whole_runs(args.widths, args.baseline, args.repeats)
        return
    if args.encode:
        for width in args.widths:
            r = encode_cost(width)
            print(f"width {width}: matrix drawn in {r['draw']:.2f} s CPU; {r['distinct']} distinct of {r['frames']} "
                  f"frames: whole product {r['whole']:.2f} s CPU, differences {r['differences']:.2f} s CPU "
                  f"({r['whole'] / r['differences']:.1f}×, apart {r['apart']:.1e}); encode in one call "
                  f"{r['one_call']:.2f} s CPU, in {r['calls']} calls of {r['frames'] // r['calls']} frames "
                  f"{r['per_episode']:.2f} s CPU")
        return
    rng = np.random.default_rng(0)
    print(f"{'width':>6}  {'search old s':>12}  {'search new s':>12}  {'ratio':>7}  {'same α':>6}  "
          f"{'fit direct s':>12}  {'fit path s':>10}  {'ratio':>7}  {'max |Δw| / max |w|':>18}")
    for width in args.widths:
        r = compare(width, width <= args.old_up_to, rng)
        print(f"{width:>6}  {r['search_old']:>12.2f}  {r['search_new']:>12.2f}  "
              f"{r['search_old'] / r['search_new']:>7.1f}  {r['same']:>6}  {r['fit_direct']:>12.2f}  "
              f"{r['fit_path']:>10.2f}  {r['fit_direct'] / r['fit_path']:>7.1f}  {r['gap']:>18.1e}")


def compare(width: int, old: bool, rng: np.random.Generator, episodes: int = 32) -> dict:
    """One width's row: probing's default size (``episodes`` × 33 frames, 4 continuous and 2 discrete
    variables) on latents of that width; the old search only when ``old``."""
    frames, groups = episodes * 33, np.repeat(np.arange(episodes), 33)
    discrete = [False, False, False, False, True, True]
    z = rng.standard_normal((frames, width)) * rng.uniform(0.2, 5.0, width)
    signal = z[:, :8] @ rng.standard_normal((8, 6))
    states = signal + rng.standard_normal(signal.shape)
    states[:, 4:] = np.digitize(states[:, 4:], [-1.0, 1.0])
    started = time.perf_counter()
    new = choose_alphas(z, states, groups, discrete)
    search_new = time.perf_counter() - started
    search_old, same = float("nan"), "—"
    if old:
        started = time.perf_counter()
        same = "yes" if old_search(z, states, groups, discrete) == new else "NO"
        search_old = time.perf_counter() - started
    started = time.perf_counter()
    direct = [_direct(z, _targets(states[:, j], d)[0], a) for j, (d, a) in enumerate(zip(discrete, new))]
    fit_direct = time.perf_counter() - started
    started = time.perf_counter()
    path = RidgePath.fit(z)
    fast = [path.weights(_targets(states[:, j], d)[0], a) for j, (d, a) in enumerate(zip(discrete, new))]
    fit_path = time.perf_counter() - started
    gap = max(float(np.abs(a - b).max() / np.abs(a).max()) for a, b in zip(direct, fast))
    return {"search_old": search_old, "search_new": search_new, "same": same, "fit_direct": fit_direct,
            "fit_path": fit_path, "gap": gap, "alphas": new}

if __name__ == "__main__":
    main()
