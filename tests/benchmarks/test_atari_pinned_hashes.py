"""Each Atari YAML pins the dataset hash of its default samples (evidence.dataset_hash): recording
them again here must give exactly that hash, or every result on the benchmark turns ineligible."""

from __future__ import annotations

import pytest

from tests.conftest import compose
from wfeval.pipeline import build
from wfeval.results import dataset_hash
from wfeval.storage.artifacts import ArtifactStore

pytest.importorskip("ale_py")


@pytest.mark.parametrize("game", ["atari_pong", "atari_breakout", "atari_boxing"])
def test_the_pinned_dataset_hash_matches_a_fresh_recording(game, tmp_path):
    cfg = compose([f"benchmark={game}"])
    bench = build.build_benchmark(cfg)
    requests = bench.requests(store=ArtifactStore(tmp_path), task=build.build_task(cfg),
                              protocol=build.build_protocol(cfg))
    assert len(requests) == cfg.benchmark.evidence.min_valid.default == 32
    assert dataset_hash(requests) == cfg.benchmark.evidence.dataset_hash
