"""Turn Hydra/OmegaConf failures into one-paragraph messages (exit status 2, no traceback)."""

from __future__ import annotations

import dataclasses
import difflib
from pathlib import Path
from typing import Iterable

GROUPS = ("task", "benchmark", "model", "protocol", "metric", "tracker")
SEARCHPATH_HINT = (
    "Add your own options with hydra.searchpath=[file:///abs/path/to/conf] "
    "(a folder with the same group sub-folders), or install a plugin package (docs/plugins.md)."
)


class ConfigError(ValueError):
    """A configuration problem the user can fix; printed without a traceback, exit status 2."""


def did_you_mean(word: str, options: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, [o for o in options if o != word], n=3, cutoff=0.5)
    return f" Did you mean: {', '.join(close)}?" if close else ""


def unknown_choice_message(group: str, name: str, options: list[str]) -> str:
    visible = sorted(o for o in options if not o.startswith("suite_")) if group == "metric" else sorted(options)
    if name in visible:  # built in, yet not found: a hydra.searchpath override replaced the built-in configs
        return (f"Config error: {group} '{name}' is built in, but wfeval's own configs are not on this command's "
                f"search path: a hydra.searchpath=[...] override replaces the list, so keep pkg://wfeval.conf in "
                f"it, e.g. hydra.searchpath=[file:///abs/path/to/conf,pkg://wfeval.conf].")
    from wfeval.config.plugins import broken_plugins_note

    return (
        f"Unknown {group} '{name}'.{did_you_mean(name, visible)} "
        f"Available: {', '.join(visible) or '(none)'}. {SEARCHPATH_HINT}{broken_plugins_note()}"
    )


def group_options(group: str) -> list[str]:
    """Options of a config group from the live Hydra search path, else from the built-in tree."""
    try:
        from hydra.core.global_hydra import GlobalHydra

        hydra = GlobalHydra.instance()
        if hydra.is_initialized():
            return sorted(set(hydra.config_loader().get_group_options(group)))
    except Exception:  # pragma: no cover - fall back to the packaged configs
        pass
    import wfeval.conf
    from wfeval.config.plugins import plugin_options

    folder = Path(wfeval.conf.__file__).parent / group
    return sorted({p.stem for p in folder.glob("*.yaml")} | set(plugin_options(group)))


def _key_suggestion(exc: BaseException) -> str:
    """' Did you mean: x?' for an unknown key of a schema (dataclass) node."""
    key, schema = getattr(exc, "key", None), getattr(exc, "object_type", None)
    if not isinstance(key, str) or not dataclasses.is_dataclass(schema) or "not in" not in str(exc):
        return ""
    hint = did_you_mean(key, [f.name for f in dataclasses.fields(schema)])
    return f"\n{hint.strip()}" if hint else ""


def yaml_error_message(exc: BaseException) -> str | None:
    """'malformed YAML in FILE, line L, column C: problem' for a YAML parse error anywhere in the
    exception's chain (Hydra lets the parser's error through), else None."""
    import yaml

    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, yaml.MarkedYAMLError):
            mark = exc.problem_mark or exc.context_mark
            where = f"{mark.name}, line {mark.line + 1}, column {mark.column + 1}" if mark else "a config file"
            context = (f" ({exc.context} at line {exc.context_mark.line + 1})"
                       if exc.context and exc.context_mark else "")
            return f"malformed YAML in {where}: {exc.problem or exc}{context}"
        if isinstance(exc, yaml.YAMLError):
            return f"malformed YAML: {exc}"
        exc = exc.__cause__ or exc.__context__
    return None


def friendly_message(exc: BaseException) -> str | None:
    """The user-facing message for a config failure, or None when ``exc`` is not one."""
    from hydra.errors import HydraException, MissingConfigException, OverrideParseException
    from omegaconf.errors import OmegaConfBaseException

    if isinstance(exc, ConfigError):
        return f"Config error: {exc}"
    cause = exc.__cause__
    if isinstance(cause, ConfigError):  # raised while Hydra built an object (a callback): its own words
        return f"Config error: {cause}"
    if (malformed := yaml_error_message(exc)) is not None:
        return f"Config error: {malformed}. Fix that file (or take its folder off hydra.searchpath)."
    if isinstance(exc, MissingConfigException) and "wfeval_schema" in str(exc):
        return ("Config error: wfeval's Hydra plugin (hydra_plugins.wfeval_configs, which serves the config "
                "schemas) is not importable: reinstall wfeval (pip install -e . in a checkout, whose editable "
                "install predates the plugin), or put the checkout on PYTHONPATH")
    if isinstance(exc, MissingConfigException) and exc.missing_cfg_file:
        group, _, name = str(exc.missing_cfg_file).rpartition("/")
        if group in GROUPS:
            return unknown_choice_message(group, name, group_options(group))
        return f"Config error: {exc}"
    if isinstance(exc, (OverrideParseException, HydraException, OmegaConfBaseException)):
        text = str(exc).strip()
        cause = exc.__cause__ if isinstance(exc.__cause__, OmegaConfBaseException) else exc
        if cause is not exc and str(cause) not in text:
            text = f"{text}\n{str(cause).strip()}"
        hint = _key_suggestion(cause)
        if hint:  # appending with '+' would fail against the schema too: do not suggest it
            text = "\n".join(line for line in text.splitlines() if not line.startswith("To append"))
        return f"Config error: {text}{hint}"
    return None
