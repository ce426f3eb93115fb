"""The Memory Maze family imports absl (through dm_control); absl's handler must never close a stream
that is not its own when a later run configures logging again (Hydra's job logging does, every run)."""

from __future__ import annotations

import io
import logging.config
import sys

import pytest


def test_a_later_run_never_closes_the_stream_that_was_stderr_when_absl_was_imported():
    absl_logging = pytest.importorskip("absl.logging")
    from wfeval.benchmarks.memory_maze import renderer

    handler = absl_logging.get_absl_handler().python_handler
    before = handler.stream
    theirs = io.StringIO()  # what sys.stderr was when absl made its handler (a test runner's capture, a notebook)
    handler.stream = theirs
    try:
        renderer.configure()
        logging.config.dictConfig({"version": 1, "disable_existing_loggers": False})  # closes every live handler
        assert not theirs.closed
        assert handler.stream is sys.__stderr__ and not sys.__stderr__.closed
    finally:
        handler.stream = before if not getattr(before, "closed", False) else sys.__stderr__
