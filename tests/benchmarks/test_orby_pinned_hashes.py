"""orby pins the dataset hash of its default samples (evidence.dataset_hash) and task=goal_reaching
pins the hash of the goal samples it builds on them: recording them again must give exactly those
hashes, or every result on the benchmark turns ineligible."""

from __future__ import annotations

import pytest

from tests.conftest import compose
from wfeval.pipeline import build
from wfeval.results import dataset_hash
from wfeval.storage.artifacts import ArtifactStore

pytest.importorskip("tiny_jepa")


def test_the_pinned_orby_hashes_match_a_fresh_recording(tmp_path):
    store = ArtifactStore(tmp_path)
    for task in ("action_video", "goal_reaching"):
        cfg = compose(["benchmark=orby", f"task={task}"])
        requests = build.build_benchmark(cfg).requests(store=store, task=build.build_task(cfg),
                                                       protocol=build.build_protocol(cfg))
        assert len(requests) == cfg.benchmark.evidence.min_valid.default == 32
        pinned = cfg.task.metadata.dataset_hash.orby if task == "goal_reaching" else cfg.benchmark.evidence.dataset_hash
        assert dataset_hash(requests) == pinned, task
