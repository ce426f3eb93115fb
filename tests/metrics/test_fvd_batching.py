"""FVD batches clips of different samples into one forward pass and builds I3D only when a
feature is missing."""

from __future__ import annotations

import numpy as np

from tests.features._weights import require_i3d_weights
from tests.metrics.test_fvd_metric import _pairs, _video
from wfeval.features.extractor import default_batch_size
from wfeval.metrics.fvd import FVD
from wfeval.storage.artifacts import ArtifactStore


class _Counting:
    """Wraps the real extractor and records the size of every forward pass."""

    def __init__(self, inner):
        self.inner, self.batch_size, self.calls = inner, inner.batch_size, []

    def features(self, clips):
        self.calls.append(len(clips))
        return self.inner.features(clips)


def test_prepare_sends_clips_of_several_samples_per_forward_pass_and_rows_match(tmp_path):
    require_i3d_weights()
    store = ArtifactStore(tmp_path / "store")
    pairs = _pairs(store, {i: _video(100 + i) for i in range(2)}, n=2)  # 4 distinct videos
    batched = FVD(feature_dir=str(tmp_path / "a"), batch_size=3, device="cpu", clip_length=10)
    batched._load()
    batched._extractor = _Counting(batched._network())
    assert batched.prepare(pairs) == 4
    assert batched._extractor.calls == [3, 1]  # not 2 passes of 2 clips
    rows = [batched.compute_sample(q, r) for q, r in pairs]
    assert batched._extractor.calls == [3, 1]  # compute_sample found every feature cached
    one_by_one = FVD(feature_dir=str(tmp_path / "b"), batch_size=3, device="cpu", clip_length=10)
    slow = [one_by_one.compute_sample(q, r) for q, r in pairs]
    for fast_row, slow_row in zip(rows, slow):
        for key in ("reference_features", "generated_features"):
            a = np.load(fast_row.artifact_refs[key].uri)
            b = np.load(slow_row.artifact_refs[key].uri)
            np.testing.assert_array_equal(a, b)  # other batches, the same features


def test_the_network_is_not_built_when_every_feature_is_cached(tmp_path):
    require_i3d_weights()
    store = ArtifactStore(tmp_path / "store")
    pairs = _pairs(store, {0: _video(0), 1: _video(1)}, n=2)
    first = FVD(feature_dir=str(tmp_path / "f"), device="cpu", clip_length=10)
    [first.compute_sample(q, r) for q, r in pairs]
    warm = FVD(feature_dir=str(tmp_path / "f"), device="cpu", clip_length=10)
    assert warm.prepare(pairs) == 0
    rows = [warm.compute_sample(q, r) for q, r in pairs]
    assert [r.status for r in rows] == ["ok", "ok"] and warm._extractor is None


def test_prepare_leaves_unreadable_and_short_videos_to_their_own_sample(tmp_path):
    require_i3d_weights()
    store = ArtifactStore(tmp_path / "store")
    pairs = _pairs(store, {0: _video(0, frames=8), 1: _video(1)}, n=2)
    metric = FVD(feature_dir=str(tmp_path / "f"), device="cpu", clip_length=10)
    assert metric.prepare(pairs) == 2  # the two references (the second is also sample 1's generated video)
    row = metric.compute_sample(*pairs[0])
    assert row.status == "skip" and "fewer than clip_length 10" in row.skip_reason


def test_the_default_batch_size_follows_the_device():
    assert default_batch_size("cpu") == 2
    assert default_batch_size("cuda") == 32


def test_a_videos_features_do_not_depend_on_its_batch(tmp_path):
    """Bit for bit: alone (a pass of one clip goes through with a copy of itself), with other batch
    mates, at another batch size. What lets an overlapped run extract the references' features
    first and still write the results of a run that extracts them block by block."""
    require_i3d_weights()
    metric = FVD(feature_dir=str(tmp_path / "f"), device="cpu", clip_length=10)
    assert not metric._load()
    network = metric._network()
    clips = [_video(200 + i)[:10] for i in range(3)]
    alone = network.features(clips[:1])
    paired = network.features(clips[:2])
    network.batch_size = 3
    shifted = network.features(clips[2:] + clips[:2])  # one pass: behind another clip, in a batch of 3
    np.testing.assert_array_equal(alone[0], paired[0])
    np.testing.assert_array_equal(paired, shifted[1:])


def test_references_prepared_first_give_the_rows_of_block_by_block_preparation(tmp_path):
    require_i3d_weights()
    store = ArtifactStore(tmp_path / "store")
    pairs = _pairs(store, {i: _video(300 + i) for i in range(2)}, n=2)
    early = FVD(feature_dir=str(tmp_path / "a"), device="cpu", clip_length=10)
    assert early.prepare_references(q for q, _ in pairs) == 2
    assert early.prepare(pairs) == 2  # only the generated videos are left
    late = FVD(feature_dir=str(tmp_path / "b"), device="cpu", clip_length=10)
    assert late.prepare(pairs) == 4
    for (q, r) in pairs:
        a, b = early.compute_sample(q, r), late.compute_sample(q, r)
        for key in ("reference_features", "generated_features"):
            np.testing.assert_array_equal(np.load(a.artifact_refs[key].uri), np.load(b.artifact_refs[key].uri))
