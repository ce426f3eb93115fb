"""The HTML report: what it shows, read back from the page and checked against the run's own files."""

from __future__ import annotations

import base64
import html as htmllib
import io
import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

import markupsafe
import numpy as np
import pytest

from tests.conftest import cli_env, compose, read_jsonl, run_python
from wfeval.pipeline.runner import run_from_config


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def elements(page: str, tag: str, cls: str | None = None) -> list[dict]:
    parser = _Elements()
    parser.feed(page)
    return [a for t, a in parser.found if t == tag and (cls is None or cls in (a.get("class") or "").split())]


def webp_frames(uri: str, frame_ms: int = 125) -> list[np.ndarray]:
    """The video frames of an animated WebP; the encoder merges equal consecutive frames into one
    longer frame, which is expanded back by its duration (gridworld plays at 8 fps: 125 ms)."""
    from PIL import Image, ImageSequence

    assert uri.startswith("data:image/webp;base64,")
    image = Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
    frames = []
    for frame in ImageSequence.Iterator(image):
        frames += [np.asarray(frame.convert("RGB"))] * round(frame.info["duration"] / frame_ms)
    return frames


def headline(agg: dict) -> float:
    return agg["diagnostics"].get("value", agg["normalized_stats"].get("mean"))


def _values(job, metric: str) -> dict[str, float]:
    return {r["sample_id"]: r["normalized_value"] for r in read_jsonl(job / "metrics.jsonl")
            if r["metric_id"] == metric and r["diagnostics"]["status"] in ("ok", "fail")}


def _group(page: str, measurement: str, model: str) -> str:
    block = re.split(rf'<div class="metric-strips[^"]*" id="strips-{re.escape(measurement)}" '
                     rf'data-measurement="{re.escape(measurement)}">', page, maxsplit=1)[1]
    block = block.split('<div class="metric-strips', 1)[0]
    return block.split(f"<h5>{model} ", 1)[1].split('<div class="strip-group">', 1)[0]


def picture(page: str, name: str) -> str:
    """The data URI of a moving picture the page defines once as a CSS class (``pic-N``)."""
    return re.search(rf'\.{re.escape(name)}\{{background-image:url\("([^"]+)"\)\}}', page).group(1)


def test_every_run_of_the_sweep_wrote_its_own_report(sweep_report):
    for model in ("oracle", "static", "random_actions"):
        page = (sweep_report.job(model) / "report.html").read_text()
        assert f"<title>{model} on gridworld</title>" in page
        events = [e["event"] for e in read_jsonl(sweep_report.job(model) / "events.jsonl")]
        assert events[-2:] == ["run_finished", "report_written"]


def test_leaderboard_ranks_models_by_the_primary_metric_with_intervals_coverage_and_reasons(sweep_report):
    page = sweep_report.html.read_text()
    docs = {m: json.loads((sweep_report.job(m) / "results.json").read_text())
            for m in ("oracle", "static", "random_actions")}
    # an independent ranking: mean PSNR of the per-sample rows, higher first
    means = {m: np.mean(list(_values(sweep_report.job(m), "psnr").values())) for m in docs}
    expected = sorted(means, key=lambda m: -means[m])
    board = page.split('<table class="sortable board" id="leaderboard-table">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr class="board-row">(.*?)</tr>', board, re.S)
    assert [re.search(r'<td class="model"[^>]*><span class="swatch"[^>]*></span>(.*?)</td>', r).group(1)
            for r in rows] == expected
    from wfeval.results.evidence import grouped_reasons

    for row, model in zip(rows, expected):
        agg = docs[model]["results"]["gridworld.psnr"]
        assert headline(agg) == pytest.approx(means[model])
        ci = agg["confidence_interval"]
        assert f"{headline(agg):.4g}<span class=\"ci\">[{ci['low']:.4g}, {ci['high']:.4g}]</span>" in row
        assert "<span class=\"cov\">" not in row  # every sample counted: no coverage line
        evidence = docs[model]["evidence"]
        reasons = grouped_reasons(evidence, docs[model]["benchmark"]["n_samples"])
        assert not evidence["eligible"] and len(evidence["reasons"]) == 11 and len(reasons) == 1
        assert 'no (1 reason)</summary>' in row  # grouped: a quick run on a subset, said once
        for reason in reasons:
            assert f"<li>{markupsafe.escape(reason)}</li>" in row


def test_one_chart_per_metric_and_a_horizon_curve_per_model(sweep_report):
    page = sweep_report.html.read_text()
    measurements = list(json.loads((sweep_report.job("oracle") / "results.json").read_text())["results"])
    charts = elements(page, "figure", "metric-chart")
    assert [c["data-measurement"] for c in charts] == measurements
    horizon = {c["data-metric"] for c in elements(page, "figure", "horizon-chart")}
    assert {"psnr", "ssim", "flicker"} <= horizon
    assert "action_following agent_position_error" in horizon  # the same per-frame error curve: one chart
    [psnr] = [i["src"] for i in elements(page, "img") if i.get("alt") == "psnr per frame"]
    svg = base64.b64decode(psnr.split(",", 1)[1]).decode()
    assert all(f">{model}<" in svg for model in ("static", "random_actions"))  # the legend
    assert ">oracle: 100, capped<" in svg  # on the cap: along the edge, the axis scaled to the others
    assert 'stroke-dasharray="6 4"' in svg


def test_strips_show_the_best_median_and_worst_samples_by_value(sweep_report):
    page = sweep_report.html.read_text()
    values = _values(sweep_report.job("static"), "psnr")
    ranked = sorted(values, key=lambda s: (-values[s], s))
    group = _group(page, "gridworld.psnr", "static")
    picks = re.findall(r'<figure class="strip" data-rank="(\w+)" data-sample="([^"]+)">', group)
    assert picks == [("best", ranked[0]), ("median", ranked[len(ranked) // 2]), ("worst", ranked[-1])]
    assert f"psnr = <b>{values[ranked[0]]:.4g}</b>" in group


def test_strip_frames_are_reference_generated_and_difference_side_by_side(sweep_report):
    from wfeval.api import ArtifactRef
    from wfeval.storage.artifacts import read_array

    job = sweep_report.job("static")
    group = _group(sweep_report.html.read_text(), "gridworld.psnr", "static")
    sample = re.search(r'data-rank="best" data-sample="([^"]+)"', group).group(1)
    uri = picture(sweep_report.html.read_text(), re.search(r'data-picture="([^"]+)"', group).group(1))
    [record] = [r for r in read_jsonl(job / "generations.jsonl") if r["request"]["sample_id"] == sample]
    reference = read_array(ArtifactRef.from_dict(record["request"]["references"]["video"]))
    generated = read_array(ArtifactRef.from_dict(record["result"]["artifacts"]["generated_video"]))
    frames = webp_frames(uri)
    assert len(frames) == len(reference) == 16
    width = reference.shape[2]
    assert frames[0].shape == (reference.shape[1], 3 * width + 2 * 2, 3)
    diff = np.clip(np.abs(generated.astype(int) - reference.astype(int)) * 4, 0, 255)
    for t in (0, 7, 15):  # lossy WebP: close to the arrays, not equal
        panels = frames[t][:, :width], frames[t][:, width + 2:2 * width + 2], frames[t][:, 2 * width + 4:]
        for shown, truth in zip(panels, (reference[t], generated[t], diff[t])):
            assert np.abs(shown.astype(int) - truth).mean() < 6
    assert np.abs(frames[15][:, 2 * width + 4:].astype(int)).mean() > 10  # static is wrong by then


def test_a_metric_whose_samples_are_all_equal_gets_one_picture(sweep_report):
    group = _group(sweep_report.html.read_text(), "gridworld.psnr", "oracle")
    assert re.findall(r'data-rank="([^"]+)"', group) == ["all 6 equal"]


def test_provenance_has_the_hashes_versions_and_the_command_line(sweep_report):
    page = sweep_report.html.read_text()
    manifest = json.loads((sweep_report.job("random_actions") / "manifest.json").read_text())
    for text in (manifest["config_hash"], manifest["benchmark"]["dataset_hash"], manifest["versions"]["numpy"],
                 "python -m wfeval -m model=oracle,static,random_actions", "python -m wfeval model=random_actions"):
        assert text in page


def test_provenance_shows_the_fvd_recipe_and_weights_hash(tmp_path, sweep_report):
    from wfeval.report.html import write_report

    run = tmp_path / "with_fvd"
    shutil.copytree(sweep_report.job("static"), run)
    doc = json.loads((run / "results.json").read_text())
    recipe = {"clip_length": 16, "resize": 224, "resize_mode": "bilinear", "covariance": "N"}
    doc["results"]["gridworld.fvd"] = {
        "metric_id": "fvd", "n_total": 6, "n_valid": 6, "n_skipped": 0, "valid": True, "raw_stats": {"fvd": 812.5},
        "normalized_stats": {}, "confidence_interval": {}, "skip_breakdown": {},
        "diagnostics": {"value": 812.5, "recipe": recipe, "recipe_digest": "d1g3st", "n_real": 6, "n_generated": 6,
                        "weights": {"sha256": "ab" * 32, "format": "flax"}, "rank_note": "rank-deficient: N < 400"}}
    (run / "results.json").write_text(json.dumps(doc))
    page = write_report([run], tmp_path / "r.html").read_text()
    provenance = page.split('<section id="provenance">', 1)[1]
    assert "ab" * 32 in provenance and "d1g3st" in provenance and "rank-deficient: N &lt; 400" in provenance
    assert "clip_length=16, resize=224, resize_mode=bilinear, covariance=N" in provenance
    assert "812.5" in page.split('<section id="leaderboard">', 1)[1].split("</section>", 1)[0]
    # no per-sample value for it: no pictures, and the page says so
    assert 'id="strips-gridworld.fvd"' not in page
    assert "No pictures for generated_rate, artifact_count, fvd" in page


def _small_run(tmp_path, *overrides, name="run"):
    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "benchmark.num_samples=5", *overrides])
    run_from_config(cfg, output_dir=tmp_path / name)
    return tmp_path / name


def test_generation_records_of_another_shape_are_left_out_not_a_crash(tmp_path):
    from wfeval.report.html import write_report

    run = _small_run(tmp_path, "metric=[psnr]", "run.report=false")
    lines = (run / "generations.jsonl").read_text().splitlines()
    lines[1], lines[2] = "[1, 2]", json.dumps({"request": [1], "result": {}})  # a run folder is data
    (run / "generations.jsonl").write_text("\n".join(lines) + "\n")
    (run / "samples.jsonl").unlink()  # the page falls back to generations.jsonl for its sample list
    page = write_report([run], tmp_path / "r.html").read_text()
    shown = set(re.findall(r"gridworld-test-0000\d", page))
    assert {"gridworld-test-00000", "gridworld-test-00003", "gridworld-test-00004"} <= shown


def test_failed_and_skipped_samples_are_listed_with_their_reasons(tmp_path):
    run = _small_run(tmp_path, "model=python", "model.object._target_=wfeval_test_models.RecordingModel",
                     "+model.object.missing=[2]", "+model.object.broken=[4]", "metric=[psnr,generated_rate]")
    page = (run / "report.html").read_text()
    section = page.split('<section id="failures">', 1)[1].split("</section>", 1)[0]
    not_scored = [r for r in read_jsonl(run / "metrics.jsonl") if r["diagnostics"]["status"] in ("skip", "error")]
    assert {r["sample_id"] for r in not_scored} == {"gridworld-test-00002", "gridworld-test-00004"}
    for row in not_scored:
        assert htmllib.escape(row["skip_reason"]) in section
    failed = [r for r in read_jsonl(run / "samples.jsonl") if not r["success"]]
    assert len(failed) == 2
    for row in failed:
        assert htmllib.escape(row["metadata"]["generation_error"]) in section


def test_a_missing_store_object_is_shown_as_missing(tmp_path):
    from wfeval.report.html import write_report

    run = _small_run(tmp_path, "metric=[psnr]", "model=static")
    shutil.rmtree(tmp_path / "store" / "objects")
    page = write_report([run], tmp_path / "again.html").read_text()
    assert "missing from the store" in page
    assert 'data-picture="pic-' not in page and not elements(page, "img", "sprite")
    assert len(re.findall(r'<tr class="board-row">', page)) == 1


def test_latency_per_step_is_charted_only_for_step_wise_runs(tmp_path, sweep_report):
    from wfeval.report.html import write_report

    assert 'class="chart latency-chart"' not in sweep_report.html.read_text()  # open loop: one step per sample
    run = tmp_path / "stepwise"
    shutil.copytree(sweep_report.job("static"), run)
    latencies = {0: [0.1, 0.3, 0.2], 1: [0.5, 0.4, 0.6], 2: [0.2, 0.2, 0.9]}
    with (run / "steps.jsonl").open("a") as handle:
        for step, values in latencies.items():
            for i, value in enumerate(values):
                handle.write(json.dumps({"sample_id": f"s{i}", "step": step, "latency_seconds": value,
                                         "cached": False}) + "\n")
    page = write_report([run], tmp_path / "r.html").read_text()
    assert 'class="chart latency-chart"' in page
    every = [v for vs in latencies.values() for v in vs] + [
        r["latency_seconds"] for r in read_jsonl(sweep_report.job("static") / "steps.jsonl") if not r["cached"]]
    assert f"<td>{1000 * np.median(every):.4g}</td>" in page  # milliseconds, as step_latency


def test_a_step_number_beyond_any_integer_column_is_left_out_not_a_crash(tmp_path, sweep_report):
    from wfeval.report.html import write_report

    run = tmp_path / "hostile"
    shutil.copytree(sweep_report.job("static"), run)
    with (run / "steps.jsonl").open("a") as handle:  # a run folder is data: someone else may have written it
        for step, value in ((0, 0.25), (2**63, 9.0), (-(2**70), 9.0), (1, 0.75)):
            handle.write(json.dumps({"sample_id": "s0", "step": step, "latency_seconds": value, "cached": False}) + "\n")
    page = write_report([run], tmp_path / "r.html").read_text()
    every = [0.25, 0.75] + [r["latency_seconds"] for r in read_jsonl(sweep_report.job("static") / "steps.jsonl")
                            if not r["cached"]]
    assert f"<td>{1000 * np.median(every):.4g}</td>" in page  # the two out-of-range rows are not counted


def test_latency_of_an_autoregressive_run_counts_its_step_rows(tmp_path):
    run = _small_run(tmp_path, "protocol=autoregressive", "metric=[psnr]")
    page = (run / "report.html").read_text()
    steps = [r for r in read_jsonl(run / "steps.jsonl") if r.get("phase") == "step" and not r["cached"]]
    assert {r["step"] for r in steps} == set(range(16))  # start + 15 actions, one row per call
    section = page.split('<section id="latency">', 1)[1].split("</section>", 1)[0]
    assert 'class="chart latency-chart"' in section
    row = re.search(r"<tr><td>oracle</td><td>(\d+)</td><td>(\d+)</td><td>([^<]+)</td>", section)
    assert row.groups() == ("16", str(len(steps)), f"{1000 * np.median([r['latency_seconds'] for r in steps]):.4g}")


def test_a_failing_report_is_an_event_and_a_warning_never_a_failed_run(tmp_path, monkeypatch):
    import wfeval.report.html as report_html

    def broken(*args, **kwargs):
        raise RuntimeError("no disk for the report")

    monkeypatch.setattr(report_html, "render", broken)
    with pytest.warns(RuntimeWarning, match="report.html not written: RuntimeError: no disk for the report"):
        run = _small_run(tmp_path, "metric=[generated_rate]")
    assert json.loads((run / "manifest.json").read_text())["status"] == "completed"
    assert (run / "results.json").is_file() and not (run / "report.html").exists()
    [event] = [e for e in read_jsonl(run / "events.jsonl") if e["event"] == "report_failed"]
    assert event["error"] == "RuntimeError: no disk for the report"

    off = _small_run(tmp_path, "metric=[generated_rate]", "run.report=false", name="off")
    assert not (off / "report.html").exists()
    assert not [e for e in read_jsonl(off / "events.jsonl") if e["event"].startswith("report")]


def test_the_report_reads_run_folders_without_building_any_target(tmp_path, sweep_report, monkeypatch):
    import hydra.utils

    from wfeval.report.html import write_report

    def refuse(*args, **kwargs):
        raise AssertionError("a run folder is data: nothing may be instantiated from it")

    monkeypatch.setattr(hydra.utils, "instantiate", refuse)
    page = write_report([sweep_report.sweep], tmp_path / "r.html").read_text()
    assert "wfeval.benchmarks.gridworld.baselines.StaticModel" in page


@pytest.mark.subprocess  # an import-laziness probe
def test_report_cli_errors_and_help_import_no_report_library(tmp_path):
    proc = run_python(["-m", "wfeval.report", str(tmp_path / "nothing")], cwd=tmp_path, env=cli_env(), timeout=120)
    assert proc.returncode == 2 and "no such run folder" in proc.stderr
    probe = ("import atexit, sys, runpy\n"
             "atexit.register(lambda: print('LOADED', sorted(m for m in ('matplotlib', 'jinja2', 'PIL', 'tqdm')"
             " if m in sys.modules)))\n"
             "sys.argv = [sys.argv[1]] + sys.argv[2:]\n"
             "runpy.run_module(sys.argv[0], run_name='__main__')\n")
    for args in (["wfeval", "--help"], ["wfeval", "--cfg", "job"], ["wfeval.report", "--help"]):
        proc = subprocess.run([sys.executable, "-c", probe, *args], cwd=tmp_path, env=cli_env(),
                              capture_output=True, text=True, timeout=120)
        assert "LOADED []" in proc.stdout, (args, proc.stdout[-300:], proc.stderr[-300:])


@pytest.mark.parametrize("argv0, program", [
    ("/src/wfeval/__main__.py", "python -m wfeval"),  # python -m wfeval puts the file in argv[0]
    ("/venv/lib/python3.11/site-packages/wfeval/resume.py", "python -m wfeval.resume"),
    ("/home/me/wfeval/wfeval/__main__.py", "python -m wfeval"),  # a checkout named like the package
    ("/venv/bin/wfeval", "/venv/bin/wfeval"),  # the console script
])
def test_the_reproduce_command_names_the_module_that_ran(argv0, program):
    from wfeval.report.html.provenance import _program

    assert _program(argv0) == program


def test_failures_are_grouped_by_reason_and_the_list_stays_bounded(tmp_path):
    from wfeval.report.html.load import RunData
    from wfeval.report.html.samples import MAX_GROUPS, MAX_IDS, failures

    rows = {f"s{i:04d}": {"sample_id": f"s{i:04d}", "metric_id": "psnr", "valid": False,
                          "skip_reason": "no reference video" if i < 30 else f"error: ValueError: bad s{i:04d}",
                          "diagnostics": {"status": "skip" if i < 30 else "error"}} for i in range(250)}
    samples = [{"sample_id": "s0000", "success": False, "stop_reason": "timeout",
                "metadata": {"generation_error": "took longer than 5 s"}}]
    run = RunData(path=tmp_path, manifest={"status": "completed"}, results=None, samples=samples,
                  metric_rows={"psnr": rows})
    out = failures(run)
    first, second = out["reasons"][:2]
    assert (first["where"], first["status"], first["reason"], first["count"]) == (
        "generation", "timeout", "took longer than 5 s", 1)  # generation first
    assert (second["reason"], second["count"], second["more"]) == ("no reference video", 30, 30 - MAX_IDS)
    assert second["ids"] == [f"s{i:04d}" for i in range(MAX_IDS)]
    assert len(out["reasons"]) == MAX_GROUPS and out["total"] == 251
    assert (out["hidden_groups"], out["hidden_items"]) == (220 + 2 - MAX_GROUPS, 220 + 2 - MAX_GROUPS)


def test_a_report_that_cannot_even_log_its_failure_still_returns_quietly(tmp_path):
    from wfeval.report.html import write_run_report

    def full_disk(kind, **fields):
        raise OSError(28, "No space left on device")

    with pytest.warns(RuntimeWarning) as caught:
        assert write_run_report(tmp_path / "not_a_run", event=full_disk) is None
    messages = [str(w.message) for w in caught]
    assert any("events.jsonl: report_failed not recorded" in m for m in messages)
    assert any(m.startswith("report.html not written: FileNotFoundError") for m in messages)


def test_a_two_benchmark_sweep_gets_one_row_per_model_and_a_section_per_benchmark(two_benchmarks, tmp_path):
    """The sweep that used to end in jinja2's UndefinedError: the page agrees with compare's CSV."""
    import csv

    html = tmp_path / "report.html"
    made = run_python(["-m", "wfeval.report", str(two_benchmarks), "--out", str(html)],
                      cwd=tmp_path, env=cli_env(), timeout=300)
    assert made.returncode == 0, made.stderr
    compared = run_python(["-m", "wfeval.compare", str(two_benchmarks), "--out", str(tmp_path / "board")],
                          cwd=tmp_path, env=cli_env(), timeout=300)
    assert compared.returncode == 0, compared.stderr
    with open(tmp_path / "board" / "leaderboard.csv", newline="") as handle:
        expected = list(csv.DictReader(handle))
    page = html.read_text()
    board = page.split('<table class="sortable board" id="leaderboard-table">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr class="board-row">(.*?)</tr>', board, re.S)
    labels = [re.search(r'<span class="swatch"[^>]*></span>(.*?)</td>', r).group(1) for r in rows]
    assert labels == [r["model"] for r in expected] and len(labels) == 3  # one row per model, same order
    for row, line in zip(rows, expected):
        cells = re.findall(r'<td class="cell[^"]*" data-sort="([^"]*)"', row)
        assert [float(c) for c in cells] == [float(line["gridworld.psnr"]), float(line["atari_pong.psnr"])]
        assert "missing" not in row
    sections = elements(page, "section", "bench")
    assert [s["data-benchmark"] for s in sections] == ["gridworld", "atari_pong"]
    for bench in ("gridworld", "atari_pong"):
        anchor = f"bench-{bench.replace('_', '-')}"
        block = page.split(f'<section class="bench" id="{anchor}" data-benchmark="{bench}">', 1)[1]
        block = block.split('<section class="bench"', 1)[0]
        charts = [c["data-measurement"] for c in elements(block, "figure", "metric-chart")]
        assert charts and all(c.startswith(f"{bench}.") for c in charts)
        assert f'id="{anchor}-viewer"' in block
    comparisons = page.split('<section id="comparisons">', 1)[1].split("</section>", 1)[0]
    assert comparisons.count('<div class="comparison"') == 2


def test_the_viewer_carries_the_same_samples_for_every_model(sweep_report):
    page = sweep_report.html.read_text()
    viewer = page.split('<section id="viewer"', 1)[1].split("</section>", 1)[0]
    samples = re.findall(r'<div class="v-sample-panels" data-sample="([^"]+)" data-frames="(\d+)"', viewer)
    assert len(samples) == 6 and {frames for _, frames in samples} == {"16"}  # all 6 samples, 16 frames each
    block = viewer.split(f'data-sample="{samples[0][0]}"', 1)[1].split('<div class="v-sample-panels"', 1)[0]
    titles = re.findall(r'<figcaption><span class="swatch"[^>]*></span>([^<]+)</figcaption>', block)
    assert titles == ["reference", "oracle", "random_actions", "static"]  # the leaderboard's order
    sprites = [i["src"] for i in elements(block, "img", "sprite")]
    assert len(sprites) == 4
    from PIL import Image

    for uri in sprites:
        image = Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
        assert image.size == (64 * 16, 64)  # 16 frames of 64 px side by side: the page steps through them
    # the reference sprite is the reference video's frames, the oracle's equal to it
    from wfeval.api import ArtifactRef
    from wfeval.storage.artifacts import read_array

    [record] = [r for r in read_jsonl(sweep_report.job("oracle") / "generations.jsonl")
                if r["request"]["sample_id"] == samples[0][0]]
    reference = read_array(ArtifactRef.from_dict(record["request"]["references"]["video"]))
    shown = np.asarray(Image.open(io.BytesIO(base64.b64decode(sprites[0].split(",", 1)[1]))).convert("RGB"))
    assert np.abs(shown[:, 64 * 5:64 * 6].astype(int) - reference[5]).mean() < 6  # frame 5, lossy WebP


def test_no_pictures_for_measurements_pictures_cannot_explain(sweep_report):
    page = sweep_report.html.read_text()
    assert 'id="strips-gridworld.generated_rate"' not in page and 'id="strips-gridworld.artifact_count"' not in page
    assert 'id="strips-gridworld.psnr"' in page
    assert "No pictures for generated_rate, artifact_count" in page


def test_charts_stay_inside_each_metrics_declared_range(sweep_report):
    page = sweep_report.html.read_text()
    for measurement, (low, high) in (("gridworld.ssim", (-1, 1)), ("gridworld.generated_rate", (0, 1))):
        [uri] = [i["src"] for i in elements(page, "img") if i.get("alt") == f"{measurement} per model"]
        svg = base64.b64decode(uri.split(",", 1)[1]).decode()
        ticks = [float(t) for t in re.findall(r'text-anchor="middle" fill="#333">(-?[\d.]+)</text>', svg)]
        assert ticks and low <= min(ticks) and max(ticks) <= high, (measurement, ticks)
    [psnr] = [i["src"] for i in elements(page, "img") if i.get("alt") == "gridworld.psnr per model"]
    svg = base64.b64decode(psnr.split(",", 1)[1]).decode()
    ticks = [float(t) for t in re.findall(r'text-anchor="middle" fill="#333">(-?[\d.]+)</text>', svg)]
    assert max(ticks) < 60 and "100 (bound)" in svg  # scaled to the uncapped models; the oracle on the edge


def test_runs_that_failed_before_having_a_benchmark_are_listed_not_made_columns(tmp_path, sweep_report):
    from wfeval.report.html import write_report

    failed = tmp_path / "runs" / "9_broken"
    shutil.copytree(sweep_report.job("static"), failed)
    (failed / "results.json").unlink()
    manifest = {"run_id": "broken", "status": "failed", "error": "ConfigError: task.protocol: no such pair"}
    (failed / "manifest.json").write_text(json.dumps(manifest))
    for job in ("oracle", "static"):
        shutil.copytree(sweep_report.job(job), tmp_path / "runs" / sweep_report.job(job).name)
    page = write_report([tmp_path / "runs"], tmp_path / "r.html").read_text()
    board = page.split('<section id="leaderboard">', 1)[1].split("</section>", 1)[0]
    assert "1 run ended without results" in board and "ConfigError: task.protocol: no such pair" in board
    assert len(elements(page, "section", "bench")) == 1  # no column, no section for an unknown benchmark
    assert "3 runs" in page.split('<p class="sub">', 1)[1].split("</p>", 1)[0]


def test_the_page_template_is_compiled_once_a_process_and_renders_the_page_the_command_wrote(sweep_report,
                                                                                        tmp_path):
    """Every job of an in-process sweep reuses one compiled template: the pages it renders are the one
    ``python -m wfeval.report`` wrote in its own process, but for the minute each was written."""
    from wfeval.report.html import page_template, write_report

    page_template.cache_clear()
    first = write_report([sweep_report.sweep], tmp_path / "first.html").read_text(encoding="utf-8")
    second = write_report([sweep_report.sweep], tmp_path / "second.html").read_text(encoding="utf-8")
    assert (page_template.cache_info().misses, page_template.cache_info().hits) == (1, 1)
    stamp = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")
    written = stamp.sub("<t>", sweep_report.html.read_text(encoding="utf-8"))
    assert stamp.sub("<t>", first) == stamp.sub("<t>", second) == written
    assert len(stamp.findall(first)) >= 1
