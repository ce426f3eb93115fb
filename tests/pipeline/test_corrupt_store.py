"""A stored object whose content does not match its address (flipped bytes, truncated file) is
detected when read and discarded; the generation cache has it regenerated, records an
``artifact_corrupt`` event, and never counts it as a model failure nor scores it."""

from __future__ import annotations

import json

import numpy as np
import pytest
import zstandard

from tests.conftest import compose
from wfeval.storage.artifacts import ArtifactCorrupt, ArtifactStore, array_bytes, check_object, read_array


def _video(seed=0):
    return np.random.default_rng(seed).integers(0, 256, (3, 16, 16, 3), dtype=np.uint8)


def _flip_middle_byte(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))  # same length


def _truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _other_content_at(path):  # a valid zstd object of other content: only the address check sees it
    path.write_bytes(zstandard.ZstdCompressor().compress(array_bytes(_video(9))))


@pytest.mark.parametrize("damage", [_flip_middle_byte, _truncate, _other_content_at])
def test_a_damaged_object_is_detected_on_read_discarded_and_written_again_by_put(tmp_path, damage):
    store = ArtifactStore(tmp_path)
    ref = store.put_array(_video(), kind="video")
    path = store.object_path(ref.sha256)
    damage(path)
    with pytest.raises(ArtifactCorrupt, match="discarded from the store") as info:
        read_array(ref)
    assert info.value.path == path and info.value.discarded and not path.exists()
    again = store.put_array(_video(), kind="video")
    assert again == ref
    np.testing.assert_array_equal(read_array(again), _video())


def test_a_damaged_file_outside_a_store_is_reported_but_left_alone(tmp_path):
    ref = ArtifactStore(tmp_path / "s").put_array(_video(), kind="video")
    loose = tmp_path / "mine.npy.zst"
    loose.write_bytes(open(ref.uri, "rb").read()[:-5])
    with pytest.raises(ArtifactCorrupt) as info:
        check_object(type(ref)(kind="video", uri=str(loose), sha256=ref.sha256, media_type=ref.media_type))
    assert not info.value.discarded and loose.exists()


def test_objects_of_an_uncompressed_store_stay_readable_and_are_not_duplicated(tmp_path):
    old = ArtifactStore(tmp_path, codec="npy").put_array(_video(), kind="video")
    assert old.uri.endswith(".npy") and old.media_type == "application/x-npy"
    store = ArtifactStore(tmp_path)  # the default codec (zstd)
    np.testing.assert_array_equal(read_array(old), _video())
    assert store.put_array(_video(), kind="video") == old  # the existing object, not a second copy
    assert len(list((tmp_path / "objects").rglob("*"))) == 2  # one folder, one file
    _flip_middle_byte(store.object_path(old.sha256))
    with pytest.raises(ArtifactCorrupt, match="sha256 mismatch"):
        read_array(old)


@pytest.mark.parametrize("damage", [_flip_middle_byte, _truncate])
def test_the_generation_cache_regenerates_a_corrupt_output_and_records_it(tmp_path, damage):
    from wfeval.pipeline.runner import run_from_config

    store = tmp_path / "store"
    base = [f"run.store_dir={store}", "run.progress=off", "benchmark.num_samples=3", "model=static",
            "metric=[psnr,generated_rate]"]
    first = run_from_config(compose(base), output_dir=tmp_path / "first")
    rows = [json.loads(line) for line in (tmp_path / "first" / "generations.jsonl").read_text().splitlines()]
    generated = rows[1]["result"]["artifacts"]["generated_video"]
    victim = ArtifactStore(store).object_path(generated["sha256"])
    damage(victim)
    second = run_from_config(compose(base), output_dir=tmp_path / "second")
    assert (second.generated, second.cached) == (1, 2)  # only the damaged sample was generated again
    events = [json.loads(line) for line in (tmp_path / "second" / "events.jsonl").read_text().splitlines()]
    [corrupt] = [e for e in events if e["event"] == "artifact_corrupt"]
    assert corrupt["sample_id"] == rows[1]["request"]["sample_id"] and corrupt["action"] == "regenerate"
    assert corrupt["path"] == str(victim) and corrupt["discarded"] is True
    for key in ("gridworld.psnr", "gridworld.generated_rate"):
        assert second.results[key].to_dict() == first.results[key].to_dict()  # no failure, same numbers
    assert victim.exists()  # written again by the regeneration
    check_object(_ref(generated))  # and it reads back to its address


def _ref(data):
    from wfeval.api import ArtifactRef

    return ArtifactRef.from_dict(data)
