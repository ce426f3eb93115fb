"""The inverse-dynamics model's messages tell the truth (issue 32 item 14).

Before: after a shipped IDM weight file was tampered, the first sample got the checksum error and
every later sample the false reason "no shipped inverse-dynamics model ..." (the list of shipped
IDMs was left half built); ``recipes.train_idm`` printed a "use it:" command that exited 2 (a
missing ``+``).
"""

from __future__ import annotations

import json
import shutil

from tests.robustness._run import wfeval
from wfeval.cli.train_idm import use_command
from wfeval.recipes.idm import files


def test_a_tampered_shipped_idm_is_named_on_every_sample_never_reported_missing(monkeypatch, capsys, tmp_path):
    shipped = tmp_path / "weights"
    shutil.copytree(files.SHIPPED_DIR, shipped)
    with open(shipped / "gridworld" / files.WEIGHTS, "ab") as handle:
        handle.write(b"\0")  # one byte appended
    monkeypatch.setattr(files, "SHIPPED_DIR", shipped)
    ran = wfeval(monkeypatch, capsys, tmp_path, "task=controllability", "metric=[idm_accuracy]", samples=3)
    rows = [json.loads(line) for line in (ran.run_dir / "metrics.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r.get("metric_id") == "idm_accuracy"]
    assert len(rows) == 3
    for row in rows:
        text = json.dumps(row)
        assert row["diagnostics"]["status"] == "error", row
        assert "gridworld: IDM checkpoint" in text and "sha256" in text and "failed their checks" in text
        assert "no shipped inverse-dynamics model" not in text
    assert ran.results["gridworld.idm_accuracy"]["n_valid"] == 0


def test_the_command_train_idm_prints_runs(monkeypatch, capsys, tmp_path):
    command = use_command("gridworld", files.SHIPPED_DIR / "gridworld")
    assert "+metric.idm_accuracy.idm.checkpoint=" in command
    args = command.split()[3:]  # after "python -m wfeval"
    ran = wfeval(monkeypatch, capsys, tmp_path, *args, "metric=[idm_accuracy]", samples=2)
    assert ran.code == 0, ran.err[-2000:]
    assert ran.results["gridworld.idm_accuracy"]["n_valid"] == 2
    ran = wfeval(monkeypatch, capsys, tmp_path, *args, name="task_metrics", samples=2)  # the task's own metrics
    assert ran.code == 0, ran.err[-2000:]
