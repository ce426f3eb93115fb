"""From a composed config to the objects of one run; every failure names the config key.

Which metrics a run scores (their config nodes) is :mod:`wfeval.pipeline.metric_nodes`'s, which
requests it runs :mod:`wfeval.pipeline.select`'s, the config's sections and nodes as the pipeline
reads them :mod:`wfeval.pipeline.nodes`'s: import them from there (no re-export here)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from omegaconf import DictConfig, OmegaConf

from wfeval.api import ContractError, EvaluationProtocolSpec, Metric, WorldTaskConfig
from wfeval.benchmarks.base import BenchmarkAdapter
from wfeval.config.errors import ConfigError
from wfeval.config.run_config import RunConfig
from wfeval.config.schema import METRIC_CORE_KEYS, MODEL_CORE_KEYS, PROTOCOL_CORE_KEYS
from wfeval.metrics.device import with_device
from wfeval.models.live import StateUnknown
from wfeval.models.protocol import lacks_every_interface
from wfeval.pipeline.model import ModelHandle
from wfeval.pipeline.nodes import node, section, to_plain
from wfeval.results import RULE_KEYS, MetricSet, resolve_aggregation
from wfeval.utils.state_identity import FingerprintError


def build_task(cfg: DictConfig | RunConfig) -> WorldTaskConfig:
    try:
        return WorldTaskConfig.from_dict(section(cfg, "task"))
    except ContractError as exc:
        raise ConfigError(f"task: {exc}") from exc


def build_protocol(cfg: DictConfig | RunConfig) -> EvaluationProtocolSpec:
    """The protocol's spec: the keys every protocol has (name, context frames, metric ids and groups),
    read by the core."""
    plain = section(cfg, "protocol")
    try:
        return EvaluationProtocolSpec.from_mapping({k: plain[k] for k in PROTOCOL_CORE_KEYS if k in plain})
    except ContractError as exc:
        raise ConfigError(f"protocol: {exc}") from exc


def build_protocol_class(cfg: DictConfig | RunConfig) -> Any:
    """The protocol's class built from the config with its own options (``protocol._target_``: one
    class + one YAML, wfeval/protocols/base.py)."""
    protocol = instantiate_node("protocol", node(cfg, "protocol"), drop=PROTOCOL_CORE_KEYS)
    missing = [m for m in ("identity", "record", "check_task", "check", "drive")
               if not callable(getattr(protocol, m, None))]
    if missing:
        raise ConfigError(f"protocol: {type(protocol).__name__} is not a protocol: it lacks {', '.join(missing)} "
                          "(subclass wfeval.protocols.base.Protocol, docs/protocols.md)")
    return protocol


def instantiate_node(key: str, node: Any, drop: Sequence[str] = ()) -> Any:
    """Hydra's ``instantiate`` through the door (:func:`wfeval.config.code.instantiate`: every
    ``_target_`` and import path in the node trust-checked first) with an error that names the key
    and the ``_target_``.

    ``drop``: keys the core reads itself (benchmark rules, a metric's aggregation) and the
    instantiated class never sees; the node is resolved first, so interpolations still work.
    """
    from hydra.errors import InstantiationException

    from wfeval.config.code import instantiate

    if not isinstance(node, (DictConfig, Mapping)) or "_target_" not in node:
        raise ConfigError(f"{key}: needs a _target_ (the import path of the class to build)")
    missing = sorted(m.removeprefix(f"{key}.") for m in OmegaConf.missing_keys(node)) \
        if isinstance(node, DictConfig) else []
    if missing:  # a required value (??? in the config) was not given
        names = ", ".join(f"{key}.{m}" for m in missing)
        raise ConfigError(f"{names}: required, not set; give it on the command line, e.g. {key}.{missing[0]}=...")
    if drop:
        node = {k: v for k, v in to_plain(node).items() if k not in drop}
    try:
        return instantiate(node, key)
    except InstantiationException as exc:
        cause = exc.__cause__
        detail = f"{type(cause).__name__}: {cause}" if cause else str(exc)
        raise ConfigError(f"{key}: cannot build {node['_target_']!r}: {detail}") from exc


def benchmark_rules(cfg: DictConfig | RunConfig) -> dict[str, Any]:
    """The core's rules of the benchmark (group_by, scorecard, evidence) as plain data, for the
    run's task: the dataset hash the benchmark pins for it, the measures its evidence rests on (the
    protocol's ``family_need``), the task's primary metric; the metric versions the evidence gate pins
    come from the benchmark's ``metrics`` (``psnr==1.0``)."""
    from wfeval.config.plugins import metric_versions
    from wfeval.results.evidence import for_task

    plain = section(cfg, "benchmark")
    rules = {k: plain[k] for k in RULE_KEYS if k in plain}
    pinned = metric_versions(plain.get("metrics"))
    if pinned:
        evidence = rules["evidence"] = dict(rules.get("evidence") or {})
        evidence["metric_versions"] = {**pinned, **dict(evidence.get("metric_versions") or {})}
    task = section(cfg, "task") or {}
    if isinstance(rules.get("evidence"), dict):
        need = getattr(build_protocol_class(cfg), "family_need", None)
        rules["evidence"] = for_task(rules["evidence"], task, plain.get("name"), getattr(need, "evidence", ()))
    primary = (task.get("metadata") or {}).get("primary_metric")
    if primary and isinstance(rules.get("scorecard"), dict):
        rules["scorecard"] = {**rules["scorecard"], "primary": primary}
    return rules


def build_benchmark(cfg: DictConfig | RunConfig) -> BenchmarkAdapter:
    bench = instantiate_node("benchmark", node(cfg, "benchmark"), drop=RULE_KEYS)
    if not isinstance(bench, BenchmarkAdapter):
        raise ConfigError(f"benchmark: {type(bench).__name__} lacks spec / requests() / fingerprint()")
    return bench


METRIC_RULE_KEYS = METRIC_CORE_KEYS  # read by the core, never seen by the metric


def build_metrics(nodes: Mapping[str, Any], device: str | None = None) -> MetricSet:
    """The metric objects, each with the aggregation its config chose (``metric.<id>.aggregation``,
    checked now, not after scoring) and what a failed generation does to it (``on_failure``);
    these keys never reach the metric class; ``device``: ``run.device`` (wfeval.metrics.device).
    A metric serving several measurements (``measurements()``: ``imagined_probe_r2``) gives one entry
    per measurement, each with its node's choices; a measurement two nodes give is scored once (the
    first; ``MetricSet.node_of`` says which node each measurement came from)."""
    from wfeval.metrics.base import measurements_of

    metrics, aggregation, on_failure, node_of = {}, {}, {}, {}
    for metric_id, metric_node in ((m, with_device(n, device, f"metric.{m}")) for m, n in nodes.items()):
        has_aggregation = isinstance(metric_node, (DictConfig, Mapping)) and "aggregation" in metric_node
        drop = [k for k in METRIC_RULE_KEYS if isinstance(metric_node, (DictConfig, Mapping)) and k in metric_node]
        metric = instantiate_node(f"metric.{metric_id}", metric_node, drop=drop)
        if not isinstance(metric, Metric):
            raise ConfigError(
                f"metric.{metric_id}: {type(metric).__name__} does not implement the Metric protocol "
                "(name, version, required_artifacts, higher_is_better, compute_sample, aggregate)"
            )
        try:
            measured = measurements_of(metric_id, metric)
        except ValueError as exc:
            raise ConfigError(f"metric.{metric_id}: {exc}") from exc
        choice = metric_node.get("on_failure") if isinstance(metric_node, (DictConfig, Mapping)) else None
        for measurement, one in measured.items():
            if measurement in metrics:  # an id is never scored twice
                continue
            if not isinstance(one, Metric):
                raise ConfigError(f"metric.{metric_id}: its measurement {measurement!r} is a {type(one).__name__}, "
                                  "which does not implement the Metric protocol")
            try:
                aggregation[measurement] = resolve_aggregation(
                    one, to_plain(metric_node["aggregation"]) if has_aggregation else None)
            except ValueError as exc:
                raise ConfigError(f"metric.{metric_id}.aggregation: {exc}") from exc
            on_failure[measurement] = check_on_failure(metric_id, one, choice if choice is not None else "exclude")
            metrics[measurement], node_of[measurement] = one, metric_id
    metric_set = MetricSet(metrics, aggregation, on_failure)
    metric_set.node_of = node_of
    return metric_set


def check_on_failure(metric_id: str, metric: Any, choice: Any) -> str:
    """``metric.<id>.on_failure``: ``exclude`` (default) or ``worst`` (a failed generation is scored
    at the metric's worst declared value); refused when the metric declares no finite worst value."""
    from wfeval.metrics.base import ON_FAILURE, worst_value

    if choice not in ON_FAILURE:
        raise ConfigError(f"metric.{metric_id}.on_failure: expected one of {', '.join(ON_FAILURE)}, got {choice!r}")
    if choice == "worst" and worst_value(metric) is None:
        direction = getattr(metric, "higher_is_better", None)
        why = ("it declares no direction (higher_is_better is null)" if direction is None else
               f"it declares no finite {'lower' if direction else 'upper'} bound (bounds = "
               f"{list(getattr(metric, 'bounds', (None, None)))})")
        raise ConfigError(f"metric.{metric_id}.on_failure=worst: {metric_id} has no worst value: {why}; "
                          "use on_failure=exclude and read its coverage")
    return str(choice)


MODEL_RULE_KEYS = MODEL_CORE_KEYS  # read by the pipeline (wfeval/pipeline/contract.py), never by the model


def identity_config(model_cfg: Any) -> Any:
    """The model config as its identity sees it: rule keys left unset are not part of it, so a
    model's key (and the run's config hash) is the same as before those keys existed."""
    if isinstance(model_cfg, dict) and model_cfg.get("output_range", 0) is None:
        return {k: v for k, v in model_cfg.items() if k != "output_range"}
    return model_cfg


def plain_identity(plain_cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The resolved config with unset rule keys (``model.output_range``, ``metric.<id>.on_failure``)
    left out: what the run's config hash covers (of its run options, only
    :data:`~wfeval.config.run_config.CONFIG_HASH_RUN_KEYS`: ``pipeline/recorder.config_hash``)."""
    plain = dict(plain_cfg)
    if isinstance(plain.get("model"), dict):
        plain["model"] = identity_config(plain["model"])
    if isinstance(plain.get("metric"), dict):
        plain["metric"] = {m: ({k: v for k, v in node.items() if not (k == "on_failure" and v is None)}
                               if isinstance(node, dict) else node) for m, node in plain["metric"].items()}
    return plain


def build_model(cfg: DictConfig | RunConfig) -> ModelHandle:
    model_node = node(cfg, "model")
    drop = [k for k in MODEL_RULE_KEYS if isinstance(model_node, (DictConfig, Mapping)) and k in model_node]
    if isinstance(cfg, RunConfig) and cfg.model_object is not None:  # wfeval.evaluate(model=<object>)
        from wfeval.models.live import live_model

        model = live_model(cfg.model_object, {k: v for k, v in section(cfg, "model").items() if k not in drop})
    else:
        model = instantiate_node("model", model_node, drop=drop)
    if (why := lacks_every_interface(model)) is not None:
        raise ConfigError(f"model: {why}")
    try:
        return ModelHandle.wrap(model, identity_config(section(cfg, "model")))
    except FingerprintError as exc:
        raise ConfigError(f"model: {exc}") from None
    except StateUnknown as exc:
        raise ConfigError(f"model: {exc}") from None

