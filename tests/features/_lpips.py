"""LPIPS test weights: a randomly initialised backbone in torchvision's layout and random
non-negative heads, written once per folder (no network). They are *not* LPIPS: runs using them
record ``official: false``. The real files are staged with ``python -m wfeval.features.fetch lpips``.

    overrides = lpips_test_overrides(tmp_path)           # metric.lpips.backbone=... metric.lpips.heads=...
    python -m wfeval metric=[psnr,lpips] *overrides
"""

from __future__ import annotations

from pathlib import Path

import torch

from wfeval.features.lpips import CHANNELS, _features


def write_test_weights(folder: Path, net: str = "alex", seed: int = 0) -> tuple[Path, Path]:
    """(backbone, heads) files for ``net``, seeded: the same bytes for the same seed."""
    folder.mkdir(parents=True, exist_ok=True)
    backbone, heads = folder / f"test-{net}-backbone-{seed}.pth", folder / f"test-{net}-heads-{seed}.pth"
    if not (backbone.is_file() and heads.is_file()):
        generator = torch.Generator().manual_seed(seed)
        torch.manual_seed(seed)  # nn.Conv2d's default (kaiming-uniform) initialisation
        state = {f"features.{k}": v for k, v in _features(net).state_dict().items()}
        torch.save(state, backbone)
        torch.save({f"lin{i}.model.1.weight": torch.rand(1, c, 1, 1, generator=generator)
                    for i, c in enumerate(CHANNELS[net])}, heads)
    return backbone, heads


def lpips_test_overrides(folder: Path, net: str = "alex", seed: int = 0) -> list[str]:
    backbone, heads = write_test_weights(folder, net, seed)
    return [f"metric.lpips.net={net}", f"metric.lpips.backbone={backbone}", f"metric.lpips.heads={heads}"]
