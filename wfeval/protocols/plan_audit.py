"""The plan audit of ``protocol=planning``: what the model promised for its plans against what the
true simulator gives them (exploitability, selection regret, rank agreement; docs/metrics.md).

At every real step, before the chosen action runs, every candidate plan the planner imagined is also
run in the true simulator from the same present state (the goal environment's ``true_futures``: the
simulator reset to that state for each candidate) and scored as the pixel planner scores imagined
frames: the benchmark's locator distance to the goal, ``min_t(cost_t + penalty × t)``.

Per step:

- ``chosen_gap``: predicted minus real success of the chosen plan (does it reach the goal, within
  ``reach_px`` of it, before its horizon ends); ``random_gap``: the same, averaged over the first
  iteration's candidates (random sticky plans: plain prediction error). An optimiser that exploits
  the model's errors shows ``chosen_gap`` above ``random_gap``. Pixel space only (a latent score
  promises no success), and only where the goal environment says which score is success
  (``reach_px``: gridworld half a cell, pusht the score of a block on its goal pose);
- ``regret_px``: the real score of the chosen plan minus the best real score among the candidates;
- ``kendall`` / ``spearman``: rank agreement of the model's and the simulator's scores over the
  candidates (scipy's tau-b and rho; a constant side, a model that orders nothing, counts as 0).

:func:`summary` averages an episode's steps (``result.metadata["plan_audit"]``). An environment
without ``true_futures`` and ``distances`` is not audited (the summary says why).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from wfeval.protocols.planner import TIME_PENALTY_PX

GAPS = ("chosen_gap", "random_gap")
RANKS = ("regret_px", "kendall", "spearman")
NOT_AUDITED = "the goal environment cannot run candidate plans in the true simulator (true_futures, distances)"
LATENT_GAP = "a latent score promises no success: no exploitability gap (regret and ranks only)"
NO_REACH = ("the goal environment declares no success threshold on its pixel score (reach_px): no exploitability "
            "gap (regret and ranks only)")


def auditable(env: Any) -> bool:
    return callable(getattr(env, "true_futures", None)) and callable(getattr(env, "distances", None))


def real_scores(env: Any, plans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each plan run in the true simulator from the present: its per-step distances N×H and score N."""
    frames, _ = env.true_futures(plans)
    costs = np.asarray(env.distances(frames), dtype=np.float64)
    return costs, (costs + TIME_PENALTY_PX * np.arange(1, costs.shape[1] + 1)).min(axis=1)


def rank_agreement(model: np.ndarray, real: np.ndarray) -> tuple[float, float]:
    """(Kendall tau-b, Spearman rho) of two scorings of the same candidates; 0 where either is constant."""
    from scipy import stats

    if len(model) < 2 or np.ptp(model) == 0 or np.ptp(real) == 0:
        return 0.0, 0.0
    tau = float(stats.kendalltau(model, real).statistic)
    rho = float(stats.spearmanr(model, real).statistic)
    return (0.0 if math.isnan(tau) else tau), (0.0 if math.isnan(rho) else rho)


def audit_step(env: Any, best: Any, space: str) -> dict[str, Any] | None:
    """One real step's audit of the planner's candidates (None: nothing to audit); without the gaps,
    ``gap_reason`` says why."""
    candidates = best.get("candidates") if isinstance(best, dict) else None
    if candidates is None or not auditable(env):
        return None
    plans, scores = candidates["plans"], np.asarray(candidates["scores"], dtype=np.float64)
    costs, real = real_scores(env, plans)
    chosen = int(np.argmin(scores))  # the search keeps the first strictly best: argmin's first minimum
    tau, rho = rank_agreement(scores, real)
    row: dict[str, Any] = {"regret_px": float(real[chosen] - real.min()), "kendall": tau, "spearman": rho}
    reach = getattr(env, "reach_px", None)
    if space != "pixels" or reach is None:
        row["gap_reason"] = LATENT_GAP if space != "pixels" else NO_REACH
    else:
        promised = np.asarray(candidates["costs"], dtype=np.float64).min(axis=1) <= reach
        reached = costs.min(axis=1) <= reach
        gap = promised.astype(np.float64) - reached.astype(np.float64)
        drawn = np.asarray(candidates["iteration"]) == 0
        row.update(chosen_gap=float(gap[chosen]), random_gap=float(gap[drawn].mean()))
    return row


class EpisodeAudit:
    """One episode's audit, a step at a time; an audit that fails leaves the episode as it was and says why."""

    def __init__(self, env: Any):
        self.env, self.failure = env, ""
        self.rows: list[dict[str, Any] | None] = []

    def step(self, best: Any, space: str) -> None:
        if self.failure or isinstance(best, BaseException):
            return
        try:
            self.rows.append(audit_step(self.env, best, space))
        except TimeoutError:
            raise
        except Exception as exc:  # noqa: BLE001 - the audit never fails the episode
            self.failure = f"the plan audit failed: {type(exc).__name__}: {exc}"

    def summary(self) -> dict[str, Any]:
        return summary(self.rows, self.failure or NOT_AUDITED)


def summary(rows: Sequence[dict[str, Any] | None], why_not: str = NOT_AUDITED) -> dict[str, Any]:
    """An episode's audit: each field's mean over the audited steps, and how many there were."""
    audited = [r for r in rows if r is not None]
    if not audited:
        return {"steps": 0, "reason": why_not}
    out: dict[str, Any] = {"steps": len(audited), "unit": "success (0/1)", "regret_unit": "px (planner score)"}
    for key in (*GAPS, *RANKS):
        values = [r[key] for r in audited if key in r]
        if values:
            out[key] = float(np.mean(values))
    if "chosen_gap" not in out:
        out["gap_reason"] = next((r["gap_reason"] for r in audited if "gap_reason" in r), LATENT_GAP)
    return out
