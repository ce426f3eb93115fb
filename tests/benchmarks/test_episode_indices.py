"""``benchmark.episodes`` takes episode indices as well as names: ``0`` is the episode whose name ends in
that number (LeRobot ``episode_000000``, HDF5 ``demo_0``, Minari ``episode_0``), on every reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from wfeval.config.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "datasets" / "square_lerobot"


def test_an_index_selects_the_lerobot_example_episode_of_that_episode_index():
    from wfeval.benchmarks.episodes import LeRobotBenchmark

    for selection, names in (([0], ["episode_000000"]), (["1"], ["episode_000001"]),
                             ([1, "episode_000000"], ["episode_000000", "episode_000001"])):
        bench = LeRobotBenchmark(str(EXAMPLE), episodes=selection)
        assert [e.name for e in bench.episodes] == names
        assert {w.sample_id.rsplit("-t", 1)[0] for w in bench._windows} == set(names)


def test_an_index_selects_by_number_on_the_hdf5_and_minari_readers(tmp_path):
    from wfeval_test_datasets import episodes, write_hdf5, write_minari

    from wfeval.benchmarks.episodes import HDF5Benchmark, MinariBenchmark

    hdf5 = HDF5Benchmark(str(write_hdf5(tmp_path / "square.hdf5", episodes(3))), episodes=[2], fps=10)
    assert [e.name for e in hdf5.episodes] == ["demo_2"]
    minari = MinariBenchmark(str(write_minari(tmp_path / "minari", episodes(3))), episodes=[1, 2], fps=10)
    assert [e.name for e in minari.episodes] == ["episode_1", "episode_2"]


def test_an_index_no_episode_ends_in_is_refused_naming_it_and_the_rule():
    from wfeval.benchmarks.episodes import LeRobotBenchmark

    with pytest.raises(ConfigError, match=r"no episode '7' .*episode_000000.*ends in that number"):
        LeRobotBenchmark(str(EXAMPLE), episodes=[7])
