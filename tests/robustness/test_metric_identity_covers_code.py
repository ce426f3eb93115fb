"""Stale metric rows: the metric-result cache (and a resume's kept rows) key on a metric's identity,
which covers the metric's own code (its module and the user modules it imports, by content) and
every option it was given -- a callable by its qualified name and code, never by its type alone."""

from __future__ import annotations

import functools
import json
import sys

import numpy as np
import pytest

from tests.conftest import TEST_TRUST, compose
from wfeval.metrics.control import ActionFollowing
from wfeval.pipeline.runner import run_from_config
from wfeval.storage.metric_rows import metric_digest, metric_identity

PACKAGE = "userpkg_metric_identity"

METRIC = '''
from wfeval.metrics.base import BaseMetric
from wfeval.metrics.outcomes import scored
from .settings import OFFSET


class OffsetMetric(BaseMetric):
    """Frames of the generated video plus OFFSET: a user metric that asks to be cached."""

    name = "offset"
    cacheable = True
    bounds = (0.0, None)
    required_artifacts = ("generated_video",)

    def compute_sample(self, request, result):
        return scored(request.sample_id, self.name, result.artifacts["generated_video"].shape[0] + OFFSET)
'''

LOCATORS = '''
from wfeval.functional.control import ColorLocator

_FIND = ColorLocator()


def loc_a(video):
    return _FIND(video)


def loc_b(video):
    return [None for _ in video]  # finds nothing: every step counts as wrong
'''


@pytest.fixture
def user_package(tmp_path, monkeypatch):
    pkg = tmp_path / "code" / PACKAGE
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "metric.py").write_text(METRIC)
    (pkg / "settings.py").write_text("OFFSET = 0\n")
    (pkg / "locators.py").write_text(LOCATORS)
    monkeypatch.syspath_prepend(str(pkg.parent))
    monkeypatch.setenv("WFEVAL_TRUST", f"{TEST_TRUST},{PACKAGE}.")
    yield pkg
    for name in [m for m in sys.modules if m.startswith(PACKAGE)]:
        del sys.modules[name]


def _run(tmp_path, name, *overrides):
    cfg = compose(["benchmark.num_samples=2", f"run.store_dir={tmp_path / 'store'}", "run.progress=off",
                   "run.report=false", *overrides])
    run_from_config(cfg, output_dir=tmp_path / name)
    results = json.loads((tmp_path / name / "results.json").read_text())["results"]
    events = [json.loads(line) for line in (tmp_path / name / "events.jsonl").read_text().splitlines()]
    cache = next(e for e in events if e.get("event") == "phase_finished" and e.get("phase") == "score")["result_cache"]
    return results, cache


def _offset_run(tmp_path, name):
    return _run(tmp_path, name, "metric=[generated_rate]", f"+metric.offset._target_={PACKAGE}.metric.OffsetMetric")


def test_editing_a_cacheable_user_metrics_code_recomputes_its_rows(tmp_path, user_package):
    first, _ = _offset_run(tmp_path, "first")
    assert first["gridworld.offset"]["diagnostics"]["value"] == 16.0
    again, cache = _offset_run(tmp_path, "again")
    assert again["gridworld.offset"]["diagnostics"]["value"] == 16.0 and cache["hits"] == 4  # unchanged: cached
    (user_package / "settings.py").write_text("OFFSET = 50\n")
    for name in [m for m in sys.modules if m.startswith(PACKAGE)]:
        del sys.modules[name]
    edited, cache = _offset_run(tmp_path, "edited")
    assert edited["gridworld.offset"]["diagnostics"]["value"] == 66.0  # never the old 16 from the cache
    assert cache["misses"] >= 2


def test_a_callable_option_is_served_only_its_own_rows(tmp_path, user_package):
    first, _ = _run(tmp_path, "a", "metric=[action_following]",
                    f"metric.action_following.locator={PACKAGE}.locators:loc_a")
    second, cache = _run(tmp_path, "b", "metric=[action_following]",
                         f"metric.action_following.locator={PACKAGE}.locators:loc_b")
    assert first["gridworld.action_following"]["diagnostics"]["value"] == 1.0
    assert second["gridworld.action_following"]["diagnostics"]["value"] == 0.0  # not loc_a's rows
    assert cache["hits"] == 0


def test_editing_the_module_of_a_callable_option_changes_the_identity(tmp_path, user_package):
    import importlib

    loc = importlib.import_module(f"{PACKAGE}.locators")
    before = metric_identity(ActionFollowing(locator=loc.loc_a))
    (user_package / "locators.py").write_text(LOCATORS + "\n# tuned\n")
    assert metric_identity(ActionFollowing(locator=loc.loc_a)) != before


def test_two_functions_of_one_type_are_two_identities():
    def loc_a(video):
        return [None] * len(video)

    def loc_b(video):
        return [(0.0, 0.0)] * len(video)

    a, b = metric_identity(ActionFollowing(locator=loc_a)), metric_identity(ActionFollowing(locator=loc_b))
    assert a != b and "loc_a" in json.dumps(a) and "loc_b" in json.dumps(b)


def test_closure_values_partial_arguments_and_lambda_constants_enter_the_identity():
    def make(offset):
        return lambda video: [(offset, 0.0)] * len(video)

    def locate(video, offset=0):
        return [(offset, 0.0)] * len(video)

    assert metric_identity(ActionFollowing(locator=make(1))) != metric_identity(ActionFollowing(locator=make(2)))
    assert metric_identity(ActionFollowing(locator=functools.partial(locate, offset=1))) != \
        metric_identity(ActionFollowing(locator=functools.partial(locate, offset=2)))
    assert metric_identity(ActionFollowing(locator=lambda v: [None] * len(v))) != \
        metric_identity(ActionFollowing(locator=lambda v: [(1.0, 1.0)] * len(v)))


def test_a_callable_objects_state_and_an_arrays_content_enter_the_identity():
    from wfeval.functional.control import ColorLocator

    assert metric_identity(ActionFollowing(locator=ColorLocator(color=(255, 0, 0)))) != \
        metric_identity(ActionFollowing(locator=ColorLocator(color=(0, 255, 0))))

    class Table:
        def __init__(self, weights):
            self.weights = weights

        def __call__(self, video):
            return [None] * len(video)

    assert metric_identity(ActionFollowing(locator=Table(np.zeros(3)))) != \
        metric_identity(ActionFollowing(locator=Table(np.ones(3))))


def test_the_same_options_give_the_same_identity_so_the_cache_still_serves():
    from wfeval.functional.control import ColorLocator

    assert metric_identity(ActionFollowing(locator=ColorLocator())) == metric_identity(ActionFollowing())
    assert metric_digest(ActionFollowing()) == metric_digest(ActionFollowing())


def test_a_resume_keeps_no_row_of_a_metric_whose_code_changed():
    """The manifest records each metric's identity; a resumed run keeps rows only when it matches."""
    from wfeval.pipeline.score import _same_metric

    metric = ActionFollowing()
    recorded = {"version": metric.version, "identity": metric_digest(metric)}
    assert _same_metric(recorded, metric)
    assert not _same_metric({**recorded, "identity": "0" * 64}, metric)
    assert _same_metric({"version": metric.version}, metric)  # a folder of an older wfeval: its version rule
