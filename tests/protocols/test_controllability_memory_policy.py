"""The three new tasks end to end: counterfactual generations (seeded, stored, failing by name), memory
samples planned from the exact state, policy evaluation inside the model and in the simulator; their
refusals (exit 2, one paragraph) before generation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import compose, read_jsonl, run_cli
from wfeval.api import ActionSpace, ArtifactRef, GenerationRequest
from wfeval.pipeline.runner import run_from_config
from wfeval.protocols.counterfactual import counterfactual_actions
from wfeval.storage.artifacts import read_array
from wfeval.tasks.controllability import settings


def _run(tmp_path: Path, name: str, *overrides: str) -> Path:
    out = tmp_path / name
    run_from_config(compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
                             *overrides]), out)
    return out


def _results(run: Path) -> dict:
    doc = json.loads((run / "results.json").read_text())
    return {k.split(".", 1)[1]: v for k, v in doc["results"].items()}


def test_counterfactual_sequences_are_seeded_per_sample_and_as_long_as_the_true_ones():
    request = GenerationRequest(sample_id="x", controls={"actions": [1] * 40, "action_names": list("abcde")})
    first = counterfactual_actions(request, 0, seed=0, p_repeat=0.5)
    assert first == counterfactual_actions(request, 0, seed=0, p_repeat=0.5) and len(first) == 40
    assert first != counterfactual_actions(request, 1, seed=0, p_repeat=0.5)
    assert first != counterfactual_actions(request, 0, seed=1, p_repeat=0.5)
    assert set(first) <= set(range(5)) and len(set(first)) > 2
    repeats = sum(a == b for a, b in zip(first, first[1:])) / 39
    assert 0.4 < repeats < 0.8  # p_repeat 0.5 plus the 1-in-5 chance of drawing the same action again
    space = ActionSpace.continuous(shape=(2,), low=-1.0, high=1.0)
    vectors = GenerationRequest(sample_id="v", controls={"actions": [[0.0, 0.0]] * 6,
                                                         "action_space": space.to_dict()})
    drawn = np.array(counterfactual_actions(vectors, 0, seed=0, p_repeat=0.0))
    assert drawn.shape == (6, 2) and np.all(np.abs(drawn) <= 1.0) and len(np.unique(drawn[:, 0])) == 6


def test_counterfactual_settings_are_checked_naming_the_key():
    from wfeval.config.errors import ConfigError

    assert settings({"counterfactual": {"count": 5}}) == {"count": 5, "seed": 0, "p_repeat": 0.5, "source": "auto"}
    for bad, key in (({"count": 0}, "count"), ({"p_repeat": 2}, "p_repeat"), ({"k": 3}, "unknown")):
        with pytest.raises(ConfigError, match=key):
            settings({"counterfactual": bad})


def test_controllability_stores_k_counterfactual_videos_and_a_frozen_model_scores_exactly_zero(tmp_path):
    run = _run(tmp_path, "static", "task=controllability", "model=static", "benchmark.num_samples=3",
               "task.data.counterfactual.count=2", "metric=[psnr,action_sensitivity]")
    records = read_jsonl(run / "generations.jsonl")
    assert all(set(r["result"]["artifacts"]) == {"generated_video", "counterfactual_video_0", "counterfactual_video_1"}
               for r in records)
    info = records[0]["result"]["metadata"]["counterfactual"]
    assert info["count"] == 2 and len(info["actions"]) == 2 and len(info["actions"][0]) == 15
    assert _results(run)["action_sensitivity"]["diagnostics"]["value"] == 0.0
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["protocol"]["counterfactual"] == {"count": 2, "seed": 0, "p_repeat": 0.5, "source": "uniform"}


def test_a_model_that_cannot_answer_a_counterfactual_is_refused_before_generation(tmp_path):
    # the oracle of a dataset folder replays the reference; a counterfactual has none to replay
    from wfeval.config.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        _run(tmp_path, "folder", "task=controllability", "benchmark=folder",
             "benchmark.dataset_root=examples/datasets/square_folder", "model=oracle", "metric=[psnr]")
    assert str(caught.value).startswith("task=controllability: model 'oracle' cannot answer a counterfactual on "
                                        "this benchmark: no ground truth: neither a simulator state nor a reference video")
    assert not (tmp_path / "folder" / "generations.jsonl").exists()


def test_memory_samples_carry_the_plan_the_static_masks_and_the_true_video(tmp_path):
    run = _run(tmp_path, "memory", "task=memory", "model=oracle", "benchmark.num_samples=2",
               "task.data.memory.gaps=[2,4]", "metric=[psnr,revisit_error,reversibility_error]")
    for record in read_jsonl(run / "generations.jsonl"):
        request = record["request"]
        memory = request["metadata"]["memory"]
        actions = request["controls"]["actions"]
        assert len(actions) == 6 and memory["gaps"] == [2, 4] and memory["loops"][0] == [0, 2]
        places = memory["places"]
        assert places[0] == places[2] == places[6]  # back at the start after every chain
        assert [0, 2] in memory["revisits"] and [0, 6] in memory["revisits"]
        masks = read_array(ArtifactRef.from_dict(request["references"]["static_mask"]))
        assert masks.shape == (7, 64, 64) and 0.8 < masks.mean() < 1.0
    values = {k: v["diagnostics"]["value"] for k, v in _results(run).items()}
    assert values == {"psnr": 100.0, "revisit_error": 0.0, "reversibility_error": 0.0}
    # the HTML report draws each measure's curve over the gap (buckets 2 and 4: a point each)
    from wfeval.report.html import write_report

    page = write_report([run], tmp_path / "report.html").read_text()
    assert page.count('class="chart gap-chart"') == 2 and 'data-metric="revisit_error"' in page


def test_policy_evaluation_runs_every_policy_inside_the_model_and_in_the_simulator(tmp_path):
    run = _run(tmp_path, "pe", "task=policy_evaluation", "model=oracle", "benchmark.num_samples=2",
               "protocol.policies=[shortest_path,noop,policy]", "policy=user",
               "policy._target_=wfeval_test_models.TowardsPolicy", "+policy.action=down",
               "metric=[psnr,policy_rank_correlation,return_error]")
    record = read_jsonl(run / "generations.jsonl")[0]
    model = record["result"]["metadata"]["policy_evaluation"]
    assert model["policies"] == ["shortest_path", "noop", "policy"] and model["discount"] == 0.95
    assert set(record["result"]["artifacts"]) == {"generated_video", "policy_0_video", "policy_1_video",
                                                  "policy_2_video"}
    true = record["request"]["metadata"]["policy_evaluation"]["true"]
    assert {k: v["return"] for k, v in true.items()} == {k: v["return"] for k, v in model["model"].items()}
    assert model["model"]["noop"]["return"] == 0.0 and model["model"]["noop"]["steps"] == 16
    assert record["request"]["controls"]["actions"] == model["model"]["shortest_path"]["actions"]
    values = {k: v["diagnostics"]["value"] for k, v in _results(run).items()}
    assert values["psnr"] == 100.0 and values["return_error"] == 0.0
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["protocol"]["policy"]["_target_"] == "wfeval_test_models.TowardsPolicy"


def test_a_model_reward_replaces_the_reward_read_off_the_frames(tmp_path):
    run = _run(tmp_path, "reward", "task=policy_evaluation", "model=python",
               "model.object._target_=wfeval_test_models.RewardingOracle", "benchmark.num_samples=2",
               "metric=[policy_rank_correlation]")
    model = read_jsonl(run / "generations.jsonl")[0]["result"]["metadata"]["policy_evaluation"]["model"]
    assert all(v["reward_source"] == "model" and v["return"] == 1.0 and v["steps"] == 1 for v in model.values())
    agg = _results(run)["policy_rank_correlation"]
    assert agg["diagnostics"]["value"] == 0.0 and agg["diagnostics"]["model_returns_tie"]


@pytest.mark.parametrize("task,what", [("memory", "can neither plan revisits"),
                                       ("policy_evaluation", "declares no scripted policies")])
def test_a_benchmark_without_the_family_interface_is_refused_with_exit_2(tmp_path, task, what):
    done = run_cli([f"task={task}", "benchmark=folder", "benchmark.dataset_root=examples/datasets/gridworld_tiny",
                    f"run.store_dir={tmp_path / 'store'}", f"hydra.run.dir={tmp_path / 'run'}"],
                   cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 2, done.stderr
    assert what in done.stderr and "Traceback" not in done.stderr


def test_odd_memory_gaps_on_the_gridworld_exit_2_naming_the_key(tmp_path):
    done = run_cli(["task=memory", "task.data.memory.gaps=[3]", f"run.store_dir={tmp_path / 'store'}",
                    f"hydra.run.dir={tmp_path / 'run'}"], cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 2 and "task.data.memory.gaps" in done.stderr and "even" in done.stderr
