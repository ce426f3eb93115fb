"""Counterfactual actions drawn from the dataset itself (task.data.counterfactual.source: dataset, the
default for continuous actions): each is another window's real action sequence; a benchmark that cannot
give counterfactuals is refused before generation, naming the option to set; and task=controllability
on a LeRobot dataset gives action_sensitivity with no option beyond dataset_root."""

from __future__ import annotations

import json

import numpy as np
import pytest

import wfeval
from tests.conftest import read_jsonl
from wfeval.api import ActionSpace, GenerationRequest
from wfeval.config.errors import ConfigError
from wfeval.models.base import initial_frame
from wfeval.protocols.dataset_actions import ActionPool, resolve_source


def _request(sample_id, actions, space=None):
    controls = {"actions": actions, **({"action_space": space.to_dict()} if space else {})}
    return GenerationRequest(sample_id=sample_id, controls=controls)


def test_each_counterfactual_is_another_windows_actions_seeded_and_distinct():
    rng = np.random.default_rng(0)
    windows = {f"w{i}": rng.uniform(-0.3, 0.7, size=(5, 2)).round(3).tolist() for i in range(6)}
    requests = [_request(s, a) for s, a in windows.items()] + [_request("short", [[0.0, 0.0]] * 3)]
    pool = ActionPool(requests)
    drawn = pool.draw(requests[0], 3, seed=0)
    assert len(drawn) == 3 and all(d in list(windows.values())[1:] for d in drawn)  # others' real actions
    assert len({json.dumps(d) for d in drawn}) == 3  # three different windows
    assert drawn == ActionPool(requests).draw(requests[0], 3, seed=0)  # the same in any process
    assert drawn != pool.draw(requests[0], 3, seed=1)
    with pytest.raises(ValueError, match="0 other window"):
        pool.draw(requests[-1], 1, seed=0)  # no other window of its length


def test_auto_draws_continuous_actions_from_the_dataset_and_discrete_ones_uniformly():
    vectors = [_request(f"v{i}", [[float(i), 0.0]] * 4) for i in range(3)]
    source, pool = resolve_source("auto", vectors)
    assert source == "dataset" and pool.n_windows == 3
    ids = [GenerationRequest(sample_id=f"d{i}", controls={"actions": [1, 2], "action_names": ["a", "b", "c"]})
           for i in range(3)]
    assert resolve_source("auto", ids) == ("uniform", None)


def test_uniform_counterfactuals_without_declared_bounds_are_refused_naming_the_options():
    unbounded = [_request(f"v{i}", [[0.1 * i, 0.0]] * 4) for i in range(3)]
    with pytest.raises(ConfigError) as caught:
        resolve_source("uniform", unbounded)
    assert "uniform counterfactual actions need the action space's bounds" in str(caught.value)
    assert "task.data.counterfactual.source=dataset" in str(caught.value) and "benchmark.action_low" in str(caught.value)
    bounded = [_request("b", [[0.0, 0.0]] * 4, ActionSpace.continuous(shape=(2,), low=-1.0, high=1.0))]
    assert resolve_source("uniform", bounded) == ("uniform", None)
    with pytest.raises(ConfigError, match="at least two samples whose actions have the same length, and this run has 1"):
        resolve_source("dataset", bounded)


class Pushed:
    """A world model of the example dataset's dynamics (an 8×8 red square moved by 3 pixels per unit of
    its velocity actions, tests/support/wfeval_test_datasets.py): it finds the square in the initial
    frame and moves a copy of it by the actions it is given, so it obeys them."""

    name = "pushed"

    def fingerprint(self):
        return {"version": 1}

    def generate(self, requests):
        out = []
        for request in requests:
            first = initial_frame(request)
            distance = np.abs(first.astype(np.int16) - (215, 60, 60)).sum(axis=-1)
            ys, xs = np.nonzero(distance < 60)
            limit = np.array(first.shape[:2]) - 8
            pos, frames = np.array([ys.min(), xs.min()], dtype=np.float64), [first]
            for action in np.asarray(request.controls["actions"], dtype=np.float64):
                pos = np.clip(pos + 3 * action[::-1], 0, limit)
                frame, (y, x) = first.copy(), np.rint(pos).astype(int)
                frame[y:y + 8, x:x + 8] = (215, 60, 60)
                frames.append(frame)
            out.append({"generated_video": np.stack(frames)})
        return out


@pytest.fixture(scope="module")
def controllability(tmp_path_factory):
    from wfeval_test_datasets import episodes, write_lerobot

    root = tmp_path_factory.mktemp("controllability")
    dataset = write_lerobot(root / "square_lerobot", episodes())  # LeRobot v3.0 as the reader tests write it
    results = wfeval.evaluate(model=Pushed(), benchmark="lerobot", task="controllability",
                              metrics=["action_sensitivity"], run_dir=root / "run",
                              overrides=[f"benchmark.dataset_root={dataset}", f"run.store_dir={root / 'store'}"])
    return results


def test_controllability_on_a_lerobot_dataset_needs_only_its_root_and_draws_from_the_dataset(controllability):
    sensitivity = controllability["lerobot.action_sensitivity"]
    assert sensitivity.n_valid == sensitivity.n_total == 4 and sensitivity.value > 1.0  # dB: it obeys its actions
    records = read_jsonl(controllability.run_dir / "generations.jsonl")
    truths = {r["request"]["sample_id"]: r["result"]["metadata"]["counterfactual"] for r in records}
    manifest = json.loads((controllability.run_dir / "manifest.json").read_text())
    assert manifest["protocol"]["counterfactual"]["source"] == "dataset" and manifest["protocol"]["counterfactual"]["pool"]
    windows = [np.asarray(d).round(6).tolist() for t in truths.values() for d in t["actions"]]
    own = {r["request"]["sample_id"]: np.asarray(r["request"]["controls"]["actions"]).round(6).tolist() for r in records}
    for sample_id, info in truths.items():
        assert info["source"] == "dataset" and len(info["actions"]) == 3
        for actions in info["actions"]:
            rounded = np.asarray(actions).round(6).tolist()
            assert rounded != own[sample_id] and rounded in list(own.values())  # another window's real actions
    assert len(windows) == 12

