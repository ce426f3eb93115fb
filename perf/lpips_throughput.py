"""LPIPS throughput of ``wfeval.functional.lpips``: frame pairs per second, AlexNet and VGG16.

Run: ``python perf/lpips_throughput.py [--repeats 5] [--device cpu|cuda]``. The weights are
test weights (tests/features/_lpips.py: random, in the official layout): the arithmetic, hence the
time, is the real network's. Printed per network and frame size: the best-of-``--repeats``
seconds for one batch of frame pairs and the frame pairs per second.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SIZES = ((64, 64, 16), (128, 128, 8), (256, 256, 4))  # H, W, frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    import numpy as np
    import torch

    from tests.features._lpips import write_test_weights
    from wfeval.features.lpips_weights import resolve_lpips_weights
    from wfeval.functional import lpips

    folder = Path(tempfile.mkdtemp(prefix="wfeval-lpips-bench-"))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {args.device}")
    print(f"{'net':5} {'frames':>14} {'best s':>8} {'pairs/s':>8}")
    for net in ("alex", "vgg"):
        weights = resolve_lpips_weights(net, *map(str, write_test_weights(folder, net)))
        for h, w, t in SIZES:
            rng = np.random.default_rng(0)
            a, b = (torch.from_numpy(rng.integers(0, 256, (t, h, w, 3), dtype=np.uint8)).to(args.device)
                    for _ in range(2))
            times = []
            for _ in range(args.repeats + 1):  # the first is a warm-up
                started = time.perf_counter()
                lpips(a, b, weights=weights).item()
                times.append(time.perf_counter() - started)
            best = min(times[1:])
            print(f"{net:5} {f'{t}×{h}×{w}':>14} {best:8.3f} {t / best:8.1f}")


if __name__ == "__main__":
    main()
