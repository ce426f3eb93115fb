"""The I3D port pads like TensorFlow "SAME" (asymmetric at stride 2; max pools never pick padding)."""

from __future__ import annotations

import pytest
import torch

from wfeval.features.i3d import InceptionI3D, TFBatchNorm, Unit3D, max_pool_same, same_padding


@pytest.mark.parametrize(("size", "kernel", "stride", "expected"), [
    (224, 7, 2, (2, 3)),  # Conv3d_1a_7x7 spatially: the extra pixel goes after
    (16, 7, 2, (2, 3)),  # ... and in time
    (112, 3, 2, (0, 1)),  # MaxPool3d_2a_3x3
    (8, 2, 2, (0, 0)),  # MaxPool3d_5a_2x2 on an even size
    (7, 2, 2, (0, 1)),  # ... on an odd one
    (56, 3, 1, (1, 1)),  # stride 1: symmetric
    (5, 1, 1, (0, 0)),
])
def test_same_padding_matches_tensorflow(size, kernel, stride, expected):
    assert same_padding(size, kernel, stride) == expected


def test_stride_two_convolution_puts_the_extra_padding_after():
    unit = Unit3D(1, 1, (7, 7, 7), (2, 2, 2), logits=True)
    with torch.no_grad():
        unit.conv.weight.fill_(1.0)
        unit.conv.bias.zero_()
        out = unit(torch.ones(1, 1, 16, 16, 16))
    assert out.shape == (1, 1, 8, 8, 8)
    # first window starts 2 before the edge (5 of 7 taps inside), last window ends 3 after (4 inside)
    assert out[0, 0, 0, 0, 0].item() == 5 ** 3
    assert out[0, 0, -1, -1, -1].item() == 4 ** 3


def test_max_pools_never_pick_a_padded_position():
    x = torch.full((1, 2, 5, 9, 9), -5.0)
    for kernel, stride in (((1, 3, 3), (1, 2, 2)), ((3, 3, 3), (1, 1, 1)), ((2, 2, 2), (2, 2, 2))):
        out = max_pool_same(x, kernel, stride)
        assert torch.all(out == -5.0), (kernel, stride)  # zero padding would leak 0 at the borders
    assert max_pool_same(x, (3, 3, 3), (2, 2, 2)).shape == (1, 2, 3, 5, 5)


def test_batchnorm_has_no_scale_and_epsilon_1e_3():
    bn = TFBatchNorm(2)
    bn.beta.copy_(torch.tensor([1.0, -1.0]))
    bn.mean.copy_(torch.tensor([2.0, 0.0]))
    bn.var.copy_(torch.tensor([4.0, 1.0]))
    x = torch.tensor([3.0, 5.0]).view(1, 2, 1, 1, 1)
    expected = torch.tensor([(3 - 2) / (4 + 1e-3) ** 0.5 + 1, 5 / (1 + 1e-3) ** 0.5 - 1])
    assert torch.allclose(bn(x).flatten(), expected)


def test_network_maps_a_clip_to_400_time_averaged_logits_and_refuses_short_clips():
    net = InceptionI3D().eval()
    with torch.inference_mode():
        assert net(torch.zeros(1, 3, 9, 224, 224)).shape == (1, 400)
        with pytest.raises(ValueError, match="at least 9 frames"):
            net(torch.zeros(1, 3, 8, 224, 224))
        with pytest.raises(ValueError, match="224"):
            net(torch.zeros(1, 3, 9, 256, 256))


@pytest.mark.parametrize(("kernel", "stride"), [((1, 3, 3), (1, 2, 2)), ((3, 3, 3), (2, 2, 2)),
                                                ((2, 2, 2), (2, 2, 2)), ((3, 3, 3), (1, 1, 1))])
def test_max_pool_same_equals_pooling_the_minus_inf_padded_input_at_every_size(kernel, stride):
    """The ceil-mode shortcut (no padded copy of the activations) picks exactly TF SAME's windows."""
    import torch.nn.functional as F

    from wfeval.features.i3d import _ceil_mode_is_same, _flat, _pads, max_pool_same

    shortcut = 0
    for t in range(1, 10):
        for h in range(1, 18):
            x = torch.randn(1, 3, t, h, h + 3, generator=torch.Generator().manual_seed(t * 100 + h))
            pads = _pads(x, kernel, stride)
            padded = F.max_pool3d(F.pad(x, _flat(pads), value=float("-inf")), kernel, stride)
            assert torch.equal(max_pool_same(x, kernel, stride), padded), (t, h)
            shortcut += _ceil_mode_is_same(x, kernel, stride, pads)
    if stride != (1, 1, 1):
        assert shortcut > 0  # the shortcut is really taken on stride-2 pools
