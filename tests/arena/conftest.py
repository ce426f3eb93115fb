"""A real 3-model gridworld sweep (oracle, noisy, static; 10 samples each), made once per session,
and a fresh copy of it per test module that casts votes (votes go into the sweep folder)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import made_once, run_cli

MODELS = ("oracle", "noisy", "static")
SAMPLES = 10


@pytest.fixture(scope="session")
def arena_sweep_master(tmp_path_factory) -> Path:
    def make(root: Path) -> str:
        proc = run_cli(["-m", f"model={','.join(MODELS)}", f"benchmark.num_samples={SAMPLES}", "run.progress=off",
                        "run.report=false", f"run.store_dir={root / 'store'}"], cwd=root)
        assert proc.returncode == 0, proc.stderr
        [sweep] = (root / "outputs" / "multirun").iterdir()
        return str(sweep)

    return Path(made_once(tmp_path_factory, "arena_sweep", make))


@pytest.fixture
def arena_sweep(arena_sweep_master, tmp_path) -> Path:
    """A copy of the sweep's run folders (the store is shared: the runs name it by absolute path)."""
    copy = tmp_path / "sweep"
    shutil.copytree(arena_sweep_master, copy)
    (copy / "arena.sqlite").unlink(missing_ok=True)
    return copy
