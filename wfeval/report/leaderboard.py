"""Leaderboard: models × measurements with value and interval, eligibility, sorted by the primary.

Runs of different protocols (open loop, autoregressive, closed loop with a given policy,
planning) are kept apart: when a table holds more than open loop, a ``protocol`` column shows
each run's protocol, ranks restart per protocol and the best value (and its ``≈`` ties) is
found within the protocol only.

A cell whose interval overlaps the interval of the column's best value is marked ``≈``: the
difference from the best is within the uncertainty and does not rank them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from wfeval.report.rows import fmt, protocol_label, rows
from wfeval.storage.rundir import FILES

TIE = "≈"


@dataclass
class Leaderboard:
    header: list[str]
    body: list[list[str]]
    primary: str
    legend: str


def _overlaps(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if None in (a["ci_low"], a["ci_high"], b["ci_low"], b["ci_high"]):
        return a["value"] == b["value"]
    return a["ci_low"] <= b["ci_high"] and b["ci_low"] <= a["ci_high"]


def _better(a: float, b: float, higher: bool | None) -> bool:
    return a < b if higher is False else a > b


def leaderboard(documents: Sequence[dict[str, Any]], primary: str | None = None) -> Leaderboard:
    table = [{r["measurement"]: r for r in rows(doc)} for doc in documents]
    measurements: list[str] = []
    for cells in table:
        measurements += [m for m in cells if m not in measurements]
    if primary is None:
        card_primary = next((d.get("scorecard", {}).get("primary") for d in documents
                             if (d.get("scorecard") or {}).get("primary")), None)
        bench = documents[0]["benchmark"]["id"] if documents else ""
        primary = f"{bench}.{card_primary}" if card_primary else (measurements[0] if measurements else "")
    elif primary not in measurements:
        raise ValueError(f"primary measurement {primary!r} not in results; available: {', '.join(measurements)}")
    labels = [protocol_label(d) for d in documents]
    groups = list(dict.fromkeys(labels))  # protocols in order of first appearance
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for m in measurements:
        for label, cells in zip(labels, table):
            cell = cells.get(m)
            key = (label, m)
            if cell and cell["value"] is not None and (key not in best or _better(
                    cell["value"], best[key]["value"], cell["higher_is_better"])):
                best[key] = cell
    order = sorted(range(len(documents)), key=lambda i: (groups.index(labels[i]), _sort_key(table[i].get(primary))))
    show_protocol = groups != ["open_loop"]
    header = ["rank", "model", *(["protocol"] if show_protocol else []), *measurements, "score", "eligible", "run"]
    body = []
    ranks: dict[str, int] = {}
    for i in order:
        doc, cells = documents[i], table[i]
        ranks[labels[i]] = rank = ranks.get(labels[i], 0) + 1
        row = [str(rank), doc["model"]["name"], *([labels[i]] if show_protocol else [])]
        for m in measurements:
            row.append(_cell(cells.get(m), best.get((labels[i], m))))
        evidence = doc.get("evidence") or {}
        eligible = "yes" if evidence.get("eligible") else f"no ({len(evidence.get('reasons', []))} reasons)"
        row += [fmt((doc.get("scorecard") or {}).get("score")), eligible, doc["run_id"]]
        body.append(row)
    legend = (f"sorted by {primary}; value [CI low, CI high]; {TIE} = interval overlaps the best's "
              "(the difference is within the uncertainty); (k/n) = coverage below 1: the value rests on k of "
              "n samples")
    if show_protocol:
        legend += "; ranked within each protocol (results of different protocols are not comparable)"
    return Leaderboard(header, body, primary, legend)


def _sort_key(cell: dict[str, Any] | None) -> tuple[int, float]:
    if cell is None or cell["value"] is None:
        return (1, 0.0)
    return (0, cell["value"] if cell["higher_is_better"] is False else -cell["value"])


def _cell(cell: dict[str, Any] | None, best: dict[str, Any] | None) -> str:
    if cell is None:
        return "missing"
    if cell["value"] is None:
        return "n/a"
    text = fmt(cell["value"])
    if cell["ci_low"] is not None:
        text += f" [{fmt(cell['ci_low'])}, {fmt(cell['ci_high'])}]"
    if best is not None and best is not cell and _overlaps(cell, best):
        text += f" {TIE}"
    if cell["n_total"] and cell["n_valid"] < cell["n_total"]:
        text += f" ({cell['n_valid']}/{cell['n_total']})"
    return text


def render_text(board: Leaderboard) -> str:
    widths = [max(len(r[i]) for r in [board.header, *board.body]) for i in range(len(board.header))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(board.header), "-" * sum(w + 2 for w in widths), *map(line, board.body), "", board.legend])


def write_leaderboard(board: Leaderboard, folder: Path) -> tuple[Path, Path]:
    """``<folder>/leaderboard.md`` (with the legend) and ``leaderboard.csv``; the one writer of both."""
    import csv
    import io

    from wfeval.report.rows import markdown_table
    from wfeval.storage.safe_io import atomic_write_bytes  # replaces a link, never writes through it

    folder.mkdir(parents=True, exist_ok=True)
    md, table = folder / FILES.leaderboard_md, folder / FILES.leaderboard_csv
    atomic_write_bytes(md, (markdown_table(board.header, board.body) + f"\n\n{board.legend}\n").encode("utf-8"),
                       durable=False)
    rows = io.StringIO(newline="")
    writer = csv.writer(rows)
    writer.writerow(board.header)
    writer.writerows(board.body)
    atomic_write_bytes(table, rows.getvalue().encode("utf-8"), durable=False)
    return md, table
