"""Sample ids and dataset paths that would leave their folder are refused with the reason."""

from __future__ import annotations

import pytest

from wfeval.io import unsafe_id_reason, unsafe_path_reason


@pytest.mark.parametrize("sample_id", ["a", "gridworld-test-00001", "scene 1/clip_02", "ä-ü.v2"])
def test_safe_ids(sample_id):
    assert unsafe_id_reason(sample_id) is None


@pytest.mark.parametrize("sample_id,fragment", [
    ("../evil", "escape"), ("a/../../b", "escape"), ("/etc/passwd", "absolute"), ("C:\\x", "backslash"),
    ("", "empty"), ("a//b", "empty path part"), ("a/", "empty path part"), (" a", "spaces"), ("a\nb", "control"),
    (7, "must be a string"), ("x" * 201, "longer than"), (".", "escape"),
])
def test_unsafe_ids(sample_id, fragment):
    assert fragment in unsafe_id_reason(sample_id)


def test_paths_must_stay_under_the_root():
    assert unsafe_path_reason("videos/a.mkv") is None
    assert "absolute" in unsafe_path_reason("/data/a.mkv")
    assert "'..'" in unsafe_path_reason("../a.mkv")
    assert "'..'" in unsafe_path_reason("videos\\..\\..\\a.mkv")
    assert "non-empty string" in unsafe_path_reason(3)
