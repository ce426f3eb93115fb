"""The step interface of ``model=command``: one long-running program spoken to in JSON lines.

With ``model.step_argv`` set, wfeval starts that program once (no shell, its own process group,
``cwd``/``env`` as for ``argv``) and writes one JSON object per line to its stdin; the program
answers each with one JSON line on stdout, ``{"ok": true}`` or ``{"ok": false, "error": "why"}``
(anything else it prints must go to stderr, kept in ``<work dir>/step-stderr.txt``)::

    {"op": "start", "state": "s1", "request": {...}}
        # a new session from the request (the same fields as a line of requests.jsonl, without
        # outputs/error_path): remember its state under the name "s1"
    {"op": "step", "state": "s1", "new_state": "s2", "actions": [3, 3], "frames_path": "/abs/s2.npy"}
        # advance state "s1" by the actions WITHOUT changing "s1" (a planner steps it again), name
        # the result "s2", write one frame per action to frames_path (k×H×W×3 uint8 .npy)
    {"op": "close"}
        # the run is over: exit

wfeval never refers to a state created before the latest ``start`` again, so the program may
forget older states when a ``start`` arrives. A reply slower than ``timeout_s`` (per message: the
deadline holds while bytes trickle in, and covers writing the message too), a reply line longer
than :data:`MAX_REPLY_BYTES`, an exit, a closed stdout (even if the program stays alive) or an
unreadable frame file fails that sample (with the stderr tail) and the program is stopped and
started afresh for the next one. ``examples/command_model/step_model.py`` is a complete example.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from wfeval.models.processes import kill_group
from wfeval.models.protocol import StepOutput
from wfeval.storage.safe_io import open_nofollow

#: the longest reply line read from a step program (a reply is ``{"ok": true}`` or an error message)
MAX_REPLY_BYTES = 1 << 20


@dataclass(frozen=True)
class CommandState:
    """A state held by the program, named by wfeval."""

    name: str


class StepSession:
    def __init__(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout_s: float | None,
                 work_dir: Path | None, request_line: Callable[[Any], dict], log_tail_chars: int = 4000):
        self.argv, self.cwd, self.env = list(argv), cwd, dict(env)
        self.timeout_s, self.work_dir, self.request_line = timeout_s, work_dir, request_line
        self.log_tail_chars = log_tail_chars
        self._proc: subprocess.Popen | None = None
        self._dir: Path | None = None
        self._buf = bytearray()
        self._names = itertools.count(1)

    # -- the program ---------------------------------------------------------------------------

    def _folder(self) -> Path:
        if self._dir is None:
            if self.work_dir is not None:
                self.work_dir.mkdir(parents=True, exist_ok=True)
            self._dir = Path(tempfile.mkdtemp(prefix="wfeval-steps-", dir=self.work_dir))
        return self._dir

    def _ensure(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            err = open_nofollow(self._folder() / "step-stderr.txt", "ab")
            try:
                self._proc = subprocess.Popen(self.argv, cwd=self.cwd, env={**os.environ, **self.env},
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                              start_new_session=True)
            except OSError as exc:
                raise RuntimeError(f"cannot start {self.argv[0]!r}: {exc.strerror or exc}") from exc
            finally:
                err.close()
            self._buf = bytearray()
        return self._proc

    def _tail(self) -> str:
        from wfeval.models.processes import read_tail

        return read_tail(self._folder() / "step-stderr.txt", self.log_tail_chars).strip()

    def _fail(self, why: str) -> RuntimeError:
        self._stop()
        return RuntimeError(f"{self.argv[0]} (step_argv) {why}; stderr tail: {self._tail()[-500:] or '(empty)'}")

    def _left(self, deadline: float | None) -> float | None:
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    def _send(self, proc: subprocess.Popen, data: bytes, deadline: float | None) -> None:
        """Write one message within the deadline (a program that does not read its stdin cannot hang us)."""
        fd = proc.stdin.fileno()
        os.set_blocking(fd, False)  # a full pipe makes os.write return, never block past the deadline
        view = memoryview(data)
        while view:
            _, ready, _ = select.select([], [fd], [], self._left(deadline))
            if not ready:
                raise self._fail(f"did not read its input within timeout_s={self.timeout_s:g}")
            try:
                written = os.write(fd, view[:65536])
            except BlockingIOError:
                continue
            except OSError:  # BrokenPipeError: it closed its input (or exited)
                raise self._fail("closed its input") from None
            view = view[written:]

    def _readline(self, proc: subprocess.Popen, deadline: float | None = None) -> bytes:
        """One reply line: within the deadline (it holds while data arrives) and at most
        :data:`MAX_REPLY_BYTES` long; a closed stdout is an answer-less program, alive or not."""
        fd = proc.stdout.fileno()
        buf = self._buf
        scanned = 0
        while (end := buf.find(b"\n", scanned)) < 0:
            scanned = len(buf)
            if len(buf) > MAX_REPLY_BYTES:
                raise self._fail(f"answered a line longer than {MAX_REPLY_BYTES} bytes without a newline (a reply "
                                 "is one short JSON line; anything else belongs on stderr)")
            ready, _, _ = select.select([fd], [], [], self._left(deadline))
            if not ready:
                raise self._fail(f"gave no answer within timeout_s={self.timeout_s:g}")
            chunk = os.read(fd, 65536)
            if not chunk:
                try:
                    status = proc.wait(timeout=min(1.0, self._left(deadline) or 1.0))
                except subprocess.TimeoutExpired:
                    raise self._fail("closed its output but kept running (stopped it)") from None
                raise self._fail(f"exited (status {status}) instead of answering")
            buf += chunk
        line, self._buf = bytes(buf[:end]), bytearray(buf[end + 1:])
        if len(line) > MAX_REPLY_BYTES:
            raise self._fail(f"answered a line longer than {MAX_REPLY_BYTES} bytes (a reply is one short JSON line)")
        return line

    def call(self, message: Mapping[str, Any]) -> dict[str, Any]:
        proc = self._ensure()
        deadline = None if self.timeout_s is None else time.monotonic() + self.timeout_s
        self._send(proc, (json.dumps(message) + "\n").encode("utf-8"), deadline)
        try:
            reply = json.loads(self._readline(proc, deadline))
        except ValueError as exc:
            raise self._fail(f"answered a line that is not JSON ({exc})") from None
        if not isinstance(reply, dict) or not reply.get("ok"):
            error = reply.get("error") if isinstance(reply, dict) else reply
            raise RuntimeError(f"the program reported: {str(error)[:2000]}")
        return reply

    def _stop(self) -> None:
        if self._proc is not None:
            kill_group(self._proc)
            for stream in (self._proc.stdin, self._proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            self._proc = None

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._send(self._proc, b'{"op": "close"}\n', time.monotonic() + 5)
                self._proc.wait(timeout=5)
            except (OSError, RuntimeError, subprocess.TimeoutExpired):
                pass
        self._stop()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    # -- the step interface --------------------------------------------------------------------

    def start(self, request: Any) -> CommandState:
        state = CommandState(f"s{next(self._names)}")
        self.call({"op": "start", "state": state.name, "request": self.request_line(request)})
        return state

    def step(self, state: CommandState, actions: Sequence[Any]) -> StepOutput:
        new = CommandState(f"s{next(self._names)}")
        path = self._folder() / f"{new.name}.npy"
        acts = [a.tolist() if isinstance(a, (np.generic, np.ndarray)) else a for a in actions]
        self.call({"op": "step", "state": state.name, "new_state": new.name, "actions": acts,
                   "frames_path": str(path)})
        try:
            frames = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise RuntimeError(f"the program answered ok but {path} is not a readable .npy ({exc})") from exc
        finally:
            path.unlink(missing_ok=True)
        return StepOutput(new, frames)
