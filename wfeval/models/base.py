"""The world-model contract the pipeline drives.

A model turns a batch of :class:`~wfeval.api.GenerationRequest` into one output mapping per
request (output key → uint8 array, e.g. ``{"generated_video": T×H×W×3}``). It never stores
files and never sees a metric: the pipeline stores the arrays and builds the results.
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from wfeval.api import ActionSpace, ContractError, GenerationRequest, action_space_of
from wfeval.storage.artifacts import read_array


@runtime_checkable
class WorldModel(Protocol):
    """What a model must have: ``generate``. ``name`` (shown in results; the class name otherwise),
    ``version`` (part of the cache identity), ``batch_size``, ``fingerprint()``, ``setup()`` and
    ``close()`` are optional (see :mod:`wfeval.models.protocol`); the pipeline reads them once
    through :class:`wfeval.pipeline.model.ModelHandle`."""

    def generate(self, requests: Sequence[GenerationRequest]) -> Sequence[Mapping[str, np.ndarray]]:
        """One mapping of output arrays per request, in order. Raise to fail the whole batch."""
        ...


def initial_frame(request: GenerationRequest) -> np.ndarray:
    """The request's conditioning image (H×W×3 uint8)."""
    try:
        ref = request.inputs["image"]
    except KeyError:
        raise ValueError(f"sample {request.sample_id!r}: request has no 'image' input") from None
    return read_array(ref)


def actions_of(request: GenerationRequest) -> Any:
    """The request's actions (``controls["actions"]``) as a model uses them.

    Discrete (ids into ``controls["action_names"]``; the built-in games): a tuple of ints — a
    non-integral number is refused, never truncated. Continuous (a declared
    ``controls["action_space"]`` of kind ``continuous``, or vectors): a read-only float array of
    ``len(actions) × shape`` in the space's dtype (float64 when undeclared), checked against the
    space (shape, finite values, bounds). ValueError naming the sample and the first bad action."""
    try:
        actions = request.controls["actions"]
    except KeyError:
        raise ValueError(f"sample {request.sample_id!r}: request has no 'actions' control") from None
    try:
        space = action_space_of(request)
    except ContractError as exc:
        raise ValueError(f"sample {request.sample_id!r}: {exc}") from None
    if space is not None and space.is_continuous:
        return continuous_actions(actions, space, f"sample {request.sample_id!r}")
    if space is None:  # undeclared scalar ids (no names): integers only
        space = ActionSpace.discrete(n=2**62)
    problem = space.problem(actions)
    if problem:
        raise ValueError(f"sample {request.sample_id!r}: {problem}")
    return tuple(int(a) for a in actions)


def continuous_actions(actions: Any, space: ActionSpace, who: str = "actions") -> np.ndarray:
    """``actions`` as a read-only ``len(actions) × space.shape`` array of the space's dtype, after
    :meth:`ActionSpace.problem` found nothing wrong (ValueError naming ``who`` otherwise)."""
    problem = space.problem(actions)
    if problem:
        raise ValueError(f"{who}: {problem} ({space.describe()})")
    array = np.asarray(actions, dtype=np.dtype(space.dtype)).reshape((len(actions), *space.shape))
    array.flags.writeable = False
    return array


def plain_actions(actions: Sequence[Any]) -> list[Any]:
    """JSON-ready actions: numpy arrays and scalars become lists and Python numbers."""
    return [a.tolist() if isinstance(a, (np.ndarray, np.generic)) else
            (plain_actions(a) if isinstance(a, (list, tuple)) else a) for a in actions]


def hashed_uniform(*parts: Any) -> float:
    """A float in [0, 1) from sha256 of ``parts`` joined by ``/`` (the same in any process)."""
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2.0**64


def uniform_action(space: ActionSpace, key: tuple) -> np.ndarray:
    """An action drawn uniformly within a bounded continuous space, element by element, from the
    hash of ``key`` (reproducible in any process); ValueError for an unbounded space. The one draw
    of the random policies, the counterfactual actions and the recorded families' scripted policies."""
    found = space.bounds()
    if found is None:
        raise ValueError(f"the random policy samples within the action space's bounds, and this one declares "
                         f"none ({space.describe()}); declare low/high, or choose policy=scripted or your own")
    low, high = found
    values = [lo + hashed_uniform("fresh", *key, i) * (hi - lo) for i, (lo, hi) in enumerate(zip(low, high))]
    action = np.asarray(values, dtype=space.dtype).reshape(space.shape)
    return np.clip(action, np.asarray(low, space.dtype).reshape(space.shape),
                   np.asarray(high, space.dtype).reshape(space.shape))  # float32 rounding stays within bounds
