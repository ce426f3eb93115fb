"""One self-contained HTML report of one or more runs (``python -m wfeval.report``).

The page carries everything it shows: its style and its one small script inline, charts as
SVG data URIs (drawn by :mod:`.charts`) and the samples' moving pictures as animated WebP data
URIs (Pillow); nothing is fetched when it is opened. It reads run folders as data (see
:mod:`.load`). Jinja2 and Pillow (the ``report`` extra) are imported only here, when a report is
written.
"""

from __future__ import annotations

import functools
import time
import warnings
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from wfeval.storage.rundir import FILES

REPORT_NAME = FILES.report


def _wbr(text: object):
    """Escaped text with a line-break opportunity after each ``_``, ``.`` and ``/`` (long metric
    names in narrow table headers wrap instead of widening the page)."""
    import re

    from markupsafe import Markup, escape

    return Markup(re.sub(r"([_./])", r"\1<wbr>", str(escape(str(text)))))


@functools.lru_cache(maxsize=1)
def page_template() -> tuple[Any, str, str]:
    """The page's template compiled, its style and its script: read once a process, the template's code
    compiled once per text (kept in the cache folder: :mod:`.template_cache`; the compilation was most of
    a small run's report; every job of an in-process sweep reuses it)."""
    import jinja2

    from wfeval.report.html.template_cache import from_source

    templates = resources.files("wfeval.report.html") / "templates"
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    env.filters["wbr"] = _wbr
    return (from_source(env, (templates / "report.html.j2").read_text(encoding="utf-8"), "report"),
            (templates / "report.css").read_text(encoding="utf-8"),
            (templates / "report.js").read_text(encoding="utf-8"))


def render(runs: Sequence, title: str, baseline: str | None = None) -> str:
    """The page of loaded runs (:class:`~wfeval.report.html.load.RunData`) as HTML text; ``baseline``:
    the model every other is compared with (default: each benchmark's top-ranked one)."""
    import wfeval
    from wfeval.report.html import media, page

    template, css, js = page_template()
    return template.render(
        **page.context(list(runs), title, baseline),
        css=css,
        js=js,
        version=wfeval.__version__, diff_gain=media.DIFF_GAIN,
        written_at=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    )


def _title(runs: Sequence) -> str:
    if len(runs) == 1:
        return f"{runs[0].model_name} on {runs[0].benchmark_id or '?'}"
    benchmarks = sorted({r.benchmark_id for r in runs if r.benchmark_id})
    return f"{len(runs)} runs on {', '.join(benchmarks) or '?'}"


def write_report(paths: Iterable[str | Path], out: str | Path, title: str | None = None,
                 baseline: str | None = None, verify: Callable[[list], Any] | None = None) -> Path:
    """Write the report of the runs under ``paths`` (run folders, sweep folders) to ``out``. ``verify``
    (the command's :func:`wfeval.pipeline.stored.verify_entries`) checks each run's ``results.json``
    against its own rows and puts the rows' numbers in its place where they disagree: the leaderboard
    then shows what the paired comparisons read, as ``compare`` does."""
    from wfeval.report.html.load import load_runs
    from wfeval.storage.outputs import refuse_run_files, write_output

    refuse_run_files(out)  # before the work: never a run's own file (OutputRefused, a ValueError)
    runs = load_runs(paths)
    if verify is not None:
        entries = [run.entry() for run in runs if run.results is not None]
        verify(entries)
        for entry in entries:
            entry.extra["run"].results = entry.document
    return write_output(out, render(runs, title or _title(runs), baseline))


def write_run_report(run_dir: str | Path, event: Callable[..., None] | None = None) -> Path | None:
    """The end of a run: ``report.html`` in its folder. Never raises: a failure is an event and a warning."""
    started = time.perf_counter()
    try:
        out = write_report([run_dir], Path(run_dir) / REPORT_NAME)
    except Exception as exc:  # noqa: BLE001 - a report must never fail the run it describes
        message = f"{type(exc).__name__}: {exc}"
        _record(event, "report_failed", error=message)
        warnings.warn(f"report.html not written: {message} (the run's results are complete; "
                      f"retry with python -m wfeval.report {run_dir})", RuntimeWarning, stacklevel=2)
        return None
    _record(event, "report_written", path=REPORT_NAME, seconds=round(time.perf_counter() - started, 3))
    return out


def _record(event: Callable[..., None] | None, kind: str, **fields) -> None:
    """Log the event; a full disk that refuses even that line must not fail the finished run."""
    if event is None:
        return
    try:
        event(kind, **fields)
    except OSError as exc:
        warnings.warn(f"events.jsonl: {kind} not recorded: {exc}", RuntimeWarning, stacklevel=3)
