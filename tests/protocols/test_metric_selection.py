"""Metric selection precedence: metric= replaces everything; otherwise the benchmark's suite, then
the protocol's and the task's metric_ids/metric_groups join; extra_metrics always adds; each
selected metric carries the rule that selected it."""

from __future__ import annotations

import pytest

from tests.conftest import compose
from wfeval.config.errors import ConfigError
from wfeval.metrics.registry import REGISTRY
from wfeval.metrics.selection import metric_groups, select_metrics
from wfeval.pipeline.metric_nodes import metric_nodes_with_rules


def _rules(selection):
    return [(s.metric_id, s.rule) for s in selection]


def test_suite_then_protocol_then_task_then_extra_each_once():
    got = select_metrics(chosen=["psnr", "ssim"], explicit=False,
                         protocol={"metric_ids": ["fvd"], "metric_groups": ["interactive"]},
                         task={"metric_ids": ["ssim", "spl"], "metric_groups": []}, extra=["psnr", "mse"])
    assert _rules(got) == [("psnr", "benchmark"), ("ssim", "benchmark"), ("fvd", "protocol"),
                           ("real_time_factor", "protocol"), ("step_latency", "protocol"), ("spl", "task"),
                           ("mse", "extra_metrics")]
    assert got[3].source == "protocol.metric_groups[interactive]" and got[5].source == "task.metric_ids"


def test_an_explicit_metric_list_replaces_protocol_and_task_but_extra_still_adds():
    got = select_metrics(chosen=["ssim"], explicit=True, protocol={"metric_groups": ["interactive"]},
                         task={"metric_groups": ["planning"]}, extra=["fvd"])
    assert _rules(got) == [("ssim", "metric"), ("fvd", "extra_metrics")]


def test_a_task_that_outputs_no_video_leaves_the_benchmarks_pixel_suite_out():
    got = select_metrics(chosen=["psnr", "ssim"], explicit=False, task={"metric_groups": ["probing"],
                                                                        "metadata": {"benchmark_metrics": False}})
    assert {m.metric_id for m in got} == {"probe_r2", "probe_accuracy", "probe_f1", "imagined_probe_r2"}
    assert {m.rule for m in got} == {"task"}


def test_an_unknown_group_names_the_key_and_the_known_groups():
    with pytest.raises(ValueError, match=r"protocol.metric_groups: unknown group 'interactve'; known: behavioural_fidelity, control, "
                       r"controllability, distribution, exploitability, interactive, memory, planning, policy_evaluation, "
                       r"policy_optimization, probing, reference, reward_prediction, temporal, uncertainty"):
        select_metrics(chosen=[], explicit=False, protocol={"metric_groups": ["interactve"]})


def test_metric_groups_are_the_groups_the_metric_classes_declare():
    assert metric_groups() == {"control": ("action_following", "agent_position_error"), "distribution": ("fvd",),
                               "controllability": ("action_sensitivity", "idm_accuracy"),
                               "exploitability": ("chosen_plan_gap", "exploitability", "plan_rank_agreement",
                                                  "random_plan_gap", "selection_regret"),
                               "memory": ("reversibility_error", "revisit_error"),
                               "policy_evaluation": ("policy_rank_correlation", "return_error"),
                               "policy_optimization": ("model_trained_return", "optimization_lift",
                                                       "random_policy_return", "simulator_trained_return"),
                               "interactive": ("real_time_factor", "step_latency"),
                               "planning": ("goal_success", "spl", "steps_to_goal"),
                               "probing": ("imagined_probe_r2", "probe_accuracy", "probe_f1", "probe_r2"),
                               "reference": ("break_even_horizon", "dynamic_psnr", "dynamic_ssim", "lpips", "mae", "mse",
                                             "psnr", "ssim"),
                               "temporal": ("flicker", "frame_repeat_rate", "motion_magnitude"),
                               "behavioural_fidelity": ("behavioural_fidelity", "return_prediction_error", "reward_error"),
                               "reward_prediction": ("return_prediction_error", "reward_error"),
                               "uncertainty": ("calibration_error", "crps", "interval_coverage", "sample_diversity", "state_crps",
                                               "uncertainty_auroc", "uncertainty_spearman")}
    assert REGISTRY.load("psnr").groups == ("reference",)


def test_every_grouped_metric_is_registered_and_has_a_config_file():
    from wfeval.config.errors import group_options

    files = set(group_options("metric"))
    for group, ids in metric_groups().items():
        for metric_id in ids:
            assert REGISTRY.spec(metric_id).id == metric_id, (group, metric_id)
            assert metric_id in files, metric_id


def test_composed_configs_follow_the_precedence():
    nodes, rules = metric_nodes_with_rules(compose(["protocol=autoregressive", "extra_metrics=[mse]"]))
    assert list(nodes)[-3:] == ["real_time_factor", "step_latency", "mse"]
    assert rules["psnr"] == "benchmark" and rules["step_latency"] == "protocol" and rules["mse"] == "extra_metrics"
    nodes, rules = metric_nodes_with_rules(compose(["protocol=autoregressive", "metric=[ssim]",
                                                    "extra_metrics=[mse]"]))
    assert rules == {"ssim": "metric", "mse": "extra_metrics"}
    _, rules = metric_nodes_with_rules(compose(["task=goal_reaching"]))
    assert rules["goal_success"] == "protocol" and rules["ssim"] == "benchmark"
    _, rules = metric_nodes_with_rules(compose(["task=goal_reaching", "task.metric_ids=[mae]"]))
    assert rules["mae"] == "task"
    with pytest.raises(ConfigError, match="task.metric_groups: unknown group 'nope'"):
        metric_nodes_with_rules(compose(["task.metric_groups=[nope]"]))
