"""docs/python-api.md's worked example runs as it stands, inside a training loop, and shows what
it says: PSNR rises as the model trains, every call generates its samples again."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT, cli_env, run_fresh


@pytest.mark.subprocess  # the documented script, run by python as a user runs it
def test_the_training_loop_example_of_the_docs_runs_and_psnr_rises(tmp_path):
    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    [example] = re.findall(r"```python\n(.*?)```", text, re.S)  # the one runnable block (others: norun)
    (tmp_path / "example.py").write_text(example, encoding="utf-8")
    env = {**cli_env(), "WFEVAL_STORE": str(tmp_path / "store")}
    proc = run_fresh(["example.py"], cwd=tmp_path, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = re.findall(r"step (\d+): PSNR ([\d.]+) dB \[([\d.]+), ([\d.]+)\] \((\d+)/(\d+)\), generated (\d+)",
                       proc.stdout)
    assert [int(s) for s, *_ in lines] == [10, 20, 30], proc.stdout
    psnr = [float(v) for _, v, *_ in lines]
    assert psnr[0] < psnr[1] < psnr[2], psnr
    assert all(int(n_valid) == int(n_total) == 4 and int(gen) == 4 for *_, n_valid, n_total, gen in lines)
    assert len(list((tmp_path / "outputs" / "runs").iterdir())) == 3  # one run folder per evaluation
