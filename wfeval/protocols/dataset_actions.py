"""Counterfactual actions drawn from the benchmark's own samples (``task.data.counterfactual.source:
dataset``, the default for continuous actions): the k-th counterfactual of a sample is the action
sequence of another window of the same length, so it is realistic and within the data's own range
with no bounds declared.

The windows are the run's samples in the benchmark's order; for a sample, a start among the
windows of its length comes from sha256 of (seed, sample id), and its K counterfactuals are the
first K windows from there (cyclically) that are another sample's and differ from its own actions:
the same in any process. The pool's digest joins the protocol's identity (another set of samples,
another draw: never a cached generation of other counterfactuals)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable

import numpy as np

from wfeval.api import action_space_of
from wfeval.config.errors import ConfigError


def _unit(*parts: Any) -> float:
    digest = hashlib.sha256("/".join(map(str, ("wfeval.counterfactual.dataset", *parts))).encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2.0**64


def _plain(actions: Any) -> list:
    return np.asarray(actions).tolist()


class ActionPool:
    """Every sample's action sequence, by length."""

    def __init__(self, requests: Iterable[Any]):
        self.by_length: dict[int, list[tuple[str, list]]] = {}
        hasher = hashlib.sha256()
        for request in requests:
            actions = (request.controls or {}).get("actions")
            if actions is None or len(actions) == 0:
                continue
            sequence = _plain(actions)
            self.by_length.setdefault(len(sequence), []).append((str(request.sample_id), sequence))
            hasher.update(json.dumps([str(request.sample_id), sequence]).encode())
        self.digest = hasher.hexdigest()[:32]

    @property
    def n_windows(self) -> int:
        return sum(len(v) for v in self.by_length.values())

    def usable(self) -> bool:
        """At least two windows of one length: a sample can borrow another's actions."""
        return any(len(v) >= 2 for v in self.by_length.values())

    def draw(self, request: Any, count: int, seed: int) -> list[list]:
        """The ``count`` counterfactual sequences of ``request`` (ValueError when the dataset has fewer
        other windows of its length, with other actions)."""
        own = _plain((request.controls or {}).get("actions") or [])
        if not own:
            raise ValueError(f"sample {request.sample_id!r} has no actions to replace by counterfactual ones")
        windows = self.by_length.get(len(own), [])
        start = int(_unit(seed, request.sample_id) * len(windows)) if windows else 0
        out: list[list] = []
        for i in range(len(windows)):
            sample_id, sequence = windows[(start + i) % len(windows)]
            if sample_id != str(request.sample_id) and sequence != own:
                out.append(sequence)
                if len(out) == count:
                    return out
        raise ValueError(f"sample {request.sample_id!r}: the dataset has {len(out)} other window(s) of {len(own)} "
                         f"actions that differ from its own, {count} needed (task.data.counterfactual.count)")


def resolve_source(source: str, requests: Any) -> tuple[str, ActionPool | None]:
    """(the source a run uses, its pool for ``dataset``): ``auto`` is ``dataset`` for continuous
    actions, ``uniform`` for discrete ones; a benchmark that cannot give counterfactuals is refused
    here, before any generation, naming the option to set."""
    space = next((action_space_of(r) for r in requests), None)
    continuous = space is not None and space.is_continuous
    if source == "auto":
        source = "dataset" if continuous else "uniform"
    if source == "uniform" and continuous and space.bounds() is None:
        raise ConfigError(
            f"task=controllability: uniform counterfactual actions need the action space's bounds, and this "
            f"benchmark declares none ({space.describe()}). Draw them from the dataset itself "
            f"(task.data.counterfactual.source=dataset: actions of other windows, within the data's own range), "
            f"or declare the bounds (benchmark.action_low=... benchmark.action_high=...).")
    if source != "dataset":
        return source, None
    pool = ActionPool(requests)
    if not pool.usable():
        raise ConfigError(
            f"task=controllability: counterfactual actions drawn from the dataset need at least two samples "
            f"whose actions have the same length, and this run has {pool.n_windows} sample(s) with actions. "
            f"Evaluate more samples, or draw them uniformly (task.data.counterfactual.source=uniform, with "
            f"declared bounds for continuous actions: benchmark.action_low/action_high).")
    return source, pool


def refuse_unservable(model: Any, counterfactuals: Any, requests: Any) -> None:
    """A model that says it cannot serve a counterfactual request (``cannot_serve``: the dataset oracle
    replays a reference, which a counterfactual has none of) is refused before any generation."""
    check = getattr(model, "cannot_serve", None)
    first = next(iter(requests), None)
    if not callable(check) or first is None:
        return
    try:
        counterfactual = counterfactuals(first)[0]
    except ValueError:
        return  # this sample's own failure, said when it is generated
    reason = check(counterfactual)
    if reason:
        raise ConfigError(f"task=controllability: model '{getattr(model, 'name', type(model).__name__)}' cannot "
                          f"answer a counterfactual on this benchmark: {reason} (a counterfactual request has no "
                          f"reference video: the reference shows the true actions' future). Evaluate a model that "
                          f"generates from the actions it is given.")
