"""README's configuration table lists every built-in option of each config group, and nothing else."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT


def _table() -> dict[str, list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in re.findall(r"^\| `[a-z_]+` \|.*$", section, re.M):  # the group table's rows
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = re.findall(r"`([a-z0-9_]+)`", cells[1])
    return rows


@pytest.mark.parametrize("group", ["task", "benchmark", "model", "protocol", "metric"])
def test_the_readme_names_every_option_of_the_group_and_no_other(group):
    files = sorted(p.stem for p in (ROOT / "conf" / group).glob("*.yaml") if not p.stem.startswith("_"))
    assert sorted(_table()[group]) == files
