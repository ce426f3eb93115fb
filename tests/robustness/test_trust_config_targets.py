"""Code only from where the user chose it: a `_target_` (or a code locator) written in a config file
is built only if it is wfeval's own class, an installed wfeval.* entry point, given on the command
line, or trusted on the command line / in the environment. Anything else stops the run before
anything is built: exit 2, the file, the key and how to trust it; the hostile callable never runs."""

from __future__ import annotations

import pytest

from tests.conftest import SUPPORT_CONF, compose, only_run_dir, run_cli
from tests.robustness._trust_support import assert_refused, cli, hostile_pickle, untrusted_env, write
from wfeval.config.trust import TrustPolicy, UntrustedTargetError, find_untrusted
from wfeval.pipeline.runner import run_from_config


@pytest.fixture
def conf(tmp_path):
    return tmp_path / "conf"


def _searchpath(conf):
    return f"hydra.searchpath=[file://{conf}]"


def test_a_file_writer_target_in_a_benchmark_yaml_runs_nothing(tmp_path, conf):
    sentinel = tmp_path / "SENTINEL"
    bench = write(conf, "benchmark/evil.yaml", f"""\
        name: evil
        _target_: builtins.open
        file: {sentinel}
        mode: w
        """)
    proc = cli(tmp_path, _searchpath(conf), "benchmark=evil", "metric=[generated_rate]")
    assert_refused(proc, str(bench), "benchmark._target_", "'builtins.open'", "run.trust=[", "WFEVAL_TRUST=")
    assert not sentinel.exists()
    assert not (tmp_path / "outputs").exists()  # refused before Hydra made the run folder


def test_torch_load_nested_in_a_model_option_runs_nothing(tmp_path, conf):
    sentinel = tmp_path / "SENTINEL"
    payload = hostile_pickle(tmp_path / "weights.pt", sentinel)
    model = write(conf, "model/evil.yaml", f"""\
        defaults: [python, _self_]
        object:
          _target_: torch.load
          f: {payload}
          weights_only: false
        """)
    proc = cli(tmp_path, _searchpath(conf), "model=evil", "metric=[generated_rate]")
    assert_refused(proc, str(model), "model.object._target_", "'torch.load'")
    assert not sentinel.exists()


def test_numpy_load_with_allow_pickle_as_a_metric_locator_runs_nothing(tmp_path, conf):
    sentinel = tmp_path / "SENTINEL"
    payload = hostile_pickle(tmp_path / "locator.npy", sentinel)
    metric = write(conf, "metric/evil_follow.yaml", f"""\
        # @package metric.evil_follow
        _target_: wfeval.metrics.control.ActionFollowing
        locator:
          _target_: numpy.load
          file: {payload}
          allow_pickle: true
        """)
    proc = cli(tmp_path, _searchpath(conf), "metric=[evil_follow]")
    assert_refused(proc, str(metric), "metric.evil_follow.locator._target_", "'numpy.load'")
    assert not sentinel.exists()


def test_a_global_package_file_cannot_add_a_hydra_callback(tmp_path, conf):
    """Hydra builds hydra.callbacks itself, before wfeval's code runs: checked at composition."""
    sentinel = tmp_path / "SENTINEL"
    bench = write(conf, "benchmark/hooked.yaml", f"""\
        # @package _global_
        defaults:
          - /benchmark/gridworld@benchmark
        hydra:
          callbacks:
            boom:
              _target_: builtins.open
              file: {sentinel}
              mode: w
        """)
    proc = cli(tmp_path, _searchpath(conf), "benchmark=hooked", "metric=[generated_rate]")
    assert_refused(proc, str(bench), "hydra.callbacks.boom._target_")
    assert not sentinel.exists()


def test_a_logging_factory_in_a_config_file_is_refused(tmp_path, conf):
    sentinel = tmp_path / "SENTINEL"
    write(conf, "benchmark/logged.yaml", f"""\
        # @package _global_
        defaults:
          - /benchmark/gridworld@benchmark
        hydra:
          job_logging:
            handlers:
              evil:
                (): builtins.open
                file: {sentinel}
        """)
    proc = cli(tmp_path, _searchpath(conf), "benchmark=logged", "metric=[generated_rate]")
    assert_refused(proc, "hydra.job_logging.handlers.evil.()", "'builtins.open'")
    assert not sentinel.exists()


def test_a_config_file_cannot_grant_trust_with_run_trust(tmp_path, conf):
    sentinel = tmp_path / "SENTINEL"
    bench = write(conf, "benchmark/selftrust.yaml", f"""\
        # @package _global_
        run:
          trust: [builtins.]
        benchmark:
          name: selftrust
          _target_: builtins.open
          file: {sentinel}
          mode: w
        """)
    proc = cli(tmp_path, _searchpath(conf), "benchmark=selftrust", "metric=[generated_rate]")
    assert_refused(proc, "run.trust: 'builtins.'", "trust set by a config file is refused", str(bench))
    assert not sentinel.exists()


def test_a_config_file_cannot_set_wfeval_trust_through_hydra_env_set(tmp_path, conf):
    write(conf, "benchmark/envtrust.yaml", """\
        # @package _global_
        defaults:
          - /benchmark/gridworld@benchmark
        hydra:
          job:
            env_set:
              WFEVAL_TRUST: builtins.
        """)
    proc = cli(tmp_path, _searchpath(conf), "benchmark=envtrust", "metric=[generated_rate]")
    assert_refused(proc, "hydra.job.env_set.WFEVAL_TRUST", "cannot grant trust through the environment")


def test_an_import_path_string_as_model_object_in_a_file_is_refused(tmp_path, conf):
    write(conf, "model/stringly.yaml", """\
        defaults: [python, _self_]
        object: os.getcwd
        """)
    proc = cli(tmp_path, _searchpath(conf), "model=stringly", "metric=[generated_rate]")
    assert_refused(proc, "model.object: 'os.getcwd'")


def test_a_target_hidden_behind_an_interpolation_is_checked_resolved(tmp_path, conf):
    sentinel = tmp_path / "SENTINEL"
    write(conf, "benchmark/indirect.yaml", f"""\
        name: indirect
        _target_: ${{oc.env:WFEVAL_TEST_TARGET}}
        file: {sentinel}
        mode: w
        """)
    proc = cli(tmp_path, _searchpath(conf), "benchmark=indirect", "metric=[generated_rate]",
               env=untrusted_env(WFEVAL_TEST_TARGET="builtins.open"))
    assert_refused(proc, "benchmark._target_: 'builtins.open'")
    assert not sentinel.exists()


def test_a_wfeval_function_that_writes_files_is_not_a_target(tmp_path, conf):
    sentinel = tmp_path / "SENTINEL"
    write(conf, "benchmark/writer.yaml", f"""\
        name: writer
        _target_: wfeval.storage.artifacts.atomic_write_bytes
        path: {sentinel}
        data: pwned
        """)
    proc = cli(tmp_path, _searchpath(conf), "benchmark=writer", "metric=[generated_rate]")
    assert_refused(proc, "'wfeval.storage.artifacts.atomic_write_bytes'", "wfeval's own targets are classes")
    assert not sentinel.exists()


def test_every_culprit_is_named_at_once(tmp_path, conf):
    write(conf, "benchmark/many.yaml", """\
        name: many
        _target_: builtins.print
        items:
          - _target_: builtins.exec
          - {inner: {_target_: subprocess.run}}
        """)
    proc = cli(tmp_path, _searchpath(conf), "benchmark=many", "metric=[generated_rate]")
    assert_refused(proc, "benchmark._target_: 'builtins.print'", "benchmark.items[0]._target_: 'builtins.exec'",
                   "benchmark.items[1].inner._target_: 'subprocess.run'")


# --- the same code, chosen by the user, still works ----------------------------------------------

def test_the_same_class_given_on_the_command_line_works(tmp_path):
    proc = cli(tmp_path, "model=python", "model.object._target_=wfeval_test_models.RecordingModel",
               "benchmark.num_samples=2", "metric=[generated_rate]")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "recording on gridworld" in proc.stdout


def test_a_file_target_trusted_with_run_trust_on_the_command_line_works(tmp_path):
    args = [f"hydra.searchpath=[{SUPPORT_CONF}]", "model=flaky_oracle", "model.fail_on=[]", "benchmark.num_samples=2",
            "metric=[frame_count]"]
    (tmp_path / "a").mkdir()
    refused = cli(tmp_path / "a", *args)
    assert_refused(refused, "tests/support/conf/model/flaky_oracle.yaml", "model._target_",
                   "metric.frame_count._target_")
    (tmp_path / "b").mkdir()
    trusted = cli(tmp_path / "b", *args, "run.trust=[wfeval_test_plugins.]")
    assert trusted.returncode == 0, trusted.stderr[-2000:]
    manifest_config = (only_run_dir(tmp_path / "b" / "outputs" / "runs") / ".hydra" / "config.yaml").read_text()
    assert "wfeval_test_plugins." in manifest_config  # the run records what it trusted


def test_a_file_target_trusted_in_the_environment_works(tmp_path):
    proc = cli(tmp_path, f"hydra.searchpath=[{SUPPORT_CONF}]", "model=flaky_oracle", "model.fail_on=[]",
               "benchmark.num_samples=2", "metric=[frame_count]",
               env=untrusted_env(WFEVAL_TRUST="wfeval_test_plugins."))
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_cfg_job_still_prints_a_config_that_would_be_refused(tmp_path, conf):
    """Printing builds nothing, so inspecting a suspicious config is allowed."""
    write(conf, "benchmark/evil.yaml", "name: evil\n_target_: builtins.print\n")
    proc = run_cli(["--cfg", "job", _searchpath(conf), "benchmark=evil", "metric=[generated_rate]"], cwd=tmp_path, env=untrusted_env())
    assert proc.returncode == 0 and "builtins.print" in proc.stdout


# --- the rule, in-process -------------------------------------------------------------------------

def test_in_process_runs_are_checked_too_and_name_the_key(tmp_path, monkeypatch):
    monkeypatch.delenv("WFEVAL_TRUST")
    cfg = compose(["model=flaky_oracle", "metric=[generated_rate]", f"run.store_dir={tmp_path / 'store'}"],
                  searchpath=True)
    with pytest.raises(UntrustedTargetError, match="model._target_: 'wfeval_test_plugins.FlakyOracle'"):
        run_from_config(cfg, output_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_the_policy_reads_only_override_strings():
    policy = TrustPolicy.from_overrides(
        ["model=python", "+model.object._target_=a.A,b.B", "metric.x.locator={_target_:c.C,k:1}", "run.trust=[d.]",
         "model.object.name=e.E"], environ={"WFEVAL_TRUST": "f.,g"})
    assert policy.refusal("model.object._target_", "a.A") is None and policy.refusal("model.object._target_", "b.B") is None
    assert policy.refusal("metric.x.locator._target_", "c.C") is None
    assert policy.refusal("benchmark._target_", "a.A") == ""  # given for another key: not this one
    assert policy.refusal("benchmark._target_", "d.thing.X") is None  # run.trust on the command line
    assert policy.refusal("benchmark._target_", "g.X") is None and policy.refusal("benchmark._target_", "gx.X") == ""
    assert policy.refusal("benchmark._target_", "e.E") == ""  # not a code key: no trust
    assert policy.refusal("hydra.launcher._target_", "hydra_plugins.x.Launcher") is None
    assert policy.refusal("benchmark._target_", "hydra_plugins.x.Launcher") == ""


def test_an_installed_wfeval_entry_point_is_trusted(tmp_path, monkeypatch):
    dist = tmp_path / "site" / "third_party_metrics-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: third-party-metrics\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[wfeval.metrics]\nframe_count = wfeval_test_plugins:FrameCount\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    tree = {"metric": {"frame_count": {"_target_": "wfeval_test_plugins.FrameCount"},
                       "other": {"_target_": "wfeval_test_plugins.FlakyOracle"}}}
    found = find_untrusted(tree, TrustPolicy())
    assert [f.key for f in found] == ["metric.other._target_"]


def test_export_dataset_checks_the_config_like_a_run(tmp_path, conf, monkeypatch, capsys):
    from wfeval.cli.export_dataset import main as export_main

    monkeypatch.delenv("WFEVAL_TRUST")
    sentinel = tmp_path / "SENTINEL"
    bench = write(conf, "benchmark/evil.yaml", f"name: evil\n_target_: builtins.open\nfile: {sentinel}\nmode: w\n")
    assert export_main([str(tmp_path / "data"), _searchpath(conf), "benchmark=evil", "metric=[generated_rate]"]) == 2
    err = capsys.readouterr().err
    assert "benchmark._target_: 'builtins.open'" in err and str(bench) in err and "Traceback" not in err
    assert not sentinel.exists() and not (tmp_path / "data").exists()


def test_hydra_launcher_and_sweeper_targets_outside_hydra_are_refused():
    tree = {"hydra": {"launcher": {"_target_": "builtins.exec"},
                      "sweeper": {"_target_": "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"},
                      "callbacks": {"ok": {"_target_": "wfeval.cli.sweep.SweepSummary"},
                                    "plugin": {"_target_": "hydra_plugins.some_plugin.Callback"}}}}
    assert [(f.key, f.target) for f in find_untrusted(tree, TrustPolicy())] == [("hydra.launcher._target_", "builtins.exec")]
