"""The board built from runs (:class:`~wfeval.report.runs.Entry`): a column per benchmark (with
its task and protocol: :func:`~wfeval.report.runs.column_key`) and its measurements, units,
directions and primary measurement; a row per model (:func:`~wfeval.report.runs.row_key`), named
by what differs between the rows' overrides; the sort; every column's ranks.
"""

from __future__ import annotations

from typing import Sequence

from wfeval.report.leaderboard.model import SCORE, Board, Column, Row
from wfeval.report.runs import Entry, column_key, row_key
from wfeval.report.units import unit_of

MAX_LABEL = 40
PYTHON_OPTION = "python"  # model=python: a row named by the object's own name


def _columns(entries: Sequence[Entry]) -> list[Column]:
    columns: dict[str, Column] = {}
    for entry in entries:
        key = column_key(entry)
        column = columns.setdefault(key, Column(key, entry.benchmark))
        document = entry.document
        if document is None:
            continue
        prefix = f"{entry.benchmark}."
        for measurement in document.results:
            metric = measurement[len(prefix):] if measurement.startswith(prefix) else measurement
            if metric not in column.measurements:
                column.measurements.append(metric)
            column.directions.setdefault(metric, document.info(measurement).higher_is_better)
            if metric not in column.units or not column.units[metric]:
                column.units[metric] = unit_of(document, measurement)
        primary = document.scorecard.primary
        if column.primary is None and primary and f"{prefix}{primary}" in document.results:
            column.primary = str(primary)
    for column in columns.values():
        if column.primary is None:  # no scorecard: the first measurement that has a direction
            column.primary = next((m for m in column.measurements if column.directions.get(m) is not None),
                                  column.measurements[0] if column.measurements else None)
    return list(columns.values())


def _rows(entries: Sequence[Entry]) -> list[Row]:
    rows: list[Row] = []
    for entry in entries:
        key, column = row_key(entry), column_key(entry)
        for row in rows:  # the first row of this key without a run in this column
            if row.key == key and column not in row.entries:
                row.entries[column] = entry
                break
        else:
            rows.append(Row(key, {column: entry}, order=len(rows)))
    return rows


def _shorten_paths(values: list[str]) -> dict[str, str]:
    """Path-like values shortened to the fewest trailing components that still tell them apart."""
    parts = {v: v.rstrip("/").split("/") for v in set(values) if "/" in v}
    out = {}
    for value, mine in parts.items():
        keep = 1
        while keep < len(mine) and any(other[-keep:] == mine[-keep:] for v, other in parts.items() if v != value):
            keep += 1
        out[value] = value if keep >= len(mine) else "…/" + "/".join(mine[-keep:])
    return out


def named_key(row: Row) -> dict[str, str]:
    """The row's key as its label reads it: a ``model=python`` row (any Python object) is named by the
    model's own ``name`` (or class name, as results.json records it), not by the option and its class path."""
    key = dict(row.key)
    if key.get("model") == PYTHON_OPTION:
        key["model"] = next(iter(row.entries.values())).model_name
        key.pop("model.object._target_", None)
    return key


def _label_rows(rows: list[Row]) -> dict[str, str]:
    """Name each row by what differs between the rows; returns {shortened label: full label}."""
    named = {id(row): named_key(row) for row in rows}
    keys: list[str] = []
    for row in rows:
        keys += [k for k in named[id(row)] if k not in keys and not k.startswith("#")]
    differing = [k for k in keys if len({named[id(row)].get(k) for row in rows}) > 1]
    short = {k: _shorten_paths([named[id(row)][k] for row in rows if k in named[id(row)]]) for k in differing}

    def label(row: Row, shorten: bool) -> str:
        parts, key = [], named[id(row)]
        for k in differing:
            if k in key:
                value = short[k].get(key[k], key[k]) if shorten else key[k]
                parts.append(value if k == "model" else f"{k}={value}")
        entry = next(iter(row.entries.values()))
        return " ".join(parts) or key.get("model") or entry.model_name

    full: dict[int, str] = {}
    for row in rows:
        entry = next(iter(row.entries.values()))
        row.name = " ".join(f"{k}={v}" for k, v in row.key.items() if not k.startswith("#")) or entry.model_name
        row.label, full[id(row)] = label(row, True), label(row, False)
    labels = [row.label for row in rows]
    for row in rows:  # the same overrides twice in a column: the run folders tell them apart
        if labels.count(row.label) > 1:
            where = " (" + ", ".join(e.folder for e in row.entries.values()) + ")"
            row.label += where
            full[id(row)] += where
    shortened = {}
    for row in rows:
        if len(row.label) > MAX_LABEL:
            row.label = f"{row.label[:MAX_LABEL - 6]}… #{row.order + 1}"
        if row.label != full[id(row)]:
            shortened[row.label] = full[id(row)]
    return shortened


def _resolve_sort(spec: str | None, columns: list[Column]) -> tuple[str, str]:
    if not columns:
        raise ValueError("no runs with results")
    if spec is None:
        column = next((c for c in columns if c.primary), columns[0])
        return column.key, column.primary or SCORE
    if spec == SCORE:
        if len(columns) > 1:
            raise ValueError(f"several benchmarks, several scores: sort by one of "
                             f"{', '.join(c.key + '.score' for c in columns)}")
        return columns[0].key, SCORE
    for column in columns:  # column key first (gridworld/goal_reaching.goal_success), then benchmark id
        for prefix in (column.key, column.benchmark):
            if spec.startswith(prefix + "."):
                metric = spec[len(prefix) + 1:]
                if metric == SCORE or metric in column.measurements:
                    return column.key, metric
    options = [f"{c.key}.{m}" for c in columns for m in c.measurements] + [f"{c.key}.score" for c in columns]
    if len(columns) == 1:
        options.append(SCORE)
    raise ValueError(f"cannot sort by {spec!r}: not a measurement of these runs; one of: {', '.join(options)}")


def leaderboard(entries: Sequence[Entry], sort: str | None = None) -> Board:
    """The board of ``entries`` sorted by ``sort`` (a measurement ``gridworld.ssim``, ``score``,
    ``<column>.score``; default: the first column's primary measurement). Each column's own table
    ranks its rows by that column's primary measurement (by ``sort`` in the column it names)."""
    columns = _columns(entries)
    rows = _rows(entries)
    board = Board(columns, rows, _resolve_sort(sort, columns), {})
    board.shortened = _label_rows(rows)
    board.rows = board.ranked(rows, *board.sort)
    for row in board.rows:
        row.rank = board.ranks[board.sort[0]].get(id(row)) if board.sort[0] in row.entries else None
    for column in columns:
        board.column_rows(column)  # each column's own ranks
    return board
