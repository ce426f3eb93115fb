"""perf/probe_widths.py at small size and docs/latent-models.md's "Probes at real widths" figures where they
are deterministic: the fast penalty search chooses what refitting every candidate chooses (the page's
"same penalties: yes"), the path's weights agree with the direct solve to round-off (the page's "weights
apart"), and the whole run's ``probe_r2`` at widths 64 and 1024 is the page's to every printed digit (the seconds and
ratios are this machine's and are not checked)."""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest

from tests.conftest import ROOT, compose

PAGE = (ROOT / "docs" / "latent-models.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def widths():
    spec = importlib.util.spec_from_file_location("probe_widths", ROOT / "perf" / "probe_widths.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page_rows(first_header: str) -> dict[str, list[str]]:
    found = re.search(rf"^\| {re.escape(first_header)} \|.*?\n\n", PAGE, re.M | re.S)
    assert found, f"docs/latent-models.md no longer holds the table starting '| {first_header} |'"
    lines = found.group(0).strip().splitlines()[2:]
    return {line.split(" | ")[0].strip("| "): [c.strip(" |") for c in line.split(" | ")[1:]] for line in lines}


def _page_header(first_header: str) -> list[str]:
    found = re.search(rf"^\| {re.escape(first_header)} \|.*$", PAGE, re.M)
    assert found, f"docs/latent-models.md no longer holds the table starting '| {first_header} |'"
    return [c.strip() for c in found.group(0).strip("| ").split(" | ")]


def test_the_fast_search_chooses_the_penalties_of_refitting_every_candidate_and_the_path_fits_the_direct_weights(
        widths):
    rng = np.random.default_rng(0)
    narrow = widths.compare(64, True, rng, episodes=8)
    assert narrow["same"] == "yes" and narrow["gap"] < 1e-12
    wide = widths.compare(768, False, rng, episodes=8)  # more dimensions than frames: the dual decomposition
    assert wide["gap"] < 1e-8
    page = _page_rows("width | penalty search before")
    assert page["64"][3] == "yes" and all(float(page[w][6]) < 1e-8 for w in ("64", "256", "1024", "4096"))


def test_the_encode_timing_compares_the_whole_product_with_differences_and_one_call_with_calls_per_episode(widths):
    r = widths.encode_cost(64, episodes=4, frames=5)
    assert r["same"] and r["frames"] == 20 and r["calls"] == 4 and r["one_call"] >= 0 and r["per_episode"] >= 0
    assert r["apart"] < 1e-12 and 0 < r["distinct"] <= 20 and r["whole"] >= 0 and r["differences"] >= 0


@pytest.mark.parametrize("width", ["64", "1024"])  # 4096 (26 s) is left to the script
def test_the_whole_runs_probe_r2_is_the_one_on_the_page(tmp_path, width):
    from wfeval.pipeline.runner import run_from_config

    page = _page_rows("width | before: wall")
    column = _page_header("width | before: wall").index("probe_r2") - 1  # the cells after the width
    # the script's run: `task=probing model=random_projection model.dim=W` at gridworld's default size
    summary = run_from_config(compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
                                       "task=probing", "model=random_projection", f"model.dim={width}"]),
                              output_dir=tmp_path / "run")
    value = summary.results["gridworld.probe_r2"].to_dict()["raw_stats"]["mean"]
    assert value == pytest.approx(float(page[width][column].replace("−", "-")), abs=1e-9)
