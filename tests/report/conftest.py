"""A real 3-model sweep (6 gridworld samples each) and its HTML report, made once per session."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import cli_env, made_once, run_cli, run_python

MODELS = ("oracle", "static", "random_actions")


@dataclass
class SweepReport:
    root: Path
    sweep: Path
    html: Path

    def job(self, model: str) -> Path:
        [path] = [p for p in self.sweep.iterdir() if p.is_dir() and p.name.endswith(f"_{model}")]
        return path


@pytest.fixture(scope="session")
def sweep_report(tmp_path_factory) -> SweepReport:
    def make(root: Path) -> list[str]:
        proc = run_cli(["-m", f"model={','.join(MODELS)}", "benchmark.num_samples=6", "run.progress=off",
                        f"run.store_dir={root / 'store'}"], cwd=root)
        assert proc.returncode == 0, proc.stderr
        [sweep] = (root / "outputs" / "multirun").iterdir()
        html = root / "report.html"
        made = run_python(["-m", "wfeval.report", str(sweep), "--out", str(html)], cwd=root, env=cli_env(), timeout=300)
        assert made.returncode == 0, made.stderr
        return [str(root), str(sweep), str(html)]

    return SweepReport(*map(Path, made_once(tmp_path_factory, "sweep_report", make)))


@pytest.fixture(scope="session")
def two_benchmarks(tmp_path_factory) -> Path:
    """A 2-benchmark × 3-model sweep (gridworld and Pong; oracle, static, noisy; 4 samples each)."""
    def make(root: Path) -> str:
        proc = run_cli(["-m", "benchmark=gridworld,atari_pong", "model=oracle,static,noisy", "run.limit=4",
                        "run.progress=off", "run.report=false", f"run.store_dir={root / 'store'}"], cwd=root)
        assert proc.returncode == 0, proc.stderr
        [sweep] = (root / "outputs" / "multirun").iterdir()
        return str(sweep)

    return Path(made_once(tmp_path_factory, "board", make))
