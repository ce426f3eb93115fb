"""``protocol=counterfactual`` (``task=controllability`` selects it): each sample generated with its
true actions and with K seeded counterfactual action sequences, from the same start and seed.

The K sequences (``task.data.counterfactual``: ``count``, ``seed``, ``p_repeat``, ``source``, checked by
:func:`wfeval.tasks.controllability.settings`) come
from ``dataset`` (other windows' actions, :mod:`wfeval.protocols.dataset_actions`) or ``uniform`` (first
action uniform over the set, later ones kept with probability ``p_repeat``; continuous: within the
declared bounds; sha256 of (seed, sample id, k, step)); ``auto``: dataset for continuous actions.
What cannot give counterfactuals is refused before generation, naming the option to set. A
counterfactual request is the sample's request with those actions and without its reference (the
reference shows the true actions' future). The model gets the true request and
its K counterfactuals in one ``generate`` call per sample (a step-only model is stepped through each); the
outputs are ``generated_video`` (true actions) and ``counterfactual_video_<k>``, all checked
against the output contract; any of them failing fails the sample, naming which.
``action_sensitivity`` and ``idm_accuracy`` score them (docs/metrics.md).
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any, Mapping, Sequence

from wfeval.api import GenerationRequest, action_space_of
from wfeval.models.base import uniform_action
from wfeval.models.protocol import Generated, NotGenerated, SampleFailed, has_generate
from wfeval.protocols.base import Protocol, ProtocolRun, need_steps
from wfeval.protocols.dataset_actions import ActionPool, refuse_unservable, resolve_source
from wfeval.protocols.drivers import Driver
from wfeval.tasks.controllability import settings

PREFIX = "counterfactual_video_"


def _uniform(*parts: Any) -> float:
    digest = hashlib.sha256("/".join(map(str, ("wfeval.counterfactual", *parts))).encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2.0**64


def counterfactual_actions(request: GenerationRequest, k: int, seed: int, p_repeat: float) -> list[Any]:
    """The ``k``-th counterfactual sequence of ``request`` (as long as its own actions)."""
    actions = list(request.controls.get("actions") or ())
    if not actions:
        raise ValueError(f"sample {request.sample_id!r} has no actions to replace by counterfactual ones")
    space = action_space_of(request)
    out: list[Any] = []
    for t in range(len(actions)):
        key = (seed, request.sample_id, k, t)
        if out and _uniform("repeat", *key) < p_repeat:
            out.append(out[-1])
        elif space is not None and space.is_continuous:
            out.append(uniform_action(space, ("wfeval.counterfactual", *key)).tolist())
        else:
            names = request.controls.get("action_names")
            n = len(names) if names else max(int(a) for a in actions) + 1
            out.append(min(int(_uniform("fresh", *key) * n), n - 1))
    return out


def counterfactual_request(request: GenerationRequest, k: int, seed: int, p_repeat: float) -> GenerationRequest:
    return dataclasses.replace(request, controls={**request.controls,
                                                  "actions": counterfactual_actions(request, k, seed, p_repeat)},
                               references={})


class Counterfactual(Protocol):
    driver = "counterfactual"
    task_kinds = ("controllability",)
    needs_steps = False

    _source: tuple[str, str | None] | None = None  # (the source used, the dataset pool's digest), set by drive

    def identity(self, run: ProtocolRun) -> dict[str, Any]:
        options = settings(run.task.data)
        if self._source is not None:
            options["source"], pool = self._source
            if pool is not None:
                options["pool"] = pool
        return {**super().identity(run), "counterfactual": options}

    def check(self, model: Any, benchmark: Any) -> None:
        if not has_generate(model):  # a model without generate is stepped: it needs the step interface
            need_steps(model, self.driver)

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        options = settings(run.task.data)
        source, pool = resolve_source(options["source"], run.extra.get("requests") or ())  # or refused here
        self._source = (source, pool.digest if pool is not None else None)
        driver = CounterfactualDriver(model, **{**options, "source": source}, pool=pool)
        refuse_unservable(model, driver._counterfactuals, run.extra.get("requests") or ())
        return driver


class CounterfactualDriver(Driver):
    protocol = "counterfactual"

    def __init__(self, model: Any, count: int = 3, seed: int = 0, p_repeat: float = 0.5, source: str = "uniform",
                 pool: ActionPool | None = None):
        super().__init__(model)
        self.source, self.pool = source, pool
        if has_generate(model):
            self.inner = model
        else:
            from wfeval.models.stepping import StepLoop

            self.inner = StepLoop(model)
        self.count, self.seed, self.p_repeat = int(count), int(seed), float(p_repeat)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        """One ``generate`` call per sample: its true request and its K counterfactuals (a call that
        raises is retried one request at a time, so the failure is pinned on the one that failed)."""
        out: list[Any] = []
        for request in requests:
            try:
                group = [request] + self._counterfactuals(request)
            except ValueError as exc:  # this sample cannot have counterfactuals: its own failure
                out.append(exc)
                continue
            try:
                outcomes = list(self.inner.generate(group))
                if len(outcomes) != len(group):
                    raise RuntimeError(f"the model returned {len(outcomes)} outcomes for {len(group)} requests")
            except TimeoutError:
                raise
            except Exception:  # noqa: BLE001 - find which request fails
                outcomes = [self._one(r) for r in group]
            out.append(self._combine(group, outcomes))
        return out

    def _counterfactuals(self, request: GenerationRequest) -> list[GenerationRequest]:
        if self.pool is None:
            return [counterfactual_request(request, k, self.seed, self.p_repeat) for k in range(self.count)]
        return [dataclasses.replace(request, controls={**request.controls, "actions": actions}, references={})
                for actions in self.pool.draw(request, self.count, self.seed)]

    def _one(self, request: GenerationRequest) -> Any:
        try:
            return list(self.inner.generate([request]))[0]
        except TimeoutError:
            raise
        except Exception as exc:  # noqa: BLE001 - this request's failure
            return exc

    def _combine(self, group: list[GenerationRequest], outcomes: list[Any]) -> Any:
        first = outcomes[0]
        if isinstance(first, BaseException):
            return first
        for k, outcome in enumerate(outcomes[1:]):
            if isinstance(outcome, NotGenerated):
                return SampleFailed(f"counterfactual {k} was not generated: {outcome}")
            if isinstance(outcome, BaseException):
                return SampleFailed(f"counterfactual {k}: {type(outcome).__name__}: {outcome}")
        arrays, metadata = {}, {}
        for k, outcome in enumerate(outcomes):
            mapping = outcome.outputs if isinstance(outcome, Generated) else outcome
            if not isinstance(mapping, Mapping) or "generated_video" not in mapping:
                who = "the true actions" if k == 0 else f"counterfactual {k - 1}"
                return SampleFailed(f"the model returned no 'generated_video' for {who}")
            if k == 0:
                arrays.update(mapping)
                metadata = dict(outcome.metadata) if isinstance(outcome, Generated) else {}
            else:
                arrays[f"{PREFIX}{k - 1}"] = mapping["generated_video"]
        metadata["counterfactual"] = {"count": self.count, "seed": self.seed, "p_repeat": self.p_repeat,
                                      "source": self.source,
                                      "actions": [list(r.controls["actions"]) for r in group[1:]]}
        return Generated(arrays, metadata)
