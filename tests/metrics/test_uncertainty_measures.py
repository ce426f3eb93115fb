"""task=uncertainty (protocol=sampling) through the real pipeline on the gridworld and Atari Pong: the
N-sample request, the draws of a stochastic model, the one answer of a deterministic one, and the
calibration of CRPS, coverage, ECE and the uncertainty ranking against the built-in baselines."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import TEST_TRUST, compose
from wfeval.api import ContractError, GenerationRequest, requested_samples
from wfeval.pipeline import build
from wfeval.pipeline.runner import run_from_config
from wfeval.protocols.sampling import SamplingDriver, draw_request
from wfeval.storage.artifacts import ArtifactStore

METRICS = "metric=[crps,state_crps,sample_diversity,interval_coverage,calibration_error,uncertainty_auroc,uncertainty_spearman]"
GRID = ["benchmark.num_samples=4"]
PONG = ["benchmark=atari_pong", "benchmark.num_trajectories=1", "benchmark.windows_per_trajectory=3",
        "benchmark.warmup_steps=5", "benchmark.horizon=8"]
MODELS = {
    "oracle": ["model=oracle"],
    "static": ["model=static"],
    "noisy": ["model=noisy"],  # centred on the truth: overdispersed
    "calibrated": ["model=ensemble_noisy"],  # off by δ ~ N(0, 10²), draws spread by N(0, 10²): calibrated
    "overconfident": ["model=ensemble_noisy", "model.sigma=2"],
    "random_actions": ["model=random_actions"],
}
GROWING = ["model=python", "model.object._target_=wfeval_test_models.GrowingNoiseModel"]


def _table(root, family, models):
    out = {}
    with pytest.MonkeyPatch.context() as patch:  # a module fixture runs before the autouse trust of the test plugins
        patch.setenv("WFEVAL_TRUST", TEST_TRUST)
        for name, overrides in models.items():
            out[name] = _run(root, name, [*family, *overrides])
    return out


def _run(root, name, overrides):
    """metric id → aggregate of one task=uncertainty run."""
    cfg = compose([f"run.store_dir={root / 'store'}", "run.progress=off", "run.report=false", "task=uncertainty",
                   METRICS, *overrides])
    summary = run_from_config(cfg, output_dir=root / name)
    return {key.split(".", 1)[1]: agg for key, agg in summary.results.items()}


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    models = {**MODELS, "growing": GROWING, "inverted": [*GROWING, "+model.object.inverted=true"]}
    return _table(tmp_path_factory.mktemp("uncertainty_grid"), GRID, models)


@pytest.fixture(scope="module")
def pong(tmp_path_factory):
    pytest.importorskip("ale_py")
    models = {k: MODELS[k] for k in ("oracle", "static", "noisy", "calibrated")}
    return _table(tmp_path_factory.mktemp("uncertainty_pong"), PONG, models)


def value(table, model, metric):
    agg = table[model][metric]
    assert agg.valid, (model, metric, agg.diagnostics)
    return agg.diagnostics["value"]


def test_samples_default_to_one_and_are_checked():
    assert requested_samples(GenerationRequest(sample_id="a")) == 1
    assert requested_samples(GenerationRequest(sample_id="a", generation={"samples": 8})) == 8
    for bad in (0, 2.5, True, "8"):
        with pytest.raises(ContractError, match="samples"):
            requested_samples(GenerationRequest(sample_id="a", generation={"samples": bad}))


def _grid_request(tmp_path, samples):
    cfg = compose(["benchmark.num_samples=1", "task=uncertainty", f"task.generation_defaults.samples={samples}"])
    bench = build.build_benchmark(cfg)
    return bench.requests(store=ArtifactStore(tmp_path), task=build.build_task(cfg), protocol=build.build_protocol(cfg))[0]


def test_draw_zero_is_the_single_sample_answer_and_every_draw_differs(tmp_path):
    from wfeval.benchmarks.gridworld.baselines import NoisyModel

    request = _grid_request(tmp_path, 3)
    assert draw_request(request, 0) is request and draw_request(request, 2).generation["draw"] == 2
    out = SamplingDriver(NoisyModel()).run_one(request)
    single = NoisyModel().generate([request])[0]["generated_video"]
    assert np.array_equal(out.outputs["generated_video"], single)
    videos = [out.outputs["generated_video"], out.outputs["sample_1_video"], out.outputs["sample_2_video"]]
    assert all(np.array_equal(v[0], single[0]) for v in videos)  # the context frame is given
    assert not np.array_equal(videos[1], videos[0]) and not np.array_equal(videos[2], videos[1])
    assert out.metadata["samples"]["returned"] == 3 and not out.metadata["samples"]["deterministic"]
    assert len(set(out.metadata["samples"]["seeds"])) == 3


def test_a_deterministic_model_answers_once_and_says_so(tmp_path):
    from wfeval.benchmarks.gridworld.baselines import OracleModel

    out = SamplingDriver(OracleModel()).run_one(_grid_request(tmp_path, 5))
    assert set(out.outputs) == {"generated_video"}
    assert out.metadata["samples"]["requested"] == 5 and out.metadata["samples"]["returned"] == 1
    assert out.metadata["samples"]["deterministic"] is True and "answered once" in out.metadata["samples"]["note"]


def test_crps_ranks_oracle_noisy_static_and_one_draw_is_not_calibrated(grid):
    crps = {m: value(grid, m, "crps") for m in MODELS}
    assert crps["oracle"] == 0.0
    assert 0.0 < crps["noisy"] < crps["static"], crps
    assert crps["calibrated"] < crps["overconfident"], crps  # same error δ: the honest spread scores better
    # one draw (deterministic): CRPS scores the point forecast; coverage and calibration skip it
    for metric in ("interval_coverage", "calibration_error"):
        agg = grid["static"][metric]
        assert not agg.valid and agg.n_skipped == 4, agg.diagnostics
    assert value(grid, "oracle", "sample_diversity") == 0.0 and value(grid, "noisy", "sample_diversity") > 10.0


def test_state_crps_reads_the_agent_where_pixel_crps_cannot(grid):
    state = {m: value(grid, m, "state_crps") for m in MODELS}
    pixels = {m: value(grid, m, "crps") for m in MODELS}
    assert state["oracle"] == state["noisy"] == 0.0 and state["calibrated"] < 0.01, state  # noise: the agent stays put
    assert state["random_actions"] > state["static"] > 5.0, state  # the agent elsewhere: pixels under-rate it
    assert pixels["random_actions"] < pixels["static"], pixels


def test_coverage_and_ece_tell_calibrated_from_overdispersed_and_overconfident(grid):
    coverage = {m: value(grid, m, "interval_coverage") for m in ("noisy", "calibrated", "overconfident")}
    ece = {m: value(grid, m, "calibration_error") for m in ("noisy", "calibrated", "overconfident")}
    assert coverage["calibrated"] == pytest.approx(7 / 9, abs=0.04), coverage  # 8 draws: the range, nominal 7/9
    assert coverage["noisy"] > 0.95 and coverage["overconfident"] < 0.4, coverage
    assert ece["calibrated"] < 0.04 and min(ece["noisy"], ece["overconfident"]) > 0.1, ece


def test_a_reported_uncertainty_that_ranks_the_errors_scores_near_one_and_its_reverse_near_zero(grid):
    assert value(grid, "growing", "uncertainty_auroc") > 0.9 and value(grid, "growing", "uncertainty_spearman") > 0.9
    assert value(grid, "inverted", "uncertainty_auroc") < 0.1 and value(grid, "inverted", "uncertainty_spearman") < -0.9
    assert grid["oracle"]["uncertainty_auroc"].n_skipped == 4  # one draw, nothing reported: no uncertainty


def test_pong_ranks_the_baselines_as_the_gridworld_does(pong):
    crps = {m: value(pong, m, "crps") for m in pong}
    assert crps["oracle"] == 0.0 and crps["static"] > 0.0 and crps["noisy"] > 0.0, crps
    assert value(pong, "calibrated", "calibration_error") < 0.04 < value(pong, "noisy", "calibration_error")
    assert value(pong, "calibrated", "interval_coverage") == pytest.approx(7 / 9, abs=0.04)
