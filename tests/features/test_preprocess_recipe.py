"""Preprocessing is named and recorded: layout, clip window, value mapping and the resize variant."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from wfeval.features.extractor import resize_frames, tf1_bilinear_matrix, to_network_input
from wfeval.features.preprocess import ClipRecipe, ClipTooShort, as_rgb, select_clip


def test_grayscale_is_expanded_and_other_channel_counts_are_refused():
    assert as_rgb(np.zeros((9, 4, 5), np.uint8)).shape == (9, 4, 5, 3)
    assert as_rgb(np.zeros((9, 4, 5, 1), np.uint8)).shape == (9, 4, 5, 3)
    with pytest.raises(ValueError, match="expected a video"):
        as_rgb(np.zeros((9, 4, 5, 4), np.uint8))


def test_clip_windows_first_and_random_with_a_recorded_seed():
    video = np.arange(40, dtype=np.uint8)[:, None, None, None] * np.ones((1, 2, 2, 3), np.uint8)
    clip, start = select_clip(video, ClipRecipe(clip_length=16))
    assert start == 0 and clip.shape == (16, 2, 2, 3)
    random = ClipRecipe(clip_length=16, clip_selection="random", seed=3)
    starts = {select_clip(video, random, f"video-{i}")[1] for i in range(20)}
    assert len(starts) > 1 and all(0 <= s <= 24 for s in starts)
    assert select_clip(video, random, "video-1")[1] == select_clip(video, random, "video-1")[1]  # same video, same window
    assert random.to_dict()["clip_seed"] == 3 and ClipRecipe(seed=3).to_dict()["clip_seed"] is None
    assert ClipRecipe(seed=3).digest() == ClipRecipe(seed=4).digest()  # the seed only matters for random windows
    assert ClipRecipe(resize_mode="bilinear_tf1").digest() != ClipRecipe().digest()


def test_short_videos_are_refused_with_the_reason():
    with pytest.raises(ClipTooShort, match="video has 12 frames, fewer than clip_length 16"):
        select_clip(np.zeros((12, 4, 4, 3), np.uint8), ClipRecipe())
    with pytest.raises(ClipTooShort, match="I3D needs at least 9"):
        select_clip(np.zeros((8, 4, 4, 3), np.uint8), ClipRecipe(clip_length=None))
    assert select_clip(np.zeros((30, 4, 4, 3), np.uint8), ClipRecipe(clip_length=None))[0].shape[0] == 30


@pytest.mark.parametrize("kwargs", [{"clip_length": 8}, {"clip_selection": "middle"}, {"resize_mode": "nearest"},
                                    {"resize": 256}, {"value_range": (1.0, 0.0)}])
def test_invalid_recipes_are_refused(kwargs):
    with pytest.raises(ValueError):
        ClipRecipe(**kwargs)


def test_uint8_maps_to_minus_one_one_and_is_resized_to_224():
    clips = np.zeros((2, 9, 64, 48, 3), np.uint8)
    clips[1] = 255
    x = to_network_input(clips, ClipRecipe(), torch.device("cpu"))
    assert x.shape == (2, 3, 9, 224, 224) and x.dtype == torch.float32
    # bilinear weights summing to 1 up to float32 round-off (the kernel depends on the thread count)
    assert torch.allclose(x[0], -torch.ones(1), rtol=0, atol=2e-7) and torch.allclose(x[1], torch.ones(1))
    exact = to_network_input(np.zeros((1, 9, 224, 224, 3), np.uint8), ClipRecipe(), torch.device("cpu"))
    assert torch.all(exact == -1.0)  # the value map itself is exact: 0 -> -1 when no resize is needed


def test_resize_variants():
    frames = torch.rand(2, 3, 64, 64)
    expected = F.interpolate(frames, size=(224, 224), mode="bilinear", align_corners=False)
    assert torch.equal(resize_frames(frames, 224, "bilinear"), expected)
    # TF1 resize_bilinear(align_corners=False): source = destination * in/out, no half-pixel centres
    assert torch.allclose(tf1_bilinear_matrix(2, 4), torch.tensor(
        [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0], [0.0, 1.0]], dtype=torch.float64))
    tf1 = resize_frames(frames, 224, "bilinear_tf1")
    assert tf1.shape == (2, 3, 224, 224) and not torch.allclose(tf1, expected)
    assert torch.allclose(tf1[..., 0, 0], frames[..., 0, 0])  # the origin maps onto itself
    big = torch.rand(1, 3, 448, 448)
    assert not torch.allclose(resize_frames(big, 224, "bilinear_antialias"), resize_frames(big, 224, "bilinear"))
