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

from tests.report.test_html_report import elements, webp_frames

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
    strips = elements(dom, "img", "strip-anim")
    assert len(strips) >= len(measurements)
    assert all(len(webp_frames(i["src"])) == 16 for i in strips)  # animated: every frame of the video


def test_screenshot_of_the_report(sweep_report, tmp_path):
    from PIL import Image

    shot = tmp_path / "report.png"
    proc = _browse(sweep_report.html, "--window-size=1280,1600", f"--screenshot={shot}")
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
    image = Image.open(shot)
    assert image.size == (1280, 1600)
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
