"""task=memory on a dataset with a state column: revisits found where the recorded state returns (a
closed form and the definition written out), scored where the dataset's own frames agree (oracle 0,
forgetful far worse, static at most the true change), and refused before generation, naming the
option, where there is nothing to find."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from wfeval_test_datasets import LENGTH, REVISIT_PERIODS, write_revisits_hdf5, write_revisits_lerobot

from tests.conftest import ROOT, compose
from wfeval.api import WorldTaskConfig
from wfeval.benchmarks.episodes import HDF5Benchmark, LeRobotBenchmark
from wfeval.benchmarks.episodes.revisits import return_pairs
from wfeval.config.errors import ConfigError

MEMORY = WorldTaskConfig(name="memory", evaluation_protocol="memory", data={"memory": {}})


# -- the pairs: closed forms ---------------------------------------------------------------------------


def test_a_revisit_is_the_earliest_frame_the_state_comes_back_to_after_leaving_it():
    found = return_pairs([0, 1, 2, 1, 0, 0.05, 3], 0.1)
    assert found.pairs == [(1, 3), (0, 4), (0, 5)] and found.distances == [0.0, 0.0, 0.05]
    assert found.closest == (0.0, 0, 4, 2.0)  # back to frame 0 exactly, after going 2 away
    still = return_pairs([0, 0, 0, 0], 0.1)  # standing still is not a revisit, and nothing comes back
    assert still.pairs == [] and still.closest is None
    # every compared element within the tolerance: the largest difference of an element is the distance
    drift = return_pairs([[0, 0], [1, 0], [0, 0.2]], 0.1)
    assert drift.pairs == [] and drift.closest == (0.2, 0, 2, 1.0)
    assert return_pairs([[0, 0], [1, 0], [0, 0.2]], 0.2).pairs == [(0, 2)]


def _written_out(states: np.ndarray, tolerance: float) -> tuple[list, float | None]:
    """The definition, literally: frame j revisits the earliest i whose state is within the tolerance
    with a frame between them farther than it from i; the closest return: the smallest distance of a j
    nearer to i than a frame between them went."""
    d = lambda a, b: float(np.abs(states[a] - states[b]).max())  # noqa: E731
    pairs, closest = [], None
    for j in range(len(states)):
        for i in range(j):
            if d(i, j) <= tolerance and any(d(i, k) > tolerance for k in range(i + 1, j)):
                pairs.append((i, j))
                break
    for i in range(len(states)):
        for j in range(i + 2, len(states)):
            if d(i, j) < max(d(i, k) for k in range(i + 1, j)) and (closest is None or d(i, j) < closest):
                closest = d(i, j)
    return pairs, closest


def test_the_pairs_and_the_closest_return_are_the_definition_written_out_on_random_walks():
    rng = np.random.default_rng(0)
    for _ in range(200):
        states = rng.integers(0, 5, (int(rng.integers(1, 18)), int(rng.integers(1, 3)))) * 0.1
        tolerance = float(rng.choice([0.0, 0.1, 0.15, 0.3]))
        found, (pairs, closest) = return_pairs(states, tolerance), _written_out(states, tolerance)
        assert found.pairs == pairs
        assert (found.closest is None) == (closest is None)
        assert closest is None or found.closest[0] == pytest.approx(closest, abs=1e-12)


def _pan(episode: int) -> np.ndarray:
    """The camera's x offset (pixels) of the test episodes: a triangle wave, 0 … 8 … 0."""
    period = REVISIT_PERIODS[episode]
    phase = np.arange(LENGTH) % period
    return (16 // period) * np.minimum(phase, period - phase)


def test_a_datasets_samples_are_the_windows_that_hold_a_revisit_with_the_pairs_of_the_pan(tmp_path):
    bench = HDF5Benchmark(str(write_revisits_hdf5(tmp_path / "pan.hdf5")), fps=10)
    records = bench.task_records(MEMORY)
    assert [r.sample_id for r in records] == ["demo_0-t00000", "demo_0-t00017", "demo_1-t00000", "demo_1-t00017"]
    from wfeval.storage.artifacts import ArtifactStore

    store = ArtifactStore(tmp_path / "store")
    for record in records:
        window = _pan(record.episode)[record.start:record.start + 17].tolist()
        # the camera never stands still: frame k revisits the first frame of the window at its offset
        expected = [[window.index(x), k] for k, x in enumerate(window) if window.index(x) < k]
        request = bench.materialize(record, store=store, task=MEMORY, protocol=_protocol())
        memory = request.metadata["memory"]
        pairs = [list(p) for p in memory["revisits"]]
        assert pairs == [list(p) for p in memory["loops"]] == expected
        assert list(memory["state_distances"]) == [0.0] * len(expected)
        assert memory["measure"] == "change_vs_truth" and memory["agree"] == 8.0 and memory["state_key"] == "pose"
        assert "static_mask" not in request.references


def _protocol():
    from wfeval.api import EvaluationProtocolSpec

    return EvaluationProtocolSpec(name="memory")


# -- the measures: the frames where the dataset's own frames agree ----------------------------------------


def test_only_the_blocks_where_the_true_frames_agree_are_compared():
    from wfeval.functional.memory import frame_pair_error

    first = np.full((16, 16, 3), 100.0)
    back = first.copy()
    back[:8, :8] = 150  # block (0, 0): something moved in the scene between the visits (50 levels)
    generated = back.copy()
    generated[8:, 8:] += 10  # block (1, 1): the model drew the place 10 levels off
    ones = np.ones((16, 16), bool)
    assert frame_pair_error(first, generated, ones, ones, 8, (first, back)) == 10 / 4  # every block
    assert frame_pair_error(first, generated, ones, ones, 8, (first, back), agree=8) == 10 / 3  # the moved one out
    assert frame_pair_error(first, first, ones, ones, 8, (first, back), agree=8) == 0.0  # the model's change: none
    assert frame_pair_error(first, generated, ones, ones, 8, (first, back + 9), agree=8) is None  # nothing agrees


@pytest.fixture(scope="module")
def calibration(tmp_path_factory):
    from wfeval.pipeline.runner import run_from_config

    root = tmp_path_factory.mktemp("dataset_memory")
    dataset = write_revisits_hdf5(root / "pan.hdf5")
    out = {}
    for name, model in [("oracle", ["model=oracle"]), ("forgetful", ["model=forgetful", "model.horizon=4"]),
                        ("static", ["model=static"])]:
        run = root / name
        run_from_config(compose(["task=memory", "benchmark=hdf5", f"benchmark.dataset_root={dataset}",
                                 "benchmark.fps=10", "metric=[revisit_error,reversibility_error]",
                                 f"run.store_dir={root / 'store'}", *model]), output_dir=run)
        out[name] = json.loads((run / "results.json").read_text())["results"]
    return out


def test_the_oracle_scores_0_and_forgetful_is_far_worse_on_a_datasets_revisits(calibration):
    for metric in ("hdf5.revisit_error", "hdf5.reversibility_error"):
        values = {name: results[metric]["normalized_stats"]["mean"] for name, results in calibration.items()}
        assert all(results[metric]["n_valid"] == 4 for results in calibration.values())
        assert values["oracle"] == 0.0
        assert values["forgetful"] > 20  # colours redrawn every 4 frames: a return finds the place redrawn
        # static never changes a frame: it scores the true change where the frames agree (at most 8
        # levels, here the sliding square's edge), below forgetful, blind as on the gridworld
        assert values["static"] <= 8 and values["static"] < values["forgetful"] / 4


def test_a_lerobot_image_dataset_finds_its_revisits_in_observation_state(tmp_path):
    from wfeval.pipeline.runner import run_from_config

    dataset = write_revisits_lerobot(tmp_path / "pan")
    run_from_config(compose(["task=memory", "benchmark=lerobot", f"benchmark.dataset_root={dataset}",
                             "model=oracle", "metric=[revisit_error]", f"run.store_dir={tmp_path / 'store'}"]),
                    output_dir=tmp_path / "run")
    results = json.loads((tmp_path / "run" / "results.json").read_text())["results"]
    assert results["lerobot.revisit_error"]["n_valid"] == 4 and results["lerobot.revisit_error"]["normalized_stats"][
        "mean"] == 0.0
    request = json.loads((tmp_path / "run" / "generations.jsonl").read_text().splitlines()[0])["request"]
    assert request["metadata"]["memory"]["state_key"] == "observation.state"


# -- refusals, before generation --------------------------------------------------------------------------


def test_a_dataset_without_a_state_is_refused_naming_what_it_holds():
    with pytest.raises(ConfigError, match="holds the camera 'agentview_image' alone.*records no pose or state"):
        HDF5Benchmark(str(ROOT / "examples/datasets/square.hdf5"), fps=10).task_records(MEMORY)
    from wfeval.benchmarks.episodes import VideoActionsBenchmark

    with pytest.raises(ConfigError, match="benchmark=video_actions records no state"):
        VideoActionsBenchmark(str(ROOT / "examples/datasets/square_episodes")).task_records(MEMORY)


def test_a_state_key_the_dataset_lacks_is_refused_naming_the_keys_it_has(tmp_path):
    task = WorldTaskConfig(name="memory", data={"memory": {"state_key": "joints"}})
    with pytest.raises(ConfigError, match=r"no 'joints' in pan.hdf5\[data/demo_0/obs\]; its numeric T or T×D "
                                          r"datasets: pose"):
        HDF5Benchmark(str(write_revisits_hdf5(tmp_path / "pan.hdf5")), fps=10).task_records(task)
    with pytest.raises(ConfigError, match="'joints' is not a feature of it; meta/info.json of .* its numeric "
                                          "features: observation.state, action"):
        LeRobotBenchmark(str(ROOT / "examples/datasets/square_lerobot")).task_records(task)


def test_no_return_within_the_tolerance_names_the_closest_and_a_tolerance_that_counts_it(tmp_path):
    bench = HDF5Benchmark(str(write_revisits_hdf5(tmp_path / "pan.hdf5", drift=0.01)), fps=10)
    with pytest.raises(ConfigError) as refused:
        bench.task_records(MEMORY)
    message = str(refused.value)
    # the pan returns exactly, but a second element drifts 0.01 a frame: the closest return is 2 frames on
    # (0.02), after the pan went 2 pixels (0.04) away
    assert "no revisit in the 4 sample(s)" in message and "The closest return found: 0.02 (" in message
    suggested = float(re.search(r"task\.data\.memory\.tolerance=([0-9.]+)", message).group(1))
    assert 0.02 <= suggested < 0.04
    counted = WorldTaskConfig(name="memory", data={"memory": {"tolerance": suggested}})
    assert bench.task_records(counted)  # the tolerance it names finds revisits
    pose_only = WorldTaskConfig(name="memory", data={"memory": {"state_dims": [0]}})
    assert len(bench.task_records(pose_only)) == 4


def test_the_refusal_exits_2_before_generation_in_one_paragraph(tmp_path):
    from wfeval.cli.exits import exit_for
    from wfeval.pipeline.runner import run_from_config

    dataset = write_revisits_hdf5(tmp_path / "pan.hdf5")
    with pytest.raises(ConfigError) as refused:
        run_from_config(compose(["task=memory", "benchmark=hdf5", f"benchmark.dataset_root={dataset}",
                                 "benchmark.fps=10", "benchmark.horizon=3", "model=oracle",
                                 f"run.store_dir={tmp_path / 'store'}"]), output_dir=tmp_path / "run")
    outcome = exit_for(refused.value)  # what the command prints and exits with
    assert outcome.status == 2 and "\n" not in outcome.message.strip()
    assert "benchmark.stride=1" in outcome.message  # a return across two samples: where to cut them
    assert not (tmp_path / "run" / "generations.jsonl").exists()


def test_the_planners_refuse_a_datasets_keys_and_a_dataset_refuses_gaps():
    from wfeval.tasks.memory import memory_settings
    from wfeval.benchmarks.episodes.revisits import settings

    assert memory_settings({"gaps": None, "tolerance": None}, (2, 4, 8, 16)) == (2, 4, 8, 16)  # the benchmark's own default
    with pytest.raises(ConfigError, match="task.data.memory.tolerance: applies to a dataset with a state column"):
        memory_settings({"gaps": [2], "tolerance": 0.1})
    with pytest.raises(ConfigError, match="task.data.memory.gaps: a dataset cannot plan its revisits"):
        settings({"gaps": [2, 4]})
    with pytest.raises(ConfigError, match="state_dims must be a non-empty list of distinct"):
        settings({"state_dims": [0, 0]})
