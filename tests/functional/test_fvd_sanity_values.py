"""The I3D port reproduces the published black-vs-white FVD sanity values (within 0.3 %).

8 all-black vs 8 all-white 64×64 videos: the covariances vanish, so FVD is the squared distance
of the two I3D mean logits — a test of the network, its weights and its TF "SAME" padding.
Published: 30 frames → 151.2–151.4 (151.17 with StyleGAN-V's TorchScript I3D), 10 frames → ~570.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.features._weights import require_i3d_weights
from wfeval.features.weights import CKPT_SHA256, CONVERTED_SHA256
from wfeval.functional import fvd


def _black_and_white(frames: int) -> tuple[np.ndarray, np.ndarray]:
    black = np.zeros((8, frames, 64, 64, 3), np.uint8)
    return black, black + 255


@pytest.mark.parametrize(("frames", "published"), [(30, (151.17, 151.4)), (10, (570.0,))])
def test_black_vs_white_matches_the_published_values(frames, published):
    require_i3d_weights()
    result = fvd(*_black_and_white(frames), clip_length=frames, progress="off")
    for value in published:
        assert result.value == pytest.approx(value, rel=3e-3)
    assert result.covariance_term == pytest.approx(0.0, abs=1e-6)
    assert (result.n_real, result.n_generated, result.feature_dim) == (8, 8, 400)
    assert result.rank_deficient  # N = 8 < d = 400: flagged
    assert result.recipe["clip_length"] == frames and result.recipe["covariance"] == "N"
    assert (result.weights["sha256"], result.weights["source_sha256"]) == (CONVERTED_SHA256, CKPT_SHA256)


def test_grayscale_short_videos_generators_and_the_bootstrap_are_handled():
    require_i3d_weights()
    black, white = _black_and_white(10)
    gray = [v[..., 0] for v in white] + [np.zeros((4, 64, 64), np.uint8)]  # one video too short
    result = fvd((v for v in black), gray, clip_length=10, bootstrap=50, progress="off")
    assert result.value == pytest.approx(570.0, rel=3e-3)
    assert result.skipped == {"generated: video has 4 frames, fewer than clip_length 10": 1}
    assert result.n_generated == 8
    ci = result.confidence_interval
    assert ci["method"] == "bootstrap_percentile" and ci["n_resamples"] == 50
    assert ci["low"] == pytest.approx(result.value) and ci["high"] == pytest.approx(result.value)
    paired = fvd(black, black, clip_length=10, bootstrap=20, bootstrap_mode="paired", progress="off")
    assert paired.value == 0.0 and paired.confidence_interval["high"] == 0.0
    with pytest.raises(ValueError, match="at least 2 usable generated videos"):
        fvd(black, white[:1], clip_length=10, progress="off")


@pytest.mark.parametrize("batch_size", [0, -2, 1.5, True])
def test_a_batch_size_that_is_not_a_positive_count_is_refused_before_any_weights_are_read(batch_size, tmp_path):
    videos = [np.zeros((16, 8, 8, 3), np.uint8)] * 2
    with pytest.raises(ValueError, match=f"batch_size must be a positive number of clips.*got {batch_size!r}"):
        fvd(videos, videos, batch_size=batch_size, cache_dir=str(tmp_path / "empty"), fetch=False)
