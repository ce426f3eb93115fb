"""One file hash (utils.hashing.file_sha256, with the one digest cache) and safe_io's atomic_target."""

from __future__ import annotations

import hashlib
import os

import pytest

from wfeval.storage.safe_io import atomic_target
from wfeval.utils.hashing import file_sha256


def test_the_file_hash_is_sha256_of_the_bytes_cached_or_not(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(b"abc" * 1000)
    expected = hashlib.sha256(b"abc" * 1000).hexdigest()
    assert file_sha256(path) == expected == file_sha256(path, cached=True) == file_sha256(path, cached=True)


def test_the_cache_hashes_a_file_rewritten_in_place_again_even_with_the_same_size_and_time(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(b"a" * 64)
    first = file_sha256(path, cached=True)
    stat = path.stat()
    with open(path, "r+b") as handle:  # same size, same modification time restored: the change time moves
        handle.write(b"b")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert file_sha256(path, cached=True) == hashlib.sha256(b"b" + b"a" * 63).hexdigest() != first


def test_atomic_target_renames_on_success_and_leaves_nothing_on_failure(tmp_path):
    dest = tmp_path / "sub" / "out.mp4"
    with atomic_target(dest) as tmp:
        tmp.write_bytes(b"whole")
        assert not dest.exists()
    assert dest.read_bytes() == b"whole"
    with pytest.raises(RuntimeError), atomic_target(dest) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("writer failed")
    assert dest.read_bytes() == b"whole" and sorted(p.name for p in dest.parent.iterdir()) == ["out.mp4"]


def test_atomic_target_replaces_a_link_instead_of_writing_through_it(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    link = tmp_path / "out.txt"
    link.symlink_to(victim)
    with atomic_target(link) as tmp:
        tmp.write_text("new")
    assert victim.read_text() == "keep" and not link.is_symlink() and link.read_text() == "new"


def test_only_64_lowercase_hex_digits_name_a_stored_object():
    from wfeval.utils.hashing import is_sha256, sha256_json

    assert is_sha256(sha256_json({"a": 1}))
    for name in (sha256_json({}).upper(), sha256_json({})[:63], sha256_json({}) + "0", "../" + "0" * 61,
                 "0" * 63 + "\n", int("1" * 64), None):
        assert not is_sha256(name), name
