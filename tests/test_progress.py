"""Progress display (tqdm): an in-place bar on a terminal, plain periodic lines elsewhere, nothing when off."""

from __future__ import annotations

import io
import re

import pytest

from wfeval.utils.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_log_mode_prints_plain_lines_at_each_quarter_with_rate_and_time_left():
    stream = io.StringIO()
    progress = Progress("generate", 8, "auto", stream=stream)  # not a terminal: log
    for _ in range(8):
        progress.update()
    progress.close()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue() and "\x1b" not in stream.getvalue()
    assert [line.split(",")[0] for line in lines[:3]] == [
        "generate: 2/8 samples (25%)", "generate: 4/8 samples (50%)", "generate: 6/8 samples (75%)"]
    assert all(re.search(r", [\d.]+ samples/s, \d\d:\d\d left$", line) for line in lines[:3])
    assert re.fullmatch(r"generate: 8/8 samples in \d+\.\d\ds", lines[3]) and len(lines) == 4


def test_log_mode_also_prints_when_time_passes_between_quarters():
    stream = io.StringIO()
    progress = Progress("score", 100, "log", stream=stream, log_every_s=0.0)
    progress.update(3)
    progress.update(2)
    assert [line.split(" (")[0] for line in stream.getvalue().splitlines()] == ["score: 3/100 samples",
                                                                                 "score: 5/100 samples"]


def test_bar_mode_on_a_terminal_redraws_one_line_in_place_with_rate_and_eta():
    stream = Terminal()
    progress = Progress("generate", 4, "auto", stream=stream)
    for _ in range(4):
        progress.update()
    progress.close()
    text = stream.getvalue()
    assert text.count("\n") == 1 and text.count("\r") >= 2  # redrawn in place, one line left at the end
    final = text.rsplit("\r", 1)[-1]
    assert "generate: 100%" in final and "4/4" in final and "sample/s" in final
    assert re.search(r"\[\d\d:\d\d<\d\d:\d\d", final)  # elapsed < time left


def test_off_prints_nothing_and_unknown_modes_are_refused():
    stream = Terminal()
    progress = Progress("generate", 4, "off", stream=stream)
    progress.update(4)
    progress.close()
    assert stream.getvalue() == ""
    with pytest.raises(ValueError, match="run.progress must be auto, bar, log or off; got 'fancy'"):
        Progress("generate", 4, "fancy")
