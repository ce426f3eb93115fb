"""Run a documentation page: its files, its Python blocks and its `python -m wfeval...` commands.

Fenced blocks: ```` ```python file=PATH ```` (or yaml/any language) are written to PATH;
```` ```python ```` blocks run in one namespace; ```` ```bash ```` lines run as commands
(``python -m wfeval`` and ``python -m wfeval.export_dataset`` in-process, for speed; ``python
SCRIPT`` as a subprocess); a ``norun`` attribute, ``text`` blocks and other languages are skipped.
Everything runs in a temporary folder that has ``examples/`` of the checkout.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, compose

FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```", re.M | re.S)


def blocks(text: str) -> list[tuple[str, dict, str]]:
    out = []
    for lang, info, body in FENCE.findall(text):
        attrs = dict(re.findall(r"(\w+)=(\S+)", info))
        attrs.update({word: "" for word in info.split() if "=" not in word})
        out.append((lang, attrs, body))
    return out


def _commands(body: str) -> list[str]:
    joined = body.replace("\\\n", " ")
    return [line.strip().removeprefix("$ ") for line in joined.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def run_command(line: str, workdir: Path, runs: list[Path]) -> None:
    from wfeval.cli.export_dataset import main as export_main
    from wfeval.pipeline.runner import run_from_config

    argv = shlex.split(os.path.expandvars(line))
    assert argv[0] == "python", f"not a runnable doc command: {line}"
    if argv[1:3] == ["-m", "wfeval"]:
        out = workdir / "outputs" / "runs" / f"doc-{len(runs):02d}"
        from wfeval.config.trust import TrustPolicy, activated

        with activated(TrustPolicy.from_overrides(argv[3:])):  # its overrides are a command line
            run_from_config(compose(argv[3:]), output_dir=out)
        runs.append(out)
    elif argv[1:3] == ["-m", "wfeval.export_dataset"]:
        assert export_main(argv[3:]) == 0, line
    else:
        subprocess.run([sys.executable, *argv[1:]], check=True, cwd=workdir)


def run_doc(name: str, workdir: Path, monkeypatch, store: Path | None = None) -> list[Path]:
    """Run ``docs/<name>`` in ``workdir``; return the run directories its commands made. ``store``: the
    artifact store its commands use (``WFEVAL_STORE``; default ``workdir/store``), e.g. a session's
    shared store whose recordings are made once per test run."""
    text = (ROOT / "docs" / name).read_text()
    (workdir / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(workdir)
    monkeypatch.syspath_prepend(str(workdir))
    monkeypatch.setenv("PWD", str(workdir))
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    monkeypatch.setenv("WFEVAL_STORE", str(store or workdir / "store"))
    namespace: dict = {"__name__": f"doc:{name}"}
    runs: list[Path] = []
    for index, (lang, attrs, body) in enumerate(blocks(text)):
        if "file" in attrs:
            path = workdir / attrs["file"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body)
        elif "norun" in attrs:
            continue
        elif lang == "python":
            exec(compile(body, f"docs/{name} block {index}", "exec"), namespace)  # noqa: S102
        elif lang in ("bash", "sh"):
            for line in _commands(body):
                run_command(line, workdir, runs)
    return runs
