"""A live object's identity covers all the state reachable from it (issue 32 item 2, issue 34 item 1).

Before: ``wfeval.evaluate`` hashed only torch modules held directly on the object, so a network in a
list, two attributes deep, a non-persistent buffer or a plain tensor attribute changed in place (even
by a real SGD step) was served the old outputs (15.03 where a fresh store gave 21.38), and a plain
numpy model was refused without ``model_version``. Now every tensor/array reachable is hashed by
content (wfeval/utils/state_identity.py) and ``fingerprint()`` may return a dict, bytes or a str.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import wfeval
from tests.robustness._run import wfeval as run_cli
from wfeval.config.errors import ConfigError
from wfeval.models.base import actions_of, initial_frame
from wfeval.utils.state_identity import StateUnseen, state_digest


class Box:
    """A plain holder (attributes of attributes)."""


class Shift:
    """Adds ``offset_of(state)`` (rounded) to the initial frame, held still: the offset decides PSNR."""

    name = "shift"

    def __init__(self, state, offset_of):
        self.state, self.offset_of = state, offset_of

    def generate(self, requests):
        value = self.offset_of(self.state)
        level = int(round(float(value.detach() if hasattr(value, "detach") else value)))
        out = []
        for request in requests:
            frame = np.clip(initial_frame(request).astype(np.int16) + level, 0, 255).astype(np.uint8)
            out.append({"generated_video": np.repeat(frame[None], len(actions_of(request)) + 1, axis=0)})
        return out


class WithFingerprint(Shift):
    def __init__(self, state, offset_of, returns):
        super().__init__(state, offset_of)
        self.returns = returns

    def fingerprint(self):
        return self.returns


def _linear(bias: float) -> torch.nn.Linear:
    net = torch.nn.Linear(1, 1)
    with torch.no_grad():
        net.weight.zero_()
        net.bias.fill_(bias)
    return net


def _in_list():
    return [_linear(2.0)], lambda s: s[0].bias, lambda s: s[0].bias.data.add_(9.0)


def _two_deep():
    outer = Box()
    outer.inner = Box()
    outer.inner.net = _linear(2.0)
    return outer, lambda s: s.inner.net.bias, lambda s: s.inner.net.bias.data.add_(9.0)


def _non_persistent_buffer():
    net = torch.nn.Module()
    net.register_buffer("offset", torch.tensor(2.0), persistent=False)
    return net, lambda s: s.offset, lambda s: s.offset.add_(9.0)


def _plain_tensor():
    holder = Box()
    holder.offset = torch.tensor([2.0])
    return holder, lambda s: s.offset, lambda s: s.offset.add_(9.0)


def _numpy_in_dict():
    return {"layers": [np.array([2.0])]}, lambda s: s["layers"][0][0], lambda s: s["layers"][0].__iadd__(9.0)


def _sgd_step():
    net = _linear(2.0)
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    holder = Box()
    holder.parts = {"nets": [net]}

    def step(s):
        loss = (s.parts["nets"][0](torch.zeros(1, 1)) - 22.0).pow(2).sum()  # pulls the bias from 2 to 22
        opt.zero_grad()
        loss.backward()
        opt.step()
    return holder, lambda s: s.parts["nets"][0].bias, step


CASES = {"network_in_a_list": _in_list, "two_attributes_deep": _two_deep,
         "non_persistent_buffer": _non_persistent_buffer, "plain_tensor_attribute": _plain_tensor,
         "numpy_arrays_in_containers": _numpy_in_dict, "a_real_sgd_step": _sgd_step}


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _eval(model, store, **kw):
    return wfeval.evaluate(model=model, metrics=["psnr"], overrides=["benchmark.num_samples=2", f"run.store_dir={store}"],
                           **kw)


@pytest.mark.parametrize("case", sorted(CASES))
def test_state_changed_in_place_anywhere_in_the_object_is_generated_again(tmp_path, case):
    state, offset_of, change = CASES[case]()
    model = Shift(state, offset_of)
    first = _eval(model, tmp_path / "store")  # no model_version: the state itself is the identity
    again = _eval(model, tmp_path / "store")
    assert (first.generated, again.generated, again.cached) == (2, 0, 2)
    change(state)
    changed = _eval(model, tmp_path / "store")
    fresh = _eval(model, tmp_path / "fresh_store")
    assert (changed.generated, changed.cached) == (2, 0)  # never the old outputs
    assert changed["gridworld.psnr"].value == fresh["gridworld.psnr"].value  # what a fresh store gives
    assert changed["gridworld.psnr"].value != pytest.approx(first["gridworld.psnr"].value, abs=0.5)


def test_the_digest_follows_shared_references_and_cycles_and_ignores_random_generators():
    net = _linear(1.0)
    holder = Box()
    holder.a, holder.b, holder.me, holder.rng = net, [net, {"again": net}], None, np.random.default_rng(0)
    holder.me = holder
    before = state_digest(holder)
    assert before["arrays"] == 2  # weight and bias once, however often they are reached
    holder.rng.random()  # a random generator's state moves on with every draw: not the model's state
    assert state_digest(holder) == before
    copy = Box()
    copy.a, copy.b, copy.rng = _linear(1.0), None, np.random.default_rng(5)
    copy.b, copy.me = [copy.a, {"again": copy.a}], copy
    assert state_digest(copy)["sha256"] == before["sha256"]  # equal values: equal identity


def test_unreadable_or_too_large_state_is_refused_with_where_and_why(tmp_path):
    holder = Box()
    holder.items = iter([1, 2])  # an iterator: its contents cannot be read from Python
    with pytest.raises(StateUnseen, match=r"model\.items: a builtins\.list_iterator object"):
        state_digest(holder)
    with pytest.raises(StateUnseen, match=r"more than 50 objects are reachable"):
        state_digest([[i] for i in range(100)], max_objects=50)
    chain: list = []
    for _ in range(300):
        chain = [chain]
    with pytest.raises(StateUnseen, match=r"nested more than 100 levels deep"):
        state_digest(chain)
    with pytest.raises(ConfigError, match=r"model\.state\.items: a builtins\.list_iterator.*model_version="):
        _eval(Shift(holder, lambda s: 0.0), tmp_path / "store")


@pytest.mark.parametrize("returns", [b"\x00weights-v1", "weights-v1", {"step": 3, "table": np.arange(3)}])
def test_a_fingerprint_may_return_bytes_a_string_or_a_dict(tmp_path, returns):
    model = WithFingerprint(np.array([2.0]), lambda s: s[0], returns)
    first = _eval(model, tmp_path / "store")
    assert (first.generated, _eval(model, tmp_path / "store").cached) == (2, 2)


def test_a_fingerprint_of_another_type_is_a_clear_error_naming_it(monkeypatch, capsys, tmp_path):
    with pytest.raises(ConfigError, match=r"WithFingerprint\.fingerprint\(\) returned a int \(7\); it must return "
                                          r"a dict, bytes or a str"):
        _eval(WithFingerprint(np.array([2.0]), lambda s: s[0], 7), tmp_path / "store")
    ran = run_cli(monkeypatch, capsys, tmp_path, "model=python",
                  "model.object._target_=tests.robustness._models.FingerprintReturnsInt", "metric=[psnr]", samples=1)
    assert ran.code == 2
    assert "FingerprintReturnsInt.fingerprint() returned a int (3); it must return a dict, bytes or a str" in ran.err
    assert "Traceback" not in ran.err + ran.out and "is not iterable" not in ran.err


def test_a_jax_array_is_hashed_by_its_content(monkeypatch):
    import sys
    import types

    class Array:  # stands in for jax.Array (jax is not installed here): np.asarray gives its values
        def __init__(self, values):
            self.values = np.asarray(values)

        def __array__(self, dtype=None, copy=None):
            return self.values

    monkeypatch.setitem(sys.modules, "jax", types.SimpleNamespace(Array=Array))
    holder = Box()
    holder.params = {"w": Array([1.0, 2.0])}
    before = state_digest(holder)
    assert before["arrays"] == 1 and before["array_bytes"] == 16
    holder.params["w"].values[0] = 5.0
    assert state_digest(holder)["sha256"] != before["sha256"]
