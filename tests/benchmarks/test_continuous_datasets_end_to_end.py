"""One 2-D continuous-action dataset in four formats (LeRobot v3, HDF5, video + npy, dataset folder)
runs open loop and autoregressive with PSNR, SSIM, LPIPS (staged test weights) and FVD, through the
CLI, with known numbers:

- ``model=oracle`` (the reference video itself): PSNR 100 (capped), SSIM 1, LPIPS 0, FVD 0;
- ``ShiftedReference`` (the reference + 8 levels on every generated frame; frame 0 is the given
  initial frame and the suites skip it): PSNR exactly ``20·log10(255/8)`` = 30.069 dB, the same
  SSIM, LPIPS and FVD under both protocols, and on the two lossless formats (HDF5, folder) the same values;
- ``model=precomputed`` with the shifted videos as files: the same PSNR from files.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from wfeval_test_datasets import CAMERA, write_all

from tests.conftest import ROOT, cli_env, only_run_dir, read_jsonl, run_cli
from tests.features._lpips import lpips_test_overrides
from tests.features._weights import require_i3d_weights

METRICS = "metric=[psnr,ssim,lpips,fvd]"
MEASURES = ("psnr", "ssim", "lpips", "fvd")
SHIFT = 8
SHIFTED_PSNR = 20 * math.log10(255 / SHIFT)
FORMATS = {
    "folder": lambda p: ["benchmark=folder", f"benchmark.dataset_root={p}"],
    "lerobot": lambda p: ["benchmark=lerobot", f"benchmark.dataset_root={p}", f"benchmark.camera={CAMERA}"],
    "hdf5": lambda p: ["benchmark=hdf5", f"benchmark.dataset_root={p}", "benchmark.fps=10",
                       "benchmark.camera=agentview_image"],
    "video_actions": lambda p: ["benchmark=video_actions", f"benchmark.dataset_root={p}"],
}
SHIFTED = ["model=python", "model.object._target_=wfeval_test_datasets.ShiftedReference",
           f"+model.object.shift={SHIFT}", "model.name=shifted"]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    require_i3d_weights()
    root = tmp_path_factory.mktemp("continuous")
    paths = write_all(root / "data")
    env = cli_env(WFEVAL_TRUST="wfeval_test_models.,wfeval_test_plugins.,wfeval_test_datasets.",
                  SVT_LOG="1")
    return root, paths, env, lpips_test_overrides(root / "lpips")


def _sweep(work, fmt: str, model: list[str], name: str) -> dict[str, dict]:
    root, paths, env, lpips = work
    sweep = root / "sweeps" / f"{fmt}_{name}"
    proc = run_cli(["-m", *FORMATS[fmt](paths[fmt]), *model, "protocol=open_loop,autoregressive", METRICS, *lpips,
                    f"metric.fvd.feature_dir={root / 'features'}", f"run.store_dir={root / 'store'}",
                    "run.progress=off", f"hydra.sweep.dir={sweep}"], cwd=root, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = {}
    for job in sorted(p for p in sweep.iterdir() if (p / "results.json").exists()):
        data = json.loads((job / "results.json").read_text())
        out[data["protocol"]["driver"]] = {"results": data, "dir": job}
    assert set(out) == {"open_loop", "autoregressive"}, sorted(out)
    return out


def _value(results: dict, metric: str) -> float:
    (key,) = [k for k in results["results"] if k.endswith(f".{metric}")]
    agg = results["results"][key]
    assert agg["n_valid"] == agg["n_total"] == 4 and agg["n_skipped"] == 0, agg
    return agg["diagnostics"]["value"] if metric == "fvd" else agg["normalized_stats"]["mean"]


@pytest.fixture(scope="module")
def runs(work):
    return {fmt: {"oracle": _sweep(work, fmt, ["model=oracle"], "oracle"), "shifted": _sweep(work, fmt, SHIFTED,
                                                                                            "shifted")}
            for fmt in FORMATS}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_oracle_is_exact_in_every_format_and_protocol(runs, fmt):
    for protocol, run in runs[fmt]["oracle"].items():
        results = run["results"]
        assert _value(results, "psnr") == 100.0, (fmt, protocol)
        assert _value(results, "ssim") == pytest.approx(1.0, abs=1e-6)
        assert _value(results, "lpips") == 0.0  # identical frames: exactly 0
        assert _value(results, "fvd") == pytest.approx(0.0, abs=1e-6)
        assert results["benchmark"]["action_space"]["kind"] == "continuous"
        assert results["benchmark"]["action_space"]["shape"] == [2]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_shifted_model_scores_the_closed_form_psnr_in_every_format_and_protocol(runs, fmt):
    values = {p: {m: _value(run["results"], m) for m in MEASURES}
              for p, run in runs[fmt]["shifted"].items()}
    assert values["open_loop"]["psnr"] == pytest.approx(SHIFTED_PSNR, abs=1e-4)
    for metric in MEASURES:  # the same frames through generate and step
        assert _same(values["open_loop"][metric], values["autoregressive"][metric], metric), (metric, values)
    assert 0.9 < values["open_loop"]["ssim"] < 1.0 and values["open_loop"]["fvd"] > 0
    assert values["open_loop"]["lpips"] > 0


def test_lossless_formats_give_identical_numbers(runs):
    for model in ("oracle", "shifted"):
        for protocol in ("open_loop", "autoregressive"):
            a, b = (runs[f][model][protocol]["results"] for f in ("folder", "hdf5"))
            for metric in MEASURES:
                assert _same(_value(a, metric), _value(b, metric), metric), (model, protocol, metric)


def _same(a: float, b: float, metric: str) -> bool:
    """Equal; for the measures computed in float32 convolutions on the CPU (SSIM's window, LPIPS, FVD's
    I3D) within 1e-6 relative: the same frames scored in batches of another size (run.overlap=auto
    decides by load how the samples are grouped) may take another convolution algorithm, seen once as
    LPIPS 0.06338477 against 0.06338478. PSNR here is exact: every pixel is off by exactly 8 levels."""
    return a == b if metric == "psnr" else a == pytest.approx(b, rel=1e-6, abs=1e-9)


def test_steps_record_the_action_vectors_and_the_model_saw_arrays(runs):
    run = runs["lerobot"]["shifted"]["autoregressive"]["dir"]
    steps = [r for r in read_jsonl(run / "steps.jsonl") if r.get("call") == "step"]
    assert len(steps) == 4 * 16 and all(len(r["actions"]) == 1 and len(r["actions"][0]) == 2 for r in steps)
    assert all(-1 <= v <= 1 for r in steps for v in r["actions"][0])  # the dataset's actions (ShiftedReference
    records = read_jsonl(run / "generations.jsonl")  # asserted it got float arrays of shape (2,))
    controls = records[0]["request"]["controls"]
    assert controls["action_space"]["names"] == ["vx", "vy"] and len(controls["actions"]) == 16


def test_the_report_shows_actions_as_vectors(runs):
    import re

    page = (runs["hdf5"]["shifted"]["open_loop"]["dir"] / "report.html").read_text()
    shown = re.search(r"actions: ((?:\(-?[\d.e-]+, -?[\d.e-]+\) ?)+)", page)
    assert shown and len(shown.group(1).split(") (")) == 16, page[page.find("actions:"):][:300]


def test_precomputed_shifted_files_score_the_closed_form_psnr(work, tmp_path):
    from wfeval.api import EvaluationProtocolSpec, WorldTaskConfig
    from wfeval.benchmarks.episodes import LeRobotBenchmark
    from wfeval.storage.artifacts import ArtifactStore, read_array

    root, paths, env, _ = work
    bench = LeRobotBenchmark(str(paths["lerobot"]))
    videos = tmp_path / "videos"
    videos.mkdir()
    for r in bench.requests(store=ArtifactStore(tmp_path / "store"), task=WorldTaskConfig("t"),
                            protocol=EvaluationProtocolSpec("open_loop")):
        ref = read_array(r.references["video"])
        np.save(videos / f"{r.sample_id}.npy", np.concatenate([ref[:1], (ref[1:].astype(np.int16) + SHIFT).astype(np.uint8)]))
    proc = run_cli([*FORMATS["lerobot"](paths["lerobot"]), "model=precomputed", f"model.root={videos}",
                    "metric=[psnr,generated_rate]", f"run.store_dir={root / 'store'}", "run.progress=off"],
                   cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((only_run_dir(tmp_path / "outputs" / "runs") / "results.json").read_text())
    assert results["results"]["lerobot.psnr"]["normalized_stats"]["mean"] == pytest.approx(SHIFTED_PSNR, abs=1e-4)


def test_command_models_get_action_vectors_in_requests_and_json_steps(work, tmp_path):
    root, paths, env, _ = work
    step = f"model.step_argv=[{sys.executable},{ROOT / 'examples/command_model/step_model.py'}]"
    gen = f"model.argv=[{sys.executable},{ROOT / 'examples/command_model/model.py'},'{{requests}}']"
    for protocol in ("open_loop", "autoregressive"):
        proc = run_cli([*FORMATS["video_actions"](paths["video_actions"]), "model=command", gen, step,
                        f"protocol={protocol}", "metric=[generated_rate,psnr]", f"run.store_dir={root / 'store'}",
                        "run.progress=off", f"hydra.run.dir={tmp_path / protocol}"], cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        results = json.loads((tmp_path / protocol / "results.json").read_text())["results"]
        assert results["video_actions.generated_rate"]["normalized_stats"]["ratio"] == 1.0, protocol
    steps = [r for r in read_jsonl(tmp_path / "autoregressive" / "steps.jsonl") if r.get("call") == "step"]
    assert steps and all(isinstance(v, float) for r in steps for a in r["actions"] for v in a)  # sent as JSON lists


def test_export_dataset_of_a_reader_writes_a_folder_with_the_same_samples(work, tmp_path):
    from wfeval.api import EvaluationProtocolSpec, WorldTaskConfig
    from wfeval.benchmarks.episodes import LeRobotBenchmark
    from wfeval.benchmarks.folder import FolderBenchmark, write_dataset
    from wfeval.storage.artifacts import ArtifactStore

    _, paths, _, _ = work
    store = ArtifactStore(tmp_path / "store")
    args = dict(store=store, task=WorldTaskConfig("t"), protocol=EvaluationProtocolSpec("open_loop"))
    original = LeRobotBenchmark(str(paths["lerobot"])).requests(**args)
    write_dataset(original, tmp_path / "exported", store=store)
    folder = FolderBenchmark(str(tmp_path / "exported"))
    from wfeval.api import action_space_of

    assert folder.spec.action_space == action_space_of(original[0])
    for a, b in zip(original, folder.requests(**args)):
        assert a.sample_id == b.sample_id and a.controls["actions"] == b.controls["actions"]
        assert a.references["video"].sha256 == b.references["video"].sha256  # lossless .mkv of the decoded AV1
        assert a.prompt == b.prompt
