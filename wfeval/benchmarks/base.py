"""What the pipeline needs from a benchmark family (the benchmark integration contract: adapter,
runtime hook, scorer).

A family lives in its own package ``wfeval/benchmarks/<family>/`` and the core never names it:

- an **adapter** (required) turns its dataset into :class:`~wfeval.api.GenerationRequest`
  objects whose inputs and references are stored artifacts; it never calls a model or a metric.
  It may offer cheap ``records()`` plus ``materialize(record, ...)`` so that only the selected
  samples are decoded and stored (see :func:`wfeval.pipeline.select.select_requests`), and
  ``task_records(task)`` in place of ``records()`` when which samples it has depends on the task
  (a dataset under ``task=memory``: the windows that hold a revisit);
- a **runtime hook** (optional, the adapter's ``runtime`` attribute): ``prepare`` runs before the
  first generation, ``finalize`` after the last one (also when generation fails);
- a **scorer** (optional, the adapter's ``scorer`` attribute) maps the family's native output
  to the one standard result row of ``samples.jsonl``; it may only fill ``metadata`` and the
  standard fields, never add a second row format.

What a family offers for a task beside plain generation (memory, policy evaluation, probing, goal
reaching) is that task's interface, in its own module of :mod:`wfeval.tasks`; the family implements it
in its own package.

A sample whose inputs the adapter could not provide (a missing or corrupt file) is still
returned, with the reason under ``metadata[INPUT_ERROR]``: the pipeline does not send it to the
model, records it as not generated with ``stop_reason="input_error"``, and every metric skips
it, so the loss shows as coverage below 1 instead of disappearing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

from wfeval.api import (
    BenchmarkSpec,
    EvaluationProtocolSpec,
    GenerationRequest,
    GenerationResult,
    MetricSpec,
    WorldTaskConfig,
)
from wfeval.storage.artifacts import ArtifactStore

#: metadata key of a request whose inputs are unusable, and the stop_reason of its result
INPUT_ERROR = "input_error"
#: the standard public row of ``samples.jsonl`` (the shared result-row contract), in order
STANDARD_ROW_FIELDS = (
    "task_id", "sample_id", "benchmark", "split", "prediction", "success", "stop_reason", "steps",
    "latency_seconds", "token_usage", "cost", "trace_run_dir", "run_spec_ref", "metadata",
)


@runtime_checkable
class BenchmarkAdapter(Protocol):
    """A benchmark family's dataset adapter."""

    spec: BenchmarkSpec

    def requests(
        self, *, store: ArtifactStore, task: WorldTaskConfig, protocol: EvaluationProtocolSpec
    ) -> Sequence[GenerationRequest]:
        """The requests of the selected split, in a stable order, with stable sample ids."""
        ...

    def fingerprint(self) -> dict[str, Any]:
        """What identifies the data (content hash, versions); recorded in the manifest."""
        ...


@dataclass
class RunContext:
    """What a runtime hook may use: the run folder, the store, the requests, the event log."""

    run_dir: Path
    store: ArtifactStore
    requests: Sequence[GenerationRequest]
    event: Callable[..., None] = field(default=lambda kind, **fields: None)


@runtime_checkable
class BenchmarkRuntimeHook(Protocol):
    """Set up and tear down what a family needs around generation (servers, sandboxes, checks)."""

    def prepare(self, context: RunContext) -> Mapping[str, Any] | None:
        """Before the first generation; the mapping returned is recorded in the manifest
        (``benchmark.runtime``), never in results.json: how a process obtained the data (timings,
        caches) is provenance, not a result. Raise to stop the run before any model call."""
        ...

    def finalize(self, context: RunContext, *, status: str) -> Mapping[str, Any] | None:
        """After the last generation (``status``: ``completed`` or ``failed``); cleanup only."""
        ...


@runtime_checkable
class BenchmarkScorer(Protocol):
    """Maps a family's native output for one sample onto the standard public row."""

    def to_row(self, request: GenerationRequest, result: GenerationResult, row: dict[str, Any]) -> dict[str, Any]:
        """``row`` is the core's standard row; return it with family fields filled in."""
        ...


def metric_specs(metrics: Sequence[str]) -> tuple[MetricSpec, ...]:
    """A benchmark's ``metrics`` (``id`` or ``id==pinned version``) as specs."""
    from wfeval.config.plugins import metric_entry

    return tuple(MetricSpec(id=m, **({"version": v} if v else {})) for m, v in map(metric_entry, metrics))


def input_error(request: GenerationRequest) -> str | None:
    """Why the benchmark could not provide this request's inputs, or None."""
    reason = request.metadata.get(INPUT_ERROR)
    return str(reason) if reason else None


def runtime_of(adapter: Any) -> BenchmarkRuntimeHook | None:
    hook = getattr(adapter, "runtime", None)
    return hook if isinstance(hook, BenchmarkRuntimeHook) else None


def scorer_of(adapter: Any) -> BenchmarkScorer | None:
    scorer = getattr(adapter, "scorer", None)
    return scorer if isinstance(scorer, BenchmarkScorer) else None


def apply_scorer(scorer: Any, request: GenerationRequest, result: GenerationResult,
                 row: dict[str, Any]) -> dict[str, Any]:
    """``scorer.to_row`` checked against the shared contract; a scorer that fails or breaks the
    row format leaves the core row, with the reason under ``metadata.scorer_error``."""
    if scorer is None:
        return row
    try:
        out = scorer.to_row(request, result, {**row, "metadata": dict(row.get("metadata") or {})})
        if not isinstance(out, dict) or set(out) != set(row):
            raise ValueError("to_row must return the standard row with the same fields "
                             f"({', '.join(row)}); family details go in metadata")
        if out["sample_id"] != row["sample_id"]:
            raise ValueError("to_row must not change sample_id")
        return out
    except Exception as exc:
        return {**row, "metadata": {**dict(row.get("metadata") or {}),
                                    "scorer_error": f"{type(exc).__name__}: {exc}"}}

