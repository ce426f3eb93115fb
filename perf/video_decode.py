"""Decode throughput (frames/s) of PyAV containers against reading the same frames from ``.npy``.

Run: ``python perf/video_decode.py [--clips 16] [--frames 16] [--sizes 64 256] [--repeats 5]``

The clips are gridworld episodes (upscaled for the larger sizes), written once per format with
:func:`wfeval.io.write_video` and read back with :func:`wfeval.io.read_video`, side by side in
one process: ``.npy``, ``.npz``, ``.mkv`` (ffv1), ``.mov`` (png), ``.mp4`` (h264) and a folder of
PNG frames. Printed per size: median frames/s over the repeats, the ratio to ``.npy``, bytes on
disk per frame, and whether the decoded frames equal the originals.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wfeval.benchmarks.gridworld import world  # noqa: E402
from wfeval.io import read_video, write_video  # noqa: E402

FORMATS = (".npy", ".npz", ".mkv", ".mov", ".mp4", "frames")


def episodes(count: int, frames: int, size: int) -> list[np.ndarray]:
    out = []
    for index in range(count):
        seed = int.from_bytes(hashlib.sha256(f"decode/{index}".encode()).digest()[:4], "little")
        state = world.initial_state(seed, world.WorldSpec())
        video, _ = world.rollout(state, world.sample_actions(seed + 1, frames - 1))
        scale = max(1, size // video.shape[1])
        out.append(np.ascontiguousarray(video.repeat(scale, axis=1).repeat(scale, axis=2)))
    return out


def measure(clips: list[np.ndarray], folder: Path, fmt: str, repeats: int) -> tuple[float, float, bool]:
    paths = []
    for index, clip in enumerate(clips):
        name = f"clip{index:03d}" + ("" if fmt == "frames" else fmt)
        paths.append(write_video(folder / name, clip, fps=8))
    size = sum(p.stat().st_size if p.is_file() else sum(f.stat().st_size for f in p.iterdir()) for p in paths)
    n_frames = sum(len(c) for c in clips)
    exact = all(np.array_equal(read_video(p).frames, c) for p, c in zip(paths, clips))
    rates = []
    for _ in range(repeats):
        started = time.perf_counter()
        for path in paths:
            read_video(path)
        rates.append(n_frames / (time.perf_counter() - started))
    return statistics.median(rates), size / n_frames, exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=16)
    parser.add_argument("--frames", type=int, default=16)
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import av

    print(f"PyAV {av.__version__} (FFmpeg {av.ffmpeg_version_info}), numpy {np.__version__}; "
          f"{args.clips} clips x {args.frames} frames, median of {args.repeats}")
    for size in args.sizes:
        clips = episodes(args.clips, args.frames, size)
        print(f"\n{size}x{size}x{args.frames}  format       frames/s   vs .npy   bytes/frame  exact")
        with tempfile.TemporaryDirectory() as tmp:
            results = {fmt: measure(clips, Path(tmp) / fmt.strip("."), fmt, args.repeats) for fmt in FORMATS}
        base = results[".npy"][0]
        for fmt, (rate, per_frame, exact) in results.items():
            label = {".mkv": ".mkv ffv1", ".mov": ".mov png", ".mp4": ".mp4 h264", "frames": "png frames"}.get(fmt, fmt)
            print(f"{'':14}{label:12} {rate:10.0f}  {rate / base:7.3f}x  {per_frame:11.0f}  {'yes' if exact else 'no'}")


if __name__ == "__main__":
    main()
