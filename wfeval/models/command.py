"""``model=command``: run your own inference program (any language, its own environment) per batch.

For each batch wfeval makes a folder and writes ``requests.jsonl`` in it, one JSON object a line::

    {"index": 0, "sample_id": "...", "split": "...", "benchmark": "...", "task": "...",
     "inputs": {"image": "/abs/path/to/<sha256>.npy"},       # uint8 arrays, np.load-able
     "controls": {"actions": [...], ...}, "generation": {"fps": 8, "num_frames": 16, "seed": 1234},
     "prompt": null, "metadata": {...},
     "outputs": {"generated_video": "/abs/batch/outputs/00000.generated_video"},
     "error_path": "/abs/batch/outputs/00000.error.txt"}

then runs ``argv`` (a list: no shell, nothing from the samples is ever put into it). Exactly
the tokens ``{requests}``, ``{output_dir}`` and ``{batch_dir}`` inside argv items are replaced by
those paths, which are also in the environment as ``WFEVAL_REQUESTS``, ``WFEVAL_OUTPUT_DIR`` and
``WFEVAL_BATCH_DIR``. The program writes each output to its ``outputs`` path plus any suffix
:func:`wfeval.io.read_video` reads (``.npy``, ``.npz``, ``.mkv``, ``.mp4``, ..., or a folder of
frames), and may write a message to ``error_path`` for a sample it could not do. References
(ground truth) are never sent.

Exit status 0: every sample gets its output (or its error). Non-zero, a crash or
``timeout_s``: the batch is retried up to ``retries`` times, then fails with the tail of stderr
(the pipeline then tries its samples one by one). stderr is kept in ``<batch>/stderr.txt`` and
its tail in each result (``steps.jsonl``: ``log``).

``step_argv`` (optional) names a long-running program that serves the step interface over a JSON
line protocol (wfeval/models/command_steps.py, docs/protocols.md); with it the step protocols
(autoregressive, closed_loop, planning) drive the program. ``argv`` may then be left out: open
loop also runs through the step program (one step with every action).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from wfeval.api import GenerationRequest
from wfeval.models._files import file_identity, read_output, tree_digest
from wfeval.models.processes import kill_group, read_head, read_tail
from wfeval.models.protocol import Generated, SampleFailed
from wfeval.storage.safe_io import atomic_write_bytes, open_nofollow

PLACEHOLDERS = ("{requests}", "{output_dir}", "{batch_dir}")


class CommandError(RuntimeError):
    """The program failed for the whole batch; ``metadata`` holds the stderr tail and attempts."""

    def __init__(self, message: str, metadata: Mapping[str, Any]):
        super().__init__(message)
        self.metadata = dict(metadata)


def _tail(path: Path, limit: int) -> str:
    return read_tail(path, limit)  # a log of any size: only its tail is read


class CommandModel:
    #: options whose files fingerprint() already identifies (not hashed again: wfeval/models/_files.py)
    fingerprinted_options = ("argv", "step_argv", "fingerprint_paths")  # hashed by fingerprint(), from cwd

    def __init__(
        self,
        argv: Sequence[str] | None = None,
        name: str = "command",
        version: str = "1.0",
        cwd: str | None = None,
        env: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        retries: int = 0,
        retry_delay_s: float = 1.0,
        output_keys: Sequence[str] = ("generated_video",),
        batch_size: int | None = None,
        work_dir: str | None = None,
        keep_work_dir: bool = False,
        fingerprint_paths: Sequence[str] = (),
        log_tail_chars: int = 4000,
        step_argv: Sequence[str] | None = None,
    ):
        for key, value in (("argv", argv), ("step_argv", step_argv)):
            if value is None:
                continue
            if isinstance(value, str) or not value or not all(isinstance(a, (str, int, float)) for a in value):
                raise ValueError(f"model.{key}: expected a non-empty list of strings, e.g. [python, infer.py, "
                                 "'{requests}', '{output_dir}'] (no shell is used)")
        if argv is None and step_argv is None:
            raise ValueError("model.argv: required (or model.step_argv, a program serving the step interface)")
        if retries < 0 or (timeout_s is not None and timeout_s <= 0):
            raise ValueError("model.retries must be >= 0 and model.timeout_s positive or null")
        self.argv = [str(a) for a in argv] if argv is not None else None
        self.step_argv = [str(a) for a in step_argv] if step_argv is not None else None
        self.name, self.version = name, version
        self.cwd = Path(cwd).expanduser().resolve() if cwd else Path.cwd()
        self.env = {str(k): str(v) for k, v in (env or {}).items()}
        self.timeout_s, self.retries, self.retry_delay_s = timeout_s, int(retries), float(retry_delay_s)
        self.output_keys = tuple(output_keys)
        self.batch_size = batch_size
        self.work_dir = Path(work_dir).expanduser() if work_dir else None
        self.keep_work_dir = keep_work_dir
        self.fingerprint_paths = tuple(fingerprint_paths)
        self.log_tail_chars = log_tail_chars
        for key, value in (("argv", self.argv), ("step_argv", self.step_argv)):
            if value is not None:
                self._check_executable(value, key)
        self._session = None
        if self.step_argv is not None:  # the step interface, only when a step program is configured
            from wfeval.models.command_steps import StepSession  # the step interface of step_argv

            self._session = StepSession(self.step_argv, cwd=self.cwd, env=self.env, timeout_s=timeout_s,
                                        work_dir=self.work_dir, request_line=self._step_request_line,
                                        log_tail_chars=log_tail_chars)
            self.start, self.step = self._session.start, self._session.step
            self.one_sample_at_a_time = True  # the program may forget older states at each start

    def _check_executable(self, argv: Sequence[str], key: str = "argv") -> None:
        """Refuse, before any sample, a program that cannot be started (ValueError -> exit 2)."""
        exe = argv[0]
        if any(token in exe for token in PLACEHOLDERS):
            return
        if os.sep in exe or (os.altsep and os.altsep in exe):
            path = self.cwd / exe
            if not path.is_file():
                raise ValueError(f"model.{key}[0]: {exe!r} does not exist (looked for {path}); nothing was run")
            if not os.access(path, os.X_OK):
                raise ValueError(f"model.{key}[0]: {path} is not executable (chmod +x it, or start it through its "
                                 f"interpreter, e.g. [python, {exe}, ...]); nothing was run")
            return
        search = {**os.environ, **self.env}.get("PATH", os.defpath)
        if shutil.which(exe, path=search) is None:
            raise ValueError(f"model.{key}[0]: {exe!r} is not an executable on PATH ({search}); give its full path "
                             "or fix model.env.PATH; nothing was run")

    # -- identity --------------------------------------------------------------------------------

    def fingerprint(self) -> dict[str, Any]:
        """Content digests of every argv item that names a file (your script) and of ``fingerprint_paths``."""
        files = {}
        for arg in [*(self.argv or ()), *(self.step_argv or ())]:
            path = self.cwd / arg
            if path.is_file():
                files[arg] = file_identity(path)
        paths = {}
        for text in self.fingerprint_paths:
            path = self.cwd / Path(text).expanduser()
            if not path.exists():
                raise ValueError(f"model.fingerprint_paths: {path} does not exist")
            paths[text] = tree_digest(path)["sha256"]
        return {"argv_files": files, "paths": paths}

    # -- one batch -------------------------------------------------------------------------------

    def _request_line(self, index: int, request: GenerationRequest, outputs: Path) -> dict[str, Any]:
        data = request.to_dict()
        return {
            "index": index,
            "sample_id": request.sample_id,
            "split": request.split,
            "benchmark": request.benchmark_id,
            "task": request.task_id,
            "inputs": {k: _plain_npy(ref) for k, ref in request.inputs.items()},
            "controls": data["controls"],
            "generation": data["generation"],
            "prompt": request.prompt,
            "metadata": data["metadata"],
            "outputs": {key: str(outputs / f"{index:05d}.{key}") for key in self.output_keys},
            "error_path": str(outputs / f"{index:05d}.error.txt"),
        }

    def _step_request_line(self, request: GenerationRequest) -> dict[str, Any]:
        line = self._request_line(0, request, Path("."))
        for key in ("index", "outputs", "error_path"):
            line.pop(key)
        return line

    def close(self) -> None:
        if self._session is not None:
            self._session.close()

    def _argv(self, batch: Path) -> list[str]:
        values = {"{requests}": str(batch / "requests.jsonl"), "{output_dir}": str(batch / "outputs"),
                  "{batch_dir}": str(batch)}
        out = []
        for arg in self.argv:
            for token, value in values.items():
                arg = arg.replace(token, value)
            out.append(arg)
        return out

    def _run(self, batch: Path) -> tuple[int | None, int, float]:
        """(exit status or None on timeout, attempts, seconds of the last attempt)."""
        env = {**os.environ, **self.env, "WFEVAL_REQUESTS": str(batch / "requests.jsonl"),
               "WFEVAL_OUTPUT_DIR": str(batch / "outputs"), "WFEVAL_BATCH_DIR": str(batch)}
        argv = self._argv(batch)
        code: int | None = None
        seconds = 0.0
        for attempt in range(1, self.retries + 2):
            shutil.rmtree(batch / "outputs", ignore_errors=True)
            (batch / "outputs").mkdir()
            started = time.perf_counter()
            with open_nofollow(batch / "stdout.txt", "ab") as out, open_nofollow(batch / "stderr.txt", "ab") as err:
                err.write(f"--- wfeval: attempt {attempt} ---\n".encode())
                err.flush()
                try:
                    proc = subprocess.Popen(argv, cwd=self.cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                            stderr=err, start_new_session=True)
                except OSError as exc:
                    raise CommandError(f"cannot start {argv[0]!r}: {exc.strerror or exc}",
                                       {"attempts": attempt, "log": ""}) from exc
                try:
                    code = proc.wait(timeout=self.timeout_s)
                except subprocess.TimeoutExpired:
                    code = None
                    kill_group(proc)
                    err.write(f"\n--- wfeval: killed after timeout_s={self.timeout_s:g} ---\n".encode())
                except BaseException:  # a pipeline deadline, Ctrl-C: never leave the program running
                    kill_group(proc)
                    raise
            seconds = time.perf_counter() - started
            if code == 0:
                return code, attempt, seconds
            if attempt <= self.retries and self.retry_delay_s > 0:
                time.sleep(self.retry_delay_s)
        return code, self.retries + 1, seconds

    def _collect(self, index: int, request: GenerationRequest, outputs: Path, meta: dict[str, Any]) -> Any:
        from wfeval.io import find_media

        error_file = outputs / f"{index:05d}.error.txt"
        if error_file.exists():
            return SampleFailed(f"the program reported: {read_head(error_file, 2000).strip()}", meta)
        arrays = {}
        for key in self.output_keys:
            found = find_media(outputs / f"{index:05d}.{key}")
            if len(found) != 1:
                what = "no" if not found else f"{len(found)} ({', '.join(p.name for p in found)})"
                return SampleFailed(f"the program wrote {what} output for {key!r} of sample {request.sample_id!r} "
                                    f"(expected {index:05d}.{key}.npy, .mkv, .mp4, ... in the output folder)", meta)
            try:
                arrays[key] = read_output(found[0])[0]
            except ValueError as exc:
                return SampleFailed(f"{type(exc).__name__}: {exc}", meta)
        return Generated(arrays, meta)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        if self.argv is None:  # only a step program: open loop steps once with every action
            from wfeval.models.stepping import StepLoop

            return StepLoop(self).generate(requests)
        if self.work_dir is not None:
            self.work_dir.mkdir(parents=True, exist_ok=True)
        batch = Path(tempfile.mkdtemp(prefix="wfeval-batch-", dir=self.work_dir))
        try:
            outputs = batch / "outputs"
            lines = [self._request_line(i, r, outputs) for i, r in enumerate(requests)]
            atomic_write_bytes(batch / "requests.jsonl",
                               "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8"), durable=False)
            code, attempts, seconds = self._run(batch)
            log = _tail(batch / "stderr.txt", self.log_tail_chars)
            meta = {"attempts": attempts, "log": log, "command_seconds": round(seconds, 3)}
            if code != 0:
                why = f"timed out after {self.timeout_s:g} s" if code is None else f"exited with status {code}"
                raise CommandError(f"{self.argv[0]} {why} ({attempts} attempt(s)); stderr tail: "
                                   f"{log.strip()[-500:] or '(empty)'}", meta)
            return [self._collect(i, r, outputs, meta) for i, r in enumerate(requests)]
        finally:
            if not self.keep_work_dir:
                shutil.rmtree(batch, ignore_errors=True)
            else:
                print(f"wfeval: command batch kept in {batch}", file=sys.stderr)


def _plain_npy(ref: Any) -> str:
    """A path the program can ``np.load``: a decoded copy of the input, content-addressed in a temporary
    folder -- never a file of the store (a program writing to its input must not change what was
    stored) -- and checked against its address before it is handed out again (a program that wrote
    to a copy spoils nothing: the copy is written afresh)."""
    import hashlib

    from wfeval.storage.artifacts import array_bytes, atomic_write_bytes, read_array

    folder = Path(tempfile.gettempdir()) / "wfeval-inputs"
    if ref.sha256:
        copy = folder / f"{ref.sha256}.npy"
        try:
            if hashlib.sha256(copy.read_bytes()).hexdigest() == ref.sha256:
                return str(copy)
        except OSError:
            pass
    data = array_bytes(read_array(ref))
    copy = folder / f"{hashlib.sha256(data).hexdigest()}.npy"
    atomic_write_bytes(copy, data, durable=False)
    return str(copy)
