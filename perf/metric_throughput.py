"""SSIM and PSNR throughput of wfeval.functional against torchmetrics, on the same tensors.

Run: ``python perf/metric_throughput.py [--repeats 9] [--threads 2] [--device cuda]``
(needs ``pip install torchmetrics``; it must not pull torchvision).

Both sides score the same uint8-valued frames, converted once to float32 tensors in [0, 255]:
torchmetrics gets its native ``N×C×H×W`` layout (contiguous), wfeval its native
``B×T×H×W×C`` layout (it permutes internally), both with ``data_range=255``. SSIM is the
Gaussian 11×11, σ=1.5 variant on both sides; PSNR is per frame, then averaged. Printed per
frame size: the best-of-``--repeats`` seconds of each (calls alternate, after one warm-up),
frames per second of wfeval, the largest absolute difference of the per-frame values, and the ratio
torchmetrics_time / wfeval_time (> 1 means wfeval is faster).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SIZES = ((64, 64, 32, 15), (128, 128, 8, 15), (256, 256, 2, 15), (512, 512, 1, 4), (97, 131, 8, 15))  # H, W, B, T
GPU_SIZES = ((256, 256, 64, 15), (64, 64, 512, 15))  # a GPU only pays off on many frames at once


def _timed_pair(ours, theirs, repeats: int, sync=lambda: None) -> tuple[float, float, object, object]:
    """Best-of-``repeats`` seconds of each, the two calls alternating (fair under a noisy load);
    ``sync`` waits for the device's queued work (CUDA launches return before the kernels end)."""
    out_ours, out_theirs = ours(), theirs()  # warm-up
    sync()
    t_ours, t_theirs = [], []
    for _ in range(repeats):
        for fn, times in ((ours, t_ours), (theirs, t_theirs)):
            started = time.perf_counter()
            fn()
            sync()
            times.append(time.perf_counter() - started)
    return min(t_ours), min(t_theirs), out_ours, out_theirs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (adds larger batches of frames on cuda)")
    args = parser.parse_args()

    import torch
    from torchmetrics.functional.image import peak_signal_noise_ratio as tm_psnr
    from torchmetrics.functional.image import structural_similarity_index_measure as tm_ssim

    from wfeval.functional import psnr, ssim

    if args.threads:
        torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(0)
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    sizes = SIZES + (GPU_SIZES if device.type == "cuda" else ())
    print(f"torch {torch.__version__}, {device}, threads {torch.get_num_threads()}, float32, data_range=255")
    print(f"{'metric':6} {'frames':>14} {'wfeval s':>9} {'tm s':>9} {'wfeval fps':>11} {'max |diff|':>11} "
          f"{'tm/wfeval':>9}")
    for h, w, b, t in sizes:
        base = torch.randint(0, 256, (b, t, h, w, 3), generator=gen, dtype=torch.uint8)
        noise = torch.randint(-30, 31, base.shape, generator=gen)
        other = (base.to(torch.int16) + noise).clamp(0, 255).to(torch.uint8)
        preds, target = base.to(device).float(), other.to(device).float()  # wfeval layout B×T×H×W×C
        preds_nchw = preds.reshape(-1, h, w, 3).permute(0, 3, 1, 2).contiguous()
        target_nchw = target.reshape(-1, h, w, 3).permute(0, 3, 1, 2).contiguous()
        n = b * t
        cases = {
            "ssim": (lambda: ssim(preds, target, data_range=255.0, per_frame=True),
                     lambda: tm_ssim(preds_nchw, target_nchw, data_range=255.0, reduction="none")),
            "psnr": (lambda: psnr(preds, target, data_range=255.0, per_frame=True),
                     lambda: tm_psnr(preds_nchw, target_nchw, data_range=255.0, reduction="none", dim=(1, 2, 3))),
        }
        for name, (ours, theirs) in cases.items():
            with torch.no_grad():
                t_ours, t_tm, v_ours, v_tm = _timed_pair(ours, theirs, args.repeats, sync)
            diff = (v_ours.reshape(-1).double().cpu() - v_tm.reshape(-1).double().cpu()).abs().max().item()
            print(f"{name:6} {f'{n}x{h}x{w}':>14} {t_ours:9.4f} {t_tm:9.4f} {n / t_ours:11.0f} {diff:11.2e} "
                  f"{t_tm / t_ours:9.2f}")


if __name__ == "__main__":
    main()
