"""From a composed config to the objects of one run; every failure names the config key."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from omegaconf import DictConfig, OmegaConf

from wfeval.api import ContractError, EvaluationProtocolSpec, Metric, WorldTaskConfig
from wfeval.benchmarks.base import BenchmarkAdapter
from wfeval.config.errors import ConfigError, group_options, unknown_choice_message
from wfeval.config.run_config import RunConfig
from wfeval.config.schema import METRIC_CORE_KEYS, MODEL_CORE_KEYS, PROTOCOL_CORE_KEYS
from wfeval.config.trust import check_config
from wfeval.metrics.device import with_device
from wfeval.metrics.selection import metric_choice_is_explicit, requested_metrics, select_metrics
from wfeval.models.protocol import has_generate, has_step_interface
from wfeval.pipeline.model import ModelHandle
from wfeval.pipeline.select import check_request_fits_task, check_requests_fit_task, iter_requests, select_requests  # noqa: F401
from wfeval.results import RULE_KEYS, MetricSet, resolve_aggregation


def to_plain(node: Any) -> Any:
    return OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else node


def section(cfg: DictConfig | RunConfig, key: str) -> Any:
    """The plain, resolved section ``key``: a copy of the run config's one resolution, or converted
    from a composed node (tests, commands that compose without running)."""
    return cfg.section(key) if isinstance(cfg, RunConfig) else to_plain(cfg.get(key))


def node(cfg: DictConfig | RunConfig, key: str) -> Any:
    """The composed node ``key`` (what Hydra instantiates)."""
    return (cfg.cfg if isinstance(cfg, RunConfig) else cfg).get(key)


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
    missing = [m for m in ("identity", "record", "check_task", "check", "drive") if not callable(getattr(protocol, m, None))]
    if missing:
        raise ConfigError(f"protocol: {type(protocol).__name__} is not a protocol: it lacks {', '.join(missing)} "
                          "(subclass wfeval.protocols.base.Protocol, docs/protocols.md)")
    return protocol


def instantiate_node(key: str, node: Any, drop: Sequence[str] = ()) -> Any:
    """``hydra.utils.instantiate`` with an error that names the key and the ``_target_``.

    ``drop``: keys the core reads itself (benchmark rules, a metric's aggregation) and the
    instantiated class never sees; the node is resolved first, so interpolations still work.
    """
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

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
        return instantiate(node, _convert_="all")
    except InstantiationException as exc:
        cause = exc.__cause__
        detail = f"{type(cause).__name__}: {cause}" if cause else str(exc)
        raise ConfigError(f"{key}: cannot build {node['_target_']!r}: {detail}") from exc


def benchmark_rules(cfg: DictConfig | RunConfig) -> dict[str, Any]:
    """The core's rules of the benchmark (group_by, scorecard, evidence) as plain data, for the
    run's task: the dataset hash the benchmark pins for it, the task's primary metric; the metric
    versions the evidence gate pins come from the benchmark's ``metrics`` (``psnr==1.0``)."""
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
        rules["evidence"] = for_task(rules["evidence"], task, plain.get("name"))
    primary = (task.get("metadata") or {}).get("primary_metric")
    if primary and isinstance(rules.get("scorecard"), dict):
        rules["scorecard"] = {**rules["scorecard"], "primary": primary}
    return rules


def build_benchmark(cfg: DictConfig | RunConfig) -> BenchmarkAdapter:
    bench = instantiate_node("benchmark", node(cfg, "benchmark"), drop=RULE_KEYS)
    if not isinstance(bench, BenchmarkAdapter):
        raise ConfigError(f"benchmark: {type(bench).__name__} lacks spec / requests() / fingerprint()")
    return bench


def metric_nodes(cfg: DictConfig | RunConfig) -> dict[str, Any]:
    """Selected metric configs plus ``extra_metrics`` (resolved from the metric group)."""
    return metric_nodes_with_rules(cfg)[0]


def metric_nodes_with_rules(cfg: DictConfig | RunConfig) -> tuple[dict[str, Any], dict[str, str]]:
    """The metric configs in selection order, and the rule that selected each
    (wfeval.metrics.selection: metric= | benchmark | protocol | task | extra_metrics)."""
    from wfeval.config.plugins import metric_ids

    root = cfg.cfg if isinstance(cfg, RunConfig) else cfg
    chosen = {str(k): v for k, v in root.metric.items()}
    explicit = metric_choice_is_explicit(root)
    unknown = [m for m in requested_metrics() or () if m not in chosen]
    if unknown:  # the suite is an optional default, so Hydra passes over a metric= option it cannot find
        raise ConfigError(unknown_choice_message("metric", unknown[0], group_options("metric")))
    if not chosen and not explicit:  # a benchmark of the user's own: its metrics, from their config files
        chosen = compose_metric_nodes(metric_ids((section(cfg, "benchmark") or {}).get("metrics")))
        check_config({"metric": {k: to_plain(v) for k, v in chosen.items()}})
    try:
        selection = select_metrics(chosen=list(chosen), explicit=explicit,
                                   protocol=section(cfg, "protocol"), task=section(cfg, "task"),
                                   extra=[str(m) for m in root.extra_metrics])
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    nodes, rules = dict(chosen), {m: next(s.rule for s in selection if s.metric_id == m) for m in chosen}
    for rule in ("protocol", "task", "extra_metrics"):
        wanted = [s.metric_id for s in selection if s.rule == rule and s.metric_id not in nodes]
        if wanted:
            before = set(nodes)
            added = {k: v for k, v in compose_metric_nodes(wanted).items() if k not in before}
            check_config({"metric": {k: to_plain(v) for k, v in added.items()}})  # composed after the run's check
            nodes.update(added)
            rules.update({k: rule for k in nodes if k not in before})
    if not nodes:
        raise ConfigError("no metric selected: use metric=[...] or extra_metrics=[...]")
    return nodes, rules


def compose_metric_nodes(ids: list[str]) -> dict[str, Any]:
    """Config nodes for metric ids: the metric group's config files first; otherwise the metric
    registry (built-in aliases such as ``peak_signal_noise_ratio``, and third-party metrics
    registered in the ``wfeval.metrics`` entry-point group, built with their defaults)."""
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    from wfeval.metrics.registry import REGISTRY, UnknownMetricError

    searchpath = _run_searchpath()  # extra_metrics finds what metric= finds: the run's search path too
    available = _metric_options(searchpath)
    from_files: list[str] = []
    from_registry: dict[str, Any] = {}
    for metric_id in ids:
        if metric_id in available:
            from_files.append(metric_id)
            continue
        try:
            cls = REGISTRY.load(metric_id)
        except UnknownMetricError:
            names = sorted({*available, *REGISTRY.ids()})
            raise ConfigError("extra_metrics: " + unknown_choice_message("metric", metric_id, names)) from None
        canonical = str(getattr(cls, "name", metric_id))
        if canonical in available:  # an alias of a metric with a config file: use its config
            from_files.append(canonical)
        else:
            from_registry[metric_id] = {"_target_": f"{cls.__module__}.{cls.__qualname__}"}
    nodes: dict[str, Any] = {}
    if from_files:
        overrides = [*searchpath, f"metric=[{','.join(dict.fromkeys(from_files))}]"]
        try:
            if GlobalHydra.instance().is_initialized():
                nodes.update(compose(config_name="config", overrides=overrides).metric)
            else:
                with initialize_config_module("wfeval.conf", version_base="1.3"):
                    nodes.update(compose(config_name="config", overrides=overrides).metric)
        except Exception as exc:
            from wfeval.config.errors import yaml_error_message

            malformed = yaml_error_message(exc)
            if malformed is None:
                raise
            raise ConfigError(f"extra_metrics: {malformed}") from None
    nodes.update(from_registry)
    return nodes


METRIC_RULE_KEYS = METRIC_CORE_KEYS  # read by the core, never seen by the metric


def _run_searchpath() -> list[str]:
    """``hydra.searchpath=[...]`` of the running Hydra job (none outside one, e.g. the compose API)."""
    try:
        from hydra.core.hydra_config import HydraConfig

        paths = list(HydraConfig.get().searchpath)
    except Exception:  # not inside a Hydra job
        return []
    return [f"hydra.searchpath=[{','.join(paths)}]"] if paths else []


def _metric_options(searchpath: list[str]) -> list[str]:
    if searchpath:
        from hydra.core.global_hydra import GlobalHydra

        if GlobalHydra.instance().is_initialized():
            loader = GlobalHydra.instance().config_loader()
            return sorted(set(loader.get_group_options("metric", config_name="config", overrides=searchpath)))
    return group_options("metric")


def build_metrics(nodes: Mapping[str, Any], device: str | None = None) -> MetricSet:
    """The metric objects, each with the aggregation its config chose (``metric.<id>.aggregation``,
    checked now, not after scoring) and what a failed generation does to it (``on_failure``);
    these keys never reach the metric class; ``device``: ``run.device`` (wfeval.metrics.device)."""
    metrics, aggregation, on_failure = {}, {}, {}
    for metric_id, node in ((m, with_device(n, device)) for m, n in nodes.items()):
        has_aggregation = isinstance(node, (DictConfig, Mapping)) and "aggregation" in node
        drop = [k for k in METRIC_RULE_KEYS if isinstance(node, (DictConfig, Mapping)) and k in node]
        metric = instantiate_node(f"metric.{metric_id}", node, drop=drop)
        if not isinstance(metric, Metric):
            raise ConfigError(
                f"metric.{metric_id}: {type(metric).__name__} does not implement the Metric protocol "
                "(name, version, required_artifacts, higher_is_better, compute_sample, aggregate)"
            )
        try:
            aggregation[metric_id] = resolve_aggregation(metric, to_plain(node["aggregation"]) if has_aggregation
                                                         else None)
        except ValueError as exc:
            raise ConfigError(f"metric.{metric_id}.aggregation: {exc}") from exc
        choice = node.get("on_failure") if isinstance(node, (DictConfig, Mapping)) else None
        on_failure[metric_id] = check_on_failure(metric_id, metric, choice if choice is not None else "exclude")
        metrics[metric_id] = metric
    return MetricSet(metrics, aggregation, on_failure)


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
    and ``run.recompute`` (it changes how, not what) left out: what the run's config hash covers."""
    plain = dict(plain_cfg)
    if isinstance(plain.get("run"), dict) and "recompute" in plain["run"]:  # how, not what: same results
        plain["run"] = {k: v for k, v in plain["run"].items() if k != "recompute"}
    if isinstance(plain.get("model"), dict):
        plain["model"] = identity_config(plain["model"])
    if isinstance(plain.get("metric"), dict):
        plain["metric"] = {m: ({k: v for k, v in node.items() if not (k == "on_failure" and v is None)}
                               if isinstance(node, dict) else node) for m, node in plain["metric"].items()}
    return plain


def build_model(cfg: DictConfig | RunConfig) -> ModelHandle:
    model_node = node(cfg, "model")
    drop = [k for k in MODEL_RULE_KEYS if isinstance(model_node, (DictConfig, Mapping)) and k in model_node]
    model = instantiate_node("model", model_node, drop=drop)
    if not has_generate(model) and not has_step_interface(model):
        raise ConfigError(f"model: {type(model).__name__} has neither generate(requests) nor the step interface "
                          "(start(request), step(state, actions))")
    return ModelHandle.wrap(model, identity_config(section(cfg, "model")))
