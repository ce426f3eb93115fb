"""Clean failure: each way a run can go wrong ends with one message naming the culprit, the
documented exit code, no traceback, the manifest saying why, and nothing blamed on the model."""

from __future__ import annotations

import errno
import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, SUPPORT_CONF, compose, read_jsonl, run_python

EXAMPLE = ROOT / "examples" / "datasets" / "gridworld_tiny"


def _main(monkeypatch, capsys, tmp_path: Path, *overrides: str, folder: bool = False,
          bench: list[str] | None = None, store: Path | None = None) -> tuple[int, str, Path]:
    """``python -m wfeval <overrides>`` in this process (on 3 gridworld samples, or the example
    dataset folder; its store in ``tmp_path`` unless ``store``): (exit code, stderr, run dir)."""
    from wfeval.cli.run import main

    run_dir = tmp_path / "run"
    if bench is None:
        bench = ["benchmark=folder", f"benchmark.dataset_root={_plain_dataset(tmp_path)}"] if folder else \
            ["benchmark.num_samples=3"]
    argv = ["wfeval", f"hydra.run.dir={run_dir}", "run.progress=off", f"run.store_dir={store or tmp_path / 'store'}",
            *bench, "metric=[generated_rate,psnr]", *overrides]
    code = main(argv[1:])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, err, run_dir


def _plain_dataset(tmp_path: Path, n: int = 2) -> Path:
    """The first ``n`` samples of the example dataset without their simulator state (real footage)."""
    import shutil

    root = tmp_path / "plain_dataset"
    lines = []
    for line in (EXAMPLE / "manifest.jsonl").read_text().splitlines()[:n]:
        row = json.loads(line)
        row.pop("metadata", None)
        for key in ("initial_frame", "reference_video"):
            (root / row[key]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(EXAMPLE / row[key], root / row[key])
        lines.append(json.dumps(row))
    (root / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


# ---- storage: disk full, permission denied, read-only, a file in the way ----------------------


@pytest.mark.parametrize("code, words", [(errno.ENOSPC, "No space left on device (ENOSPC)"),
                                         (errno.EACCES, "Permission denied (EACCES)"),
                                         (errno.EROFS, "Read-only file system (EROFS)"),
                                         (errno.EDQUOT, "(EDQUOT)")])
def test_a_storage_error_while_storing_an_output_fails_the_run_not_the_model(monkeypatch, capsys, tmp_path,
                                                                              code, words):
    from wfeval.storage.artifacts import ArtifactStore

    real_put = ArtifactStore.put_array
    stored = []

    def put_array(self, array, *, kind, metadata=None):
        if kind == "video" and len(stored) >= 4:  # the benchmark's data went in; the model's output does not
            raise OSError(code, os.strerror(code), str(self.root / "objects" / "ab" / "x.npy"))
        stored.append(kind)
        return real_put(self, array, kind=kind, metadata=metadata)

    monkeypatch.setattr(ArtifactStore, "put_array", put_array)
    exit_code, err, run_dir = _main(monkeypatch, capsys, tmp_path)
    assert exit_code == 1
    assert words in err and "x.npy" in err
    manifest = _manifest(run_dir)
    assert manifest["status"] == "failed" and manifest["failure_kind"] == "storage"
    assert words in manifest["error"]
    steps = read_jsonl(run_dir / "steps.jsonl") if (run_dir / "steps.jsonl").exists() else []
    assert not [s for s in steps if s["status"] == "failed"]  # never recorded as the model's failure
    assert not (run_dir / "results.json").exists()


def test_a_store_path_that_is_a_file_exits_1_naming_it(monkeypatch, capsys, tmp_path):
    blocker = tmp_path / "store_is_a_file"
    blocker.write_text("not a folder")
    exit_code, err, run_dir = _main(monkeypatch, capsys, tmp_path, f"run.store_dir={blocker}")
    assert exit_code == 1 and str(blocker) in err and ("Not a directory" in err or "File exists" in err)
    assert _manifest(run_dir)["status"] == "failed" and str(blocker) in _manifest(run_dir)["error"]
    assert blocker.read_text() == "not a folder"  # nothing overwritten


def test_a_run_path_that_is_a_file_exits_1_naming_it(monkeypatch, capsys, tmp_path):
    blocker = tmp_path / "runs_is_a_file"
    blocker.write_text("x")
    exit_code, err, _ = _main(monkeypatch, capsys, tmp_path, f"hydra.run.dir={blocker / 'run'}")
    assert exit_code == 1 and str(blocker) in err and "storage error" in err


# ---- model set-up, models that cannot serve, programs that cannot start ------------------------


def test_a_model_whose_setup_raises_is_a_clean_error(monkeypatch, capsys, tmp_path):
    exit_code, err, run_dir = _main(monkeypatch, capsys, tmp_path, "model=python",
                                    "model.object._target_=tests.robustness._models.FailingSetup")
    assert exit_code == 1
    assert "setup() failed before any sample was generated" in err and "CUDA out of memory" in err
    manifest = _manifest(run_dir)
    assert manifest["status"] == "failed" and manifest["failure_kind"] == "model_setup"
    assert not (run_dir / "steps.jsonl").exists()


@pytest.mark.parametrize("model", ["random_actions", "lagged", "game_oracle", "game_random_actions"])
def test_a_model_that_cannot_serve_the_benchmark_is_refused_before_generation(monkeypatch, capsys, tmp_path, model):
    exit_code, err, run_dir = _main(monkeypatch, capsys, tmp_path, f"model={model}", folder=True)
    assert exit_code == 2
    assert f"model={model} cannot serve benchmark" in err and "Nothing was generated" in err
    assert "Models that can: " in err and "oracle" in err.split("Models that can: ")[1]
    assert not (run_dir / "steps.jsonl").exists()


def test_the_oracle_serves_a_benchmark_without_a_simulator_from_its_reference_videos(monkeypatch, capsys, tmp_path):
    exit_code, _, run_dir = _main(monkeypatch, capsys, tmp_path, folder=True)
    assert exit_code == 0
    results = json.loads((run_dir / "results.json").read_text())["results"]
    psnr = results[next(k for k in results if k.endswith(".psnr"))]
    assert psnr["n_valid"] == psnr["n_total"] > 0 and psnr["diagnostics"]["value"] == 100.0


@pytest.mark.parametrize("argv, words", [("[definitely-not-a-program-h11b]", "is not an executable on PATH"),
                                         ("[./missing_model.sh]", "does not exist")])
def test_a_command_model_whose_program_is_missing_is_refused_before_any_sample(monkeypatch, capsys, tmp_path,
                                                                               argv, words):
    exit_code, err, run_dir = _main(monkeypatch, capsys, tmp_path, "model=command", f"model.argv={argv}")
    assert exit_code == 2 and words in err and "nothing was run" in err
    assert not (run_dir / "steps.jsonl").exists()


@pytest.mark.subprocess  # a process group stopped on timeout
def test_a_command_models_grandchild_is_stopped_with_its_process_group_on_timeout(tmp_path):
    from wfeval.models.command import CommandError, CommandModel

    pid_file = tmp_path / "grandchild.pid"
    script = tmp_path / "spawn.py"
    script.write_text(textwrap.dedent(f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(120)
    """))
    model = CommandModel(argv=[sys.executable, str(script)], timeout_s=1.5)
    from wfeval.api import GenerationRequest

    with pytest.raises(CommandError, match="timed out after 1.5 s"):
        model.generate([GenerationRequest(sample_id="s-0")])
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(grandchild):
        time.sleep(0.05)
    assert not _alive(grandchild), "the grandchild outlived the timeout"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has stopped; only its parent has not reaped it yet


# ---- impossible values exit 2 -------------------------------------------------------------------


@pytest.mark.parametrize("override, words", [("run.limit=0", "run.limit: expected a positive number"),
                                             ("run.limit=-1", "run.limit: expected a positive number"),
                                             ("run.batch_size=0", "run.batch_size: expected a positive"),
                                             ("run.sample_timeout_s=-1", "run.sample_timeout_s"),
                                             ("run.fail_on_error=1.5", "run.fail_on_error"),
                                             ("run.seed_mode=sometimes", "run.seed_mode"),
                                             ("run.shard=3/2", "shard"),
                                             ("model.output_range=[0,2]", "model.output_range"),
                                             ("benchmark.num_samples=0", "num_samples must be >= 1"),
                                             ("benchmark.num_frames=1000000000", "exceeds the limit of 100,000"),
                                             ("benchmark.world={height:16384,width:16384}", "exceed the limits")])
def test_an_impossible_run_value_exits_2_naming_the_key(monkeypatch, capsys, tmp_path, override, words):
    exit_code, err, run_dir = _main(monkeypatch, capsys, tmp_path, override)
    assert exit_code == 2 and words in err, err
    assert not (run_dir / "results.json").exists()


# ---- one process per run folder ----------------------------------------------------------------


def test_a_second_process_in_a_held_run_folder_is_refused_naming_the_holder(tmp_path):
    from wfeval.pipeline.lock import RunLocked, run_lock
    from wfeval.pipeline.runner import run_from_config

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "benchmark.num_samples=2",
                   "metric=[generated_rate]"])
    with run_lock(run_dir):  # held by "another process" (another open file description)
        with pytest.raises(RunLocked, match=f"in use by another wfeval process \\(pid {os.getpid()} on host"):
            run_from_config(cfg, run_dir)
    assert not (run_dir / "manifest.json").exists()  # the holder's files were not touched
    summary = run_from_config(cfg, run_dir)  # released: the folder is usable again
    assert summary.results["gridworld.generated_rate"].n_valid == 2


def test_a_stale_lock_left_by_a_dead_process_is_taken_over(tmp_path):
    from wfeval.pipeline.runner import run_from_config

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / ".wfeval.lock").write_text(json.dumps({"pid": 2 ** 22 + 17, "host": "gone", "started_at": "x"}))
    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "benchmark.num_samples=2",
                   "metric=[generated_rate]"])
    assert run_from_config(cfg, run_dir).results["gridworld.generated_rate"].n_valid == 2


# ---- signals: SIGINT / SIGTERM halfway, then resume -------------------------------------------


N = 10


def _cli_args(store: Path, run_dir: Path) -> list[str]:
    return [f"hydra.searchpath=[{SUPPORT_CONF}]", "model=slow_oracle", "model.delay_s=0.4", f"benchmark.num_samples={N}",
            "run.batch_size=1", f"run.store_dir={store}", "metric=[generated_rate,psnr]", f"hydra.run.dir={run_dir}"]


@pytest.fixture(scope="module")
def uninterrupted_results(tmp_path_factory) -> dict:
    """The results of the same run, never interrupted (the model without its delay): one for both signals."""
    from tests.conftest import TEST_TRUST
    from wfeval.pipeline.runner import run_from_config

    root = tmp_path_factory.mktemp("uninterrupted")
    with pytest.MonkeyPatch.context() as patch:  # made before the tests' own trust (trust_test_plugins)
        patch.setenv("WFEVAL_TRUST", TEST_TRUST)
        reference = run_from_config(compose([f"hydra.searchpath=[{SUPPORT_CONF}]", "model=slow_oracle",
                                             "model.delay_s=0", f"benchmark.num_samples={N}",
                                             f"run.store_dir={root / 'ref_store'}", "run.progress=off",
                                             "metric=[generated_rate,psnr]"], searchpath=True), root / "ref")
    return {k: v.to_dict() for k, v in reference.results.items()}


@pytest.mark.subprocess  # a signal sent to the process
@pytest.mark.parametrize("signame, code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_halfway_leaves_an_interrupted_resumable_run_with_identical_results(tmp_path, signame, code,
                                                                                      uninterrupted_results):
    import signal
    import subprocess

    from tests.conftest import cli_env

    run_dir, store = tmp_path / "run", tmp_path / "store"
    hold = tmp_path / "hold"  # the model waits at its fourth sample while this file exists: the signal comes
    hold.touch()              # halfway however long the second process takes on a loaded machine
    held = [*_cli_args(store, run_dir), "+model.hold_from=3"]
    proc = subprocess.Popen([sys.executable, "-m", "wfeval", *held], cwd=tmp_path,
                            env=cli_env(WFEVAL_TEST_HOLD_WHILE=str(hold)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    second = None
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if (run_dir / "steps.jsonl").exists() and len(read_jsonl(run_dir / "steps.jsonl")) >= 2:
                break
            time.sleep(0.02)
        if signame == "SIGTERM":  # meanwhile a second process in the same folder is refused
            second = run_python(["-m", "wfeval", *held], cwd=tmp_path, env=cli_env(), timeout=120)
        proc.send_signal(getattr(signal, signame))
        _, err = proc.communicate(timeout=60)
    finally:
        hold.unlink(missing_ok=True)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert "Traceback" not in err and f"interrupted by {signame}" in err and "python -m wfeval.resume" in err, err
    manifest = _manifest(run_dir)
    assert manifest["status"] == "interrupted" and manifest["signal"] == signame
    assert "run_interrupted" in [e["event"] for e in read_jsonl(run_dir / "events.jsonl")]
    if second is not None:
        assert second.returncode == 2 and f"pid {proc.pid}" in second.stderr and "Traceback" not in second.stderr

    resumed = run_python(["-m", "wfeval.resume", str(run_dir)], cwd=tmp_path, env=cli_env(), timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert _manifest(run_dir)["status"] == "completed"
    steps = read_jsonl(run_dir / "steps.jsonl")
    assert sum(not s["cached"] for s in steps) == N  # every sample generated exactly once overall
    got = json.loads((run_dir / "results.json").read_text())["results"]
    assert got == uninterrupted_results


def test_the_simulator_baselines_serve_atari_pong_through_its_snapshot(monkeypatch, capsys, tmp_path):
    """oracle is exact; random_actions plays the same seeded actions as game_random_actions (a
    gridworld-only baseline used to be refused here: they continue any recorded game now)."""
    pytest.importorskip("ale_py")
    pong = ["benchmark=atari_pong", "run.limit=2"]
    values = {}
    for model in ("oracle", "random_actions", "game_random_actions", "lagged"):
        exit_code, err, run_dir = _main(monkeypatch, capsys, tmp_path / model, f"model={model}", bench=pong,
                                        store=tmp_path / "store")  # one store: the game's windows recorded once
        assert exit_code == 0, err
        psnr = json.loads((run_dir / "results.json").read_text())["results"]["atari_pong.psnr"]
        assert (psnr["n_valid"], psnr["n_total"]) == (2, 2)
        values[model] = psnr["diagnostics"]["value"]
    assert values["oracle"] == 100.0 and values["random_actions"] == values["game_random_actions"] < 100.0
    assert values["lagged"] < 100.0
