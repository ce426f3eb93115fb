"""The report reads run files as streams: the same page as from whole files, in bounded memory."""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
import tracemalloc

import pytest

from tests.conftest import compose, read_jsonl
from tests.report import whole_file_report
from wfeval.pipeline.runner import run_from_config
from wfeval.report.html.samples import MAX_SAMPLE_ROWS

CURVES = ("per_frame", "per_step", "per_frame_error_px")
#: the sample table's row limit while the streamed page is compared: the page's MAX_SAMPLE_ROWS (2000)
#: made smaller, so the comparison reads 257 samples instead of 2057 (the same limits, passed the same way)
SHOWN = 200


@pytest.fixture
def sample_rows_shown(monkeypatch):
    """MAX_SAMPLE_ROWS is SHOWN in every module that holds it (the report's and the whole-file oracle's)."""
    import wfeval.report.html.page  # noqa: F401 - imported first: one importing it patched would keep SHOWN

    modules = [m for name, m in list(sys.modules.items()) if name.startswith(("wfeval.report.", "tests.report."))
               and getattr(m, "MAX_SAMPLE_ROWS", None) == MAX_SAMPLE_ROWS]
    assert len(modules) >= 4  # digest (its home), samples, page, the oracle
    for module in modules:
        monkeypatch.setattr(module, "MAX_SAMPLE_ROWS", SHOWN)


def _perturbed(row: dict, rng: random.Random) -> dict:
    row = json.loads(json.dumps(row))
    scale = rng.choice([1.0, 1.0, rng.uniform(0.3, 1.7)])  # ties too: equal values are ordered by id
    if isinstance(row.get("normalized_value"), (int, float)):
        row["normalized_value"] = row["normalized_value"] * scale
    for key in CURVES:
        if isinstance((row.get("components") or {}).get(key), list):
            row["components"][key] = [v * rng.uniform(0.8, 1.2) if isinstance(v, float) else v
                                      for v in row["components"][key]]
    return row


def _write(path, rows) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


@pytest.fixture(scope="module")
def resumed_runs(tmp_path_factory):
    """A real run grown to more samples than the table shows, resumed twice (rows appended for
    samples already scored: other values, skips, errors), a torn last line; the same without
    samples.jsonl (failed and repeated generation records), and without generations.jsonl too."""
    tmp = tmp_path_factory.mktemp("streamed")
    cfg = compose([f"run.store_dir={tmp / 'store'}", "run.progress=off", "benchmark.num_samples=4"])
    run_from_config(cfg, output_dir=tmp / "real")
    rng = random.Random(16)
    templates = list(read_jsonl(tmp / "real" / "metrics.jsonl"))
    samples = list(read_jsonl(tmp / "real" / "samples.jsonl"))
    n = SHOWN + 57
    ids = [f"gridworld-test-{k:05d}" for k in range(n)]
    metrics = [r for start in range(0, n, 8) for t in templates[::4] for k in range(start, min(n, start + 8))
               for r in [_perturbed({**templates[templates.index(t) + k % 4], "sample_id": ids[k]}, rng)]]
    resumed = []
    for row in rng.sample(metrics, 600) + rng.sample(metrics, 80):
        row = _perturbed(row, rng)
        if rng.random() < 0.4:
            status = rng.choice(["skip", "error"])
            row.update(valid=False, normalized_value=None, skip_reason=f"{status}: resumed {rng.randrange(3)}")
            row["diagnostics"]["status"] = status
        resumed.append(row)
    big = tmp / "big"
    shutil.copytree(tmp / "real", big)
    _write(big / "metrics.jsonl", metrics + resumed)
    with (big / "metrics.jsonl").open("a") as handle:
        handle.write('{"sample_id": "gridworld-te')  # a killed writer's torn line
    _write(big / "samples.jsonl", [{**samples[k % 4], "sample_id": ids[k], **(
        {"success": False, "stop_reason": "error", "metadata": {"generation_error": f"boom {k % 3}"}}
        if k % 97 == 5 else {})} for k in range(n)] + [{**samples[1], "stop_reason": "again"}])
    steps = [{"sample_id": ids[k], "step": s, "phase": "step", "latency_seconds": rng.uniform(0.01, 0.1),
              "cached": s == 2 and k % 2 == 0} for k in range(n // 7) for s in range(4)]
    _write(big / "steps.jsonl", list(read_jsonl(tmp / "real" / "steps.jsonl")) + steps)
    no_samples = tmp / "no_samples"
    shutil.copytree(big, no_samples)
    (no_samples / "samples.jsonl").unlink()
    records = list(read_jsonl(big / "generations.jsonl"))
    failed = json.loads(json.dumps(records[2]))
    failed["result"].update(status="failed", error="model crashed")
    _write(no_samples / "generations.jsonl", records + [failed, records[3], failed])
    bare = tmp / "bare"
    shutil.copytree(no_samples, bare)
    (bare / "generations.jsonl").unlink()
    return [tmp / "real", big, no_samples, bare]


def _page(paths, monkeypatch, whole: bool) -> str:
    from wfeval.report.html import page, render
    from wfeval.report.html.load import load_runs

    runs = load_runs(paths)
    with monkeypatch.context() as patch:
        if whole:  # every benchmark section's data from whole files instead of streams
            patch.setattr(page, "section_parts", whole_file_report.sections)
        html = render(runs, "resumed")
    return re.sub(r"written [0-9-]+ [0-9:]+ UTC", "written", html)


def test_the_streamed_report_is_the_page_read_from_whole_files(sample_rows_shown, resumed_runs, monkeypatch):
    streamed = _page(resumed_runs, monkeypatch, whole=False)
    assert streamed == _page(resumed_runs, monkeypatch, whole=True)
    for section in ("horizon", "latency", "samples", "failures", "per-sample"):  # every section has content
        assert f'<section id="{section}">' in streamed
    assert streamed.count("resumed 1") > 0 and f"{57} more in metrics.jsonl" in streamed
    assert streamed.count('class="strip-anim pic-') > 0


@pytest.mark.parametrize("seed", range(5))
def test_running_sums_add_up_exactly_as_the_builtin_sum(seed):
    from wfeval.report.html.curves import STREAMING, Sum

    assert STREAMING  # this Python's sum() is reproduced: the curves stream
    rng = random.Random(seed)
    values = [rng.uniform(-1, 1) * 10 ** rng.randint(-12, 12) for _ in range(rng.randint(1, 2000))]
    mean = sum(values) / len(values)
    running, squares = Sum(), Sum()
    for v in values:
        running.add(v)
        squares.add((v - mean) ** 2)
    assert (running.value(), squares.value()) == (sum(values), sum((v - mean) ** 2 for v in values))


def _kept_bytes(run_dir, n: int) -> tuple[int, int]:
    """(bytes kept by the loaded run, peak bytes while loading) for a run of n samples × 2 metrics."""
    from wfeval.report.html.load import load_run

    rows = [{"sample_id": f"s{k:07d}", "metric_id": metric, "normalized_value": k * 0.5, "valid": True,
             "components": {"per_frame": [k * 0.1] * 16, "first_frame": 1}, "diagnostics": {"status": "ok"}}
            for k in range(n) for metric in ("psnr", "ssim")]
    run_dir.mkdir()
    (run_dir / "manifest.json").write_text(json.dumps({"run_id": run_dir.name, "status": "completed"}))
    _write(run_dir / "metrics.jsonl", rows)
    _write(run_dir / "samples.jsonl", [{"sample_id": f"s{k:07d}", "success": True} for k in range(n)])
    _write(run_dir / "steps.jsonl", [{"sample_id": f"s{k:07d}", "step": 0, "latency_seconds": 0.1} for k in range(n)])
    del rows
    tracemalloc.start()
    try:
        run = load_run(run_dir)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(run.metrics["psnr"]) == n
    return kept, peak


def test_what_the_report_keeps_of_a_run_grows_by_bytes_per_sample_not_by_rows(tmp_path):
    small, small_peak = _kept_bytes(tmp_path / "small", 2_000)
    large, large_peak = _kept_bytes(tmp_path / "large", 12_000)
    per_sample = (large - small) / 10_000  # two metrics with 16-frame curves, a step row
    assert per_sample < 150, per_sample  # a parsed row alone is ~2 KB
    assert (large_peak - small_peak) / 10_000 < 400


def test_every_reading_of_a_file_sees_the_rows_of_the_first_even_while_a_run_appends(tmp_path):
    from wfeval.report.html.load import FileRows

    path = tmp_path / "metrics.jsonl"
    path.write_text('{"n": 1}\n\n[1]\n{"n": 2}\n{"n": 3')  # the last row is being written
    rows = FileRows(path)
    assert list(rows) == [{"n": 1}, {"n": 2}]
    with path.open("a") as handle:
        handle.write('}\n{"n": 4}\n')  # the run goes on between two readings
    assert list(rows) == [{"n": 1}, {"n": 2}]
    assert list(FileRows(path)) == [{"n": n} for n in (1, 2, 3, 4)]
