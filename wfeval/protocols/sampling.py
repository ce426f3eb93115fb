"""``protocol=sampling`` (``task=uncertainty`` selects it): N draws of each open-loop prediction.

A request asks for ``generation["samples"]`` draws (:func:`~wfeval.api.requested_samples`; the task's
``generation_defaults.samples``). A model that declares ``stochastic = True``
(:func:`~wfeval.models.protocol.is_stochastic`) is asked N times: draw 0 is the request itself, draw
``i > 0`` the request with ``generation["draw"] = i`` and a seed of its own, derived from the request's
seed and the draw. Any other model is asked once, and the result says so
(``metadata["samples"]["deterministic"]``): repeating a deterministic model would only repeat its
answer. The draws are ``generated_video`` (draw 0) and ``sample_<i>_video`` (i >= 1); a model may
report an uncertainty per predicted frame in its outcome's metadata (``uncertainty``: one number per
frame after the context frame), kept per draw. The uncertainty measures (wfeval/metrics/uncertainty.py)
score the draws against the reference video.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any, Mapping

import numpy as np

from wfeval.api import GenerationRequest, requested_samples
from wfeval.api._generation import DRAW_KEY
from wfeval.models.protocol import Generated, NotGenerated, has_generate, is_stochastic
from wfeval.models.stepping import rollout
from wfeval.protocols.base import Protocol, ProtocolRun
from wfeval.protocols.drivers import Driver

DRAW_OUTPUT = "sample_{}_video"  # draw i >= 1; draw 0 is generated_video


def draw_seed(seed: Any, sample_id: str, draw: int) -> int:
    """A 31-bit seed of one draw, from the request's seed, its sample id and the draw (stable)."""
    digest = hashlib.sha256(f"{seed}/{sample_id}/draw{draw}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def draw_request(request: GenerationRequest, draw: int) -> GenerationRequest:
    """Draw ``draw`` of a multi-sample request: the request itself for draw 0, else the request with
    ``generation["draw"]`` and a seed derived from its own seed and the draw."""
    if draw == 0:
        return request
    seed = draw_seed(request.generation.get("seed"), request.sample_id, draw)
    return dataclasses.replace(request, generation={**request.generation, DRAW_KEY: draw, "seed": seed})


class Sampling(Protocol):
    driver = "sampling"
    task_kinds = ("uncertainty",)
    needs_steps = False

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        return SamplingDriver(model)


class SamplingDriver(Driver):
    protocol = "sampling"

    def _one(self, request: GenerationRequest) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        """(outputs, metadata) of one draw; a failed or missing draw fails the sample (raised)."""
        if has_generate(self.model):
            outcome = list(self.model.generate([request]))[0]
        else:
            outcome = {"generated_video": rollout(self.model, request, None)[0]}
        if isinstance(outcome, NotGenerated):
            raise RuntimeError(f"draw {request.generation.get(DRAW_KEY, 0)} was not generated: {outcome}")
        if isinstance(outcome, BaseException):
            raise outcome
        if isinstance(outcome, Generated):
            return outcome.outputs, outcome.metadata
        return outcome, {}

    def run_one(self, request: GenerationRequest) -> Generated:
        wanted = requested_samples(request)
        stochastic = is_stochastic(self.model)
        draws = wanted if stochastic else 1
        outputs: dict[str, Any] = {}
        seeds, uncertainty = [], []
        for i in range(draws):
            one = draw_request(request, i)
            got, meta = self._one(one)
            if "generated_video" not in got:
                raise ValueError(f"draw {i}: the model returned no generated_video (outputs: {sorted(got)})")
            if i == 0:
                outputs.update(got)
            else:
                outputs[DRAW_OUTPUT.format(i)] = got["generated_video"]
            seeds.append(one.generation.get("seed"))
            if meta.get("uncertainty") is not None:
                uncertainty.append(np.asarray(meta["uncertainty"], dtype=np.float64).ravel().tolist())
        samples = {"requested": wanted, "returned": draws, "deterministic": not stochastic, "seeds": seeds}
        if not stochastic and wanted > 1:
            samples["note"] = "the model does not declare stochastic = True: answered once (every draw would repeat it)"
        metadata: dict[str, Any] = {"protocol": self.protocol, "samples": samples}
        if uncertainty:
            metadata["uncertainty"] = uncertainty
        return Generated(outputs, metadata)
