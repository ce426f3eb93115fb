"""FVD performance, measured side by side in one run.

Run: ``python perf/fvd_performance.py [--clips 16] [--batch-size 8] [--device auto] [--repeats 3]
[--sweep 1 2 4 8 16 32]``

1. Fréchet distance time at d = 400 and d = 2048: wfeval (eigenvalues) against
   ``scipy.linalg.sqrtm`` on the same random covariances (median of repeats, run alternately)
   and their agreement.
2. Peak Python-heap memory (tracemalloc) of the streaming statistics fed 64 and 1024 videos'
   worth of 400-d features in batches: flat, since only O(d²) sums are kept.
3. I3D throughput: clips/s through ``wfeval.functional.fvd`` (uint8 64×64×16 videos → clip
   selection, [-1, 1], resize to 224, batched forward, streaming statistics, Fréchet distance)
   against a bare forward pass of the same network on ready-made 224×224 input tensors.

4. With ``--sweep``, only I3D clips/s through the extractor at each batch size (interleaved, median
   of repeats, distinct 256×256 clips resized to 224 as in the realistic run) and the process's
   peak RSS: how the per-device default of ``metric.fvd.batch_size`` was chosen.

On a shared machine, other processes' load moves the absolute numbers; the ratios are measured
side by side and move much less.

The I3D weights are fetched into the cache first if needed (``python -m wfeval.features.fetch``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _side_by_side(first, second, repeats: int) -> tuple[float, float]:
    """Median seconds of each, run alternately so that a load change on the machine hits both."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for fn, out in ((first, times[0]), (second, times[1])):
            started = time.perf_counter()
            fn()
            out.append(time.perf_counter() - started)
    return statistics.median(times[0]), statistics.median(times[1])


def i3d_throughput(clips: int, batch_size: int, device: str, repeats: int) -> None:
    import torch

    from wfeval.features.extractor import to_network_input
    from wfeval.features.network import load_network, pick_device, reproducible_math
    from wfeval.features.preprocess import ClipRecipe
    from wfeval.features.weights import resolve_weights
    from wfeval.functional import fvd

    info = resolve_weights()
    dev = pick_device(device)
    reproducible_math()
    net = load_network(info, str(dev))
    rng = np.random.default_rng(0)
    videos = rng.integers(0, 256, (clips, 16, 64, 64, 3), dtype=np.uint8)  # distinct: no feature reuse
    half = clips // 2

    def through_wfeval() -> None:
        fvd(videos[:half], videos[half:], batch_size=batch_size, device=str(dev), progress="off")

    ready = [to_network_input(videos[i:i + batch_size], ClipRecipe(), dev) for i in range(0, clips, batch_size)]

    def bare() -> None:
        with torch.inference_mode():
            for x in ready:
                net(x).cpu()
        if dev.type == "cuda":
            torch.cuda.synchronize()

    bare()  # warm-up (oneDNN / cuDNN kernel selection)
    t_wfeval, t_bare = _side_by_side(through_wfeval, bare, repeats)
    print(f"I3D on {dev} ({torch.get_num_threads()} CPU threads), {clips} clips of 16 frames, batch {batch_size}:")
    print(f"  through wfeval.functional.fvd  {clips / t_wfeval:8.2f} clips/s")
    print(f"  bare forward (224x224 ready)   {clips / t_bare:8.2f} clips/s")
    print(f"  wfeval / bare                  {t_bare / t_wfeval:8.2f}  (1.0 = no overhead)")


def batch_sweep(sizes: list[int], clips: int, device: str, repeats: int) -> None:
    import resource

    import torch

    from wfeval.features.extractor import I3DExtractor, default_batch_size
    from wfeval.features.preprocess import ClipRecipe
    from wfeval.features.weights import resolve_weights

    extractor = I3DExtractor(resolve_weights(), ClipRecipe(16, "first", 0, 224, "bilinear"), device=device)
    rng = np.random.default_rng(0)
    videos = list(rng.integers(0, 256, (clips, 16, 256, 256, 3), dtype=np.uint8))
    extractor.batch_size = 2
    extractor.features(videos[:2])  # warm-up (oneDNN / cuDNN kernel selection)
    times: dict[int, list[float]] = {b: [] for b in sizes}
    for _ in range(repeats):
        for b in sizes:
            extractor.batch_size = b
            started = time.perf_counter()
            extractor.features(videos)
            if extractor.device.type == "cuda":
                torch.cuda.synchronize()
            times[b].append(time.perf_counter() - started)
    print(f"I3D batch sweep on {extractor.device} ({torch.get_num_threads()} CPU threads), {clips} clips of "
          f"16x256x256, median of {repeats} (default here: {default_batch_size(device)}):")
    for b in sizes:
        print(f"  batch {b:3d}  {clips / statistics.median(times[b]):7.2f} clips/s")
    print(f"  peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def frechet_timing(repeats: int) -> None:
    import scipy.linalg

    from wfeval.functional import frechet_distance

    print("Fréchet distance (median of repeats):")
    for dim in (400, 2048):
        rng = np.random.default_rng(dim)
        a, b = rng.standard_normal((dim, dim + 64)), rng.standard_normal((dim, dim + 64))
        cov1, cov2 = a @ a.T / dim, b @ b.T / dim
        mu1, mu2 = rng.standard_normal(dim), rng.standard_normal(dim)

        def direct() -> float:
            root = scipy.linalg.sqrtm(cov1 @ cov2)
            return float(((mu1 - mu2) ** 2).sum() + np.trace(cov1) + np.trace(cov2) - 2 * np.trace(root).real)

        ours = frechet_distance(mu1, cov1, mu2, cov2)  # also the warm-up of both
        rel = abs(ours - direct()) / abs(direct())
        t_ours, t_sqrtm = _side_by_side(lambda: frechet_distance(mu1, cov1, mu2, cov2), direct,
                                        repeats if dim > 1000 else 5 * repeats)
        print(f"  d={dim:5d}  wfeval {t_ours * 1e3:9.1f} ms   scipy sqrtm {t_sqrtm * 1e3:9.1f} ms   "
              f"speed-up {t_sqrtm / t_ours:5.1f}x   relative difference {rel:.1e}")


def streaming_memory(batch: int = 64, dim: int = 400) -> None:
    from wfeval.stats.frechet import FrechetStats

    print(f"Streaming statistics, peak Python-heap memory ({dim}-d features, batches of {batch}):")
    peaks = {}
    for n in (64, 1024):
        rng = np.random.default_rng(n)
        tracemalloc.start()
        stats = FrechetStats()
        for _ in range(n // batch):
            stats.update(rng.standard_normal((batch, dim)).astype(np.float32))
        stats.cov("N")
        peaks[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"  {n:5d} videos  peak {peaks[n] / 2**20:7.2f} MiB")
    print(f"  1024 / 64 ratio {peaks[1024] / peaks[64]:.2f} (1.0 = flat; the features themselves would be "
          f"{1024 * dim * 4 / 2**20:.1f} MiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sweep", type=int, nargs="+", default=None, metavar="BATCH",
                        help="only the I3D batch-size sweep, at these batch sizes")
    args = parser.parse_args()
    if args.sweep:
        batch_sweep(args.sweep, args.clips, args.device, args.repeats)
        return
    frechet_timing(args.repeats)  # before torch runs: its idle OpenMP threads would compete with BLAS
    streaming_memory()
    i3d_throughput(args.clips, args.batch_size, args.device, args.repeats)


if __name__ == "__main__":
    main()
