"""The output contract: every bad model output is a failed generation naming the sample and the
fault; a float output passes only with a declared range, converted exactly once."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import read_jsonl
from wfeval.api import ArtifactRef, GenerationRequest
from wfeval.pipeline.contract import (
    ContractViolation,
    OutputContract,
    build_contract,
    check_outputs,
    parse_output_range,
)

T, H, W = 16, 64, 64
GOOD = np.random.default_rng(0).integers(0, 256, (T, H, W, 3), dtype=np.uint8)


def _request(*, num_frames=T, actions=T - 1, reference=(T, H, W, 3), sample_id="bench-test-0007") -> GenerationRequest:
    references = {"video": ArtifactRef(kind="video", uri="file:///nowhere.npy", shape=reference)} if reference else {}
    generation = {"num_frames": num_frames} if num_frames is not None else {}
    controls = {"actions": [0] * actions} if actions is not None else {}
    return GenerationRequest(sample_id=sample_id, references=references, generation=generation, controls=controls)


def _violation(outputs, contract=None, request=None) -> str:
    with pytest.raises(ContractViolation) as info:
        check_outputs(request or _request(), outputs, contract)
    message = str(info.value)
    assert "bench-test-0007" in message  # the culprit is always named
    return message


BAD_OUTPUTS = [
    # (case id, outputs, words the reason must contain)
    ("float64_01_undeclared", {"generated_video": GOOD / 255.0}, ["float64", "declares no range", "output_range"]),
    ("float32_255_undeclared", {"generated_video": GOOD.astype(np.float32)}, ["float32", "declares no range"]),
    ("float16_undeclared", {"generated_video": GOOD.astype(np.float16)}, ["float16"]),
    ("int64_up_to_255000", {"generated_video": GOOD.astype(np.int64) * 1000}, ["int64", "0..255000"]),
    ("int16_negative", {"generated_video": GOOD.astype(np.int16) - 1}, ["int16", "-1.."]),
    ("uint16_65535", {"generated_video": np.full((T, H, W, 3), 65535, np.uint16)}, ["uint16", "65535"]),
    ("two_d_array", {"generated_video": GOOD[0, :, :, 0]}, ["shape (64, 64)", "T×H×W×3"]),
    ("three_d_image_as_video", {"generated_video": GOOD[0]}, ["shape (64, 64, 3)", "T×H×W×3"]),
    ("five_d", {"generated_video": GOOD[None]}, ["shape (1, 16, 64, 64, 3)"]),
    ("channel_first", {"generated_video": np.moveaxis(GOOD, -1, 1)}, ["channel-first"]),
    ("grayscale_1ch", {"generated_video": GOOD[..., :1]}, ["1 channel(s)"]),
    ("rgba_4ch", {"generated_video": np.concatenate([GOOD, GOOD[..., :1]], -1)}, ["4 channel(s)"]),
    ("one_frame_short", {"generated_video": GOOD[:-1]}, ["15 frame(s)", "asks for 16"]),
    ("one_frame_long", {"generated_video": np.concatenate([GOOD, GOOD[:1]])}, ["17 frame(s)", "asks for 16"]),
    ("single_frame", {"generated_video": GOOD[:1]}, ["1 frame(s)"]),
    ("half_resolution", {"generated_video": GOOD[:, ::2, ::2]}, ["resolution 32×32", "64×64"]),
    ("wider", {"generated_video": np.zeros((T, H, W + 1, 3), np.uint8)}, ["resolution 64×65"]),
    ("empty_array", {"generated_video": np.zeros((0, H, W, 3), np.uint8)}, ["empty array"]),
    ("object_array", {"generated_video": np.array([object()] * 3)}, ["not a numeric array"]),
    ("string_array", {"generated_video": np.array(["a", "b"])}, ["not a numeric array"]),
    ("bool_video", {"generated_video": GOOD > 128}, ["boolean"]),
    ("complex_video", {"generated_video": GOOD.astype(np.complex64)}, ["complex64"]),
    ("missing_key", {"video": GOOD}, ["missing output(s) 'generated_video'", "returned: 'video'"]),
    ("empty_mapping", {}, ["missing output(s)", "nothing"]),
    ("extra_output_nan", {"generated_video": GOOD, "depth": np.array([1.0, np.nan])}, ["'depth'", "non-finite"]),
    ("ragged_list", {"generated_video": [[1, 2], [3]]}, ["not a"]),
]


@pytest.mark.parametrize("outputs, words", [c[1:] for c in BAD_OUTPUTS], ids=[c[0] for c in BAD_OUTPUTS])
def test_a_bad_output_breaks_the_contract_naming_the_sample_and_the_fault(outputs, words):
    message = _violation(outputs)
    for word in words:
        assert word in message, message


@pytest.mark.parametrize("returned", [GOOD, [GOOD], None, "video.mp4"], ids=["bare_array", "list", "none", "str"])
def test_an_outcome_that_is_not_a_mapping_is_refused(returned):
    assert "expected a mapping" in _violation(returned)


DECLARED_BAD = [
    ("nan_with_range", (0.0, 1.0), lambda: np.where(GOOD == 0, np.nan, GOOD / 255.0), "non-finite"),
    ("inf_with_range", (0.0, 255.0), lambda: np.where(GOOD == 0, np.inf, GOOD.astype(np.float64)), "non-finite"),
    ("above_declared_01", (0.0, 1.0), lambda: GOOD.astype(np.float64), "outside the declared model.output_range [0, 1]"),
    ("below_declared_01", (0.0, 1.0), lambda: GOOD / 255.0 - 0.5, "outside the declared"),
    ("above_declared_255", (0.0, 255.0), lambda: GOOD * 2.0, "outside the declared model.output_range [0, 255]"),
]


@pytest.mark.parametrize("output_range, make, words", [c[1:] for c in DECLARED_BAD], ids=[c[0] for c in DECLARED_BAD])
def test_a_declared_float_range_still_refuses_values_outside_it(output_range, make, words):
    assert words in _violation({"generated_video": make()}, OutputContract(output_range=output_range))


@pytest.mark.parametrize("output_range, scale", [((0.0, 1.0), 1 / 255.0), ((0.0, 255.0), 1.0)])
def test_a_declared_float_range_is_converted_exactly_once_back_to_the_same_pixels(output_range, scale):
    arrays, conversions = check_outputs(_request(), {"generated_video": GOOD.astype(np.float64) * scale},
                                        OutputContract(output_range=output_range))
    assert arrays["generated_video"].dtype == np.uint8
    np.testing.assert_array_equal(arrays["generated_video"], GOOD)
    assert conversions == {"generated_video": f"float [0, {output_range[1]:g}] -> uint8: round((x - 0) * "
                                              f"{255 / output_range[1]:g}), clipped to 0..255"}


def test_rounding_noise_at_the_range_edge_is_accepted_and_clipped():
    video = (GOOD / 255.0).astype(np.float32)
    video[0, 0, 0, 0] = 1.0 + 1e-7
    arrays, _ = check_outputs(_request(), {"generated_video": video}, OutputContract(output_range=(0.0, 1.0)))
    assert arrays["generated_video"][0, 0, 0, 0] == 255


def test_uint8_passes_untouched_and_int_within_0_255_is_cast_losslessly():
    arrays, conversions = check_outputs(_request(), {"generated_video": GOOD})
    assert arrays["generated_video"] is GOOD and conversions == {}
    arrays, conversions = check_outputs(_request(), {"generated_video": GOOD.astype(np.int64)})
    np.testing.assert_array_equal(arrays["generated_video"], GOOD)
    assert conversions == {"generated_video": "int64 0..255 -> uint8 (lossless cast)"}


def test_the_frame_count_comes_from_the_request_and_falls_back_to_actions_then_reference():
    assert "asks for 9 (generation.num_frames)" in _violation({"generated_video": GOOD}, request=_request(num_frames=9))
    no_count = _request(num_frames=None, actions=4)
    assert "asks for 5 (4 actions + the initial frame)" in _violation({"generated_video": GOOD}, request=no_count)
    only_ref = _request(num_frames=None, actions=None, reference=(12, H, W, 3))
    assert "asks for 12 (the reference video's length)" in _violation({"generated_video": GOOD}, request=only_ref)
    free = _request(num_frames=None, actions=None, reference=None)
    arrays, _ = check_outputs(free, {"generated_video": GOOD[:3, :10, :20]})  # nothing to compare with: accepted
    assert arrays["generated_video"].shape == (3, 10, 20, 3)


def test_a_task_may_declare_an_image_output():
    contract = OutputContract(required_keys=("generated_image",), layouts={"generated_image": "image"})
    arrays, _ = check_outputs(_request(), {"generated_image": GOOD[0]}, contract)
    assert arrays["generated_image"].shape == (H, W, 3)
    assert "expected an H×W×3 RGB image" in _violation({"generated_image": GOOD}, contract)


@pytest.mark.parametrize("value", [[0, 2], [0, 100], "0-1", [1], [-1, 1]])
def test_an_output_range_other_than_0_1_or_0_255_is_a_config_error(value):
    with pytest.raises(ValueError, match="model.output_range"):
        parse_output_range(value)


def test_an_unknown_output_layout_is_a_config_error():
    class Task:
        output_keys = ("generated_video",)
        metadata = {"output_layout": {"generated_video": "voxels"}}

    with pytest.raises(ValueError, match="task.metadata.output_layout"):
        build_contract({}, Task())


# ---- through the pipeline: failed, not skipped; coverage shown; evidence; penalised mean ---------


def _run(tmp_path, *overrides):
    from tests.conftest import compose
    from wfeval.pipeline.runner import run_from_config

    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "benchmark.num_samples=4",
                   "model=python", "model.object._target_=tests.robustness._models.Misbehaving",
                   "metric=[generated_rate,psnr]", *overrides])
    return run_from_config(cfg, tmp_path / "run")


@pytest.mark.parametrize("mode, fault", [("float01", "declares no range"), ("int64x1000", "expected uint8 0..255"),
                                         ("two_d", "shape (64, 64)"), ("short", "15 frame(s)"),
                                         ("small", "resolution 32×32")])
def test_a_bad_output_is_a_failed_generation_that_lowers_coverage_and_eligibility(tmp_path, capsys, mode, fault):
    summary = _run(tmp_path, f"+model.object.mode={mode}", "+model.object.bad=[1]")
    [failed] = [r for r in read_jsonl(tmp_path / "run" / "generations.jsonl") if r["result"]["status"] != "ok"]
    assert failed["result"]["status"] == "failed" and failed["request"]["sample_id"] == "gridworld-test-00001"
    assert "ContractViolation" in failed["result"]["error"] and fault in failed["result"]["error"]
    assert "gridworld-test-00001" in failed["result"]["error"]
    psnr = summary.results["gridworld.psnr"]
    assert (psnr.n_valid, psnr.n_total) == (3, 4)  # the failure is counted, not silently dropped
    assert psnr.normalized_stats["mean"] == 100.0  # the three good ones
    assert summary.results["gridworld.generated_rate"].normalized_stats["ratio"] == 0.75
    assert psnr.skip_breakdown == {"missing required artifact(s) generated_video (generation failed)": 1}
    document = json.loads((tmp_path / "run" / "results.json").read_text())
    assert document["evidence"]["eligible"] is False
    assert "psnr: coverage 0.750 < required 1.000" in document["evidence"]["reasons"]
    table = capsys.readouterr().out
    assert "3/4 (75%)" in table  # coverage beside the value
    assert not list((tmp_path / "store" / "generations").rglob("*.json")) or \
        len(list((tmp_path / "store" / "generations").rglob("*.json"))) == 3  # the failure is not cached


def test_a_float_model_with_its_range_declared_scores_like_the_oracle_and_says_so(tmp_path):
    summary = _run(tmp_path, "model.object._target_=tests.robustness._models.FloatModel", "+model.output_range=[0,1]")
    assert summary.results["gridworld.psnr"].normalized_stats["mean"] == 100.0
    assert summary.results["gridworld.psnr"].n_valid == 4
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["model"]["output_range"] == [0.0, 1.0]
    assert manifest["model"]["output_conversion"].startswith("float [0, 1] -> uint8")
    rows = read_jsonl(tmp_path / "run" / "generations.jsonl")
    assert all(r["result"]["metadata"]["output_conversion"]["generated_video"].startswith("float [0, 1]")
               for r in rows)
    assert all(r["result"]["artifacts"]["generated_video"]["dtype"] == "uint8" for r in rows)


def test_the_penalised_mean_scores_a_failed_generation_at_the_worst_value(tmp_path):
    summary = _run(tmp_path, "+model.object.mode=short", "+model.object.bad=[1]", "metric.psnr.on_failure=worst")
    psnr = summary.results["gridworld.psnr"]
    assert (psnr.n_valid, psnr.n_total) == (4, 4)
    assert psnr.normalized_stats["mean"] == pytest.approx((100 * 3 + 0) / 4)  # worst PSNR = 0 dB
    assert psnr.diagnostics["penalised"] == 1
    [row] = [r for r in read_jsonl(tmp_path / "run" / "metrics.jsonl")
             if r["metric_id"] == "psnr" and r["sample_id"] == "gridworld-test-00001"]
    assert row["raw_value"] == 0.0 and row["diagnostics"]["penalised"] is True


@pytest.mark.parametrize("metric, words", [("fvd", "no finite upper bound"), ("artifact_count", "no direction"),
                                           ("agent_position_error", "no finite upper bound")])
def test_on_failure_worst_is_refused_for_a_metric_without_a_worst_value(tmp_path, metric, words):
    from wfeval.config.errors import ConfigError

    with pytest.raises(ConfigError, match=words):
        _run(tmp_path, f"metric=[{metric}]", f"metric.{metric}.on_failure=worst")


def test_on_failure_accepts_only_exclude_or_worst(tmp_path):
    from wfeval.config.errors import ConfigError

    with pytest.raises(ConfigError, match="metric.psnr.on_failure: expected one of exclude, worst"):
        _run(tmp_path, "metric.psnr.on_failure=penalise")


FLOAT_PROGRAM = '''
import json, sys
import numpy as np
for line in open(sys.argv[1]):
    r = json.loads(line)
    first = np.load(r["inputs"]["image"]).astype(np.float32) / 255.0
    np.save(r["outputs"]["generated_video"] + ".npy", np.repeat(first[None], r["generation"]["num_frames"], 0))
'''


@pytest.mark.parametrize("declared", [False, True])
def test_a_command_models_float_output_needs_its_declared_range(tmp_path, declared):
    import sys

    script = tmp_path / "float_model.py"
    script.write_text(FLOAT_PROGRAM)
    from tests.conftest import compose
    from wfeval.pipeline.runner import run_from_config

    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "benchmark.num_samples=2",
                   "model=command", f"model.argv=[{sys.executable},{script},'{{requests}}']",
                   "metric=[generated_rate,flicker]", *(["model.output_range=[0,1]"] if declared else [])])
    summary = run_from_config(cfg, tmp_path / "run")
    rows = read_jsonl(tmp_path / "run" / "generations.jsonl")
    if declared:
        assert summary.results["gridworld.flicker"].normalized_stats["mean"] == 1.0  # a frozen video
        assert all(r["result"]["status"] == "ok" for r in rows)
    else:
        assert summary.results["gridworld.generated_rate"].normalized_stats["ratio"] == 0.0
        assert all("float32 output" in r["result"]["error"] and "model.output_range" in r["result"]["error"]
                   for r in rows)


@pytest.mark.parametrize("declared", [False, True])
def test_precomputed_float_videos_need_their_declared_range(tmp_path, declared):
    from tests.conftest import compose
    from wfeval.pipeline import build
    from wfeval.pipeline.runner import run_from_config
    from wfeval.storage.artifacts import ArtifactStore, read_array

    base = ["benchmark.num_samples=2", f"run.store_dir={tmp_path / 'store'}", "run.progress=off"]
    cfg = compose(base)
    requests = build.build_benchmark(cfg).requests(store=ArtifactStore(tmp_path / "store"),
                                                   task=build.build_task(cfg), protocol=build.build_protocol(cfg))
    videos = tmp_path / "videos"
    videos.mkdir()
    for request in requests:  # the true videos, saved as float64 in [0, 1]
        np.save(videos / f"{request.sample_id}.npy", read_array(request.references["video"]) / 255.0)
    summary = run_from_config(compose([*base, "model=precomputed", f"model.root={videos}", "metric=[psnr]",
                                       *(["model.output_range=[0,1]"] if declared else [])]), tmp_path / "run")
    psnr = summary.results["gridworld.psnr"]
    if declared:
        assert (psnr.n_valid, psnr.normalized_stats["mean"]) == (2, 100.0)
    else:
        assert psnr.n_valid == 0
        rows = read_jsonl(tmp_path / "run" / "generations.jsonl")
        assert all(r["result"]["status"] == "failed" and "declares no range" in r["result"]["error"] for r in rows)


def test_the_leaderboard_and_exported_rows_show_coverage_beside_the_value(tmp_path):
    from wfeval.report.leaderboard import leaderboard
    from wfeval.report.rows import load_document, rows
    from wfeval.report.runs import Entry

    _run(tmp_path, "+model.object.mode=short", "+model.object.bad=[1]")
    document = load_document(tmp_path / "run" / "results.json")
    [psnr] = [r for r in rows(document) if r["measurement"] == "gridworld.psnr"]
    assert (psnr["value"], psnr["coverage"], psnr["n_valid"], psnr["n_total"]) == (100.0, 0.75, 3, 4)
    board = leaderboard([Entry.of_document(document)])
    header, body = board.detail_table(board.columns[0])
    cell = body[0][header.index("psnr (dB)")]
    assert cell.endswith("(3/4)") and "(k/n) = the value rests on k of n samples" in board.legend()[0]
    rate_cell = body[0][header.index("generated_rate")]
    assert "(" not in rate_cell.split("]")[-1]  # full coverage: nothing added
