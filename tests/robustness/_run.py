"""Helpers of the round-3 corpus: ``python -m wfeval`` in this process, as a user's command line."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import SUPPORT_CONF, read_jsonl


@dataclass
class Ran:
    code: int
    out: str
    err: str
    run_dir: Path

    @property
    def manifest(self) -> dict:
        return json.loads((self.run_dir / "manifest.json").read_text())

    @property
    def results(self) -> dict:
        return json.loads((self.run_dir / "results.json").read_text())["results"]

    def value(self, measurement: str):
        return self.results[measurement]["diagnostics"]["value"]

    def counts(self) -> tuple[int, int]:
        """(generated, cached) of the generate phase."""
        done = next(e for e in read_jsonl(self.run_dir / "events.jsonl")
                    if e.get("event") == "phase_finished" and e.get("phase") == "generate")
        return done["generated"], done["cached"]

    def generations(self) -> list[dict]:
        return [r["result"] for r in read_jsonl(self.run_dir / "generations.jsonl")]

    def table_line(self, measurement: str) -> str:
        return next(line for line in self.out.splitlines() if line.startswith(measurement + " "))


def wfeval(monkeypatch, capsys, tmp_path: Path, *overrides: str, name: str = "run", samples: int | None = 3,
           searchpath: bool = False, report: bool = False) -> Ran:
    """``python -m wfeval <overrides>`` in this process: exit status, stdout, stderr, run folder.
    No traceback may reach the user, whatever happens."""
    from wfeval.cli.run import main

    run_dir = tmp_path / name
    argv = ["wfeval", f"hydra.run.dir={run_dir}", "run.progress=off", f"run.report={str(report).lower()}",
            f"run.store_dir={tmp_path / 'store'}"]
    argv += [f"benchmark.num_samples={samples}"] if samples is not None else []
    argv += [f"hydra.searchpath=[{SUPPORT_CONF}]"] if searchpath else []
    code = main([*argv[1:], *overrides])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err[-3000:]
    return Ran(code, captured.out, captured.err, run_dir)
