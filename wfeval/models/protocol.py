"""The world-model protocol, as the pipeline drives it (docs/adding-a-model.md walks through it).

A model is any object with::

    name: str                       # shown in results (optional; the class name otherwise)
    version: str                    # part of the cache identity: bump it when outputs change
    def generate(self, requests): ...  # Sequence[GenerationRequest] -> one outcome per request
    def setup(self): ...            # optional, called once before the first batch
    def close(self): ...            # optional, called once after the last batch (also on failure)
    def fingerprint(self): ...      # optional: what identifies it beyond its config (file hashes)

``generate`` gets a batch (``run.batch_size`` requests, or the model's own ``batch_size``) and
returns one outcome per request, in order. An outcome is

- a mapping of output key -> uint8 array (``{"generated_video": T×H×W×3}``): generated;
- a :class:`Generated` (the same mapping plus metadata, e.g. a log, kept in the trace);
- a :class:`NotGenerated` (an exception *instance*, returned, not raised): there is no output
  for this sample and that is not an error of the model (e.g. a precomputed file is absent);
- any other exception instance: this sample failed (its message is recorded).

Raising from ``generate`` fails the whole batch; the pipeline then retries its requests one at a
time, so one bad sample cannot take its neighbours down. Each request carries its seed in
``request.generation["seed"]`` (derived per sample from ``run.seed``, see ``run.seed_mode``).
The model never writes files into the store and never sees a metric or a reference output it
was not given.

**The step interface** (optional, beside or instead of ``generate``; docs/protocols.md)::

    def start(self, request) -> state          # state after the context frame(s) and the seed
    def step(self, state, actions) -> StepOutput  # advance by a chunk of actions; never mutates state
    def step_many(self, states, actions) -> list[StepOutput]   # optional: batched stepping

``StepOutput`` may also carry the model's own ``reward`` and ``done`` per action (optional; a
world model with a reward head): ``task=policy_evaluation`` uses them for the returns inside the
model, else it reads the benchmark's reward off the generated frames.

A model that keeps **one sample's states at a time** (a step program that forgets older states when
a ``start`` arrives: ``model=command`` with ``step_argv``) says ``one_sample_at_a_time = True``:
every driver then finishes one sample before it starts the next (:func:`one_sample_at_a_time`).

A model whose outputs are **draws from a distribution** says ``stochastic = True``: a request asking for
N samples (``generation["samples"]``, ``task=uncertainty``) then gets N draws, draw ``i`` from the
request with ``generation["draw"] = i`` and a seed of its own (:func:`is_stochastic`); any other
model is answered once and the result says so.

``start`` returns an opaque state after the request's context frame(s) (``request.inputs["image"]``)
and seed (``request.generation["seed"]``); no frame is returned: the context frame is frame 0.
``step`` returns the new state and one frame per action of the chunk (``k×H×W×3`` uint8). It
must not mutate the state it was given, so a planner can branch several futures from one state.
For a deterministic model, ``[context frame] + step(start(r), actions).frames ==
generate([r])[0]["generated_video"]``. The protocol drivers (``protocol=autoregressive``,
``closed_loop``, the ``goal_reaching`` planner) use it; a model with only the step interface
also runs open loop (the driver loops) and a model with only ``generate`` runs open loop only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np


class NotGenerated(Exception):
    """Outcome: no output exists for this sample (counted as not generated, not as a failure)."""

    def __init__(self, reason: str, metadata: Mapping[str, Any] | None = None):
        super().__init__(reason)
        self.metadata = dict(metadata or {})


class SampleFailed(Exception):
    """Outcome: this sample failed; ``metadata`` (e.g. a log tail) is kept in the result."""

    def __init__(self, message: str, metadata: Mapping[str, Any] | None = None):
        super().__init__(message)
        self.metadata = dict(metadata or {})


@dataclass(frozen=True)
class Generated:
    """Outcome: the output arrays of one sample plus metadata recorded with its result."""

    outputs: Mapping[str, Any]
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StepOutput:
    """What one ``step`` returns: the new state (opaque to the pipeline) and one frame per action; a
    model that predicts its own reward and episode end may add them (``task=policy_evaluation`` then
    scores returns with them instead of reading the benchmark's reward off the frames): ``reward``
    one number per action of the chunk (a number for a one-action chunk), ``done`` likewise booleans."""

    state: Any
    frames: np.ndarray  # k×H×W×3 uint8: one frame per action of the chunk
    reward: Any = None  # optional: float or k floats
    done: Any = None  # optional: bool or k bools


@runtime_checkable
class StepModel(Protocol):
    """A model driven one action (or one chunk of actions) at a time; see the module docstring."""

    def start(self, request: Any) -> Any: ...

    def step(self, state: Any, actions: Sequence[Any]) -> StepOutput: ...


def one_sample_at_a_time(model: Any) -> bool:
    """True when ``model`` (or the model it wraps) keeps one sample's states at a time: a driver must
    not start a second sample before the first is done (docs/adding-a-model.md, step programs)."""
    for _ in range(4):  # a driver around an adapter around the object, at most
        if model is None:
            return False
        if getattr(model, "one_sample_at_a_time", False) is True:
            return True
        model = getattr(model, "model", None) or getattr(model, "object", None)
    return False


def is_stochastic(model: Any) -> bool:
    """True when ``model`` (or the model it wraps) declares ``stochastic = True``: each draw of a
    multi-sample request differs (docs/uncertainty.md); False answers a request once."""
    for _ in range(4):  # a driver around an adapter around the object, at most
        if model is None:
            return False
        if getattr(model, "stochastic", False) is True:
            return True
        model = getattr(model, "model", None) or getattr(model, "object", None)
    return False


def has_step_interface(model: Any) -> bool:
    """True when ``model`` has callable ``start`` and ``step``."""
    return callable(getattr(model, "start", None)) and callable(getattr(model, "step", None))


def has_generate(model: Any) -> bool:
    return callable(getattr(model, "generate", None))


def lacks_every_interface(model: Any) -> str | None:
    """Why ``model`` cannot be driven at all, or None: it needs ``generate(requests)``, the step interface
    or the latent interface (:mod:`wfeval.models.latent`); which one a run needs is its protocol's check.
    The one list of the ways a model is driven: a model adapter and the pipeline both ask it."""
    from wfeval.models.latent import has_latent_interface

    if has_generate(model) or has_step_interface(model) or has_latent_interface(model):
        return None
    return (f"{type(model).__name__} has neither generate(requests), the step interface (start(request), "
            "step(state, actions); wfeval/models/protocol.py) nor the latent interface (encode(frames), "
            "predict(z, actions); docs/latent-models.md)")


def step_many(model: Any, states: Sequence[Any], actions: Sequence[Sequence[Any]]) -> list[StepOutput]:
    """``model.step_many`` when the model has it, else one ``step`` per state (same results)."""
    if len(states) != len(actions):
        raise ValueError(f"step_many: {len(states)} states but {len(actions)} action chunks")
    batched = getattr(model, "step_many", None)
    if callable(batched):
        out = list(batched(list(states), [list(a) for a in actions]))
        if len(out) != len(states):
            raise RuntimeError(f"{type(model).__name__}.step_many returned {len(out)} outputs for {len(states)} states")
        return out
    return [model.step(s, list(a)) for s, a in zip(states, actions)]


def step_rewards(out: StepOutput, n_actions: int, who: str) -> tuple[np.ndarray, np.ndarray] | None:
    """A step output's own ``reward`` and ``done``, checked; None when it has no reward.

    ``reward``: one finite real number per action (a bare number for a one-action chunk): a reward of
    another length, a string, a bool, NaN or infinity is a ValueError naming ``who`` -- never cut to
    its last element, never a good score. ``done``: None (not done) or one bool per action (``True``/
    ``False``, numpy bools, the integers 0/1): ``"False"`` is refused, never read as true."""
    if out.reward is None:
        if out.done is not None:
            raise ValueError(f"{who}.step returned done={out.done!r} without a reward; give both or neither")
        return None
    rewards = _per_action(out.reward, n_actions, who, "reward")
    not_real = [r for r in rewards if isinstance(r, (bool, np.bool_)) or not isinstance(r, (int, float, np.integer,
                                                                                            np.floating))]
    if not_real:
        bad = not_real[0]
        raise ValueError(f"{who}.step returned reward {bad!r} ({type(bad).__name__}); a reward is a real number")
    values = np.asarray([float(r) for r in rewards], np.float64)
    if not np.isfinite(values).all():
        raise ValueError(f"{who}.step returned a non-finite reward ({values.tolist()}); a reward is a finite number")
    dones = _per_action(out.done if out.done is not None else [False] * n_actions, n_actions, who, "done")
    not_bool = [d for d in dones if not (isinstance(d, (bool, np.bool_)) or (isinstance(d, (int, np.integer))
                                                                            and d in (0, 1)))]
    if not_bool:
        bad = not_bool[0]
        raise ValueError(f"{who}.step returned done {bad!r} ({type(bad).__name__}); done is True or False")
    return values, np.asarray([bool(d) for d in dones])


def _per_action(value: Any, n_actions: int, who: str, what: str) -> list[Any]:
    """One item per action: a bare scalar for a one-action chunk, else a flat sequence of ``n_actions``."""
    if isinstance(value, np.ndarray):
        value = value.tolist() if value.ndim else value.item()
    if isinstance(value, (list, tuple)):
        if len(value) != n_actions or any(isinstance(v, (list, tuple, np.ndarray)) for v in value):
            raise ValueError(f"{who}.step returned {what} {value!r:.80} for {n_actions} action(s); expected one "
                             f"{what} per action")
        return list(value)
    if n_actions != 1:
        raise ValueError(f"{who}.step returned one {what} ({value!r:.40}) for {n_actions} actions; expected one "
                         f"{what} per action")
    return [value]


def check_step_output(out: Any, n_actions: int, who: str, *, copy: bool = True) -> np.ndarray:
    """The frames of a step output, checked: a StepOutput with k×H×W×3 uint8 frames, k = actions.

    With ``copy`` (the default) the frames returned are wfeval's own read-only copy: a model that
    reuses its output buffer on the next step, or a policy handed a frame, cannot change what was
    checked and will be stored (``copy=False``: the caller copies them itself, e.g. ``np.stack``)."""
    if not isinstance(out, StepOutput):
        raise TypeError(f"{who}.step returned {type(out).__name__}; expected wfeval.models.protocol.StepOutput")
    frames = np.array(out.frames, copy=True) if copy else np.asarray(out.frames)
    if frames.ndim != 4 or frames.shape[0] != n_actions or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise ValueError(f"{who}.step returned frames of shape {frames.shape} dtype {frames.dtype} for "
                         f"{n_actions} action(s); expected {n_actions}×H×W×3 uint8 (one frame per action)")
    if copy:
        frames.flags.writeable = False
    return frames
