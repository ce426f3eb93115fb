"""``python -m wfeval --help``: the configuration groups a user picks from and the composed config,
printed by wfeval through Hydra's public compose API (the text Hydra's own ``--help`` prints, from the
``hydra.help`` template of conf/config.yaml), without Hydra's listing of every group it knows
(``schema/*`` are not options a user picks; ``--hydra-help`` is Hydra's own).

The text is kept (:mod:`wfeval.cli.help_cache`), so a repeated ``--help`` reads one file and imports
neither Hydra nor wfeval's plugins.
"""

from __future__ import annotations

import sys
from typing import Any

HELP_FLAGS = frozenset({"--help", "-h"})


def asks_for_help(argv: list[str]) -> bool:
    return bool(HELP_FLAGS & set(argv)) and "--hydra-help" not in argv


def print_help(argv: list[str]) -> bool:
    """Print wfeval's help when ``argv`` asks for it (True), else do nothing (False)."""
    if not asks_for_help(argv):
        return False
    from wfeval.cli import help_cache

    key = help_cache.key(argv)
    cached = help_cache.cached(key) if key else None
    if cached is None:
        from wfeval.cli.exits import exits, hydra_raises

        with exits(), hydra_raises():
            cached = help_text(argv)
        if key:
            help_cache.keep(key, cached)
    sys.stdout.write(cached)
    sys.stdout.flush()
    return True


def help_text(argv: list[str]) -> str:
    """The help of ``python -m wfeval ARGV`` (composed now: :func:`wfeval.pipeline.compose.compose_run`)."""
    import string

    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    from wfeval.cli.boundary import command_args, initialized
    from wfeval.pipeline.compose import compose_run

    args = command_args(argv)
    overrides = list(args.overrides or []) if args is not None else []
    with initialized():
        config = compose_run(overrides)
        groups = group_listing(GlobalHydra.instance().config_loader(), overrides)
    text = string.Template(str(config.hydra.help.template)).substitute(
        FLAGS_HELP="", HYDRA_CONFIG_GROUPS="", APP_CONFIG_GROUPS=groups,
        CONFIG=OmegaConf.to_yaml(config.cfg, resolve=bool(args is not None and args.resolve)))
    return text + "\n"


def group_listing(loader: Any, overrides: list[str]) -> str:
    """``group: option, option`` for every config group with options, ``hydra/*`` and ``schema/*`` left
    out, and ``added_metrics/*`` (what a protocol or task adds, not an option either; Hydra's public
    ``ConfigLoader.list_groups`` / ``get_group_options``)."""
    from hydra.core.object_type import ObjectType

    searchpath = [o for o in overrides if o.split("=", 1)[0].lstrip("+~") == "hydra.searchpath"]

    def walk(parent: str) -> list[str]:
        found = []
        for group in loader.list_groups(parent):
            name = f"{parent}/{group}" if parent else group
            if name.split("/")[0] in ("hydra", "schema", "added_metrics"):
                continue
            if loader.get_group_options(name, results_filter=ObjectType.CONFIG, overrides=searchpath):
                found.append(name)
            found += walk(name)
        return found

    lines = [f"{group}: {', '.join(sorted(loader.get_group_options(group, overrides=searchpath)))}"
             for group in sorted(set(walk("")))]
    return "".join(line + "\n" for line in lines)
