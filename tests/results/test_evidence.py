"""The evidence gate lists every reason a result does not count."""

from __future__ import annotations

from wfeval.api import AggregateResult
from wfeval.results.evidence import evidence_gate

RULES = {"min_coverage": 0.9, "min_valid": {"default": 10, "fvd": 100}, "metric_versions": {"psnr": "1.0"},
         "dataset_hash": "a" * 64, "official_splits": ["test"]}


def _agg(metric_id, n_valid, n_total, valid=True):
    return AggregateResult(metric_id=metric_id, n_total=n_total, n_valid=n_valid, n_skipped=n_total - n_valid,
                           valid=valid, diagnostics={} if valid else {"reason": "no item was scored"})


def _gate(results, versions=None, dataset_hash="a" * 64, split="test", required=()):
    return evidence_gate(RULES, results=results, metric_versions=versions or {"psnr": "1.0", "fvd": "1.0"},
                         dataset_hash=dataset_hash, split=split, required_metrics=required)


def test_a_result_meeting_every_rule_is_eligible():
    gate = _gate({"psnr": _agg("psnr", 20, 20), "fvd": _agg("fvd", 100, 100)}, required=["psnr"])
    assert gate == {"eligible": True, "reasons": [], "rules": RULES}


def test_every_failed_rule_is_reported():
    gate = _gate({"psnr": _agg("psnr", 17, 20), "fvd": _agg("fvd", 64, 64), "ssim": _agg("ssim", 0, 20, valid=False)},
                 versions={"psnr": "1.1"}, dataset_hash="b" * 64, split="val", required=["psnr", "flicker"])
    assert gate["eligible"] is False
    assert gate["reasons"] == [
        "flicker: required by the benchmark but not evaluated",
        "psnr: coverage 0.850 < required 0.900",
        "fvd: 64 valid samples < required 100",
        "ssim: no valid result (no item was scored)",
        "psnr: version 1.1 differs from the pinned 1.0",
        "dataset hash bbbbbbbbbbbb… differs from the pinned aaaaaaaaaaaa… (other samples, a subset, or changed data)",
        "split 'val' is not an official split (test)",
    ]


def test_no_rules_means_eligible():
    gate = evidence_gate({}, results={"psnr": _agg("psnr", 1, 5)}, metric_versions={}, dataset_hash=None,
                         split="x", required_metrics=())
    assert gate["eligible"] is True


def test_every_dataset_reader_holds_a_result_to_the_same_minimum_sample_count():
    """One rule (issue 50): a Minari run of 22 samples was eligible while a LeRobot run of 12 was not,
    because only some reader files spelled min_valid; the count now comes from the schema alone."""
    from omegaconf import OmegaConf

    from tests.conftest import compose
    from wfeval.config.schema import MIN_VALID

    readers = ("minari", "lerobot", "hdf5", "folder", "video_actions")
    rules = {b: OmegaConf.to_container(compose([f"benchmark={b}"]).benchmark.evidence) for b in readers}
    assert {b: r["min_valid"] for b, r in rules.items()} == {b: {"default": MIN_VALID} for b in readers}
    assert MIN_VALID == 32
    for reader, n in (("minari", 22), ("lerobot", 12)):
        gate = evidence_gate(rules[reader], results={"psnr": _agg("psnr", n, n)}, metric_versions={},
                             dataset_hash=None, split="train", required_metrics=["psnr"])
        assert gate["reasons"] == [f"psnr: {n} valid samples < required 32"], reader


def test_a_task_that_declares_its_measures_is_judged_on_them_alone():
    """Probing and latent goal reaching (FamilyNeed.evidence): the benchmark's pixel suite is not
    required, and a pixel measure a model that does not decode cannot score does not block."""
    from wfeval.results.evidence import for_task
    from wfeval.tasks import goal_reaching, probing

    assert probing.NEED.evidence == ("probe_r2",) and goal_reaching.NEED.evidence == ("goal_success", "spl")
    rules = for_task({"min_valid": {"default": 10}}, {"name": "goal_reaching"}, "gridworld",
                     goal_reaching.NEED.evidence)
    assert rules["measures"] == ["goal_success", "spl"]
    results = {"goal_success": _agg("goal_success", 32, 32), "spl": _agg("spl", 32, 32),
               "psnr": _agg("psnr", 0, 32, valid=False)}
    gate = evidence_gate(rules, results=results, metric_versions={}, dataset_hash=None, split="test",
                         required_metrics=["psnr", "ssim"])
    assert gate == {"eligible": True, "reasons": [], "rules": rules}
    gate = evidence_gate(rules, results={"spl": _agg("spl", 8, 8)}, metric_versions={}, dataset_hash=None,
                         split="test", required_metrics=["psnr"])
    assert gate["reasons"] == ["goal_success: required by the task but not evaluated",
                               "spl: 8 valid samples < required 10"]
    assert gate["missing_metrics"] == ["goal_success"]
    assert "measures" not in for_task({"min_valid": {"default": 10}}, {"name": "action_video"}, "gridworld")
