"""A dataset folder's files are read in place: the store holds no copy of a reference or an input,
only a small record of what each file decodes to. Reading such a ref decodes the file and checks
the content; a file that changed, moved or cannot be read is an error naming it, and the sample
is left out of the metrics that read it."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from tests.benchmarks._folder_helpers import copy_example, lines, write_lines
from tests.benchmarks.test_folder_adapter import _folder
from tests.conftest import cli_env, compose, read_jsonl
from wfeval.api import ArtifactRef
from wfeval.io import FILE_DECODER, read_image, read_video, write_video
from wfeval.io._decoder import decode, options_for
from wfeval.storage import artifacts
from wfeval.storage.artifacts import (
    FILE_MEDIA_TYPE,
    ArtifactCorrupt,
    ArtifactError,
    ArtifactStore,
    check_object,
    content_sha256,
    read_array,
)


@pytest.fixture()
def decodes(monkeypatch):
    """The dataset files decoded from now on, as (file name, how) pairs: by the folder benchmark
    (to learn a file's content) or by reading a ref (wfeval.storage.artifacts.read_array)."""
    import wfeval.benchmarks.folder.adapter as adapter

    seen: list[tuple[str, str]] = []

    def counting(path, options):
        seen.append((path.name, options["read"]))
        return decode(path, options)

    def counting_read(self, path, *, exact):
        kind, options = self._how(path, exact)
        return counting(path, options), kind

    monkeypatch.setitem(artifacts._DECODERS, "wfeval.io", dataclasses.replace(FILE_DECODER, decode=counting))
    monkeypatch.setattr(adapter.FolderBenchmark, "_read", counting_read)
    return seen


def _run(tmp_path, name, root, *extra):
    from wfeval.pipeline.runner import run_from_config

    cfg = compose(["benchmark=folder", f"benchmark.dataset_root={root}", "model=noisy",
                   f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false", *extra])
    return run_from_config(cfg, output_dir=tmp_path / name)


def _generations(run_dir):
    return read_jsonl(run_dir / "generations.jsonl")


def test_a_folder_run_stores_no_copy_of_the_dataset_and_its_refs_decode_to_the_files(tmp_path):
    root = copy_example(tmp_path / "data")
    _run(tmp_path, "run", root, "metric=[psnr,generated_rate]")
    store = ArtifactStore(tmp_path / "store")
    outputs = set()
    for row in _generations(tmp_path / "run"):
        request = row["request"]
        refs = {**request["inputs"], **request["references"]}
        assert set(refs) == {"image", "video"}
        for ref in map(ArtifactRef.from_dict, refs.values()):
            assert ref.media_type == FILE_MEDIA_TYPE and root in __import__("pathlib").Path(ref.uri).parents
            assert content_sha256(read_array(ref)) == ref.sha256
        line = next(r for r in lines(root) if r["sample_id"] == request["sample_id"])
        np.testing.assert_array_equal(read_array(ArtifactRef.from_dict(request["references"]["video"])),
                                      read_video(root / line["reference_video"]).frames)
        np.testing.assert_array_equal(read_array(ArtifactRef.from_dict(request["inputs"]["image"])),
                                      read_image(root / line["initial_frame"]))
        outputs.update(a["sha256"] for a in row["result"]["artifacts"].values())
    stored = {p.name[:64] for p in (store.root / "objects").rglob("*.zst")}
    assert stored == outputs  # the model's outputs, nothing of the dataset


def test_a_warm_run_decodes_nothing_and_gives_the_same_results(tmp_path, decodes):
    root = copy_example(tmp_path / "data")
    first = _run(tmp_path, "cold", root, "metric=[psnr,ssim,flicker]")
    assert {name for name, _ in decodes} == {f"gridworld-test-0000{i}.{ext}" for i in range(4) for ext in ("mkv", "png")}
    decodes.clear()
    second = _run(tmp_path, "warm", root, "metric=[psnr,ssim,flicker]")
    assert decodes == []  # files hashed, records read, every metric row from the result cache
    _run(tmp_path, "warm_with_report", root, "metric=[psnr,ssim,flicker]", "run.report=true")
    assert 0 < len(decodes) <= 3 * 3  # only the report's pictures: best, median, worst sample per measurement
    assert {k: v.to_dict() for k, v in second.results.items()} == {k: v.to_dict() for k, v in first.results.items()}


def test_a_reference_changed_after_the_run_is_an_error_naming_it_and_kept_out_of_the_means(tmp_path):
    root = copy_example(tmp_path / "data")
    _run(tmp_path, "first", root, "metric=[psnr]")
    row = lines(root)[1]
    target = root / row["reference_video"]
    video = read_video(target).frames
    video[-1] = 255 - video[-1]
    target.unlink()
    write_video(target, video)
    again = _run(tmp_path, "rescored", root, f"run.from_run={tmp_path / 'first'}", "metric=[psnr,mse]")
    rows = {(r["metric_id"], r["sample_id"]): r for r in read_jsonl(tmp_path / "rescored" / "metrics.jsonl")}
    broken = rows[("mse", row["sample_id"])]
    assert broken["diagnostics"]["status"] == "error" and broken["diagnostics"]["exception"] == "ArtifactCorrupt"
    assert str(target) in broken["skip_reason"] and "changed since the run read it" in broken["skip_reason"]
    assert "restore the original file" in broken["skip_reason"]
    mse = again.results["gridworld_tiny.mse"]
    assert (mse.n_total, mse.n_valid) == (4, 3)  # out of the mean, the other samples scored
    assert again.results["gridworld_tiny.psnr"].n_valid == 4  # cached rows of the verified content


def test_verify_artifacts_marks_a_sample_whose_dataset_file_moved_as_failed(tmp_path, decodes):
    root = copy_example(tmp_path / "data")
    _run(tmp_path, "first", root, "metric=[psnr]")
    decodes.clear()
    again = _run(tmp_path, "checked", root, f"run.from_run={tmp_path / 'first'}", "metric=[psnr]",
                 "run.verify_artifacts=true")
    assert decodes == [] and again.results["gridworld_tiny.psnr"].n_valid == 4  # checked by file hashes
    row = lines(root)[2]
    (root / row["reference_video"]).rename(root / "moved.mkv")
    again = _run(tmp_path, "moved", root, f"run.from_run={tmp_path / 'first'}", "metric=[psnr]",
                 "run.verify_artifacts=true")
    psnr = again.results["gridworld_tiny.psnr"]
    assert (psnr.n_total, psnr.n_valid, psnr.n_skipped) == (4, 3, 1)
    [failed] = [r for r in _generations(tmp_path / "moved") if r["result"]["status"] == "failed"]
    assert failed["request"]["sample_id"] == row["sample_id"]
    assert str(root / row["reference_video"]) in failed["result"]["error"]


def _ref(tmp_path, path, read="video"):
    store = ArtifactStore(tmp_path / "store")
    from wfeval.storage.decoded import file_ref

    return file_ref(store, path, kind="image" if read in ("image", "first_frame") else "video",
                    decoder=FILE_DECODER, options=options_for(read))


def test_reading_a_changed_missing_or_unreadable_file_says_which_and_what_to_do(tmp_path):
    path = tmp_path / "v.mkv"
    write_video(path, np.random.default_rng(0).integers(0, 256, (4, 8, 8, 3), dtype=np.uint8))
    ref = _ref(tmp_path, path)
    check_object(ref)
    write_video(path, np.zeros((4, 8, 8, 3), np.uint8))
    with pytest.raises(ArtifactCorrupt, match="changed since the run read it") as info:
        read_array(ref)
    assert info.value.path == path and not info.value.discarded and path.exists()  # never touched
    with pytest.raises(ArtifactCorrupt):
        check_object(ref)  # other bytes: decoded and compared
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(ArtifactError, match=f"{path}: cannot be read any more .*restore the original file"):
        read_array(ref)
    path.unlink()
    with pytest.raises(ArtifactError, match="the file is gone \\(moved or deleted"):
        read_array(ref)
    with pytest.raises(ArtifactError, match="the file is gone"):
        check_object(ref)


def test_an_unchanged_file_decoding_to_other_content_names_the_decoder_versions(tmp_path, monkeypatch):
    path = tmp_path / "v.npy"
    np.save(path, np.arange(2 * 4 * 4 * 3, dtype=np.uint8).reshape(2, 4, 4, 3))
    ref = dataclasses.replace(_ref(tmp_path, path), sha256="0" * 64)
    with pytest.raises(ArtifactCorrupt, match="unchanged yet decodes to other content"):
        read_array(ref)
    newer = dataclasses.replace(FILE_DECODER, versions=lambda: {"av": "99.0", "numpy": "9.0"})
    monkeypatch.setitem(artifacts._DECODERS, "wfeval.io", newer)
    with pytest.raises(ArtifactCorrupt, match="unchanged but decodes to other content with this decoder.*99.0"):
        read_array(ref)


def test_a_frame_folder_is_read_in_place_and_its_frames_are_its_content(tmp_path):
    frames = np.random.default_rng(1).integers(0, 256, (3, 8, 8, 3), dtype=np.uint8)
    folder = tmp_path / "clip"
    write_video(folder, frames)
    ref = _ref(tmp_path, folder)
    assert ref.media_type == FILE_MEDIA_TYPE and ref.uri == str(folder)
    np.testing.assert_array_equal(read_array(ref), frames)
    (folder / "notes.txt").write_text("not a frame")  # not read, not part of the content
    assert FILE_DECODER.digest(folder) == ref.metadata["source"]["file_sha256"]
    check_object(ref)
    first = sorted(folder.glob("*.png"))[0]
    write_video(tmp_path / "other", frames[::-1])
    first.write_bytes(sorted((tmp_path / "other").glob("*.png"))[0].read_bytes())
    with pytest.raises(ArtifactCorrupt, match="changed since the run read it"):
        read_array(ref)
    assert _ref(tmp_path, folder).sha256 != ref.sha256  # a new run records the new content


@pytest.mark.parametrize("name", ["v.mp4", "v.mkv", "v.npy", "frames"])
def test_the_first_frame_decoded_alone_is_frame_zero_of_the_whole_video(tmp_path, name):
    rng = np.random.default_rng(2)
    video = np.clip(np.linspace(0, 200, 6)[:, None, None, None] + rng.normal(0, 20, (6, 256, 256, 3)), 0, 255)
    path = write_video(tmp_path / name, video.astype(np.uint8))  # 256x256: FFmpeg's threaded decoding
    np.testing.assert_array_equal(decode(path, options_for("first_frame")), decode(path, options_for("video"))[0])


def test_prune_keeps_nothing_for_dataset_files_and_du_counts_them_apart(tmp_path):
    import io

    from wfeval.storage.usage import du, kept_references, prune

    root = copy_example(tmp_path / "data")
    _run(tmp_path / "runs", "kept", root, "metric=[generated_rate]")
    store, runs = tmp_path / "runs" / "store", [tmp_path / "runs"]
    kept = kept_references(runs)
    outputs = {a["sha256"] for r in _generations(tmp_path / "runs" / "kept") for a in r["result"]["artifacts"].values()}
    assert kept.shas == outputs and len(kept.files) == 8  # 4 videos and 4 frames, read in place
    report = du(store, runs, out=io.StringIO())
    assert report["dataset_files"] == 8 and report["dataset_files_decoded_bytes"] == 4 * (16 + 1) * 64 * 64 * 3
    assert report["decoded"]["files"] == 8  # one small record per (file, decoding)
    prune(store, runs, older_than=None, max_size=0, out=io.StringIO())
    for row in _generations(tmp_path / "runs" / "kept"):
        for ref in (*row["request"]["inputs"].values(), *row["request"]["references"].values()):
            read_array(ArtifactRef.from_dict(ref))  # nothing of theirs was in the store


@pytest.mark.subprocess  # a process that never imported wfeval.io
def test_a_process_that_never_imported_wfeval_io_reads_a_file_ref_through_the_entry_point(tmp_path):
    path = tmp_path / "v.npy"
    np.save(path, np.full((2, 4, 4, 3), 7, np.uint8))
    ref = _ref(tmp_path, path)
    code = ("import json, sys; from wfeval.api import ArtifactRef; from wfeval.storage.artifacts import read_array; "
            "ref = ArtifactRef.from_dict(json.loads(sys.argv[1])); assert 'wfeval.io' not in sys.modules; "
            "print(int(read_array(ref).sum()))")
    out = subprocess.run([sys.executable, "-c", code, json.dumps(ref.to_dict())], capture_output=True, text=True,
                         env=cli_env(), timeout=60)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == 2 * 4 * 4 * 3 * 7


def test_a_manifest_line_changed_to_another_file_gets_a_new_ref(tmp_path):
    root = copy_example(tmp_path / "data")
    _, first = _folder(tmp_path, root)
    rows = lines(root)
    rows[0]["reference_video"] = rows[1]["reference_video"]
    write_lines(root, rows)
    _, second = _folder(tmp_path, root)
    assert second[0].references["video"].to_dict() == first[1].references["video"].to_dict()
