"""Adding a protocol takes its class and its config file, nothing else: a protocol of one's own,
found on the search path, runs end to end with its options, identity and record."""

from __future__ import annotations

import json

from tests.conftest import SUPPORT_CONF, cli_env, run_cli
from wfeval.results import headline


def _run(tmp_path, name, *overrides):
    proc = run_cli([f"hydra.searchpath=[{SUPPORT_CONF}]", "run.trust=[wfeval_test_plugins.]",
                    "benchmark.num_samples=4", "metric=[psnr]", "run.report=false",
                    f"run.store_dir={tmp_path / 'store'}", f"hydra.run.dir={tmp_path / name}", *overrides],
                   cwd=tmp_path, env=cli_env())
    assert proc.returncode == 0, proc.stderr
    document = json.loads((tmp_path / name / "results.json").read_text())
    return {**document, "psnr": headline(document["results"]["gridworld.psnr"])}


def test_a_protocol_of_ones_own_runs_with_its_options_identity_and_record(tmp_path):
    exact = _run(tmp_path, "open_loop")
    noisy = _run(tmp_path, "noisy", "protocol=noisy_actions", "protocol.p=0.5")
    assert noisy["protocol"] == {"name": "noisy_actions", "driver": "noisy_actions", "chunk": 1, "p": 0.5, "seed": 0}
    assert exact["psnr"] == 100
    assert noisy["psnr"] < 60  # the oracle followed other actions
    # its own generations: the open-loop ones are not served to it, and another p is another identity
    assert noisy["model"]["key"] != exact["model"]["key"]
    other = _run(tmp_path, "noisy0", "protocol=noisy_actions", "protocol.p=0.0")
    assert other["psnr"] == 100 and other["model"]["key"] != noisy["model"]["key"]


def test_an_option_the_protocol_class_does_not_have_is_refused_naming_the_key(tmp_path):
    common = [f"hydra.searchpath=[{SUPPORT_CONF}]", "run.trust=[wfeval_test_plugins.]", "protocol=noisy_actions"]
    proc = run_cli([*common, "protocol.q=1", "--cfg", "job"], cwd=tmp_path, env=cli_env())
    assert proc.returncode == 2 and "full_key: protocol.q" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli([*common, "+protocol.q=1", f"hydra.run.dir={tmp_path / 'bad'}"], cwd=tmp_path, env=cli_env())
    assert proc.returncode == 2 and "protocol: cannot build 'wfeval_test_plugins.NoisyActions'" in proc.stderr
    assert "unexpected keyword argument 'q'" in proc.stderr and "Traceback" not in proc.stderr
