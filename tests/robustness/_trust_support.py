"""Helpers for the trust corpus: a config folder of hostile options and a sentinel each would create."""

from __future__ import annotations

import pickle
import textwrap
from pathlib import Path

from tests.conftest import cli_env, run_cli


class _Payload:
    """Unpickling this creates the sentinel file: what torch.load / numpy.load(allow_pickle) would run."""

    def __init__(self, sentinel: str):
        self.sentinel = sentinel

    def __reduce__(self):
        return (open, (self.sentinel, "w"))


def hostile_pickle(path: Path, sentinel: Path) -> Path:
    path.write_bytes(pickle.dumps(_Payload(str(sentinel))))
    return path


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def untrusted_env(**extra: str) -> dict:
    """The CLI environment without any trust (not even the test plugins')."""
    env = cli_env(**extra)
    env.pop("WFEVAL_TRUST", None)
    env.update(extra)
    return env


def cli(tmp_path: Path, *args: str, env: dict | None = None):
    return run_cli([*args, f"run.store_dir={tmp_path / 'store'}", "run.progress=off"], cwd=tmp_path,
                   env=env or untrusted_env())


def assert_refused(proc, *culprits: str) -> None:
    """Exit 2, one paragraph naming every culprit, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    for culprit in culprits:
        assert culprit in proc.stderr, (culprit, proc.stderr)
