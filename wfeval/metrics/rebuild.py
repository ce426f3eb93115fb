"""Rebuild a metric recorded in a run folder through the metric registry, never from a target.

``replay``, ``merge`` (and anything else reading a finished run) need the metric objects of the
run to aggregate its stored rows. A run folder is a file anyone could have written, so its
``.hydra/config.yaml`` is read as *data*: the recorded class path is only a key to look up in
the registry (built-ins and installed ``wfeval.metrics`` entry points), and the recorded
parameters must be plain values the metric's schema accepts. A parameter that names code (a
nested ``_target_``, or an import path given to a parameter typed
:data:`~wfeval.config.code.ImportPath`) is accepted only when it equals the metric's own default. Nothing named by the run folder is imported or called.
"""

from __future__ import annotations

from typing import Any, Mapping

from wfeval.config.code import TARGET_KEY


class MetricRecordError(ValueError):
    """A recorded metric cannot be rebuilt through the registry."""


def registry_class(metric_id: str, target: str | None = None) -> type:
    """The registry's class for a recorded metric: by its recorded class path, else by its id."""
    from wfeval.metrics.registry import REGISTRY, UnknownMetricError, builtin_targets

    if target:
        path = target.replace(":", ".")
        for name, location in builtin_targets().items():
            if location.replace(":", ".") == path:
                return REGISTRY.load(name)
        for ep in REGISTRY.entry_points().values():
            if ep.value.replace(":", ".").replace(" ", "") == path:
                return ep.load()
        raise MetricRecordError(
            f"metric {metric_id!r}: its class {target!r} is not a registered metric (a built-in or an installed "
            "'wfeval.metrics' entry point); a run folder's classes are never imported. Register the metric "
            "as an entry point, or re-score the generations with run.from_run=<run> metric=[...]")
    try:
        return REGISTRY.load(metric_id)
    except UnknownMetricError as exc:
        raise MetricRecordError(f"metric {metric_id!r}: {exc}") from None


def _measurement_of_a_former_class(metric_id: str, target: str | None) -> tuple[str, dict[str, Any]] | None:
    """``(metric id, options)`` for a measurement a run folder recorded as a metric of its own, under a
    class that is no longer registered, which a registered metric now serves among several
    (``imagined_probe_r2_k1`` of ``ImaginedProbeR2K1`` -> ``imagined_probe_r2`` with ``horizons: [1]``);
    None otherwise. The former class is only compared, never imported."""
    from wfeval.metrics.registry import REGISTRY, builtin_targets

    if not target:
        return None
    path = target.replace(":", ".")
    if any(location.replace(":", ".") == path for location in builtin_targets().values()) or any(
            ep.value.replace(":", ".").replace(" ", "") == path for ep in REGISTRY.entry_points().values()):
        return None
    found = REGISTRY.measurement(metric_id)
    if found is None or found[0] not in builtin_targets():
        return None
    module = builtin_targets()[found[0]].replace(":", ".").rpartition(".")[0]
    return found if path.rpartition(".")[0] == module else None  # the same module: wfeval's own former class


def _code_refusal(value: Any, default: Any, key: str, import_paths: tuple[str, ...] = ()) -> str | None:
    """Why a recorded parameter value that names code is refused (None: plain, the metric's
    default, or one of wfeval's own classes / an installed wfeval.* entry point, the targets any
    config file may name). ``import_paths``: the parameters (of the class whose node holds ``key``)
    typed :data:`~wfeval.config.code.ImportPath`."""
    from wfeval.config.code import import_path_parameters_of
    from wfeval.config.trust import TrustPolicy

    def named_code_ok(target: Any) -> bool:
        own = default.get(TARGET_KEY) if isinstance(default, Mapping) else default
        return target == own or (isinstance(target, str) and TrustPolicy().refusal(key, target) is None)

    if isinstance(value, Mapping):
        if TARGET_KEY in value and not named_code_ok(value[TARGET_KEY]):
            return f"{key}._target_={value[TARGET_KEY]!r} names code"
        inner = import_path_parameters_of(value[TARGET_KEY], key, TrustPolicy()) if TARGET_KEY in value else ()
        for k, v in value.items():
            if k != TARGET_KEY:
                reason = _code_refusal(v, default.get(k) if isinstance(default, Mapping) else None, f"{key}.{k}",
                                       tuple(f"{key}.{p}" for p in inner))
                if reason:
                    return reason
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            reason = _code_refusal(v, None, f"{key}[{i}]")
            if reason:
                return reason
    elif isinstance(value, str) and key in import_paths and not named_code_ok(value):
        return f"{key}={value!r} is an import path (code)"
    return None


def build_metric_from_record(metric_id: str, params: Mapping[str, Any] | None = None, *,
                             target: str | None = None, code_left_out: list[str] | None = None) -> Any:
    """The metric ``metric_id`` of a stored run, built by the registry with checked plain ``params``.

    ``params``: the recorded config node of the metric; its ``_target_`` is only a registry key
    (it must agree with ``target``, the class the run recorded) and its ``aggregation`` is left to
    the caller. A parameter that names code is refused — unless ``code_left_out`` is given (a
    caller that only aggregates stored rows: replay, merge): then the metric is built without it
    (the class's default, nothing named by the folder imported or run) and the parameter's
    description is appended to the list. Raises :class:`MetricRecordError`.
    """
    from dataclasses import MISSING, fields

    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from wfeval.config.code import import_path_parameters
    from wfeval.config.derive import schema_of
    from wfeval.config.schema import METRIC_CORE_KEYS

    params = {k: v for k, v in dict(params or {}).items() if k not in METRIC_CORE_KEYS}
    configured = params.pop(TARGET_KEY, None)
    if configured and target and str(configured).replace(":", ".") != str(target).replace(":", "."):
        raise MetricRecordError(f"metric {metric_id!r}: the run records class {target!r} but its config names "
                                f"{configured!r}; the folder is inconsistent, nothing is rebuilt from it")
    migrated = _measurement_of_a_former_class(metric_id, configured or target)
    if migrated is not None:  # imagined_probe_r2_k1 of ImaginedProbeR2K1: imagined_probe_r2, horizons [1]
        from wfeval.metrics.registry import REGISTRY

        cls, params = REGISTRY.load(migrated[0]), {**params, **migrated[1]}
    else:
        cls = registry_class(metric_id, configured or target)
    path = f"{cls.__module__}.{cls.__qualname__}"
    try:
        schema = schema_of("metric", metric_id, cls, path)
    except (TypeError, ValueError) as exc:  # pragma: no cover - a signature the schema cannot express
        raise MetricRecordError(f"metric {metric_id!r}: no schema for {path}: {exc}") from None
    defaults: dict[str, Any] = {}
    for f in fields(schema):
        if f.default is not MISSING:
            defaults[f.name] = f.default
        elif f.default_factory is not MISSING:  # type: ignore[misc]
            defaults[f.name] = f.default_factory()  # type: ignore[misc]
    try:  # unknown keys and wrong types, as at compose time
        OmegaConf.merge(OmegaConf.structured(schema), params)
    except OmegaConfBaseException as exc:
        raise MetricRecordError(f"metric {metric_id!r}: recorded parameters do not fit its schema: "
                                f"{str(exc).splitlines()[0]}") from None
    import_paths = import_path_parameters(cls)
    for key, value in list(params.items()):
        reason = _code_refusal(value, defaults.get(key), key, import_paths)
        if reason and code_left_out is not None:
            code_left_out.append(reason)
            del params[key]
        elif reason:
            raise MetricRecordError(f"metric {metric_id!r}: parameter {reason}; a run folder cannot choose code "
                                    "(re-score with run.from_run=<run> and the parameter on the command line)")
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:
        raise MetricRecordError(f"metric {metric_id!r}: cannot rebuild {cls.__name__}: {exc}") from exc
