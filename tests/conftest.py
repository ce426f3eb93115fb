"""Shared helpers: compose configs in-process (Hydra compose API) and run the CLI as a user would."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: under pytest-xdist, each worker's libraries use one thread each unless the caller chose otherwise:
#: the workers already fill the cores (one each), and torch's and the BLAS libraries' own pools on top of
#: them cost more CPU than they save. Set before any test imports them (they read it once, at import);
#: every command inherits it. Tests of thread settings choose their own.
ONE_THREAD_EACH = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ONE_THREAD_EACH:
        os.environ.setdefault(_name, "1")

ROOT = Path(__file__).resolve().parents[1]
SUPPORT = ROOT / "tests" / "support"
SUPPORT_CONF = f"file://{SUPPORT / 'conf'}"
if str(SUPPORT) not in sys.path:  # test-only plugins, loaded by `_target_` like a user's own module
    sys.path.insert(0, str(SUPPORT))


#: the test-only plugin modules, trusted explicitly (docs/trust.md): code only from where the user chose it
TEST_TRUST = "wfeval_test_models.,wfeval_test_plugins.,tests.robustness._models."


@pytest.fixture(autouse=True)
def trust_test_plugins(monkeypatch):
    """Every test trusts the test-only plugins through the environment, as a user would
    (``WFEVAL_TRUST``); ``cli_env`` copies it into the CLI's environment. Trust tests remove it."""
    monkeypatch.setenv("WFEVAL_TRUST", TEST_TRUST)


def compose(overrides=(), searchpath: bool = False, hydra: bool = False):
    """The run config for ``overrides`` (``searchpath``: with the test-only config folder; ``hydra``: with
    the ``hydra`` node, as a command composes it)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_module

    from wfeval.config import register_schemas

    register_schemas()
    extra = [f"hydra.searchpath=[{SUPPORT_CONF}]"] if searchpath else []
    with initialize_config_module("wfeval.conf", version_base="1.3"):
        return hydra_compose(config_name="config", overrides=[*extra, *overrides], return_hydra_config=hydra)


def user_environ(*drop: str) -> dict:
    """This process's environment as a user's shell would have it: without the test runner's own
    variables (pytest-xdist's worker ids, the terminal width it sets: tables would wrap at 80 columns
    under workers only), HYDRA_FULL_ERROR, and the names in ``drop``."""
    return {k: v for k, v in os.environ.items()
            if k not in ("HYDRA_FULL_ERROR", "COLUMNS", "LINES", *drop) and not k.startswith("PYTEST_")}


def cli_env(**extra: str) -> dict:
    """The environment a user's command gets, with the test-only plugins importable."""
    env = user_environ()
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.update(extra)
    return env


def run_cli(args, cwd: Path, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m wfeval ARGS`` as a user runs it, called in this process (:func:`run_python`)."""
    return run_python(["-m", "wfeval", *args], cwd, env or cli_env(), timeout)


def run_python(argv, cwd: Path | None = None, env: dict | None = None,
               timeout: float = 300) -> subprocess.CompletedProcess:
    """``python ARGV``, its output captured, as :func:`subprocess.run` shows it: a command of wfeval
    (``-m wfeval...``) is its ``main`` called in this process (tests/in_process.py), anything else runs
    in a fresh interpreter (:func:`run_fresh`) within ``timeout`` seconds (a call in this process is
    bounded by the suite's ``faulthandler_timeout``)."""
    from tests.in_process import command_main, in_process

    argv = [str(a) for a in argv]
    cwd = Path.cwd() if cwd is None else Path(cwd)
    env = dict(os.environ) if env is None else env
    main = command_main(argv)
    return run_fresh(argv, cwd, env, timeout) if main is None else in_process(main, argv, cwd, env)


def run_fresh(argv, cwd: Path, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python ARGV`` in a fresh interpreter: for the ``subprocess`` tier, whose tests need one (an
    environment a library reads when it loads, a signal, a process killed)."""
    return subprocess.run([sys.executable, *map(str, argv)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def only_run_dir(parent: Path) -> Path:
    runs = sorted(p for p in parent.iterdir() if p.is_dir())
    assert len(runs) == 1, runs
    return runs[0]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def results_without_timestamps(run_dir: Path) -> dict:
    data = json.loads((run_dir / "results.json").read_text())
    data.pop("run_id")
    return data


@pytest.fixture
def store(tmp_path: Path) -> str:
    return str(tmp_path / "store")


# --- Memory Maze (wfeval[maze3d] + Mesa's software EGL renderer) ----------------------------------

MAZE_SMALL = ["benchmark=memory_maze", "benchmark.num_trajectories=1"]  # 4 samples of 16 steps, 99 steps recorded


def require_maze() -> None:
    """Skip without Memory Maze or its renderer; under CI=true fail instead (.ci/run installs both)."""
    try:
        from wfeval.benchmarks.memory_maze import renderer

        renderer.gl_identity()
    except Exception as exc:  # noqa: BLE001 - the packages or a GL context missing: the reason is shown
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the Memory Maze tests: {exc}")
        pytest.skip(f"Memory Maze cannot run here: {exc}")


def copy_live_store(source: Path, target: Path) -> None:
    """Copy a store other workers may be writing into meanwhile (the session's maze store): a file
    listed and gone before its copy (an atomic write's temporary file, renamed) is not part of it."""
    import shutil

    def copy(src, dst):
        try:
            return shutil.copy2(src, dst)
        except FileNotFoundError:
            return dst

    shutil.copytree(source, target, copy_function=copy)


@pytest.fixture(scope="session")
def maze_store(tmp_path_factory):
    """One artifact store for every Memory Maze test of the session: each trajectory is recorded once."""
    require_maze()
    return Path(made_once(tmp_path_factory, "maze", lambda folder: str(folder / "store")))


# --- Atari Pong's AtariARI probes of the exact state (the games extra) ----------------------------

@pytest.fixture(scope="session")
def pong_atariari_state_oracle(tmp_path_factory) -> dict:
    """One run of perf/latent_figures.py's AtariARI row ``state_oracle`` (Pong, ``protocol.probe=atariari``,
    1 trajectory, 8 training episodes: 20 CPU-s, the logistic probes of the exact state), shared by the
    page's table test (tests/docs/test_latent_figures.py) and tests/protocols/test_probing_atariari.py:
    ``{"folder": the run's folder, "overrides": its overrides}``."""
    pytest.importorskip("ale_py")

    def make(folder: Path) -> dict:
        import importlib.util

        spec = importlib.util.spec_from_file_location("latent_figures_rows", ROOT / "perf" / "latent_figures.py")
        figures = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(figures)
        trajectories, episodes, overrides = figures.ATARIARI["state_oracle"]
        args = figures.atariari_overrides(folder, trajectories, episodes, overrides)
        figures.run_results(args, folder / "run")
        return {"folder": str(folder / "run"), "overrides": args}

    return made_once(tmp_path_factory, "pong_atariari_state_oracle", make)


# --- parallel workers (pytest-xdist, in the dev extra) --------------------------------------------
# A run over a folder (plain `pytest`: testpaths) uses one worker per CPU, up to MAX_WORKERS, each test
# file on one worker (`--dist loadfile`: a module's fixtures are made once); a run of named files or
# tests stays in one process (no start-up cost; -s and --pdb work). WFEVAL_TEST_WORKERS=N or -n N
# chooses (0: one process).

MAX_WORKERS = 4
#: the test files that take longest (a module fixture of a minute or more: `--durations`), handed out
#: first, longest first, so that no worker is still in one at the end while the other has nothing left;
#: the others follow by their number of tests, as xdist orders them
LONGEST_FIRST = ("tests/docs/test_documented_commands.py", "tests/metrics/test_sanity_ranking.py",
                 "tests/recipes/test_learned_memory_maze.py", "tests/robustness/test_clean_failure_cases.py",
                 "tests/benchmarks/test_memory_maze_memory.py", "tests/pipeline/test_sharding_and_sweeps.py",
                 "tests/benchmarks/test_memory_maze_baselines.py", "tests/report/test_replay_compare_export.py",
                 "tests/benchmarks/test_continuous_datasets_end_to_end.py",
                 "tests/benchmarks/test_memory_maze_recording.py", "tests/pipeline/test_python_api_docs.py")


def _workers(config) -> int:
    chosen = os.environ.get("WFEVAL_TEST_WORKERS", "auto")
    if chosen != "auto":
        return int(chosen)
    args = [a.split("::")[0] for a in config.args if not a.startswith("-")] or ["."]
    if not any(Path(config.invocation_params.dir, a).is_dir() for a in args):
        return 0
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(cpus, MAX_WORKERS)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """Choose the workers before xdist reads the option (a conftest's hook runs before the plugin's)."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return
    if config.option.numprocesses is None and not config.option.usepdb and not config.option.collectonly:
        workers = _workers(config)
        config.option.numprocesses = workers if workers > 1 else None
    if config.option.numprocesses and config.option.dist == "no":
        config.option.dist = "loadfile"
        config.option.loadscopereorder = False  # the workers order the files: pytest_collection_modifyitems
        if config.option.maxworkerrestart is None:
            # a crashed worker ends the run, naming the test it ran; pytest-xdist 3.8 hangs for good when
            # it replaces a crashed worker under --dist loadfile (pytest-dev/pytest-xdist#1323)
            config.option.maxworkerrestart = "0"


def pytest_configure(config):
    """Compile wfeval's modules (and the test-only plugins) to byte code once, before any worker starts.

    The suite starts hundreds of fresh interpreters (the documented commands, the subprocess tests,
    the workers); with ``PYTHONDONTWRITEBYTECODE`` set, as on the machines these tests run on, each
    compiled the wfeval modules it imports from source again (176 in a warm one-sample run: 0.27 s
    of its 1.1 s). The
    byte code goes where Python itself puts it (``__pycache__`` beside each module, git-ignored), is
    read by every interpreter whatever that variable says, and is checked against its source's size
    and modification time on every import, as always."""
    if hasattr(config, "workerinput") or not sys.dont_write_bytecode:
        return
    import compileall

    for folder in (ROOT / "wfeval", SUPPORT):
        compileall.compile_dir(str(folder), quiet=1, workers=0)


def pytest_collection_modifyitems(config, items):
    """In each worker: the files in the order they are handed out (LONGEST_FIRST, then by number of tests),
    the tests of a file in their own order. Every worker must collect the same order: the key is total."""
    if not hasattr(config, "workerinput") or config.getoption("dist") != "loadfile":
        return
    items.sort(key=file_order(items))


def file_order(items):
    """The sort key that hands out LONGEST_FIRST's files first, then the others by number of tests."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    counts: dict[str, int] = {}
    for item in items:
        file = item.nodeid.split("::")[0]
        counts[file] = counts.get(file, 0) + 1
    return lambda item: (rank.get(file := item.nodeid.split("::")[0], len(rank)), -counts[file], file)


def made_once(tmp_path_factory, name: str, make):
    """``make(folder)``'s JSON value, made once per test run: under xdist the workers share one folder
    (the numbered base of their own folders) and the first to arrive makes it while the others wait
    (a file lock), as pytest-xdist's docs advise for session fixtures."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    record = root / f"{name}.json"
    with FileLock(str(root / f"{name}.lock")):
        if record.is_file():
            return json.loads(record.read_text())
        folder = root / name
        if folder.exists():  # an earlier attempt failed (no record): start again in a folder of this process
            folder = root / f"{name}-{os.getpid()}"
        folder.mkdir()
        value = make(folder)
        record.write_text(json.dumps(value))
        return value


def tracker_libraries() -> None:
    """mlflow, TensorBoard and W&B imported, the test skipped without them: called from the tracker files'
    module fixtures, so that only the worker running such a file pays their import (~4 CPU-seconds), not
    every worker that collects it (``--dist loadfile``: a file runs on one worker)."""
    for name in ("mlflow", "tensorboard", "wandb"):
        pytest.importorskip(name)


@contextlib.contextmanager
def one_wandb_at_a_time(tmp_path_factory):
    """Hold a lock shared by every pytest worker while a wandb run starts and ends: two wandb-core
    services starting at the same moment on a busy machine have hung a worker (the service never wrote
    its port file and ignored SIGTERM), as wandb's own issues report for simultaneous starts."""
    import fcntl

    lock = tmp_path_factory.getbasetemp().parent / "wandb.lock"  # the session's root, shared by workers
    with open(lock, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --- task=goal_reaching on pusht, run once per test run ----------------------------------------------
#: 4 goal samples (2 starts × 2 windows), a small CEM (8 candidates × 3 steps × 2 iterations, 4 elites):
#: the oracle reaches every goal (within 6 of its 10 steps), random_actions none, the state oracle one;
#: 16 × 4 plans cost twice the CPU (random_actions plans every one of its 10 steps, each candidate imagined
#: and audited in the simulator) and separated less (3 of 4 against 1)
PUSHT_GOALS = ["benchmark=pusht", "benchmark.num_trajectories=2", "benchmark.windows_per_trajectory=2",
               "task=goal_reaching", "task.data.goal.max_steps=10", "protocol.planner.method=cem",
               "protocol.planner.candidates=8", "protocol.planner.horizon=3", "protocol.planner.iterations=2",
               "protocol.planner.elites=4"]
#: goal_success and the plan audit's measures: the audit runs every candidate in the true world anyway
PUSHT_GOAL_METRICS = ("goal_success", "selection_regret", "plan_rank_agreement", "chosen_plan_gap",
                      "random_plan_gap", "exploitability")


@pytest.fixture(scope="session")
def pusht_goal_runs(tmp_path_factory):
    """``{model: {measure: {"valid", "n_valid", "value", "diagnostics"}}}`` of PUSHT_GOALS for the oracle,
    random_actions and the state oracle (latent planning over vector plans): one run each, shared by
    tests/benchmarks/test_pusht.py (goal_success) and tests/protocols/test_plan_audit.py (the audit)."""
    pytest.importorskip("gym_pusht")

    def make(folder: Path) -> dict:
        from wfeval.pipeline.runner import run_from_config

        out = {}
        for model in ("oracle", "random_actions", "state_oracle"):
            cfg = compose([*PUSHT_GOALS, f"model={model}", f"run.store_dir={folder / 'store'}", "run.progress=off",
                           "run.report=false", f"metric=[{','.join(PUSHT_GOAL_METRICS)}]"])
            summary = run_from_config(cfg, output_dir=folder / model)
            out[model] = {key.split(".", 1)[1]: json.loads(json.dumps(
                {"valid": agg.valid, "n_valid": agg.n_valid, "value": agg.diagnostics.get("value"),
                 "diagnostics": agg.diagnostics}, default=str)) for key, agg in summary.results.items()}
        return out

    return made_once(tmp_path_factory, "pusht_goal_runs", make)
