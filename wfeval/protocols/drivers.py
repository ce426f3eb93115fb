"""What every protocol driver shares: a model wrapped so that ``generate(requests)`` runs one protocol
per request, and the replay of chosen actions into reference videos.

The pipeline's generation path (cache, retries, time limits, output checks) is unchanged: it
calls the driver's ``generate`` as it would call a model's. Each outcome is a
:class:`~wfeval.models.protocol.Generated` whose ``metadata["steps"]`` holds one row per model
call (the pipeline writes them to ``steps.jsonl``). ``finalize(pairs, store)`` runs after
generation (for cached results too): the closed-loop and planning drivers replace each
request's actions and reference video by the chosen actions replayed in the benchmark's own
simulator, so every reference metric scores the rollout against the true world.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from wfeval.api import GenerationRequest, GenerationResult
from wfeval.models.stepping import ModelWrapper, per_sample
from wfeval.utils.state_identity import fingerprint_value


class Driver(ModelWrapper):
    """Base: delegates identity, setup and close to the wrapped model."""

    protocol = ""

    def fingerprint(self) -> dict[str, Any]:
        method = getattr(self.model, "fingerprint", None)
        return fingerprint_value(method(), self.model) if callable(method) else {}  # a dict, bytes or a str

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        return per_sample(self.run_one, requests)

    def run_one(self, request: GenerationRequest) -> Any:
        raise NotImplementedError

    def finalize(self, pairs: list[tuple[GenerationRequest, GenerationResult]], store: Any) -> list:
        return pairs

    def choices(self) -> dict[str, Any]:
        """What the driver took from the benchmark when it was built (a family's scripted policies),
        which the generation identity must hold: a set changed in a family's code then gives new
        generations, never a cached episode of the old set. Empty: nothing beyond the protocol's options."""
        return {}


def replay_references(pairs: list[tuple[GenerationRequest, GenerationResult]], store: Any, simulate: Any,
                      key: str) -> list[tuple[GenerationRequest, GenerationResult]]:
    """Each generated sample's request with its actions replaced by the ones the rollout chose
    (``result.metadata[key]["actions"]``; the benchmark's script kept as ``scripted_actions``) and
    its reference video by those actions simulated from the sample's start. A rollout whose actions
    the simulator refuses (a bad value a policy returned) becomes that sample's failure, with the reason."""
    out = []
    for request, result in pairs:
        info = result.metadata.get(key) if result.status == "ok" else None
        if not isinstance(info, Mapping) or "actions" not in info:
            out.append((request, result))
            continue
        actions = list(info["actions"])
        try:
            video, metadata = simulate(request, actions)
        except Exception as exc:  # noqa: BLE001 - a chosen action the simulator refuses fails this sample only
            out.append((request, dataclasses.replace(
                result, status="failed", artifacts={}, stop_reason="", error=f"{type(exc).__name__}: the benchmark's "
                f"simulator could not replay the {key} actions of sample {request.sample_id!r}: {exc}")))
            continue
        controls = {**request.controls, "actions": actions,
                    "scripted_actions": list(request.controls.get("scripted_actions",
                                                                  request.controls.get("actions") or ()))}
        request = dataclasses.replace(
            request, controls=controls, references={**request.references, "video": store.put_array(video, kind="video")},
            metadata={**request.metadata, **dict(metadata), key: {"replayed_by": "benchmark simulator",
                                                                   "actions": len(actions)}})
        out.append((request, dataclasses.replace(result, steps=len(actions))))  # actions actually taken
    return out
