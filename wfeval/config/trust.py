"""Code only from where the user chose it: the check of a whole composed config (docs/trust.md).

Hydra's ``instantiate`` builds any importable callable a config names, and any config file on
the search path can write any key (``# @package _global_``). So before anything is built, the
whole composed config -- nested nodes, the ``hydra`` node, the import paths held by parameters
typed :data:`~wfeval.config.code.ImportPath` (``model.object=my_pkg.Model``,
``metric.idm_accuracy.idm``) -- is checked once against the trust rule
(:class:`~wfeval.config.code.TrustPolicy`), and every refusal is reported at once with the config
file that wrote it (:func:`check_config`, :func:`locate_sources`). The import itself happens only
in the door, :mod:`wfeval.config.code`, which asks the same rule again at the moment of import.

A ``run.trust`` value or a ``hydra.job.env_set.WFEVAL_TRUST`` entry written by a config file is
refused the same way; a run folder's overrides never count as the user's command line
(:func:`refused_overrides`).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterator, Mapping, Sequence

# the rule and the policy in force live with the door that applies them; imported under these names too
from wfeval.config.code import (  # noqa: F401
    _DOTTED, ACTIVE_ENV_VAR, BUILTIN_PREFIX, ENV_VAR, HOW_TO_TRUST, HYDRA_PREFIXES, LOGGING_PREFIXES, TARGET_KEY,
    TRUST_KEY, Finding, TrustPolicy, UntrustedTargetError, _given, _matches, _strings, activated, code_values,
    current_policy, env_prefixes, import_path_parameters_of, in_force)

# --- walking a composed config ------------------------------------------------------------------

def _plain(node: Any, resolve: bool) -> Any:
    from omegaconf import DictConfig, ListConfig, OmegaConf

    if isinstance(node, (DictConfig, ListConfig)):
        return OmegaConf.to_container(node, resolve=resolve)
    return node


def _code_values(node: Any, policy: "TrustPolicy") -> Iterator[tuple[str, Any]]:
    """(full key, value) of every ``_target_`` and every import path an
    :data:`~wfeval.config.code.ImportPath` parameter of a trusted class holds (the door's walk)."""
    return code_values(node, "", lambda target, key: import_path_parameters_of(target, key, policy))


def _added_lifted(tree: dict[str, Any]) -> dict[str, Any]:
    """``tree`` with the metric nodes the composition put under ``metric._added_`` (a task's, protocol's or
    ``extra_metrics``' metrics: :mod:`wfeval.pipeline.compose`) read at ``metric.<id>``, the key the user
    knows and the file the option names; one whose id the chosen metrics also hold stays where it is."""
    from wfeval.config.run_config import ADDED

    metrics = tree.get("metric")
    if not isinstance(metrics, Mapping) or not isinstance(metrics.get(ADDED), Mapping):
        return tree
    lifted = {k: v for k, v in metrics.items() if k != ADDED}
    kept = {k: v for k, v in metrics[ADDED].items() if k in lifted}
    lifted.update({k: v for k, v in metrics[ADDED].items() if k not in lifted})
    return {**tree, "metric": {**lifted, **({ADDED: kept} if kept else {})}}


def _with_metric_classes(tree: dict[str, Any]) -> dict[str, Any]:
    """``tree`` with each ``metric.<id>`` node that names no class (its option's file is added later:
    a task's, protocol's or ``extra_metrics``' metric, written to by another file) read as the class of
    option ``metric/<id>`` (wfeval's file or an installed entry point), so that the import paths its
    parameters hold are checked; such a class is trusted, so nothing is reported for it."""
    metrics = tree.get("metric")
    if not isinstance(metrics, Mapping) or not any(isinstance(n, Mapping) and TARGET_KEY not in n
                                                   for n in metrics.values()):
        return tree
    from wfeval.config.plugins import builtin_targets, installed_plugins

    def implied(metric_id: str) -> str | None:
        offer = None if metric_id in builtin_targets("metric") else installed_plugins().entry_point("metric", metric_id)
        return builtin_targets("metric").get(metric_id) or (offer.target.replace(":", ".") if offer and offer.target
                                                            else None)

    out = {}
    for metric_id, node in metrics.items():
        target = implied(str(metric_id)) if isinstance(node, Mapping) and TARGET_KEY not in node else None
        out[metric_id] = {TARGET_KEY: target, **node} if target else node
    return {**tree, "metric": out}


def _logging_classes(node: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    """``()`` factories and ``class`` names of a logging dictConfig (Hydra's *_logging nodes)."""
    if isinstance(node, Mapping):
        for k, v in node.items():
            key = f"{prefix}{k}"
            if k in ("()", "class") and isinstance(v, str):
                yield key, v
            else:
                yield from _logging_classes(v, key + ".")


def find_untrusted(cfg: Any, policy: TrustPolicy) -> list[Finding]:
    """Every refused code reference of a composed config (a DictConfig or plain dict).

    Job keys are resolved (interpolations can build a node); the ``hydra`` node is read as
    written. A key whose interpolation cannot be resolved yet is read as written.
    """
    findings: list[Finding] = []
    tree: dict[str, Any] = {}
    for top in list(cfg.keys()):
        try:
            node = cfg[top]
        except Exception:  # an interpolation that cannot be resolved yet (e.g. ${hydra:...})
            node = cfg._get_node(top)._value() if hasattr(cfg, "_get_node") else None
        if top == "hydra":
            findings.extend(_hydra_findings(_plain(node, resolve=False), policy))
            continue
        try:
            tree[str(top)] = _plain(node, resolve=True)
        except Exception:
            tree[str(top)] = _plain(node, resolve=False)
    for key, value in _code_values(_with_metric_classes(_added_lifted(tree)), policy):
        reason = policy.refusal(key, value)
        if reason is not None:
            findings.append(Finding(key, str(value), reason))
    run = tree.get("run")
    trust = run.get("trust") if isinstance(run, Mapping) else None
    written = [str(p) for p in (trust if isinstance(trust, (list, tuple)) else [trust] if trust else [])
               if p not in policy.cli_trust]
    if written:
        findings.append(Finding(TRUST_KEY, ",".join(written),
                                "trust set by a config file is refused: run.trust counts only on the "
                                "command line (python -m wfeval ... run.trust=[...]); else use WFEVAL_TRUST"))
    return findings


def _hydra_findings(hydra: Any, policy: TrustPolicy) -> list[Finding]:
    if not isinstance(hydra, Mapping):
        return []
    findings = []
    for key, value in _code_values({"hydra": {k: v for k, v in hydra.items() if not k.endswith("_logging")}}, policy):
        reason = policy.refusal(key, value)
        if reason is not None:
            findings.append(Finding(key, str(value), reason))
    for name in ("job_logging", "hydra_logging"):
        for key, value in _logging_classes(hydra.get(name) or {}, f"hydra.{name}."):
            if not (_matches(value, LOGGING_PREFIXES) or _matches(value, policy.prefixes)):
                findings.append(Finding(key, value, ""))
    env_set = (hydra.get("job") or {}).get("env_set") or {}
    for name in env_set:
        if str(name) in (ENV_VAR, ACTIVE_ENV_VAR):
            findings.append(Finding(f"hydra.job.env_set.{name}", str(env_set[name]),
                                    "a config file cannot grant trust through the environment"))
    return findings


def check_config(cfg: Any, policy: TrustPolicy | None = None,
                 locate: Callable[[list[Finding]], list[Finding]] | None = None) -> None:
    """Raise :class:`UntrustedTargetError` if ``cfg`` names code the user did not choose."""
    policy = policy or current_policy()
    findings = find_untrusted(cfg, policy)
    if findings:
        if locate is not None:
            try:
                findings = locate(findings)
            except Exception:  # naming the file is a courtesy; the refusal stands
                pass
        raise UntrustedTargetError(findings)



# --- naming the file a refused value came from --------------------------------------------------

def locate_sources(loader: Any, config_name: str | None, overrides: list[str], composed: Any,
                   findings: list[Finding]) -> list[Finding]:
    """Each finding with the config file (search-path source + option path) that writes its value:
    the defaults list from Hydra's public ``ConfigLoader.compute_defaults_list``, each file read from
    the first source of the composed config's search path (``hydra.runtime.config_sources``) that has it."""
    from hydra.types import RunMode

    defaults = loader.compute_defaults_list(config_name, overrides, RunMode.RUN).defaults
    sources = [(str(s.schema), str(s.path)) for s in composed.hydra.runtime.config_sources]
    located = []
    for finding in findings:
        source = None
        for default in reversed(defaults):  # the last file that writes it wins in the composition
            if default.config_path is None:
                continue
            found = _read_source(sources, default.config_path)
            if found is not None and _writes(found[1], finding):
                source = found[0]
                break
        parts = finding.key.split(".")  # else a metric the run adds: its option's own file (metric/<id>)
        found = _read_source(sources, f"{parts[0]}/{parts[1]}") if source is None and len(parts) > 2 else None
        source = found[0] if found is not None and _writes(found[1], finding) else source
        located.append(Finding(finding.key, finding.target, finding.reason, source))
    return located


def locate_option_sources(searchpath: Sequence[str], findings: list[Finding],
                          main: str = "pkg://wfeval.conf") -> list[Finding]:
    """Each finding under ``<group>.<option>`` (a metric node composed on its own: ``extra_metrics``)
    with the file ``<group>/<option>.yaml`` on the search path (``main``, then ``searchpath``) that writes it."""
    sources = [tuple(entry.split("://", 1)) for entry in (main, *searchpath) if "://" in entry]
    located = []
    for finding in findings:
        parts = finding.key.split(".")
        found = _read_source(sources, f"{parts[0]}/{parts[1]}") if len(parts) > 2 else None
        source = found[0] if found is not None and _writes(found[1], finding) else finding.source
        located.append(Finding(finding.key, finding.target, finding.reason, source))
    return located


def _read_source(sources: list[tuple[str, str]], config_path: str) -> tuple[str, Any] | None:
    """(file name, its content) of ``config_path`` in the first file or package source that has it."""
    from importlib import resources

    import yaml

    for schema, path in sources:
        try:
            if schema == "file":
                name = os.path.join(path, f"{config_path}.yaml")
                if os.path.isfile(name):
                    with open(name, encoding="utf-8") as handle:
                        return name, yaml.safe_load(handle)
            elif schema == "pkg":
                entry = resources.files(path.replace("/", ".")).joinpath(f"{config_path}.yaml")
                if entry.is_file():
                    return f"pkg://{path}/{config_path}.yaml", yaml.safe_load(entry.read_text(encoding="utf-8"))
        except (OSError, ImportError, ValueError, yaml.YAMLError):
            continue
    return None


def _leaves(node: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(node, Mapping):
        for k, v in node.items():
            yield f"{prefix}{k}", v
            yield from _leaves(v, f"{prefix}{k}.")
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            yield from _leaves(v, f"{prefix[:-1]}[{i}]." if prefix else f"[{i}].")


def _writes(raw: Any, finding: Finding) -> bool:
    """Whether a file's own content (package-relative keys) writes the finding's key and value."""
    for key, value in _leaves(raw):
        if ("." + finding.key).endswith("." + key.rstrip(".")) and (finding.reason or str(value) == finding.target):
            return True
    return False


def refused_overrides(overrides: list[str], prefixes: tuple[str, ...]) -> list[str]:
    """The overrides of a run folder (``python -m wfeval.resume``) that name code or grant trust the
    user has not trusted: nothing from a run folder counts as the user's command line. Read without
    composing, an override is taken to name code when its key ends in ``_target_`` or its value has
    the shape of an import path (``pkg.module.Name``, ``pkg.module:name``)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    policy = TrustPolicy(prefixes=prefixes)  # nothing from the run folder counts as a command line
    parser = OverridesParser.create()
    refused = []
    for text in overrides:
        try:
            override = parser.parse_override(text)
        except Exception:
            refused.append(f"{text}  (not a valid override)")
            continue
        key = override.key_or_group
        if override.is_delete():
            continue
        if key == TRUST_KEY:
            untrusted = [p for p in _strings(override.value()) if not _matches(p.rstrip("."), prefixes)]
            if untrusted:
                refused.append(f"{text}  (a run folder cannot grant trust)")
            continue
        if key.startswith("hydra.job.env_set.") and key.rsplit(".", 1)[-1] in (ENV_VAR, ACTIVE_ENV_VAR):
            refused.append(f"{text}  (a run folder cannot grant trust through the environment)")
            continue
        for code_key, target in _given(key, override.value()):
            # the folder's overrides are read without their config: any value shaped like an import path
            # may name code (an ImportPath parameter) and must pass the rule; a _target_ always does
            if not (code_key.endswith(TARGET_KEY) or _DOTTED.match(target)):
                continue
            if policy.refusal(code_key, target) is not None:
                refused.append(f"{text}  ({target} is not trusted)")
                break
    return refused
