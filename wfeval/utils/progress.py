"""Progress of a long phase, drawn by tqdm: an in-place bar on a terminal, plain lines elsewhere.

``bar``: tqdm's live bar (count, rate, elapsed and time left, redrawn in place). ``log``: one
plain line (no carriage returns, no escape codes) at every quarter of the work and at least
every ``log_every_s`` seconds, formatted by tqdm's own meter, for CI logs and files. ``auto``
picks ``bar`` when the stream is a terminal, else ``log``; ``off`` prints nothing.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

MODES = ("auto", "bar", "log", "off")


class Progress:
    """``Progress("generate", total, mode)``; ``update()`` per item; ``close()`` at the end.

    mode: ``auto`` (bar on a TTY, log otherwise), ``bar``, ``log`` or ``off``.
    """

    def __init__(self, label: str, total: int, mode: str = "auto", stream: TextIO | None = None,
                 log_every_s: float = 10.0, unit: str = "samples"):
        if mode not in MODES:
            raise ValueError(f"run.progress must be auto, bar, log or off; got {mode!r}")
        self.stream = stream or sys.stderr
        if mode == "auto":
            mode = "bar" if getattr(self.stream, "isatty", lambda: False)() else "log"
        self.label, self.total, self.mode, self.unit = label, total, mode, unit
        self.done = 0
        self.start = self._last_log = time.monotonic()
        self.log_every_s = log_every_s
        self._next_fraction = 0.25
        self._bar = None
        if mode == "bar":
            from tqdm import tqdm

            self._bar = tqdm(total=total or None, desc=label, unit=unit.rstrip("s") or "it", file=self.stream,
                             dynamic_ncols=True, mininterval=0.1, leave=True)

    def line(self) -> str:
        """The plain progress line (what ``log`` mode prints)."""
        from tqdm import tqdm

        rate = self.done / max(time.monotonic() - self.start, 1e-9)
        text = f"{self.label}: {self.done}/{self.total or '?'} {self.unit}"
        if self.total:
            text += f" ({100 * self.done / self.total:.0f}%)"
        text += f", {rate:.1f} {self.unit}/s"
        if self.total and rate > 0:
            text += f", {tqdm.format_interval((self.total - self.done) / rate)} left"
        return text

    def update(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        elif self.mode == "log" and self.total:
            now = time.monotonic()
            if self.done / self.total >= self._next_fraction or now - self._last_log >= self.log_every_s:
                while self._next_fraction <= self.done / self.total:
                    self._next_fraction += 0.25
                self._last_log = now
                if self.done < self.total:
                    print(self.line(), file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self.mode == "log":
            text = f"{self.label}: {self.done}/{self.total} {self.unit} in {time.monotonic() - self.start:.2f}s"
            print(text, file=self.stream, flush=True)
