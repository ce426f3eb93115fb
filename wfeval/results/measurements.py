"""A run's results as data: one :class:`Measurement` per measurement id, read from results.json.

What ``wfeval.evaluate`` returns: ``results["gridworld.psnr"].value``, its interval, counts and
coverage, the run folder; the numbers are those of the run's ``results.json`` (the same document
the CLI writes and prints), nothing recomputed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from wfeval.results.record import Aggregate, RunResults


@dataclass(frozen=True)
class Measurement:
    """One measurement of a run (``<benchmark>.<metric>``): the headline value (None when the
    aggregate is invalid, e.g. no valid sample), its confidence interval and the counts behind it."""

    id: str
    value: float | None
    low: float | None
    high: float | None
    n_valid: int
    n_total: int
    n_skipped: int
    coverage: float | None  # n_valid / n_total: the share of samples the value rests on
    valid: bool
    interval_method: str | None = None  # normal, wilson, bootstrap, ...
    skip_breakdown: Mapping[str, int] = field(default_factory=dict)
    stats: Mapping[str, Any] = field(default_factory=dict)  # the aggregate's raw statistics (mean, std, ...)

    @property
    def interval(self) -> tuple[float | None, float | None] | None:
        return None if self.low is None and self.high is None else (self.low, self.high)

    @classmethod
    def from_aggregate(cls, measurement_id: str, aggregate: Aggregate | Mapping[str, Any]) -> "Measurement":
        """The measurement of one aggregate of a run's results (a results.json row)."""
        if not isinstance(aggregate, Aggregate):
            aggregate = Aggregate.from_dict(aggregate)
        n_valid, n_total = int(aggregate.n_valid or 0), int(aggregate.n_total or 0)
        coverage = (aggregate.diagnostics or {}).get("coverage")
        if coverage is None and n_total:
            coverage = n_valid / n_total
        return cls(id=measurement_id, value=aggregate.value, low=aggregate.ci_low, high=aggregate.ci_high,
                   n_valid=n_valid, n_total=n_total, n_skipped=int(aggregate.n_skipped or 0),
                   coverage=coverage, valid=bool(aggregate.valid), interval_method=aggregate.ci_method,
                   skip_breakdown=dict(aggregate.skip_breakdown or {}), stats=dict(aggregate.raw_stats or {}))

    def __str__(self) -> str:
        value = "n/a" if self.value is None else f"{self.value:.6g}"
        interval = "" if self.interval is None else f" [{self.low:.6g}, {self.high:.6g}]"
        return f"{self.id} = {value}{interval} ({self.n_valid}/{self.n_total} valid)"


class Results(Mapping[str, Measurement]):
    """Measurement id → :class:`Measurement`, plus the run folder, its typed results (``record``,
    a :class:`~wfeval.results.record.RunResults`) and the whole results.json (``document``)."""

    def __init__(self, document: RunResults | Mapping[str, Any], run_dir: str | Path, generated: int = 0,
                 cached: int = 0):
        self.record = document if isinstance(document, RunResults) else RunResults.from_dict(document)
        self.run_dir = Path(run_dir)
        self.generated, self.cached = generated, cached  # samples the model generated / served from the cache
        self._measurements = {k: Measurement.from_aggregate(k, v) for k, v in self.record.results.items()}

    @property
    def document(self) -> dict[str, Any]:
        """The run's results.json as plain data (what the file holds)."""
        return self.record.to_dict()

    def __getitem__(self, key: str) -> Measurement:
        try:
            return self._measurements[key]
        except KeyError:
            raise KeyError(f"{key!r}: not a measurement of this run; it has {', '.join(self._measurements)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._measurements)

    def __len__(self) -> int:
        return len(self._measurements)

    def scalars(self) -> dict[str, float | None]:
        """Measurement id → headline value (e.g. for an experiment tracker's ``log``)."""
        return {k: m.value for k, m in self._measurements.items()}

    def _metric_id(self, measurement: str) -> str:
        prefix = f"{self.record.benchmark.id}."
        return measurement[len(prefix):] if measurement.startswith(prefix) else measurement

    def per_variable(self, measurement: str) -> dict[str, float]:
        """A probing measurement per state variable: variable → its mean score over the valid samples
        (``results.per_variable("lerobot.probe_r2")``; :mod:`wfeval.results.breakdown`)."""
        from wfeval.results.breakdown import PER_VARIABLE_FAMILIES, per_variable

        self[measurement]  # noqa: B018 - a measurement the run does not have is named (KeyError)
        if self.record.info(measurement).family not in PER_VARIABLE_FAMILIES:
            return {}
        return per_variable(self.run_dir, self._metric_id(measurement))

    def per_horizon(self, measurement: str) -> dict[int, float | None]:
        """A measurement per horizon: ``<id>`` measured at several horizons (``imagined_probe_r2`` →
        ``_k1``, ``_k4`` …) gives k → each one's value; a measurement that keeps a curve gives frame →
        the mean over its valid samples (``results.per_horizon("gridworld.psnr")``)."""
        from wfeval.results.breakdown import horizons, per_frame

        at = horizons(self._measurements, measurement)
        if at and measurement not in self._measurements:
            return {k: self._measurements[m].value for k, m in at.items()}
        self[measurement]  # noqa: B018
        return per_frame(self.run_dir, self._metric_id(measurement))

    @property
    def eligible(self) -> bool:
        """Whether the run meets the benchmark's evidence rules (``evidence.reasons`` says why not)."""
        return bool(self.record.evidence.eligible)

    @property
    def score(self) -> float | None:
        """The benchmark scorecard's overall score, when it has one."""
        return self.record.scorecard.score

    def __repr__(self) -> str:
        lines = [f"Results({self.run_dir}, generated={self.generated}, cached={self.cached})"]
        lines += [f"  {m}" for m in self._measurements.values()]
        return "\n".join(lines)
