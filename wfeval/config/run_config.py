"""A composed config, resolved once into a frozen, checked run config.

Hydra composes and the schemas check types at compose time; :meth:`RunConfig.resolve` does the
rest once, before the run folder is touched: the config is resolved to plain data a single time
(everything downstream reads that copy, never converting again) and the run options are checked
for the values no type can refuse (``run.batch_size=0``, ``run.sample_timeout_s=-1``,
``run.shard=3/2``, ...), each a :class:`~wfeval.config.errors.ConfigError` naming the key (exit 2).
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from wfeval.config.errors import ConfigError
from wfeval.utils.progress import MODES as PROGRESS_MODES

SEED_MODES = ("per_sample", "fixed")
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """``(i, n)`` of ``run.shard=i/n``; ValueError naming the key for anything else."""
    match = _SHARD.match(str(text))
    if not match:
        raise ValueError(f"run.shard: expected 'i/n' (e.g. 0/4), got {text!r}")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"run.shard: need 0 <= i < n and n >= 1, got {index}/{count}")
    return index, count


def check_fail_on_error(value: Any) -> Any:
    """``run.fail_on_error``: null/false (keep going), true (the first error), an integer N >= 1
    (the N-th error) or a fraction in (0, 1) of all samples."""
    if value is None or isinstance(value, bool) or (isinstance(value, int) and value >= 1) or \
            (isinstance(value, float) and 0 < value < 1 and math.isfinite(value)):
        return value
    raise ValueError(f"run.fail_on_error: expected null/false (keep going), true (first error), an integer "
                     f">= 1 (that many errors) or a fraction in (0, 1), got {value!r}")


def _recompute_ids(value: Any) -> frozenset[str] | None:
    """``run.recompute``: null/false/[] (nothing), ``all``/true (every metric: None) or a list of
    metric ids; ValueError for anything else."""
    if value is None or value is False or value == [] or value == ():
        return frozenset()
    if value is True or value == "all":
        return None
    if isinstance(value, str):
        value = [value]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) and v for v in value):
        return None if "all" in value else frozenset(value)
    raise ValueError(f"run.recompute: expected a list of metric ids (e.g. [fvd]) or all, got {value!r}")


def _option(default: Any, *, neutral: bool = False) -> Any:
    """A run option's default; ``neutral``: the option changes how a run computes or where it keeps
    things, never the numbers of the samples it scores (:data:`RESULT_NEUTRAL_RUN_KEYS`)."""
    return field(default=default, metadata={"neutral": neutral})


@dataclass(frozen=True)
class RunSettings:
    """The ``run`` options, checked: their one definition. The structured-config schema
    (:func:`wfeval.config.schema.RunSchema`) is derived from it and ``conf/config.yaml``'s ``run:``
    section (which documents each) is kept equal to it by ``tests/config/test_run_options_defined_once.py``;
    :data:`RESULT_NEUTRAL_RUN_KEYS` is read from its ``neutral`` marks."""

    seed: int = _option(0)
    store_dir: str = _option("outputs/store", neutral=True)
    from_run: str | None = _option(None)  # re-score the generations of this run dir; no model is called
    limit: int | None = _option(None)  # score only the first N samples
    shard: str | None = _option(None)  # "i/n": the i-th of n contiguous slices (a slice of the run, see below)
    batch_size: int = _option(8, neutral=True)
    progress: str = _option("auto", neutral=True)  # auto | bar | log | off
    verify_artifacts: bool = _option(False, neutral=True)  # re-hash every artifact on read
    durable_store: bool = _option(False, neutral=True)  # fsync every stored artifact
    report: bool = _option(True, neutral=True)  # write report.html into the run folder at the end
    overlap: Any = _option("auto", neutral=True)  # true | false | auto (pipeline/overlap.py: OverlapChoice)
    device: str = _option("auto", neutral=True)  # metrics' device: auto | cpu | cuda | cuda:N
    seed_mode: str = _option("per_sample")  # per_sample | fixed
    sample_timeout_s: float | None = _option(None, neutral=True)  # decides which samples fail, not their numbers
    fail_on_error: Any = _option(None, neutral=True)  # when to give up; never a number of a scored sample
    trust: tuple[str, ...] = _option((), neutral=True)  # import prefixes to build (command line only)
    recompute: Any = _option(None, neutral=True)  # metric ids (or all) whose cached rows are not served
    regenerate: bool = _option(False, neutral=True)  # every sample generated again: no stored generation served

    def __post_init__(self) -> None:
        problems = []
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 1:
            problems.append(f"run.batch_size: expected a positive number of samples per batch, got {self.batch_size}")
        if self.sample_timeout_s is not None and not (isinstance(self.sample_timeout_s, (int, float))
                                                      and self.sample_timeout_s > 0):
            problems.append(f"run.sample_timeout_s: expected a positive number of seconds or null, "
                            f"got {self.sample_timeout_s}")
        if self.limit is not None and (isinstance(self.limit, bool) or not isinstance(self.limit, int) or self.limit < 1):
            problems.append(f"run.limit: expected a positive number of samples or null, got {self.limit}")
        if self.seed_mode not in SEED_MODES:
            problems.append(f"run.seed_mode: {self.seed_mode!r} is not one of {', '.join(SEED_MODES)}")
        if not (self.overlap is True or self.overlap is False or self.overlap == "auto"):
            problems.append(f"run.overlap must be true, false or auto; got {self.overlap!r}")
        if self.progress not in PROGRESS_MODES:
            problems.append(f"run.progress must be {', '.join(PROGRESS_MODES)}; got {self.progress!r}")
        if not isinstance(self.regenerate, bool):
            problems.append(f"run.regenerate: expected true or false, got {self.regenerate!r}")
        for check, value in ((parse_shard, self.shard), (check_fail_on_error, self.fail_on_error),
                             (_recompute_ids, self.recompute)):
            if value is not None:
                try:
                    check(value)
                except ValueError as exc:
                    problems.append(str(exc))
        if problems:
            raise ConfigError("; ".join(problems))

    def recompute_of(self, metric_ids: Any) -> frozenset[str]:
        """The metric ids of this run whose rows (and features) are computed afresh, never served from
        a cache or kept by a resume (``run.recompute=[fvd]`` or ``all``); ConfigError for an id the
        run does not score."""
        wanted = _recompute_ids(self.recompute)
        ids = list(metric_ids)
        if wanted is None:
            return frozenset(ids)
        unknown = sorted(wanted - set(ids))
        if unknown:
            raise ConfigError(f"run.recompute: {', '.join(map(repr, unknown))} is not a metric of this run (its "
                              f"metrics: {', '.join(ids) or 'none'}); give ids of this run's metrics, or all")
        return frozenset(wanted)

    @classmethod
    def from_mapping(cls, run: Mapping[str, Any]) -> "RunSettings":
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in dict(run).items() if k in known}
        if "trust" in values:
            values["trust"] = tuple(values["trust"] or ())
        return cls(**values)


#: run options that never change the numbers of the samples a run scores: a leaderboard puts runs
#: that differ only in these in one row (``report/runs.SILENT_KEYS``), the config hash leaves them out
RESULT_NEUTRAL_RUN_KEYS = tuple(f.name for f in fields(RunSettings) if f.metadata.get("neutral"))
#: run options a run's config hash covers: the others, less ``shard`` (every shard of a run shares its
#: hash), plus ``verify_artifacts``, kept so that run folders written before keep their hash
CONFIG_HASH_RUN_KEYS = tuple(f.name for f in fields(RunSettings)
                             if f.name == "verify_artifacts" or not (f.metadata.get("neutral") or f.name == "shard"))


@dataclass(frozen=True)
class JobChoices:
    """What the boundary that composed a config knows of it and the config itself does not say: the
    option chosen for each group (``model=oracle``: ``{"model": "oracle"}``), the command line's
    overrides, and the extra config search path (``hydra.searchpath``). The CLI reads them from its
    Hydra job, ``wfeval.evaluate`` from its arguments; a config composed elsewhere has none."""

    choices: Mapping[str, Any] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()
    searchpath: tuple[str, ...] = ()
    known: bool = False  # False: composed elsewhere (tests, the compose API): nothing is known

    def choice(self, group: str) -> str | None:
        value = self.choices.get(group)
        return None if value is None else str(value)


@dataclass(frozen=True)
class RunConfig:
    """One run's config: the composed node (what instantiation reads), its plain resolved form
    (computed once; :meth:`section` hands out copies), the checked run options, and -- once selected at
    the boundary (:func:`wfeval.pipeline.metric_nodes.with_metric_nodes`) -- every metric node the run
    scores with the rule that selected it. The run folder records exactly this (:meth:`recorded`)."""

    cfg: Any  # the composed DictConfig
    _plain: Mapping[str, Any]
    run: RunSettings
    #: a model object given in Python (``wfeval.evaluate(model=...)``): built into the run instead of
    #: ``model.object._target_`` (the config's ``model=python`` section keeps its options and class path)
    model_object: Any = field(default=None, compare=False)
    job: JobChoices = field(default_factory=JobChoices)
    #: metric id -> its config node (plain, resolved), in selection order; None until selected
    metric_nodes: Mapping[str, Any] | None = None
    metric_rules: Mapping[str, str] | None = None  # metric id -> the rule that selected it
    #: metric id -> its node as written (unresolved: what .hydra/config.yaml records)
    metric_written: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    #: the unresolved config to record in place of the composed node's (wfeval.evaluate: with the model's class)
    written: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def resolve(cls, cfg: Any, model_object: Any = None, job: JobChoices | None = None) -> "RunConfig":
        from omegaconf import DictConfig, OmegaConf

        plain = OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else copy.deepcopy(dict(cfg))
        plain.pop("hydra", None)
        return cls(cfg, plain, RunSettings.from_mapping(plain.get("run") or {}), model_object, job or JobChoices())

    def section(self, key: str, default: Any = None) -> Any:
        """A copy of one top-level section of the resolved config (``model``, ``task``, ...)."""
        return copy.deepcopy(self._plain.get(key, default))

    @property
    def plain(self) -> dict[str, Any]:
        """A copy of the whole resolved config."""
        return copy.deepcopy(dict(self._plain))

    def recorded(self) -> dict[str, Any]:
        """The config as the run folder records it (``.hydra/config.yaml``): the composed config as
        written (interpolations kept), its ``metric`` section holding every metric node the run scores
        (the ones ``extra_metrics``, the protocol or the task added included). Replay and resume read it
        back; nothing is composed again from packaged config files."""
        from omegaconf import DictConfig, OmegaConf

        if self.written is not None:
            out = copy.deepcopy(dict(self.written))
        elif isinstance(self.cfg, DictConfig):
            out = OmegaConf.to_container(self.cfg, resolve=False)
        else:
            out = copy.deepcopy(dict(self.cfg))
        out.pop("hydra", None)
        if self.metric_nodes is not None:
            written = self.metric_written or {}
            out["metric"] = {m: copy.deepcopy(written.get(m, node)) for m, node in self.metric_nodes.items()}
        return out
