"""The folder family decodes a dataset file once per store (by file content), not once per run."""

from __future__ import annotations

import numpy as np

from tests.benchmarks._folder_helpers import copy_example, lines
from tests.benchmarks.test_folder_adapter import _folder
from wfeval.storage.artifacts import read_array


def test_a_second_selection_reuses_the_decoded_objects_and_a_changed_file_is_decoded_again(tmp_path, monkeypatch):
    import wfeval.benchmarks.folder.adapter as adapter

    root = copy_example(tmp_path / "data")
    _, first = _folder(tmp_path, root)
    decoded = []
    real = adapter.FolderBenchmark._read

    def counting(self, path, *, exact):
        decoded.append(path.name)
        return real(self, path, exact=exact)

    monkeypatch.setattr(adapter.FolderBenchmark, "_read", counting)
    _, second = _folder(tmp_path, root)
    assert decoded == [] and [r.to_dict() for r in second] == [r.to_dict() for r in first]
    # new content under the same name: decoded again, a new object
    row = lines(root)[0]
    video = read_array(first[0].references["video"]).copy()
    video[-1] = 255 - video[-1]
    from wfeval.io import write_video

    target = root / row["reference_video"]
    target.unlink()
    write_video(target, video)
    _, third = _folder(tmp_path, root)
    assert decoded == [target.name]
    assert third[0].references["video"].sha256 != first[0].references["video"].sha256
    np.testing.assert_array_equal(read_array(third[0].references["video"]), video)
    assert [r.to_dict() for r in third[1:]] == [r.to_dict() for r in first[1:]]


def test_a_decoded_object_removed_from_the_store_is_decoded_again(tmp_path):
    root = copy_example(tmp_path / "data")
    _, first = _folder(tmp_path, root)
    for path in (tmp_path / "store" / "objects").rglob("*.zst"):
        path.unlink()
    _, second = _folder(tmp_path, root)
    assert [r.to_dict() for r in second] == [r.to_dict() for r in first]
    read_array(second[0].references["video"])
