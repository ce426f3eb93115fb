"""Every command README.md and docs/*.md show runs as shown (in a small mode) and ends as they say.

How commands are found, made small and which are not run: tests/docs/_doc_commands.py. The
commands run two at a time, each in its own copy of one prepared folder (one small run, one small
sweep, one sharded sweep, a tiny learned model, a dataset folder), all sharing one artifact store (the
session's Memory Maze store when a maze command is among them: each trajectory is recorded once a run).
A plain ``python -m wfeval... ARGS`` line runs as a process forked from a warm interpreter
(tests/docs/_warm_python.py: its own process, without a fresh interpreter's start and imports); a
line with anything for bash to do (a variable before it, a pipe, a redirection, an expansion) runs
in bash, as a user's shell runs it.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, require_maze
from tests.docs import _doc_commands as docs

pytestmark = pytest.mark.subprocess  # the documented shell commands, as a user's shell runs them

COMMANDS = docs.runnable(docs.collect())


def _needs_maze(command: docs.DocCommand) -> bool:
    """Memory Maze needs Mesa's EGL (.ci/run installs it): skipped without it, except under CI=true."""
    return "memory_maze" in command.text


def _maze_ok() -> bool:
    try:
        require_maze()
    except pytest.skip.Exception:
        return False
    return True


@pytest.fixture(scope="module")
def outcomes(request):
    """Run the commands of the selected tests (all of them on a plain run), two at a time.

    In a folder of its own, not pytest's basetemp: another pytest session on the machine prunes the
    older numbered basetemps while these minutes of commands still use theirs (seen: a submitit job's
    folder vanished under it)."""
    wanted = {item.callspec.params["command"].id for item in request.session.items
              if getattr(item, "callspec", None) and "command" in item.callspec.params
              and item.module is request.module}
    selected = [c for c in COMMANDS if c.id in wanted and (not _needs_maze(c) or _maze_ok())]
    # with a Memory Maze command, the session's maze store: its trajectories are recorded once a run
    store = Path(request.getfixturevalue("maze_store")) if any(map(_needs_maze, selected)) else None
    with tempfile.TemporaryDirectory(prefix="wfeval-docs-") as folder:
        base = Path(folder) / "base"
        warm = docs.WarmPythons(docs.user_env(store or base / "store"))  # the setup's and the commands'
        try:
            docs.prepare(base, store, warm)
            yield {outcome.command.id: outcome for outcome in docs.run_all(selected, base, store=store, warm=warm)}
        finally:
            warm.close()


@pytest.mark.parametrize("command", COMMANDS, ids=[c.id for c in COMMANDS])
def test_the_documented_command_runs_and_ends_as_the_docs_say(command, outcomes):
    if _needs_maze(command):
        require_maze()
    failure = outcomes[command.id].failure
    assert failure is None, failure


def test_the_docs_show_the_commands_this_test_knows_about():
    """A collector that silently found nothing would pass everything: the README's own commands are there."""
    texts = {c.text for c in COMMANDS}
    assert {"python -m wfeval", "python -m wfeval --help", "python -m wfeval.compare outputs/multirun/<sweep>",
            "python -m wfeval.merge outputs/multirun/<sweep> --out merged",
            "python -m wfeval metric=[fvdd]"} <= texts
    assert len(COMMANDS) >= 60


@pytest.mark.parametrize("table", ["NOT_RUN", "EXPECTED_EXIT"])
def test_every_listed_command_is_still_in_the_docs(table):
    shown = {c.key for c in docs.collect()}
    stale = [key for key in getattr(docs, table) if key not in shown]
    assert not stale, f"{table} lists commands the docs no longer show (remove them): {stale}"


def test_every_page_run_by_its_own_test_is_run_there():
    for page, test in docs.PAGE_TESTS.items():
        source = (ROOT / test).read_text(encoding="utf-8")
        assert re.search(rf"run_doc\(\s*\"{re.escape(page.removeprefix('docs/'))}\"", source), (page, test)


def test_the_readme_setup_block_is_what_ci_runs():
    """README's first block is not run here (a fresh venv, the whole suite): .ci/run runs exactly it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash norun\n# set up.*?\n```", readme, re.S).group(0)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for line in docs._block_lines(block.split("\n", 1)[1].rsplit("```", 1)[0], 0, console=False):
        assert line[1] in ci, f"README's setup line is not what .ci/run runs: {line[1]}"


def test_a_broken_documented_command_fails_naming_its_file_and_command(tmp_path):
    """The runner is not a rubber stamp: a misspelled option in a doc page is reported with the page."""
    page = tmp_path / "broken.md"
    page.write_text("Run it:\n\n```bash\npython -m wfeval benchmark.num_sampels=2\n```\n\n"
                    "and `python -m wfeval --help` works.\n", encoding="utf-8")
    found = docs.runnable(docs.collect([page], root=tmp_path))
    assert [(c.file, c.line, c.text) for c in found] == [
        ("broken.md", 4, "python -m wfeval benchmark.num_sampels=2"), ("broken.md", 7, "python -m wfeval --help")]
    base = tmp_path / "base"
    base.mkdir()
    (base / "examples").symlink_to(ROOT / "examples")
    broken, works = docs.run_all(found, base)
    assert works.failure is None, works.failure
    assert broken.returncode == 2
    assert broken.failure.startswith("broken.md:4: `python -m wfeval benchmark.num_sampels=2` exited 2 "
                                     "(the docs promise 0)")
    assert "benchmark.num_sampels" in broken.failure  # the CLI's own paragraph names the key


def test_a_blocks_lines_run_in_order_and_its_sweep_is_the_one_it_made(tmp_path):
    page = tmp_path / "sweep.md"
    page.write_text("```bash\npython -m wfeval -m model=oracle,static metric=[psnr]\n"
                    "python -m wfeval.compare outputs/multirun/<sweep>\n```\n", encoding="utf-8")
    base = tmp_path / "base"
    base.mkdir()
    sweep, compare = docs.run_all(docs.runnable(docs.collect([page], root=tmp_path)), base)
    assert sweep.ran == "python -m wfeval -m model=oracle,static metric=[psnr] run.progress=off benchmark.num_samples=2"
    assert sweep.failure is None and compare.failure is None, (sweep.failure, compare.failure)
    assert re.fullmatch(r"python -m wfeval\.compare outputs/multirun/\d{4}-\d\d-\d\d_[\d_-]+", compare.ran)
    assert re.search(r"^2 +static ", compare.output, re.M), compare.output
