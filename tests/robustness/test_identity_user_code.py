"""Model identity covers the code it runs: editing a module the model class imports (directly or
through another of the user's modules) gives a new identity, so the generation cache does not
serve the old generations; an installed package is identified by its version."""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import pytest

from tests.conftest import TEST_TRUST, cli_env, compose, only_run_dir, run_cli
from wfeval.models.identity import code_identity
from wfeval.pipeline.runner import run_from_config

PACKAGE = "userpkg_identity"

MODEL = '''
import numpy as np
from wfeval.models.base import actions_of, initial_frame
from .helpers import brighten


class Model:
    name = "user_model"
    version = "1.0"  # never bumped by the user: the identity must not rely on it

    def generate(self, requests):
        out = []
        for request in requests:
            frame = initial_frame(request)
            video = np.repeat(frame[None], len(actions_of(request)) + 1, axis=0)
            out.append({"generated_video": brighten(video)})
        return out
'''


@pytest.fixture
def user_package(tmp_path, monkeypatch):
    root = tmp_path / "code"
    pkg = root / PACKAGE
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text(MODEL)
    (pkg / "helpers.py").write_text("from .levels import LEVEL\n\n\ndef brighten(video):\n"
                                    "    return (video // 2 + LEVEL).astype('uint8')\n")
    (pkg / "levels.py").write_text("LEVEL = 10\n")
    (pkg / "unrelated.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("WFEVAL_TRUST", f"{TEST_TRUST},{PACKAGE}.")
    yield pkg
    for name in [m for m in sys.modules if m.startswith(PACKAGE)]:
        del sys.modules[name]


def _run(tmp_path, name):
    cfg = compose(["model=python", f"model.object._target_={PACKAGE}.model.Model", "benchmark.num_samples=3",
                   f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "metric=[generated_rate]"])
    return run_from_config(cfg, output_dir=tmp_path / name)


def _edit(path, old, new):
    path.write_text(path.read_text().replace(old, new))


def test_editing_a_helper_module_the_model_imports_regenerates(tmp_path, user_package):
    first = _run(tmp_path, "first")
    assert (first.generated, first.cached) == (3, 0)
    again = _run(tmp_path, "again")
    assert (again.generated, again.cached) == (0, 3)  # unchanged code: served from the cache
    _edit(user_package / "helpers.py", "video // 2", "video // 3")
    edited = _run(tmp_path, "edited")
    assert (edited.generated, edited.cached) == (3, 0)
    keys = [json.loads((tmp_path / n / "manifest.json").read_text())["model"]["key"] for n in ("first", "edited")]
    assert keys[0] != keys[1]


def test_editing_a_module_imported_two_levels_down_regenerates(tmp_path, user_package):
    _run(tmp_path, "first")
    _edit(user_package / "levels.py", "LEVEL = 10", "LEVEL = 11")
    edited = _run(tmp_path, "edited")
    assert (edited.generated, edited.cached) == (3, 0)


def test_editing_a_file_the_model_does_not_import_keeps_the_cache(tmp_path, user_package):
    _run(tmp_path, "first")
    _edit(user_package / "unrelated.py", "X = 1", "X = 2")
    again = _run(tmp_path, "again")
    assert (again.generated, again.cached) == (0, 3)


def test_the_identity_lists_user_files_by_hash_and_installed_packages_by_version(tmp_path, user_package):
    import importlib

    cls = importlib.import_module(f"{PACKAGE}.model").Model
    identity = code_identity(cls)
    assert set(identity["files"]) == {f"{PACKAGE}.model", f"{PACKAGE}.helpers", f"{PACKAGE}.levels", PACKAGE}
    assert f"numpy=={np.__version__}" in identity["distributions"]
    assert any(d.startswith("wfeval==") for d in identity["distributions"])
    assert not any("unrelated" in f for f in identity["files"])


def test_the_cli_regenerates_after_an_edit_of_an_imported_module(tmp_path, user_package):
    """As a user runs it: a new process each time, the package on PYTHONPATH."""
    env = cli_env(WFEVAL_TRUST="")  # trusted on the command line: the override names the target
    env["PYTHONPATH"] = f"{user_package.parent}:{env['PYTHONPATH']}"
    args = ["model=python", f"model.object._target_={PACKAGE}.model.Model", "benchmark.num_samples=2",
            f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "metric=[generated_rate]"]

    def counts(cwd):
        cwd.mkdir()
        proc = run_cli(args, cwd=cwd, env=env)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        events = [json.loads(line) for line in (only_run_dir(cwd / "outputs" / "runs") / "events.jsonl").open()]
        done = next(e for e in events if e.get("event") == "phase_finished" and e.get("phase") == "generate")
        return done["generated"], done["cached"]

    assert counts(tmp_path / "a") == (2, 0)
    assert counts(tmp_path / "b") == (0, 2)
    _edit(user_package / "helpers.py", "video // 2", "video // 4")
    assert counts(tmp_path / "c") == (2, 0)


def test_the_identity_of_the_default_model_costs_little():
    """The default run (oracle on gridworld): wfeval's own class, identified by wfeval's version."""
    from wfeval.benchmarks.gridworld.baselines import OracleModel

    started = time.perf_counter()
    for _ in range(20):
        identity = code_identity(OracleModel)
    per_call = (time.perf_counter() - started) / 20
    assert identity["files"] == {} and identity["distributions"][0].startswith("wfeval==")
    assert per_call < 0.05, per_call


def test_fingerprint_source_false_opts_out_of_the_code_identity(tmp_path, user_package):
    def run(name):
        cfg = compose(["model=python", f"model.object._target_={PACKAGE}.model.Model", "model.fingerprint_source=false",
                       "benchmark.num_samples=2", f"run.store_dir={tmp_path / 'store'}", "run.progress=off",
                       "metric=[generated_rate]"])
        return run_from_config(cfg, output_dir=tmp_path / name)

    run("first")
    _edit(user_package / "helpers.py", "video // 2", "video // 3")
    again = run("again")
    assert (again.generated, again.cached) == (0, 2)  # the user said: my edits do not change the model


def test_a_user_model_class_used_directly_as_the_model_target_is_identified_by_its_code(tmp_path):
    cfg = compose(["model=flaky_oracle", "model.fail_on=[]", "benchmark.num_samples=1", "metric=[generated_rate]",
                   f"run.store_dir={tmp_path / 'store'}", "run.progress=off"], searchpath=True)
    run_from_config(cfg, output_dir=tmp_path / "run")
    code = json.loads((tmp_path / "run" / "manifest.json").read_text())["model"]["fingerprint"]["code"]
    assert code["class"] == "wfeval_test_plugins.FlakyOracle" and "wfeval_test_plugins" in code["files"]
