"""The outputs README.md quotes are what the commands print today (run in full, not small).

- the default run's table (``python -m wfeval``, "and prints:");
- the paired figure ``oracle − static on 32 samples: PSNR +77.34 dB [76.24, 78.21], p = 0.0014 after
  Holm over 7 tests`` (``python -m wfeval.compare RUN_A RUN_B``);
- the leaderboard of the three-model sweep (``python -m wfeval.compare outputs/multirun/<sweep>``).

When one of these fails after an intended change, paste the printed output into README.md.
"""

from __future__ import annotations

import re
import shlex

from tests.conftest import ROOT, run_python
from tests.docs._doc_commands import user_env

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _quoted(first_line: str) -> list[str]:
    """The fenced block of README.md whose first line starts with ``first_line``."""
    block = re.search(rf"^```[^\n]*\n({re.escape(first_line)}.*?)^```", README, re.M | re.S)
    assert block, f"README.md no longer quotes a block starting {first_line!r}"
    return block.group(1).rstrip("\n").splitlines()


def _run(command: str, cwd, store, *extra: str) -> str:
    """Run a ``python -m ...`` line of the README as a user would (placeholders already filled), in this
    process as a fresh ``python`` runs it (tests/conftest.py run_python): what it prints is the point."""
    words = shlex.split(command)
    assert words[:2] == ["python", "-m"], command
    proc = run_python([*words[1:], *extra], cwd=cwd, env=user_env(store), timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_the_default_runs_table_and_the_oracle_static_difference_in_the_readme_are_what_they_print(tmp_path):
    quoted = _quoted("oracle on gridworld  (")
    store = tmp_path / "store"
    printed = _run("python -m wfeval", tmp_path, store, "run.progress=off", "hydra.run.dir=outputs/runs/A")
    folder = re.compile(r"\(.*outputs/runs/[^)]*\)")
    assert [folder.sub("(RUN)", line) for line in printed.rstrip("\n").splitlines()] == [
        folder.sub("(RUN)", line) for line in quoted]

    claim = re.search(r"`python -m wfeval.compare RUN_A RUN_B` \(oracle − static on (\d+) samples: PSNR "
                      r"(\+[\d.]+) dB \[([\d.]+), ([\d.]+)\], p = ([\d.]+) after Holm over (\d+) tests\)",
                      re.sub(r"\s+", " ", README))
    assert claim, "README.md no longer quotes the oracle − static difference"
    n, diff, low, high, p_holm, tests = claim.groups()
    _run("python -m wfeval model=static", tmp_path, store, "run.progress=off", "hydra.run.dir=outputs/runs/B")
    paired = _run("python -m wfeval.compare outputs/runs/A outputs/runs/B", tmp_path, store)
    assert re.search(rf"^psnr +{re.escape(diff)} dB +\[{low}, {high}\] +[\d.]+ +{p_holm} +{n} +oracle better$",
                     paired, re.M), paired
    assert f"Holm–Bonferroni over {tests} tests" in paired


def test_the_sweep_leaderboard_in_the_readme_is_what_compare_prints(tmp_path):
    quoted = _quoted("$ python -m wfeval -m model=oracle,static,random_actions 'metric=")
    sweep_command, compare_command = (line[2:] for line in quoted[:2])
    store = tmp_path / "store"
    _run(sweep_command, tmp_path, store, "run.progress=off", "hydra.sweep.dir=outputs/multirun/sweep")
    compare = compare_command.replace("outputs/multirun/<sweep>", "outputs/multirun/sweep")
    printed = _run(compare, tmp_path, store).rstrip("\n").splitlines()
    assert printed == quoted[2:]
