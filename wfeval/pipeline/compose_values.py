"""A command line's plain values (``benchmark.num_samples=3``, ``run.store_dir=/data/s``) set on the config
composed from the rest of it, as Hydra sets them: after the defaults, one ``OmegaConf.update(cfg, key, value,
merge=True)`` each, in the command line's order (Hydra's ``ConfigLoaderImpl._apply_overrides_to_config``);
then ``hydra.overrides.task``, ``hydra.job.override_dirname`` and ``hydra.runtime.cwd`` written as Hydra
writes them. A kept composition (:mod:`wfeval.pipeline.compose_cache`) thus serves every value of a key.
"""

from __future__ import annotations

import os
import re
import warnings
from typing import Any, Callable, Sequence


def plain_values(given: list[str]) -> tuple[list[str], list[Any]]:
    """``given`` without its plain value overrides, and those overrides (parsed, in order): ``a.b=<value>`` (no ``+``/``~``, a dotted
    key of the job's config, not a config group (a folder ``a.b``), not Hydra's, not ``extra_metrics``, a single
    value: no list, no mapping, no sweep)
    whose key no other override's key overlaps but a config group's (chosen before any value is set). A command
    line giving ``hydra.searchpath`` keeps them all (its groups are not the loader's)."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    try:
        parsed = OverridesParser.create().parse_overrides(given)
        groups = set(GlobalHydra.instance().config_loader().list_groups(""))
    except Exception:  # noqa: BLE001 - Hydra reports a malformed command line itself, composing it
        return given, []
    if any(o.key_or_group == "hydra.searchpath" for o in parsed):
        return given, []

    def plain(o: Any) -> bool:
        return not (o.is_add() or o.is_force_add() or o.is_delete() or o.is_sweep_override()) and \
            o.package is None and "." in o.key_or_group and not re.search(r"[/@]", o.key_or_group) and \
            not o.is_hydra_override() and o.key_or_group.split(".")[0] != "extra_metrics" and \
            isinstance(o.value(), (str, int, float, bool, type(None))) and o.key_or_group not in groups

    candidates = [i for i, o in enumerate(parsed) if plain(o)]
    others = [o.key_or_group for i, o in enumerate(parsed) if i not in candidates and not o.is_hydra_override()
              and not (o.key_or_group in groups and not isinstance(o.value(), dict))]
    places = [i for i in candidates if not any(_overlap(parsed[i].key_or_group, other) for other in others)]
    return [o for i, o in enumerate(given) if i not in places], [parsed[i] for i in places]


def _overlap(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def with_values(node: Any, given: list[str], values: list[Any], compose: Callable[[Sequence[str]], Any]) -> Any:
    """``node`` (composed without ``given``'s plain ``values``, :func:`plain_values`) made the node Hydra
    composes with them. A value Hydra would refuse (a missing key, a wrong type) or one that warns: ``compose(given)``, whose
    error or warning is Hydra's own."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf, open_dict, read_write

    parsed = OverridesParser.create().parse_overrides(given)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for override in values:
                OmegaConf.update(node, override.key_or_group, override.value(), merge=True)
    except Exception:  # noqa: BLE001 - composed with them, Hydra says what is wrong
        return compose(given)
    if caught:
        return compose(given)
    with read_write(node.hydra), open_dict(node.hydra):
        task = [o.input_line for o in parsed if not o.is_hydra_override()]  # texts: "${...}" in them stays text
        node.hydra.overrides.task = task
        node.hydra.job.override_dirname = override_dirname(task, node.hydra.job.config)
        node.hydra.runtime.cwd = os.getcwd()
    return node


def override_dirname(task: list[str], job_config: Any) -> str:
    """``hydra.job.override_dirname`` of the job's overrides ``task`` (as Hydra writes it: the overrides'
    texts sorted, ``exclude_keys`` left out, joined by ``item_sep``, ``=`` written as ``kv_sep``)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    options = job_config.override_dirname
    lines = sorted(str(o.input_line) for o in OverridesParser.create().parse_overrides(task)
                   if o.key_or_group not in options.exclude_keys)
    return str(options.item_sep).join(lines).replace("=", str(options.kv_sep))
