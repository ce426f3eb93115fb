"""``python -m wfeval --help``: the configuration groups a user picks from, listed fast.

Hydra lists groups by copying its config repository for every group it walks (~95 with the
internal ``schema/*`` groups), twice. For ``--help`` only, :func:`fast_group_listing` replaces
that listing — the one place wfeval reaches into Hydra's internals — with one repository walk
that leaves out ``schema/*`` (not options a user picks).
"""

from __future__ import annotations

from typing import Any, Callable

HELP_FLAGS = frozenset({"--help", "-h", "--hydra-help"})


def _format_config_groups(self: Any, predicate: Callable[[str], bool], compact: bool = True) -> str:
    options_of = self.__dict__.get("_wfeval_group_options")
    if options_of is None:
        options_of = self.__dict__["_wfeval_group_options"] = _group_options(self.config_loader)
    lines = []
    for group in sorted(g for g in options_of if predicate(g)):
        options = options_of[group]
        lines.append(f"{group}: {', '.join(options)}" if compact
                     else f"{group}:\n" + "\n".join(f"  {o}" for o in options))
    return "".join(line + "\n" for line in lines)


def _group_options(config_loader: Any) -> dict[str, list[str]]:
    """Every config group that has options (``schema/*`` left out) → its sorted options."""
    from hydra.core.object_type import ObjectType

    _, repo = config_loader._parse_overrides_and_create_caching_repo(None, [])

    def walk(parent: str) -> list[str]:
        found = []
        for group in repo.get_group_options(parent, ObjectType.GROUP):
            name = f"{parent}/{group}" if parent else group
            if name.split("/")[0] == "schema":
                continue
            if repo.get_group_options(name, ObjectType.CONFIG):
                found.append(name)
            found += walk(name)
        return found

    return {group: sorted(repo.get_group_options(group, ObjectType.CONFIG)) for group in walk("")}


def fast_group_listing(argv: list[str]) -> None:
    """When ``argv`` asks for help, list the groups with one repository walk (see the module doc)."""
    if HELP_FLAGS & set(argv):
        from hydra._internal.hydra import Hydra

        Hydra.format_config_groups = _format_config_groups  # type: ignore[method-assign]
