"""The samples a run evaluates: selected (``run.limit``, ``run.shard``), prepared one at a time,
and checked against the task before any generation."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence

from wfeval.api import EvaluationProtocolSpec, GenerationRequest, WorldTaskConfig
from wfeval.benchmarks.base import BenchmarkAdapter, input_error
from wfeval.config.errors import ConfigError
from wfeval.pipeline.shard import parse_shard, shard_bounds


def check_requests_fit_task(requests: Iterable[GenerationRequest], task: WorldTaskConfig) -> None:
    """Refuse, before any generation, a benchmark that does not provide the task's inputs."""
    for request in requests:
        check_request_fits_task(request, task)


def check_request_fits_task(request: GenerationRequest, task: WorldTaskConfig) -> None:
    if input_error(request):  # unreadable sample: reported by its benchmark, never generated
        return
    provided = {*request.inputs, *request.controls, *(("prompt",) if request.prompt else ())}
    missing = [k for k in task.input_keys if k not in provided]
    if missing:
        raise ConfigError(
            f"task.input_keys: sample {request.sample_id!r} of the benchmark provides no "
            f"{', '.join(map(repr, missing))} (it has {', '.join(sorted(provided)) or 'nothing'}); "
            "pick a task that fits the benchmark"
        )


def select_requests(bench: BenchmarkAdapter, *, store: Any, task: WorldTaskConfig, protocol: EvaluationProtocolSpec,
                    limit: int | None, shard: str | None) -> list[GenerationRequest]:
    """The requests this run evaluates: the first ``limit`` samples, then shard ``i/n`` of them."""
    return list(iter_requests(bench, store=store, task=task, protocol=protocol, limit=limit, shard=shard))


def iter_requests(bench: BenchmarkAdapter, *, store: Any, task: WorldTaskConfig, protocol: EvaluationProtocolSpec,
                  limit: int | None, shard: str | None) -> Iterator[GenerationRequest]:
    """:func:`select_requests` one request at a time (the options are checked at once).

    An adapter offering cheap ``records()`` and ``materialize(record, ...)`` has only the chosen
    samples rendered and stored, one after the other as they are asked for, so parallel shards do
    not repeat each other's data preparation and a run never holds them all.
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError(f"run.limit: expected a positive number of samples or null (all), got {limit!r}")
    if shard is not None:  # a bad spec is a config error, found before any sample is prepared
        try:
            parse_shard(shard)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
    if callable(getattr(bench, "records", None)) and callable(getattr(bench, "materialize", None)):
        # sliced, never copied: a lazy sequence of records stays lazy; a family whose samples depend on
        # the task says which (task=memory on a dataset: the windows that hold a revisit)
        records = bench.task_records(task) if callable(getattr(bench, "task_records", None)) else bench.records()
        chosen = _shard((records if isinstance(records, Sequence) else list(records))[:limit], shard)
        return (bench.materialize(r, store=store, task=task, protocol=protocol) for r in chosen)
    return iter(_shard(list(bench.requests(store=store, task=task, protocol=protocol))[:limit], shard))


def _shard(items: Sequence[Any], shard: str | None) -> Sequence[Any]:
    start, stop = shard_bounds(len(items), shard)
    return items[start:stop]
