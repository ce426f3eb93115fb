"""The one door for code: the trust rule, and every config value that names code becoming an object
through it, checked at the moment of import (docs/trust.md).

A config names code in two ways: a ``_target_`` (Hydra builds it), or an import path given to a
parameter whose type says it takes code -- :data:`ImportPath` in the class's ``__init__``
(``idm: ImportPath``, ``locator: ImportPath``, ``object: ImportPath``). There is no list of key
names: :func:`import_path_parameters` reads the annotations of the parameters the config schemas
are derived from (:func:`init_parameters`, used by :mod:`wfeval.config.derive`).

The rule (:class:`TrustPolicy`): code may be imported when it is wfeval's own class, an installed
``wfeval.*`` entry point, given on the command line at that key, or under a prefix trusted on the
command line (``run.trust``) or in the environment (``WFEVAL_TRUST``); the policy in force is the
command's (:func:`in_force`, :func:`activated`, :func:`current_policy`).

The door:

* :func:`load` -- the object an import path names, once the policy in force allows it at its key;
  an untrusted path is refused (:class:`UntrustedTargetError`, exit 2) before its module is imported.
  :func:`import_target` is the same for a built-in option's class or an entry point's object.
* :func:`instantiate` -- Hydra's ``instantiate`` of a node, once every ``_target_`` in it (nested
  ones too) and every import path its classes' ``ImportPath`` parameters hold passed the rule.
* :func:`resolve` -- what an ``ImportPath`` parameter holds, as an object: a callable as it is, a
  ``{_target_: ...}`` mapping built (:func:`instantiate`), an import path loaded (:func:`load`; a
  class is built without arguments). A class with such a parameter calls it in its ``__init__``.
* :func:`code_values` -- the same walk, importing nothing untrusted: what the check of a whole
  composed config (:func:`wfeval.config.trust.find_untrusted`, at the command's boundary) reports,
  naming the file each value came from.

This is the only module of wfeval that imports a module a value names (``tests/config/test_code_door.py``
reads the sources to check it).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import inspect
import json
import os
import re
import types
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any, Callable, Iterable, Iterator, Mapping, Sequence

from wfeval.config.errors import ConfigError

TARGET_KEY = "_target_"
ENV_VAR = "WFEVAL_TRUST"
#: the policy of a CLI process, handed to its worker processes (joblib launcher); internal
ACTIVE_ENV_VAR = "_WFEVAL_TRUST_ACTIVE"
TRUST_KEY = "run.trust"
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


def _given(key: str, value: Any) -> Iterator[tuple[str, str]]:
    """(key, string) pairs an override gives: ``…_target_=x``, ``model.object=x``, inside dicts.
    Any key: a value the user typed at a key is their choice there, whatever the key's type."""
    for text in _strings(value):
        yield key, text
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _given(f"{key}.{k}", v)


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
            pairs.update(_given(key, value))
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
            obj: Any = builtin_object(f"{'.'.join(parts[:i])}:{'.'.join(parts[i:])}")
        except ImportError:
            continue
        except AttributeError:
            return None  # nothing to run: building it fails with its own message
        return None if isinstance(obj, type) else "wfeval's own targets are classes; this is not one"
    return None


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


# --- which parameters take code ----------------------------------------------------------------

class ImportPathMarker:
    """The marker of :data:`ImportPath` (``typing.Annotated`` metadata)."""

    def __repr__(self) -> str:
        return "ImportPath"


IMPORT_PATH = ImportPathMarker()

#: the type of a parameter that takes code: a callable, a ``{_target_: ...}`` mapping or an import
#: path ``pkg.module:name`` / ``pkg.module.name`` (its schema field stays ``Any``)
ImportPath = Annotated[Any, IMPORT_PATH]


def init_parameters(cls: type) -> list[inspect.Parameter]:
    """``__init__``'s parameters, followed through ``**kwargs`` to the base classes."""
    out: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        params = inspect.signature(init).parameters
        for name, param in params.items():
            if name != "self" and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                out.setdefault(name, param)
        if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
            break
    return list(out.values())


def import_path_parameters(cls: type) -> tuple[str, ...]:
    """The parameters of ``cls`` (:func:`init_parameters`, as its schema has them) typed
    :data:`ImportPath` (or ``ImportPath | None``): where a config's string names code besides ``_target_``."""
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        try:
            hints.update(typing.get_type_hints(klass.__dict__["__init__"], include_extras=True))
        except Exception:  # no __init__ of its own, or an annotation that cannot be evaluated
            continue
    names = []
    for param in init_parameters(cls):
        hint = hints.get(param.name)
        if typing.get_origin(hint) in (typing.Union, types.UnionType):  # ImportPath | None
            hint = next((a for a in typing.get_args(hint) if typing.get_origin(a) is typing.Annotated), hint)
        if typing.get_origin(hint) is typing.Annotated and any(m is IMPORT_PATH for m in hint.__metadata__):
            names.append(param.name)
    return tuple(names)


# --- the door --------------------------------------------------------------------------------------

#: import paths the enclosing :func:`instantiate` already checked at their full keys
_CHECKED: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("wfeval_checked_code", default=frozenset())


def _split(path: str) -> tuple[str, str]:
    return path.rpartition(":")[::2] if ":" in path else path.rpartition(".")[::2]


def _import(path: str) -> Any:
    """The object ``module:attr`` / ``module.attr`` names (the one import of a named module)."""
    module, attr = _split(path)
    if not module or not attr:
        raise ImportError(f"{path!r} is not an import path (pkg.module:name or pkg.module.name)")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _policy(policy: Any = None) -> Any:
    return policy if policy is not None else current_policy()


def _refuse(findings: list) -> None:
    if findings:
        raise UntrustedTargetError(findings)


def refusal(key: str, path: Any, policy: Any = None) -> str | None:
    """None when ``path`` may be imported at ``key`` under ``policy`` (default: the one in force);
    else why not (``""``: not trusted)."""
    if isinstance(path, str) and path in _CHECKED.get():
        return None
    policy = _policy(policy)
    reason = policy.refusal(key, path)
    if reason is not None and isinstance(path, str) and ":" in path:  # an entry point's module:attr
        return reason if policy.refusal(key, path.replace(":", ".")) is not None else None
    return reason


def load(path: str, key: str, policy: Any = None) -> Any:
    """The object the import path ``path`` names, after the trust check at ``key`` (nothing is
    imported when it is refused: :class:`UntrustedTargetError`)."""
    reason = refusal(key, path, policy)
    if reason is not None:
        _refuse([Finding(key, str(path), reason)])
    return _import(path)


def import_target(target: str, key: str = "") -> Any:
    """The object ``module.attr`` (or ``module:attr``) names -- a built-in option's class or an
    installed entry point's object -- through :func:`load` (``key``: the option it is the
    ``_target_`` of, e.g. ``metric.psnr``)."""
    return load(target, f"{key}._target_" if key else TARGET_KEY)


def builtin_object(path: str) -> Any:
    """The object a path under ``wfeval.`` names (wfeval's own code: what the trust rule asks of it,
    whether it is a class); anything else is refused without importing it."""
    if not path.startswith("wfeval.") and not path.startswith("wfeval:"):
        raise ValueError(f"{path!r} is not under wfeval.")
    return _import(path)


def resolve(value: Any, key: str) -> Any:
    """What an :data:`ImportPath` parameter holds, as an object: ``None`` and callables as they are,
    a ``{_target_: ...}`` mapping built, an import path loaded (a class is built without arguments)."""
    if value is None or callable(value):
        return value
    if isinstance(value, Mapping) and TARGET_KEY in value:
        return instantiate(value, key)
    if isinstance(value, str) and value:
        try:
            obj = load(value, key)
        except UntrustedTargetError:
            raise
        except (ImportError, AttributeError, ValueError) as exc:
            raise ValueError(f"{key}: cannot import {value!r}: {exc}") from exc
        return obj() if isinstance(obj, type) else obj
    raise TypeError(f"{key}: expected a callable, a _target_ mapping or an import path, got {value!r}")


# --- which values of a config name code -------------------------------------------------------------

@functools.lru_cache(maxsize=512)
def _parameters_of(target: str) -> tuple[str, ...]:
    try:
        obj = _import(target)
    except Exception:  # noqa: BLE001 - building it fails with its own message
        return ()
    return import_path_parameters(obj) if isinstance(obj, type) else ()


def import_path_parameters_of(target: str, key: str, policy: Any = None) -> tuple[str, ...]:
    """The :data:`ImportPath` parameters of the class ``target`` names (imported through the trust
    check: an untrusted target has none, it is refused itself)."""
    if not isinstance(target, str) or refusal(f"{key}.{TARGET_KEY}" if key else TARGET_KEY, target, policy) is not None:
        return ()
    return _parameters_of(target)


def _is_path(value: Any) -> bool:
    return isinstance(value, str) and bool(value) and value != "???"


def code_values(node: Any, prefix: str = "",
                parameters: Callable[[str, str], tuple[str, ...]] | None = None) -> Iterator[tuple[str, Any]]:
    """(full key, value) of every ``_target_`` of a plain config tree and of every import path held
    by an :data:`ImportPath` parameter of a class it builds (``parameters(target, node key)``; default:
    read from the class, imported only when trusted)."""
    parameters = parameters or (lambda target, key: import_path_parameters_of(target, key))
    if isinstance(node, Mapping):
        code_params: tuple[str, ...] = ()
        if TARGET_KEY in node:
            target = node[TARGET_KEY]
            if target != "???":
                yield f"{prefix}{TARGET_KEY}", target
                if isinstance(target, str):
                    code_params = parameters(target, prefix[:-1])
        for k, v in node.items():
            key = f"{prefix}{k}"
            if k == TARGET_KEY:
                continue
            if k in code_params and _is_path(v):
                yield key, v
            else:
                yield from code_values(v, key + ".", parameters)
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            yield from code_values(v, f"{prefix[:-1]}[{i}]." if prefix else f"[{i}].", parameters)


def _checked_values(node: Any, key: str, policy: Any) -> list[tuple[str, Any, str | None]]:
    """(full key, value, refusal or None) of every code value of a plain config node at ``key``."""
    prefix = f"{key}." if key else ""
    return [(full, value, refusal(full, value, policy))
            for full, value in code_values(node, prefix, lambda t, k: import_path_parameters_of(t, k, policy))]


def findings(node: Any, key: str = "", policy: Any = None) -> list[Finding]:
    """The refused code values of a plain config node at ``key`` (see :func:`code_values`)."""
    return [Finding(k, str(v), reason) for k, v, reason in _checked_values(node, key, _policy(policy))
            if reason is not None]


def instantiate(node: Any, key: str) -> Any:
    """Hydra's ``instantiate`` of the config node at ``key`` (``_convert_="all"``) once every
    ``_target_`` in it and every import path its classes' :data:`ImportPath` parameters hold passed
    the trust check (:class:`UntrustedTargetError` before anything is imported). A refusal raised
    inside a constructor (its own :func:`resolve`) comes out as the refusal, not as a build error."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate as hydra_instantiate
    from omegaconf import DictConfig, ListConfig, OmegaConf

    plain = OmegaConf.to_container(node, resolve=True) if isinstance(node, (DictConfig, ListConfig)) else node
    checked = _checked_values(plain, key, _policy())
    _refuse([Finding(k, str(v), reason) for k, v, reason in checked if reason is not None])
    token = _CHECKED.set(_CHECKED.get() | frozenset(str(v) for _, v, _ in checked if isinstance(v, str)))
    try:
        return hydra_instantiate(plain, _convert_="all")
    except InstantiationException as exc:
        cause = exc.__cause__
        while cause is not None and not isinstance(cause, UntrustedTargetError):
            cause = cause.__cause__
        if cause is not None:
            raise cause from None
        raise
    finally:
        _CHECKED.reset(token)
