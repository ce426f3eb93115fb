"""Code only from where the user chose it: which ``_target_`` a run may build (docs/trust.md).

Hydra's ``instantiate`` builds any importable callable a config names, and any config file on
the search path can write any key (``# @package _global_``). So before anything is built, the
whole composed config (nested nodes, the ``hydra`` node, code locators such as
``model.object=my_pkg.Model``) is checked once; a target is built only if it

* is a class under ``wfeval.`` (wfeval's own functions are not targets: some write files),
* belongs to an installed entry point of a ``wfeval.*`` group (``wfeval.metrics``, ...),
* was given on the command line, as the value of an override whose key ends in ``_target_``
  (or a locator key) -- the override strings themselves, never a config file's value,
* or matches a prefix the user trusted where no file can write: ``run.trust=[my_pkg.]`` *on the
  command line*, or the environment variable ``WFEVAL_TRUST=my_pkg.,other.``.

Anything else stops the run with :class:`UntrustedTargetError` (a :class:`ConfigError`: exit 2)
naming the key, the target, the file it came from and how to trust it. A ``run.trust`` value
or a ``hydra.job.env_set.WFEVAL_TRUST`` entry written by a config file is refused the same way.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from wfeval.config.errors import ConfigError

ENV_VAR = "WFEVAL_TRUST"
#: the policy of a CLI process, handed to its worker processes (joblib launcher); internal
ACTIVE_ENV_VAR = "_WFEVAL_TRUST_ACTIVE"
TRUST_KEY = "run.trust"
TARGET_KEY = "_target_"
#: constructor parameters whose string value is an import path (a model object, a metric's locator)
LOCATOR_KEYS = ("object", "locator", "inverse_dynamics")
BUILTIN_PREFIX = "wfeval."
HYDRA_PREFIXES = ("hydra.", "hydra_plugins.")  # launchers, sweepers, callbacks of installed plugins
LOGGING_PREFIXES = ("logging.", "hydra.", "hydra_plugins.", "colorlog.")  # hydra.*_logging classes
ENTRY_POINT_GROUP_PREFIX = "wfeval."
CONFIGS_ENTRY_POINT_GROUP = "wfeval.configs"  # wfeval.config.plugins.CONFIGS_GROUP
HOW_TO_TRUST = ("If you wrote this config and trust that code, trust it where no config file can: "
                "on the command line, run.trust=[{example}], or in the environment, WFEVAL_TRUST={example} "
                "(a prefix such as my_pkg. trusts a whole package). See docs/trust.md.")
_DOTTED = re.compile(r"^[A-Za-z_][\w]*(?:[.:][A-Za-z_][\w]*)+$")


class UntrustedTargetError(ConfigError):
    """A config names code the user did not choose; nothing was built."""

    def __init__(self, findings: Sequence["Finding"]):
        self.findings = list(findings)
        super().__init__(_message(self.findings))


@dataclass(frozen=True)
class Finding:
    key: str  # the full key, e.g. benchmark.reader._target_
    target: str  # the value (an import path), or a description for non-target findings
    reason: str = ""  # why it is refused (default: not trusted)
    source: str | None = None  # the config file it came from, when known


def _message(findings: Sequence[Finding]) -> str:
    lines = ["untrusted code in the config; nothing was built:"]
    for f in findings:
        where = f" (from {f.source})" if f.source else ""
        lines.append(f"  {f.key}: {f.target!r}{where}: {f.reason or 'not a trusted target'}")
    example = next((f.target for f in findings if not f.reason and _DOTTED.match(f.target)), "my_pkg.")
    if any(not f.reason for f in findings):
        lines.append(HOW_TO_TRUST.format(example=example))
    return "\n".join(lines)


def _matches(target: str, prefixes: Iterable[str]) -> bool:
    """``my_pkg.`` (or ``my_pkg``) trusts ``my_pkg`` and everything under it; ``*`` trusts all."""
    for prefix in prefixes:
        prefix = prefix.strip()
        if prefix == "*":
            return True
        stem = prefix.rstrip(".:")
        if stem and (target == stem or target.startswith(stem + ".") or target.startswith(stem + ":")):
            return True
    return False


def _split_prefixes(text: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in (text or "").split(",") if p.strip())


def env_prefixes() -> tuple[str, ...]:
    """The prefixes ``WFEVAL_TRUST`` trusts (comma-separated)."""
    return _split_prefixes(os.environ.get(ENV_VAR))


def _strings(value: Any) -> Iterator[str]:
    """Every string in an override value (sweeps, lists)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
    elif hasattr(value, "list"):  # ChoiceSweep
        yield from _strings(list(value.list))


def _code_keys(key: str, value: Any) -> Iterator[tuple[str, str]]:
    """(key, import path) pairs an override value names: ``…_target_=x``, ``…object=x``, dicts."""
    last = key.rsplit(".", 1)[-1]
    if last == TARGET_KEY or last in LOCATOR_KEYS:
        for text in _strings(value):
            yield key, text
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _code_keys(f"{key}.{k}", v)


@dataclass(frozen=True)
class TrustPolicy:
    """What a run may build beyond wfeval's own classes; from the command line and environment only."""

    prefixes: tuple[str, ...] = ()  # WFEVAL_TRUST plus run.trust given on the command line
    command_line: frozenset[tuple[str, str]] = frozenset()  # (key, target) given as overrides
    cli_trust: tuple[str, ...] = ()  # the run.trust value(s) given on the command line
    _entry_points: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_overrides(cls, overrides: Sequence[str] = (), environ: Mapping[str, str] | None = None) -> "TrustPolicy":
        """The policy of a command line (Hydra override strings) and its environment."""
        from hydra.core.override_parser.overrides_parser import OverridesParser

        environ = os.environ if environ is None else environ
        prefixes = list(_split_prefixes(environ.get(ENV_VAR)))
        cli_trust: list[str] = []
        pairs: set[tuple[str, str]] = set()
        parser = OverridesParser.create()
        for text in overrides:
            try:
                override = parser.parse_override(text)
            except Exception:  # Hydra reports a malformed override itself
                continue
            if override.is_delete():
                continue
            key = override.key_or_group
            value = override.value()
            if key == TRUST_KEY:
                cli_trust.extend(_strings(value))
                continue
            pairs.update(_code_keys(key, value))
        prefixes.extend(cli_trust)
        return cls(tuple(prefixes), frozenset(pairs), tuple(cli_trust))

    # --- passing the policy of a CLI process on to its worker processes -----------------------
    def to_env(self) -> str:
        return json.dumps({"prefixes": list(self.prefixes), "command_line": sorted(self.command_line),
                           "cli_trust": list(self.cli_trust)})

    @classmethod
    def from_env(cls, text: str) -> "TrustPolicy":
        data = json.loads(text)
        return cls(tuple(data["prefixes"]), frozenset(tuple(p) for p in data["command_line"]),
                   tuple(data["cli_trust"]))

    # --- the rule -----------------------------------------------------------------------------
    def entry_point_targets(self) -> tuple[str, ...]:
        """Objects named by installed entry points of ``wfeval.*`` groups (metadata only)."""
        if "targets" not in self._entry_points:
            from importlib import metadata

            found = []
            for ep in (ep for dist in metadata.distributions() for ep in dist.entry_points):
                if (ep.group.startswith(ENTRY_POINT_GROUP_PREFIX) or ep.group == "wfeval") \
                        and ep.group != CONFIGS_ENTRY_POINT_GROUP:  # a folder of config files, not code
                    found.append(ep.value.replace(":", ".").replace(" ", ""))
            self._entry_points["targets"] = tuple(found)
        return self._entry_points["targets"]

    def refusal(self, key: str, target: Any) -> str | None:
        """None when ``target`` may be built at ``key``; else why not ("" = not trusted)."""
        if not isinstance(target, str) or not target:
            return "a target must be an import path (a string)"
        if (key, target) in self.command_line or _matches(target, self.prefixes):
            return None
        if _matches(target, (BUILTIN_PREFIX,)):
            return _builtin_refusal(target)
        if key.startswith("hydra.") and _matches(target, HYDRA_PREFIXES):
            return None
        if _matches(target, self.entry_point_targets()):
            return None
        return ""


@functools.lru_cache(maxsize=256)
def _builtin_refusal(target: str) -> str | None:
    """wfeval's own targets are its classes; a function such as a file writer is refused."""
    parts = target.replace(":", ".").split(".")
    if any(p.startswith("_") for p in parts):
        return "a private wfeval name is not a target"
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None  # nothing to run: building it fails with its own message
        return None if isinstance(obj, type) else "wfeval's own targets are classes; this is not one"
    return None


# --- walking a composed config ------------------------------------------------------------------

def _plain(node: Any, resolve: bool) -> Any:
    from omegaconf import DictConfig, ListConfig, OmegaConf

    if isinstance(node, (DictConfig, ListConfig)):
        return OmegaConf.to_container(node, resolve=resolve)
    return node


def _code_values(node: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(full key, value) of every ``_target_`` and every import-path string at a locator key."""
    if isinstance(node, Mapping):
        is_built = TARGET_KEY in node
        for k, v in node.items():
            key = f"{prefix}{k}"
            if k == TARGET_KEY:
                if v != "???":
                    yield key, v
            elif is_built and k in LOCATOR_KEYS and isinstance(v, str) and _DOTTED.match(v):
                yield key, v
            else:
                yield from _code_values(v, key + ".")
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            yield from _code_values(v, f"{prefix[:-1]}[{i}]." if prefix else f"[{i}].")


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
    for key, value in _code_values(tree):
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
    for key, value in _code_values({"hydra": {k: v for k, v in hydra.items() if not k.endswith("_logging")}}):
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


# --- the policy in force ------------------------------------------------------------------------

_ACTIVE: list[TrustPolicy] = []


def current_policy() -> TrustPolicy:
    """The policy of this process: the CLI's (from its command line), else the environment's."""
    if _ACTIVE:
        return _ACTIVE[-1]
    handed = os.environ.get(ACTIVE_ENV_VAR)
    if handed:
        try:
            return TrustPolicy.from_env(handed)
        except (ValueError, KeyError, TypeError):
            pass
    return TrustPolicy.from_overrides((), os.environ)


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


@contextlib.contextmanager
def activated(policy: TrustPolicy) -> Iterator[None]:
    """Make ``policy`` the one :func:`current_policy` returns (e.g. for a Python caller that runs a
    command line's overrides in-process: ``activated(TrustPolicy.from_overrides(overrides))``)."""
    _ACTIVE.append(policy)
    try:
        yield
    finally:
        _ACTIVE.remove(policy)


@contextlib.contextmanager
def in_force(policy: TrustPolicy) -> Iterator[None]:
    """While active, ``policy`` is the one :func:`current_policy` returns in this process and in the
    worker processes a launcher starts (an environment variable hands it over). The command's boundary
    (:mod:`wfeval.cli.boundary`) checks every composed config against it before Hydra builds anything."""
    previous_env = os.environ.get(ACTIVE_ENV_VAR)
    _ACTIVE.append(policy)
    os.environ[ACTIVE_ENV_VAR] = policy.to_env()
    try:
        yield
    finally:
        _ACTIVE.remove(policy)
        if previous_env is None:
            os.environ.pop(ACTIVE_ENV_VAR, None)
        else:
            os.environ[ACTIVE_ENV_VAR] = previous_env


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
    user has not trusted: nothing from a run folder counts as the user's command line."""
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
        for code_key, target in _code_keys(key, override.value()):
            if policy.refusal(code_key, target) is not None:
                refused.append(f"{text}  ({target} is not trusted)")
                break
    return refused
