"""The report of a real 3-model sweep, opened in headless Chromium (Debian's package).

CI (``CI=true``) must run these: there a missing browser fails the test (``.ci/run`` installs
it). Elsewhere they are skipped when no Chromium is found.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import cli_env, run_python
from tests.report.test_html_report import elements, picture, webp_frames

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# A collector that runs before the page's own script: uncaught errors, failed loads and console
# errors land in an attribute of <html>, which --dump-dom then shows. After load it clicks the
# leaderboard's "model" header, so the dump also shows whether the inline sort script ran.
COLLECTOR = """<script>
(function () {
  var errors = [];
  function note(kind, text) { errors.push(kind + ": " + text);
    document.documentElement.setAttribute("data-errors", JSON.stringify(errors)); }
  window.addEventListener("error", function (e) {
    note("error", e.message || ((e.target && (e.target.src || e.target.href)) || "resource failed to load"));
  }, true);
  window.addEventListener("unhandledrejection", function (e) { note("rejection", String(e.reason)); });
  ["error", "warn"].forEach(function (level) {
    var original = console[level];
    console[level] = function () { note(level, Array.prototype.join.call(arguments, " ")); original.apply(console, arguments); };
  });
  window.addEventListener("load", function () {
    document.documentElement.setAttribute("data-errors", JSON.stringify(errors));
    var header = document.querySelectorAll("#leaderboard-table thead th")[1];
    header.click();
    var order = Array.prototype.map.call(document.querySelectorAll("#leaderboard-table tbody td.model"),
                                         function (td) { return td.textContent; });
    document.documentElement.setAttribute("data-sorted-by-model", JSON.stringify(order));
  });
})();
</script>"""


def _chromium() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("CI must run the browser test: no chromium found (.ci/run installs Debian's chromium)")
    pytest.skip("no chromium on this machine (apt-get install chromium); CI installs it and runs this test")


def _browse(page: Path, *extra: str) -> subprocess.CompletedProcess:
    # no network at all: every host resolves to nothing, so a page that fetched anything would log it
    args = [_chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--no-first-run", "--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND",
            f"--user-data-dir={page.parent / 'chromium-profile'}", "--enable-logging=stderr", "--v=0",
            *extra, page.as_uri()]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def rendered(sweep_report, tmp_path_factory):
    """The DOM Chromium rendered from the report (with the collector injected), and its stderr."""
    where = tmp_path_factory.mktemp("browser")
    page = where / "report.html"
    page.write_text(sweep_report.html.read_text().replace("<head>", "<head>" + COLLECTOR, 1))
    proc = _browse(page, "--virtual-time-budget=5000", "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr


def test_report_renders_in_chromium_without_console_errors(rendered):
    dom, log = rendered
    errors = re.search(r'<html[^>]*data-errors="([^"]*)"', dom)
    assert errors is not None, "the collector did not run"
    assert json.loads(errors.group(1).replace("&quot;", '"')) == []
    assert not [line for line in log.splitlines() if "CONSOLE" in line or "Uncaught" in line], log[-2000:]


def test_rendered_page_shows_leaderboard_rows_a_chart_per_metric_and_moving_pictures(rendered, sweep_report):
    dom, _ = rendered
    sorted_by_model = re.search(r'data-sorted-by-model="([^"]*)"', dom).group(1).replace("&quot;", '"')
    assert json.loads(sorted_by_model) == ["oracle", "random_actions", "static"]  # the inline script sorted it
    assert len(re.findall(r'<tr class="board-row">', dom)) == 3
    measurements = list(json.loads((sweep_report.job("static") / "results.json").read_text())["results"])
    charts = elements(dom, "figure", "metric-chart")
    assert [c["data-measurement"] for c in charts] == measurements
    chart_images = [i for i in elements(dom, "img") if (i.get("alt") or "").endswith(" per model")]
    assert len(chart_images) == len(measurements)
    assert all(i["src"].startswith("data:image/svg+xml;base64,") for i in chart_images)
    strips = elements(dom, "div", "strip-anim")
    pictured = [m for m in measurements if m.split(".")[1] not in ("generated_rate", "artifact_count")]
    assert len(strips) >= len(pictured)
    for strip in strips:  # animated: every frame of the video
        assert len(webp_frames(picture(dom, strip["data-picture"]))) == 16


# At 1,400 px: does the page scroll sideways (or does anything stick out that no box clips)? Then
# the viewer: step a frame, play, pick another sample; the per-sample filter; a strip tab.
PROBE = """<script>
window.addEventListener("load", function () { setTimeout(function () {
  var d = document.documentElement, out = {scroll: d.scrollWidth, client: d.clientWidth, outside: []};
  function clipped(e) { for (var p = e.parentElement; p; p = p.parentElement) {
    if (getComputedStyle(p).overflowX !== "visible") return true; } return false; }
  document.querySelectorAll("body *").forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.width && r.right > d.clientWidth + 0.5 && !clipped(e) && out.outside.length < 10)
      out.outside.push(e.tagName + "." + e.className + " right=" + Math.round(r.right));
  });
  var viewer = document.querySelector(".viewer");
  function visibleSprites() { return Array.prototype.filter.call(viewer.querySelectorAll("img.sprite"),
    function (i) { return !i.closest(".v-sample-panels").hidden; }).map(function (i) { return i.style.transform; }); }
  out.before = visibleSprites();
  viewer.querySelector(".v-next").click(); viewer.querySelector(".v-next").click();
  out.after = visibleSprites();
  out.label = viewer.querySelector(".v-label").textContent;
  var select = viewer.querySelector(".v-sample"); select.value = "2"; select.dispatchEvent(new Event("change"));
  out.shown = Array.prototype.filter.call(viewer.querySelectorAll(".v-sample-panels"), function (p) { return !p.hidden; })
    .map(function (p) { return p.getAttribute("data-sample"); });
  out.after_sample = visibleSprites();
  var bar = document.querySelector(".filters"), table = document.getElementById(bar.getAttribute("data-table"));
  var model = bar.querySelector(".f-model"); model.value = model.options[2].value; model.dispatchEvent(new Event("change"));
  var id = bar.querySelector(".f-id"); id.value = "00003"; id.dispatchEvent(new Event("input"));
  out.filtered = Array.prototype.filter.call(table.tBodies[0].rows, function (r) { return !r.hidden; })
    .map(function (r) { return [r.getAttribute("data-id"), r.getAttribute("data-model")]; });
  out.model = model.value;
  var tabs = document.querySelectorAll(".tab"); tabs[1].click();
  out.tab = Array.prototype.filter.call(document.querySelectorAll(".metric-strips"), function (m) {
    return getComputedStyle(m).display !== "none"; }).map(function (m) { return m.getAttribute("data-measurement"); });
  d.setAttribute("data-probe", JSON.stringify(out));
}, 50); });
</script>"""


def _probe(html: Path, where: Path) -> dict:
    page = where / "probe.html"
    page.write_text(html.read_text().replace("<head>", "<head>" + PROBE, 1))
    proc = _browse(page, "--window-size=1400,900", "--virtual-time-budget=5000", "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = re.search(r'data-probe="([^"]*)"', proc.stdout)
    assert found is not None, "the probe did not run"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def test_at_1400_px_nothing_scrolls_sideways_and_the_viewer_and_filters_work(sweep_report, tmp_path):
    probe = _probe(sweep_report.html, tmp_path)
    assert probe["scroll"] <= probe["client"] and probe["outside"] == [], probe
    assert probe["before"] == ["translateX(0%)"] * 4  # reference + 3 models, frame 1
    assert probe["after"] == [f"translateX({-100 * 2 / 16}%)"] * 4 and probe["label"] == "frame 3 / 16"
    assert len(probe["shown"]) == 1 and probe["after_sample"] == ["translateX(0%)"] * 4  # another sample, frame 1
    assert probe["filtered"] == [["gridworld-test-00003", probe["model"]]]  # by id and model
    assert probe["tab"] == ["gridworld.ssim"]  # one metric's strips at a time


def test_a_two_benchmark_report_fits_1400_px_too(two_benchmarks, tmp_path):
    html = tmp_path / "report.html"
    made = run_python(["-m", "wfeval.report", str(two_benchmarks), "--out", str(html)],
                      cwd=tmp_path, env=cli_env(), timeout=300)
    assert made.returncode == 0, made.stderr
    probe = _probe(html, tmp_path)
    assert probe["scroll"] <= probe["client"] and probe["outside"] == [], probe


def test_screenshot_of_the_report(sweep_report, tmp_path):
    from PIL import Image

    shot = tmp_path / "report.png"
    proc = _browse(sweep_report.html, "--window-size=1400,1600", f"--screenshot={shot}")
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
    image = Image.open(shot)
    assert image.size == (1400, 1600)
    colours = image.convert("RGB").resize((64, 80)).getcolors(64 * 80)
    assert colours is not None and len(colours) > 50  # a drawn page, not a blank one
    keep = os.environ.get("WFEVAL_SCREENSHOT_DIR")
    if keep:
        shutil.copy(shot, Path(keep) / "report.png")


URL_ATTRIBUTE = re.compile(r'\b(?:src|href|srcset|action|poster|data)\s*=\s*["\']?([^"\'\s>]+)', re.I)
CSS_URL = re.compile(r'url\(\s*["\']?([^"\')]+)', re.I)


def _references(text: str) -> list[str]:
    return URL_ATTRIBUTE.findall(text) + CSS_URL.findall(text)


def test_report_has_no_external_url(sweep_report, rendered):
    dom, _ = rendered
    for text in (sweep_report.html.read_text(), dom):
        refs = _references(text)
        assert refs, "no reference found at all: the pattern is broken"
        external = [r for r in refs if not (r.startswith("data:") or r.startswith("#"))]
        assert external == []
        assert not re.search(r"<(?:script|link|iframe)[^>]+(?:src|href)=", text)  # scripts and styles inline
        assert not re.search(r"@import|https?://", text.split("<body", 1)[1])
        # inside the inlined SVG charts, every reference is to the chart itself
        for uri in re.findall(r'src="(data:image/svg\+xml;base64,[^"]+)"', text):
            svg = base64.b64decode(uri.split(",", 1)[1]).decode()
            inner = [r for r in re.findall(r'(?:xlink:)?href="([^"]*)"', svg) + CSS_URL.findall(svg)]
            assert all(r.startswith("#") for r in inner), inner
