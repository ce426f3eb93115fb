"""task=probing on a dataset's recorded state (wfeval/benchmarks/episodes/states.py): the readers name
the variables after what the files hold, the probes are fit on training episodes and scored on the others,
the exact state read back is the generator's (simulator truth), the calibration encoders rank as designed,
and a bad state is named with its file and key before generation."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from wfeval_test_datasets import episodes, square_states, write_lerobot, write_minari, write_revisits_hdf5

from tests.conftest import ROOT, compose
from wfeval.api import WorldTaskConfig
from wfeval.benchmarks.episodes import HDF5Benchmark, LeRobotBenchmark, MinariBenchmark
from wfeval.benchmarks.episodes.states import training_flags
from wfeval.config.errors import ConfigError

PROBING = WorldTaskConfig(name="probing", evaluation_protocol="probing", data={"probing": {"num_frames": 33}})
LEROBOT = ROOT / "examples/datasets/square_lerobot"
MINARI = ROOT / "examples/datasets/square_minari"


def _names(bench) -> list[tuple[str, str]]:
    return [(v.name, v.kind) for v in bench.state_variables()]


# -- the variables: what the files record ------------------------------------------------------------------


def test_each_reader_names_its_state_variables_after_what_the_files_hold(tmp_path):
    lerobot = LeRobotBenchmark(str(LEROBOT))  # info.json names observation.state's elements y, x
    assert _names(lerobot) == [("observation.state[y]", "continuous"), ("observation.state[x]", "continuous")]
    chosen = LeRobotBenchmark(str(LEROBOT), state_keys=["observation.state", "action"])
    assert [n for n, _ in _names(chosen)][2:] == ["action[vx]", "action[vy]"]  # another numeric feature, by choice
    minari = MinariBenchmark(str(MINARI), fps=10)  # a dict observation: the entry beside the camera
    assert minari.camera == "image" and _names(minari) == [("state[0]", "continuous"), ("state[1]", "continuous")]
    hdf5 = HDF5Benchmark(str(write_revisits_hdf5(tmp_path / "pan.hdf5")), fps=10)  # obs/pose beside the camera
    assert _names(hdf5) == [("pose[0]", "continuous"), ("pose[1]", "continuous")]


def test_the_recorded_state_read_for_a_window_is_the_generators_exact_state_with_its_frames():
    bench = LeRobotBenchmark(str(LEROBOT))
    held_out = bench.task_records(PROBING)
    assert [w.sample_id for w in held_out] == ["episode_000000-t00000", "episode_000000-t00017"]
    training = bench.probe_training(32, 17)  # the other episode's windows, cut as the samples are
    assert len(training) == 2
    truth = square_states(1)
    np.testing.assert_array_equal(training[1].states, truth[17:34].astype(np.float64))
    assert training[1].frames.shape == (17, 48, 64, 3) and len(training[1].actions) == 16
    frames, actions = episodes()[1]
    np.testing.assert_array_equal(np.asarray(training[1].actions), actions[17:33])
    assert np.abs(training[1].frames.astype(int) - frames[17:34]).mean() < 3  # the AV1 video of those frames


def test_episodes_are_dealt_evenly_into_training_and_evaluation():
    assert training_flags(2, 0.5) == [False, True]
    assert training_flags(6, 0.5) == [False, True, False, True, False, True]
    assert training_flags(10, 0.7).count(True) == 7
    assert training_flags(3, 0.1) == [False, False, True] and training_flags(3, 0.99) == [False, True, True]
    with pytest.raises(ConfigError, match="1 episode.*at least 2"):
        training_flags(1, 0.5)


# -- runs: the calibration encoders rank as designed ----------------------------------------------------------


def _run(tmp_path, name, *overrides):
    from wfeval.pipeline.runner import run_from_config

    run_from_config(compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
                             "task=probing", *overrides]), output_dir=tmp_path / name)
    results = json.loads((tmp_path / name / "results.json").read_text())["results"]
    return {k.split(".", 1)[1]: v for k, v in results.items()}


def test_probing_a_lerobot_dataset_reads_the_state_exactly_from_the_ceiling_and_ranks_the_baselines(tmp_path):
    dataset = ["benchmark=lerobot", f"benchmark.dataset_root={LEROBOT}", "protocol.horizons=[1,4]"]
    oracle = _run(tmp_path, "oracle", *dataset, "model=state_oracle")
    static = _run(tmp_path, "static", *dataset, "model=state_oracle", "model.predictor=static")
    projection = _run(tmp_path, "projection", *dataset, "model=random_projection")
    mean = {name: {k: v["normalized_stats"]["mean"] for k, v in r.items() if v["n_valid"]}
            for name, r in (("oracle", oracle), ("static", static), ("projection", projection))}
    assert oracle["probe_r2"]["n_valid"] == 2  # the held-out episode's two windows
    for k in ("probe_r2", "imagined_probe_r2_k1", "imagined_probe_r2_k4"):  # the exact state: the ceiling
        assert mean["oracle"][k] == pytest.approx(1.0, abs=1e-6)
    # the static predictor holds the present state: one step of a moving square loses part of it, four more
    assert mean["static"]["probe_r2"] == pytest.approx(1.0, abs=1e-6)
    assert mean["static"]["imagined_probe_r2_k4"] < mean["static"]["imagined_probe_r2_k1"] < 0.9
    assert mean["projection"]["probe_r2"] < 0.9  # pixels times a random matrix: far from the ceiling
    rows = [json.loads(line) for line in (tmp_path / "oracle" / "metrics.jsonl").read_text().splitlines()]
    components = next(r["components"] for r in rows if r["metric_id"] == "probe_r2")
    from wfeval.metrics.probing import NOT_VARIABLES

    assert set(components) - set(NOT_VARIABLES) == {"observation.state[y]", "observation.state[x]"}


def test_probing_a_minari_dataset_scores_its_dict_observation_state(tmp_path):
    results = _run(tmp_path, "minari", "benchmark=minari", f"benchmark.dataset_root={MINARI}", "benchmark.fps=10",
                   "model=state_oracle", "protocol.horizons=[1]")
    assert results["probe_r2"]["n_valid"] == 2
    assert results["probe_r2"]["normalized_stats"]["mean"] == pytest.approx(1.0, abs=1e-6)


# -- refusals and bad files -----------------------------------------------------------------------------------


def test_a_dataset_without_a_state_or_with_an_unknown_key_is_refused_before_generation(tmp_path):
    from wfeval.benchmarks.episodes import VideoActionsBenchmark

    with pytest.raises(ConfigError, match=r"declares no state variables: square.hdf5\[data/demo_0/obs\] records "
                                          "no numeric state beside its frames"):
        HDF5Benchmark(str(ROOT / "examples/datasets/square.hdf5"), fps=10).state_variables()
    with pytest.raises(ConfigError, match="declares no state variables"):
        VideoActionsBenchmark(str(ROOT / "examples/datasets/square_episodes")).state_variables()
    box = write_minari(tmp_path / "box")  # one Box of images: the frames alone
    with pytest.raises(ConfigError, match=r"holds the frames alone .* records no state beside them"):
        MinariBenchmark(str(box), fps=10).state_variables()
    with pytest.raises(ConfigError, match="'joints' is not a numeric state of meta/info.json .* its numeric states: "
                                          "observation.state, action"):
        LeRobotBenchmark(str(LEROBOT), state_keys=["joints"]).state_variables()
    with pytest.raises(ConfigError, match="benchmark.probe_train_share must be a number between 0 and 1"):
        LeRobotBenchmark(str(LEROBOT), probe_train_share=1.0)


def _pan(tmp_path, edit) -> HDF5Benchmark:
    import h5py

    path = write_revisits_hdf5(tmp_path / "pan.hdf5", n=4)
    with h5py.File(path, "a") as handle:
        edit(handle)
    return HDF5Benchmark(str(path), fps=10)


def _unreadable(bench) -> dict[str, str]:
    from wfeval.api import EvaluationProtocolSpec
    from wfeval.storage.artifacts import ArtifactStore

    store = ArtifactStore(bench.root.parent / "store")
    requests = bench.requests(store=store, task=PROBING, protocol=EvaluationProtocolSpec(name="probing"))
    return {r.sample_id: r.metadata["input_error"] for r in requests if "input_error" in r.metadata}


@pytest.mark.parametrize("edit, said", [
    (lambda h: h["data/demo_2/obs/pose"].__setitem__((5, 1), np.nan),
     r"pan.hdf5\[data/demo_2/obs/pose\]: NaN or infinite state at 1 frame\(s\) \(first: frame 5\)"),
    (lambda h: (h.__delitem__("data/demo_2/obs/pose"), h.create_dataset("data/demo_2/obs/pose", data=np.zeros((39, 2)))),
     r"pan.hdf5\[data/demo_2/obs/pose\]: 39 state row\(s\) for 40 frame\(s\); probing needs one state per frame"),
    (lambda h: h.__delitem__("data/demo_2/obs/pose"), r"^pan.hdf5\[data/demo_2/obs/pose\]: no such dataset$"),
])
def test_a_bad_state_makes_its_episodes_samples_unreadable_naming_the_file_and_key(tmp_path, edit, said):
    bench = _pan(tmp_path, edit)  # demo_0 and demo_2 are scored, demo_1 and demo_3 train
    unreadable = _unreadable(bench)
    assert sorted(unreadable) == ["demo_2-t00000", "demo_2-t00017"]
    assert all(re.search(said, why) for why in unreadable.values())
    assert any("demo_2" in str(p) for p in bench.problems)  # listed before generation
    assert len(bench.probe_training(32, 17)) == 4  # the training episodes are unharmed


def test_a_bad_training_state_keeps_its_episode_out_of_training(tmp_path):
    bench = _pan(tmp_path, lambda h: h["data/demo_1/obs/pose"].__setitem__((0, 0), np.inf))
    training = bench.probe_training(32, 17)
    assert len(training) == 2  # demo_3's two windows; demo_1 is named in the problems
    assert [str(p) for p in bench.problems if "demo_1" in str(p)]
    assert not _unreadable(bench)  # the scored episodes are intact


def test_too_few_training_windows_is_refused_naming_the_training_episodes(tmp_path):
    dataset = write_lerobot(tmp_path / "lr", episodes(), states=[square_states(i) for i in range(2)])
    bench = LeRobotBenchmark(str(dataset), horizon=30)  # a 40-frame episode gives one window of 31 frames
    with pytest.raises(ConfigError, match="training episodes .* \\(episode_000001\\) give 1 readable window"):
        bench.probe_training(32, 31)
