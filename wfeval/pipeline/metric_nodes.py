"""Which metrics a run scores, as config nodes: the metric group's choice (``metric=``), else the
benchmark's own list, plus what the protocol, the task and ``extra_metrics`` add
(:mod:`wfeval.metrics.selection` decides; each node remembers the rule that selected it). Metrics
not in the composed config are composed from their config files on the run's search path, or
built from the metric registry (aliases, entry-point metrics) with their defaults.

Selected once, where the config enters (:func:`with_metric_nodes`): the result lives in the
:class:`~wfeval.config.run_config.RunConfig` and the run folder records it; this module reads no
Hydra job state (the boundary hands over the choices, overrides and search path)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from omegaconf import DictConfig, OmegaConf

from wfeval.config.errors import ConfigError, group_options, unknown_choice_message
from wfeval.config.run_config import RunConfig
from wfeval.metrics.selection import metric_choice_is_explicit, requested_metrics, select_metrics
from wfeval.pipeline.nodes import section


def metric_nodes(cfg: DictConfig | RunConfig) -> dict[str, Any]:
    """Selected metric configs plus ``extra_metrics`` (resolved from the metric group)."""
    return metric_nodes_with_rules(cfg)[0]


def refuse_unknown_requested(requested: list[str] | None, composed: Any) -> None:
    """A ``metric=`` option that composing left out is not a metric: refused, naming it (the
    benchmark's suite is an optional default, so Hydra passes over an option it cannot find)."""
    unknown = [m for m in requested or () if m not in composed]
    if unknown:
        raise ConfigError(unknown_choice_message("metric", unknown[0], group_options("metric")))


def metric_nodes_with_rules(cfg: DictConfig | RunConfig) -> tuple[dict[str, Any], dict[str, str]]:
    """The metric configs in selection order, and the rule that selected each
    (wfeval.metrics.selection: metric= | benchmark | protocol | task | extra_metrics): those the
    boundary selected into the run config (:func:`with_metric_nodes`), or selected now for a config
    composed elsewhere (tests, the compose API)."""
    config = cfg if isinstance(cfg, RunConfig) else RunConfig.resolve(cfg)
    if config.metric_nodes is None:
        config = with_metric_nodes(config)
    return dict(config.metric_nodes or {}), dict(config.metric_rules or {})


def with_metric_nodes(config: RunConfig) -> RunConfig:
    """``config`` holding every metric node its run scores, each with the rule that selected it: done
    once, where the config enters (the CLI's job, ``wfeval.evaluate``, the runner for a config composed
    elsewhere). Metrics the composed config does not hold are composed from their config files on the
    run's search path (``config.job.searchpath``) or built from the metric registry; the run folder
    records them all (:meth:`RunConfig.recorded`), so nothing is composed for this run again."""
    import dataclasses

    from wfeval.config.plugins import metric_ids

    if config.metric_nodes is not None:
        return config
    root, job = config.cfg, config.job
    chosen = {str(k): v for k, v in (root.get("metric") or {}).items()}
    # `+metric.<id>.<key>=value` for a metric a protocol, task or extra_metrics adds: options laid over
    # its config file once it is composed (such a node has no _target_ of its own)
    options = {k: v for k, v in chosen.items() if isinstance(v, (DictConfig, Mapping)) and "_target_" not in v}
    chosen = {k: v for k, v in chosen.items() if k not in options}
    requested = requested_metrics(job.overrides) if job.known else None
    explicit = requested is not None if job.known else metric_choice_is_explicit(root)
    if requested:  # `metric=[imagined_probe_r2_k4]`: a measurement of a metric serving several (no file of its own)
        chosen = _with_measurements(requested, chosen, {*chosen, *options}, job.searchpath)
    refuse_unknown_requested(requested, {*chosen, *options})
    if not chosen and not explicit:  # a benchmark of the user's own: its metrics, from their config files
        chosen = compose_metric_nodes(metric_ids((section(config, "benchmark") or {}).get("metrics")), job.searchpath)
    try:
        selection = select_metrics(chosen=list(chosen), explicit=explicit,
                                   protocol=section(config, "protocol"), task=section(config, "task"),
                                   extra=[str(m) for m in root.get("extra_metrics") or ()])
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    picked = {s.metric_id: s.rule for s in selection}  # a task may leave the benchmark's suite out
    nodes = {k: v for k, v in chosen.items() if k in picked}
    rules = {m: picked[m] for m in nodes}
    for rule in ("protocol", "task", "extra_metrics"):
        wanted = [s.metric_id for s in selection if s.rule == rule and s.metric_id not in nodes]
        if wanted:
            before = set(nodes)
            added = {k: v for k, v in compose_metric_nodes(wanted, job.searchpath).items() if k not in before}
            added = {k: OmegaConf.merge(v, options[k]) if k in options else v for k, v in added.items()}
            nodes.update(added)
            rules.update({k: rule for k in nodes if k not in before})
    if not nodes:
        raise ConfigError("no metric selected: use metric=[...] or extra_metrics=[...]")
    unused = sorted(set(options) - set(nodes))
    if unused:
        raise ConfigError(f"metric.{unused[0]}: options given for a metric this run does not score (no protocol, "
                          f"task or extra_metrics adds it); add it with extra_metrics=[{unused[0]}] or metric=[...]")
    written = {k: OmegaConf.to_container(v, resolve=False) if isinstance(v, DictConfig) else dict(v)
               for k, v in nodes.items()}
    # every node read inside the run's own config, as the run folder records it: an interpolation of a
    # node composed on its own (``skip_frames: ${protocol.context_frames}``) reads this run's values
    whole = OmegaConf.create({**dataclasses.replace(config, metric_nodes={}).recorded(), "metric": written})
    nodes = {k: whole.metric[k] for k in written}
    return dataclasses.replace(config, metric_nodes=nodes, metric_rules=rules, metric_written=written)


def _with_measurements(requested: list[str], chosen: dict[str, Any], composed: set, searchpath: Sequence[str]
                       ) -> dict[str, Any]:
    """``chosen`` with the requested measurements it lacks composed (:func:`compose_metric_nodes`), in the
    order ``metric=`` names them; any other missing option is left for the refusal."""
    from wfeval.metrics.registry import REGISTRY

    wanted = [m for m in requested if m not in composed and REGISTRY.measurement(m) is not None]
    if not wanted:
        return chosen
    added = compose_metric_nodes(wanted, searchpath)
    ordered = {m: chosen[m] if m in chosen else added[m] for m in requested if m in chosen or m in added}
    return {**ordered, **{m: v for m, v in chosen.items() if m not in ordered}}


def with_recorded_metric_nodes(config: RunConfig, recorded: Mapping[str, Any], rules: Mapping[str, str]) -> RunConfig:
    """``config`` holding the metric nodes a run folder recorded (``.hydra/config.yaml``'s ``metric``) and
    the rule that selected each (the manifest's ``metric_selection``): what a resumed run scores with,
    never composed again from today's config files."""
    import dataclasses

    metric = dict(recorded.get("metric") or {})
    missing = [m for m in rules if m not in metric]
    # a node without a rule of its own serves several measurements (their rules are recorded): the
    # recorded nodes are then the run's; otherwise a rule without a node is a metric the run did not record
    if missing and set(metric) <= set(rules):
        raise ConfigError(f"the run folder's .hydra/config.yaml does not record metric {missing[0]!r} (a run made "
                          "before every metric node was recorded); start the run again instead of resuming it")
    written = {str(m): metric[m] for m in (rules if not missing else metric)}
    whole = OmegaConf.create({**dataclasses.replace(config, metric_nodes={}).recorded(), "metric": written})
    return dataclasses.replace(config, metric_nodes={m: whole.metric[m] for m in written},
                               metric_rules={str(m): str(r) for m, r in rules.items()}, metric_written=written)


def compose_metric_nodes(ids: list[str], searchpath: Sequence[str] = ()) -> dict[str, Any]:
    """Config nodes for metric ids: the metric group's config files first; otherwise the metric
    registry (built-in aliases such as ``peak_signal_noise_ratio``, and third-party metrics
    registered in the ``wfeval.metrics`` entry-point group, built with their defaults)."""
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    from wfeval.config import register_schemas

    from wfeval.metrics.registry import REGISTRY, UnknownMetricError

    # extra_metrics finds what metric= finds: the run's search path too
    searchpath = [f"hydra.searchpath=[{','.join(searchpath)}]"] if searchpath else []
    available = _metric_options(searchpath)
    from_files: list[str] = []
    from_registry: dict[str, Any] = {}
    measured: dict[str, tuple[str, dict[str, Any]]] = {}  # measurement id -> (its metric's file, options)
    for metric_id in ids:
        if metric_id in available:
            from_files.append(metric_id)
            continue
        found = REGISTRY.measurement(metric_id)
        if found is not None and found[0] in available:  # imagined_probe_r2_k4: imagined_probe_r2, horizons [4]
            measured[metric_id] = found
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
    asked = list(from_files)
    from_files += [found for found, _ in measured.values()]
    if from_files:
        overrides = [*searchpath, f"metric=[{','.join(dict.fromkeys(from_files))}]"]
        try:
            if GlobalHydra.instance().is_initialized():
                nodes.update(compose(config_name="config", overrides=overrides).metric)
            else:
                register_schemas()
                with initialize_config_module("wfeval.conf", version_base="1.3"):
                    nodes.update(compose(config_name="config", overrides=overrides).metric)
        except Exception as exc:
            from wfeval.config.errors import yaml_error_message

            malformed = yaml_error_message(exc)
            if malformed is None:
                raise
            raise ConfigError(f"extra_metrics: {malformed}") from None
    for measurement, (metric_id, options) in measured.items():
        nodes[measurement] = OmegaConf.merge(nodes[metric_id], options)
    for metric_id in {found for found, _ in measured.values()} - set(asked):  # composed only for a measurement
        del nodes[metric_id]
    nodes.update(from_registry)
    return nodes


def _metric_options(searchpath: list[str]) -> list[str]:
    if searchpath:
        from hydra.core.global_hydra import GlobalHydra

        if GlobalHydra.instance().is_initialized():
            loader = GlobalHydra.instance().config_loader()
            return sorted(set(loader.get_group_options("metric", config_name="config", overrides=searchpath)))
    return group_options("metric")

