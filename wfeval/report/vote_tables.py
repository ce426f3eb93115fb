"""The tables and notes of people's votes (:class:`wfeval.report.votes.ArenaSummary`): ratings,
which measure agrees, and notes (votes, raters, agreement, ratings from the prior alone) — text from
a votes file or a run folder (rater and model names) as one inert line
(:func:`wfeval.report.escape.plain`). :mod:`wfeval.report.votes` re-exports them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wfeval.report.escape import plain
from wfeval.report.numbers import fmt

if TYPE_CHECKING:
    from wfeval.report.votes import ArenaSummary


def ratings_table(s: ArenaSummary) -> tuple[list[str], list[list[str]]]:
    pct = f"{round(s.level * 100)}%"
    mark = lambda m: " (prior)" if m in s.prior_only else ""  # noqa: E731
    body = [[str(i), s.labels[m], f"{s.elo[m][0]:.0f}{mark(m)}", f"[{s.elo[m][1]:.0f}, {s.elo[m][2]:.0f}]{mark(m)}",
             str(s.elo[m][3])] for i, m in enumerate(s.order, 1)]
    return ["rank", "model", "Elo", f"{pct} interval", "votes"], body


def agreement_table(s: ArenaSummary) -> tuple[list[str], list[list[str]]]:
    pct = f"{round(s.level * 100)}%"
    body = [[r["measure"], f"{r['agree']}/{r['decided']}", fmt(r["share"]),
             f"[{fmt(r['low'])}, {fmt(r['high'])}]" if r["low"] is not None else "-", str(r["tied"]),
             fmt(r["tau"]) if r["tau"] is not None else "-"] for r in s.agreement]
    return ["measure", "agrees", "share", f"{pct} interval", "measure tied", "Kendall τ"], body


def notes(s: ArenaSummary) -> list[str]:
    out = [plain(f"{s.used} votes by {len(s.raters)} rater{'s' if len(s.raters) != 1 else ''} "
                 f"({', '.join(f'{r}: {n}' for r, n in sorted(s.raters.items()))})"  # names from a votes file
                 + (f"; {s.stale} stale votes left out (their runs or videos are not the ones read)" if s.stale else ""))]
    for m, why in sorted(s.prior_only.items(), key=lambda item: s.order.index(item[0])):
        out.append(plain(f"{s.labels[m]} {why} it was in: its rating and interval (marked \"prior\") come from "
                         "the prior alone, not from the votes; votes against closer models would bound it"))
    unexplained = [g for g in s.groups if not (len(g) == 1 and g[0] in s.prior_only)]
    if len(unexplained) > 1:
        shown = "; ".join(", ".join(s.labels[m] for m in g) for g in unexplained)
        out.append(plain(f"the votes do not connect every model both ways (groups: {shown}): the distance between "
                         "the groups comes from the prior alone"))
    if s.kappa:
        value = fmt(s.kappa["value"]) if s.kappa["value"] is not None else "undefined"
        out.append(f"rater agreement: {s.kappa['method']} = {value} on {s.kappa['items']} pairs judged by all "
                   f"{s.kappa['raters']} raters")
    return out


def render_text(s: ArenaSummary) -> str:
    from wfeval.report.leaderboard import wrap_table

    return "\n".join(["People's ratings (arena; Bradley–Terry, Elo scale, bootstrap over votes):",
                      wrap_table(*ratings_table(s), 200, keep=2), *notes(s), "",
                      "Which measure agrees with people (share of decided votes where it prefers the same video;"
                      " Kendall τ of its model ranking with the ratings):",
                      wrap_table(*agreement_table(s), 200, keep=1)])


def section(s: ArenaSummary | None) -> dict[str, Any] | None:
    """The HTML report's section: two tables and the notes."""
    if not s:
        return None
    header, rows = ratings_table(s)
    a_header, a_rows = agreement_table(s)
    return {"header": header, "rows": rows, "agreement_header": a_header, "agreement_rows": a_rows, "notes": notes(s)}
