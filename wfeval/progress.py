"""Progress of a long phase: a live line on a terminal, plain periodic log lines elsewhere."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _fmt_seconds(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Progress:
    """``Progress("generate", total, mode)``; ``update()`` per item; ``close()`` at the end.

    mode: ``auto`` (bar on a TTY, log otherwise), ``bar``, ``log`` or ``off``.
    """

    def __init__(self, label: str, total: int, mode: str = "auto", stream: TextIO | None = None,
                 log_every_s: float = 10.0):
        if mode not in ("auto", "bar", "log", "off"):
            raise ValueError(f"run.progress must be auto, bar, log or off; got {mode!r}")
        self.stream = stream or sys.stderr
        if mode == "auto":
            mode = "bar" if getattr(self.stream, "isatty", lambda: False)() else "log"
        self.label, self.total, self.mode = label, total, mode
        self.done = 0
        self.start = self._last_log = time.monotonic()
        self.log_every_s = log_every_s
        self._next_fraction = 0.25

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.start, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        eta = _fmt_seconds(left) if rate > 0 else "?"
        return f"{self.label}: {self.done}/{self.total} samples, {rate:.1f}/s, {eta} left"

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.mode == "bar":
            self.stream.write("\r" + self.line() + "\x1b[K")
            self.stream.flush()
        elif self.mode == "log" and self.total:
            now = time.monotonic()
            if self.done / self.total >= self._next_fraction or now - self._last_log >= self.log_every_s:
                while self._next_fraction <= self.done / self.total:
                    self._next_fraction += 0.25
                self._last_log = now
                if self.done < self.total:
                    print(self.line(), file=self.stream, flush=True)

    def close(self) -> None:
        if self.mode == "off":
            return
        text = f"{self.label}: {self.done}/{self.total} samples in {time.monotonic() - self.start:.2f}s"
        self.stream.write("\r" + text + "\x1b[K\n" if self.mode == "bar" else text + "\n")
        self.stream.flush()
