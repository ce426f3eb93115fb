"""results.json holds results only: how this process obtained the data is not part of it."""

from __future__ import annotations

from wfeval.api import GenerationRequest
from wfeval.metrics.basic import ArtifactCount
from wfeval.metrics.outcomes import scored
from wfeval.results import build_results


def _document(runtime):
    manifest = {"run_id": "r", "config_hash": "c" * 64, "model": {"name": "m"},
                "benchmark": {"id": "b", "version": "1.0", "dataset_hash": "d" * 64, "runtime": runtime}}
    requests = [GenerationRequest(sample_id=f"s{i}", split="test") for i in range(3)]
    rows = {"artifact_count": [scored(r.sample_id, "artifact_count", 1) for r in requests]}
    return build_results(manifest=manifest, metrics={"artifact_count": ArtifactCount()}, per_metric=rows,
                         requests=requests, rules={})[1]


def test_a_cold_and_a_warm_run_of_the_same_data_give_the_same_document():
    cold = _document({"recording": {"recorded": 8, "seconds": 12.5}})
    warm = _document({"recording": {"recorded": 0, "cached": 8, "seconds": 0.1}})
    assert cold == warm and cold.to_dict() == warm.to_dict()
    assert "runtime" not in cold.to_dict()["benchmark"] and cold.benchmark.dataset_hash == "d" * 64


def test_a_protocol_that_does_not_serve_the_task_kind_is_a_config_error():
    import pytest

    from tests.conftest import compose
    from wfeval.pipeline import build
    from wfeval.protocols.base import ProtocolRun

    for overrides, message in ((["task=goal_reaching", "protocol=open_loop"],
                                "protocol=open_loop serves tasks of kind 'reference_metrics' .* task 'goal_reaching' "
                                "is of kind 'planning'; pick protocol=planning"),
                               (["protocol=planning"], "protocol=planning serves tasks of kind 'planning'")):
        cfg = compose(overrides)
        spec, protocol = build.build_protocol(cfg), build.build_protocol_class(cfg)
        with pytest.raises(build.ConfigError, match=message):
            protocol.check_task(ProtocolRun(spec, build.build_task(cfg)))
