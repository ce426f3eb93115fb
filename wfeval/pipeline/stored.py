"""Read a run back from its files: its generations, metric rows, requests and metric objects.

Used by ``run.from_run`` (re-score stored generations), replay (rebuild results), merge
(combine shards) and anything else that must work from stored files alone, without calling a
model or scoring a sample again. Rows are read as a run reads its own: a chunk of samples at a
time into the runner's :class:`~wfeval.results.sample_table.ResultTable` (what is held per sample is
what results read, not the rows).
"""

from __future__ import annotations

import json
from array import array
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Sequence

import numpy as np

from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.rebuild import MetricRecordError, build_metric_from_record
from wfeval.results import MetricSet, resolve_aggregation
from wfeval.results.record import Aggregate, RunManifest, RunResults, read_manifest
from wfeval.results.sample_table import ResultTable
from wfeval.storage.rundir import FILES, RunDirectory, line_offsets, request_sample_id


class StoredRunError(ValueError):
    """A run directory lacks what is needed to read it back."""


def load_generations(run_dir: Path) -> tuple[Sequence[tuple[GenerationRequest, GenerationResult]], RunManifest]:
    """The (request, result) pairs of a run (read lazily from its ``generations.jsonl``) and its
    manifest (``run.from_run``)."""
    from wfeval.pipeline.spool import stored_pairs

    source = RunDirectory(run_dir, create=False)
    manifest = read_manifest(source.path)
    pairs = stored_pairs(source.file(FILES.generations))
    if manifest is None or not len(pairs):
        raise StoredRunError(f"run.from_run: {source.path} is not a finished wfeval run "
                             "(needs manifest.json and generations.jsonl)")
    return pairs, manifest


def open_run(run_dir: Path) -> tuple[RunManifest, MetricSet]:
    """(manifest, metrics (a :class:`~wfeval.results.MetricSet`)) of a run directory, its metrics
    rebuilt through the registry from ``.hydra/config.yaml``."""
    from omegaconf import OmegaConf

    rundir = RunDirectory(run_dir, create=False)
    manifest = read_manifest(run_dir)
    config = run_dir / FILES.config
    if manifest is None or not config.is_file() or not rundir.file(FILES.metrics).is_file():
        raise StoredRunError(f"{run_dir} is not a wfeval run directory "
                             "(needs manifest.json, .hydra/config.yaml and metrics.jsonl)")
    try:
        cfg = OmegaConf.load(config)  # read as data: its targets are registry keys, never imported
    except Exception as exc:
        from wfeval.config.errors import yaml_error_message

        raise StoredRunError(f"{run_dir}: {yaml_error_message(exc) or f'cannot read {config}: {exc}'}") from None
    return manifest, _rebuild_metrics(run_dir, cfg, manifest, list(manifest.metrics or {}))


def load_table(run_dir: Path) -> tuple[RunManifest, MetricSet, ResultTable]:
    """(manifest, metrics, the :class:`~wfeval.results.sample_table.ResultTable` of its rows) of a finished
    run, read as the run itself aggregates: a chunk of samples at a time (:class:`RowIndex`)."""
    manifest, metrics = open_run(run_dir)
    rundir = RunDirectory(run_dir, create=False)
    index = RowIndex(list(metrics))
    index.add_run(line_offsets(rundir.file(FILES.generations)), line_offsets(rundir.file(FILES.metrics)),
                  where=run_dir)
    table = index.table(metrics, (manifest.rules or {}).get("group_by") or (),
                        rundir.file(FILES.generations), rundir.file(FILES.metrics))
    return manifest, metrics, table


def rebuild_results(run_dir: Path) -> tuple[RunManifest, MetricSet, dict, RunResults]:
    """(manifest, metrics, aggregates, results document) of a finished run rebuilt from its rows
    alone, as replay does: what ``results.json`` must say (:func:`results_disagree`)."""
    from wfeval.results import build_results

    manifest, metrics, table = load_table(run_dir)
    results, document = build_results(
        manifest=manifest, metrics=metrics, table=table, rules=manifest.rules or {},
        required_metrics=manifest.required_metrics,
    )
    return manifest, metrics, results, document


def results_disagree(recorded: RunResults, rebuilt: RunResults) -> list[str]:
    """Where a run's ``results.json`` (``recorded``) says other numbers than its rows (``rebuilt``):
    one line per measurement whose aggregate differs (value, interval or counts); [] when they agree."""
    out = []
    mine, theirs = recorded.results, rebuilt.results
    for measurement in sorted(set(mine) | set(theirs)):
        a, b = mine.get(measurement), theirs.get(measurement)
        if a != b:
            said = "missing" if not isinstance(a, Aggregate) else _short_value(a)
            rows = "missing" if not isinstance(b, Aggregate) else _short_value(b)
            out.append(f"{measurement}: {said} in results.json, {rows} from metrics.jsonl")
    return out


def verify_entries(entries: Sequence[Any]) -> list[str]:
    """Each run's ``results.json`` checked against its own rows (the numbers the paired comparison
    reads): where they disagree, the entry's document becomes the rebuilt one and a line names the
    run and the measurements; a run whose rows cannot be read back is named too (its results.json
    is then shown as written). Returns those lines (empty when every run agrees)."""
    lines = []
    for entry in entries:
        if entry.document is None or entry.run_dir is None:
            continue
        try:
            *_, rebuilt = rebuild_results(entry.run_dir)
        except (StoredRunError, OSError, ValueError, KeyError, TypeError) as exc:
            lines.append(f"{entry.run_dir}: results.json not verified against its rows ({exc})")
            continue
        found = results_disagree(entry.document, rebuilt)
        if found:
            lines.append(f"{entry.run_dir}: results.json disagrees with the run's own rows (metrics.jsonl): "
                         f"{'; '.join(found[:3])}{'; …' if len(found) > 3 else ''}; shown: the rows' numbers")
            entry.document = rebuilt
    return lines


def _short_value(aggregate: Aggregate) -> str:
    value = aggregate.value
    return f"{value:.4g}" if isinstance(value, float) else str(value)


class RowIndex:
    """Where a run's samples are in its files, and nothing else: per sample the byte offset of its
    ``generations.jsonl`` record (in run order) and, per metric, of its last ``metrics.jsonl`` row
    (the last row per metric and sample wins: a resumed run appends rows). 8 bytes a sample and
    metric; the sample ids are held only while one run's rows are indexed (:meth:`add_run`, once
    per shard when merging)."""

    def __init__(self, metric_ids: Sequence[str]):
        self.metric_ids = list(metric_ids)
        self.requests = array("q")
        self.rows = {m: array("q") for m in self.metric_ids}

    def __len__(self) -> int:
        return len(self.requests)

    def add_run(self, generations: Iterable[tuple[int, Any]], rows: Iterable[tuple[int, Any]], where: Path) -> None:
        """Index one run's records and rows, given as ``(byte offset, row)`` in file order."""
        base, first, repeated = len(self.requests), {}, []
        for offset, record in generations:
            sample_id = request_sample_id(record)
            if not isinstance(sample_id, str):
                raise StoredRunError(f"{where}: generations.jsonl, the record at byte {offset} is not a generation "
                                     "record (no request.sample_id): the file was changed or is not a run's")
            position = first.setdefault(sample_id, len(self.requests))
            if position != len(self.requests):
                repeated.append((len(self.requests), position))  # the same sample id: the same rows
            self.requests.append(offset)
        for m in self.metric_ids:
            self.rows[m].extend(array("q", [-1]) * (len(self.requests) - base))
        for offset, row in rows:
            if not isinstance(row, dict):
                continue
            m, sample_id = row.get("metric_id"), row.get("sample_id")
            column = self.rows.get(m) if isinstance(m, str) else None
            position = first.get(sample_id) if isinstance(sample_id, str) else None
            if column is not None and position is not None:
                column[position] = offset
        for position, same in repeated:
            for column in self.rows.values():
                column[position] = column[same]
        for m, column in self.rows.items():
            missing = np.flatnonzero(np.frombuffer(column, dtype=np.int64)[base:] < 0)
            if missing.size:
                example = next(s for s, p in first.items() if p == base + int(missing[0]))
                raise StoredRunError(f"{where}: metrics.jsonl has no {m!r} row for {missing.size} sample(s), "
                                     f"e.g. {example!r}: the run did not finish scoring")

    def table(self, metrics: MetricSet, group_by: Sequence[str], generations_file: Path, metrics_file: Path,
              digest: Any = None) -> ResultTable:
        """The rows fed chunk by chunk into the runner's :class:`ResultTable` (the rows of a metric
        with its own aggregate stay in ``metrics_file``, read back by offset when it aggregates);
        ``digest`` (a :class:`~wfeval.results.document.DatasetHash`) is fed each request."""
        from wfeval.pipeline.spool import CHUNK

        table = ResultTable(metrics, metrics.aggregation, group_by, rows_file=metrics_file, metric_ids=self.metric_ids)
        with generations_file.open("rb") as records, metrics_file.open("rb") as rows:
            for start in range(0, len(self), CHUNK):
                stop = min(start + CHUNK, len(self))
                requests = [_parsed(GenerationRequest.from_dict, _line(records, o)["request"], generations_file, o)
                            for o in self.requests[start:stop]]
                per_metric = {m: [_parsed(MetricResult.from_dict, _line(rows, o), metrics_file, o)
                                  for o in self.rows[m][start:stop]] for m in self.metric_ids}
                table.add(requests, per_metric, {m: self.rows[m][start:stop] for m in table.rows})
                if digest is not None:
                    for request in requests:
                        digest.add(request)
        return table


def _parsed(parse: Any, data: Any, path: Path, offset: int) -> Any:
    """``parse(data)``; a row that does not parse is a :class:`StoredRunError` naming its file and place."""
    try:
        return parse(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise StoredRunError(f"{path}: the row at byte {offset} does not parse ({type(exc).__name__}: "
                             f"{str(exc)[:200]}): the file was changed or is not a run's") from None


def _line(handle: BinaryIO, offset: int) -> Any:
    handle.seek(offset)
    return json.loads(handle.readline())


def _rebuild_metrics(run_dir: Path, cfg, manifest: RunManifest, metric_ids: list[str]) -> MetricSet:
    """The run's metrics through the registry (never a target from the folder), with the
    aggregation the run recorded for each. A metric whose recorded options name code (a user's
    locator) is rebuilt without them, to aggregate its stored rows (the code is not run); its
    recorded identity — the registered class and version the manifest names — must be this
    wfeval's, and ``MetricSet.code_left_out`` says which options were left out."""
    from wfeval.metrics.base import measurements_of
    from wfeval.pipeline.nodes import to_plain

    metrics, aggregation, stand_ins = {}, {}, {}
    try:
        for m in metric_ids:
            recorded = (manifest.metrics or {})[m]
            node_id = str(recorded.node or m)  # a measurement of a metric serving several: its node
            if node_id not in (cfg.get("metric") or {}):
                raise MetricRecordError(
                    f"metric {node_id!r}: .hydra/config.yaml does not record its config (a run made before every "
                    "metric node was recorded, or a changed file); it is never composed again from today's config "
                    "files, which may differ from what the run scored with")
            node = to_plain(cfg.metric[node_id])
            left_out: list[str] = []
            built = build_metric_from_record(node_id, node, target=recorded.metric_class, code_left_out=left_out)
            try:
                metrics[m] = measurements_of(node_id, built)[m]
            except (KeyError, ValueError):
                raise MetricRecordError(f"metric {node_id!r}: rebuilt from its recorded config, it does not "
                                        f"serve the measurement {m!r} the run recorded") from None
            if left_out:
                version = str(getattr(metrics[m], "version", ""))
                if str(recorded.version) != version:
                    raise MetricRecordError(
                        f"metric {m!r}: its option {left_out[0]}, which is not run from a folder, and its "
                        f"recorded version {recorded.version!r} is not this wfeval's {version!r}: its "
                        "rows cannot be verified by their recorded identity")
                stand_ins[m] = tuple(left_out)
            try:
                aggregation[m] = resolve_aggregation(metrics[m], node.get("aggregation"))
            except ValueError as exc:
                raise MetricRecordError(f"metric {m!r}: aggregation: {exc}") from None
    except MetricRecordError as exc:
        raise StoredRunError(f"{run_dir}: {exc}") from None
    metric_set = MetricSet(metrics, aggregation)
    metric_set.code_left_out = stand_ins
    return metric_set
