"""The one sealing helper of store records (wfeval/storage/seal.py): a record passes only as it was
written, by this store's key, under the name it was written for."""

from __future__ import annotations

import hashlib
import json
import stat
from concurrent.futures import ThreadPoolExecutor

import pytest

from wfeval.storage.artifacts import ArtifactStore
from wfeval.storage.decoded import DecodedCache
from wfeval.storage.seal import KEY_FILE, SEAL, RecordRefused, Sealer

RECORD = {"sample_id": "s-0", "artifacts": {"generated_video": {"sha256": "ab" * 32}}, "value": 22.84, "nan": None}


def _why(sealer: Sealer, name: str, data: bytes) -> str:
    with pytest.raises(RecordRefused) as refused:
        sealer.loads(name, data, sealer.root / "r.json")
    assert str(sealer.root / "r.json") in str(refused.value)  # a refusal names the file
    return refused.value.why


def test_a_sealed_record_reads_back_as_written_and_only_as_written(tmp_path):
    sealer = Sealer(tmp_path)
    data = sealer.dumps("generation/m/k", RECORD)
    assert sealer.loads("generation/m/k", data, tmp_path / "r.json") == RECORD
    assert Sealer(tmp_path).loads("generation/m/k", data, tmp_path / "r.json") == RECORD  # the key is the store's
    edited = json.loads(data)
    edited["value"] = 100.0
    assert _why(sealer, "generation/m/k", json.dumps(edited).encode()) == "seal_mismatch"
    assert _why(sealer, "generation/m/other", data) == "seal_mismatch"  # copied under another key
    assert _why(sealer, "generation/m/k", data[: len(data) // 2]) == "unreadable"
    assert _why(sealer, "generation/m/k", json.dumps(RECORD).encode()) == "unsealed"
    rewritten = json.dumps(json.loads(data), indent=2).encode()  # a JSON tool's rewrite, the values equal
    assert _why(sealer, "generation/m/k", rewritten) == "seal_mismatch"
    assert _why(Sealer(tmp_path / "other"), "generation/m/k", data) == "seal_mismatch"  # another store's key


def test_a_record_resealed_without_the_key_is_refused(tmp_path):
    sealer = Sealer(tmp_path)
    forged = {**RECORD, "value": 100.0}
    body = json.dumps(forged, sort_keys=True, separators=(",", ":")).encode()
    for seal in (hashlib.sha256(body).hexdigest(), "hmac-sha256:" + hashlib.sha256(body).hexdigest()):
        assert _why(sealer, "generation/m/k", json.dumps({**forged, SEAL: seal}).encode()) == "seal_mismatch"


def test_the_store_key_is_made_once_private_and_shared_by_concurrent_sealers(tmp_path):
    root = tmp_path / "store"
    with ThreadPoolExecutor(8) as pool:
        keys = set(pool.map(lambda _: Sealer(root).key, range(16)))
    assert len(keys) == 1 and len(next(iter(keys))) == 32
    assert stat.S_IMODE((root / KEY_FILE).stat().st_mode) == 0o600
    assert sorted(p.name for p in root.iterdir()) == [KEY_FILE]  # no temporary file left behind


@pytest.mark.parametrize("text", ["not a key\n", "", "ab" * 8])
def test_a_store_key_that_is_not_one_is_an_error_naming_it(tmp_path, text):
    (tmp_path / KEY_FILE).write_text(text)
    with pytest.raises(OSError, match=f"{KEY_FILE}: not a store key"):
        Sealer(tmp_path).key


def test_an_edited_decoded_file_record_is_refused_and_reported(tmp_path):
    store = ArtifactStore(tmp_path)
    heard = []
    store.seal.on_refused = lambda refusal, record, action: heard.append((refusal.path, refusal.why, record, action))
    cache = DecodedCache(store)
    key = "cd" * 32
    found = {"sha256": hashlib.sha256(b"x").hexdigest(), "shape": (2, 3), "dtype": "uint8"}
    cache.put(key, found)
    assert cache.get(key) == found and not heard
    path = cache._path(key)
    edited = json.loads(path.read_text())
    edited["shape"] = [3, 2]
    path.write_text(json.dumps(edited))
    assert cache.get(key) is None
    assert heard == [(path, "seal_mismatch", "decoded-file record", "decode again")]


def test_edited_reference_statistics_are_refused_and_sound_ones_served(tmp_path, caplog):
    import numpy as np

    from wfeval.stats.frechet import FrechetStats
    from wfeval.storage.features import ReferenceStatsCache

    cache, key = ReferenceStatsCache(tmp_path), "ef" * 32
    stats = FrechetStats().update(np.arange(20, dtype=np.float64).reshape(5, 4) ** 1.5)
    path = cache.save(key, stats)
    assert np.array_equal(cache.load(key).total, stats.total)
    arrays = dict(np.load(path))
    arrays["total"] = arrays["total"] * 2  # the FVD it gives would change: the seal is kept
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)
    with caplog.at_level("WARNING"):
        assert cache.load(key) is None
    assert str(path) in caplog.text and "does not match" in caplog.text
    arrays.pop(SEAL)
    with open(path, "wb") as handle:  # statistics written before seals existed
        np.savez(handle, **arrays)
    assert cache.load(key) is None
