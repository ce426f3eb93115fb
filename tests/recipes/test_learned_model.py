"""The recipe's learned model: trained in seconds on gridworld episodes that are not the benchmark's
samples, it ranks between the oracle and the frozen frame, degrades with the horizon, serves the
step interface consistently with generate, and a retrained checkpoint is never served from the cache."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from tests.conftest import compose, read_jsonl, run_python
from wfeval.api import GenerationRequest
from wfeval.config.errors import ConfigError
from wfeval.pipeline.runner import run_from_config

torch = pytest.importorskip("torch")

# a tiny budget: ~5 s of one CPU core; the documented default trains longer and does better
TINY = {"data": {"episodes": 64, "steps": 15, "seed": 0},
        "net": {"channels": 32, "patch": 8, "blocks": 2},
        "train": {"steps": 300, "batch_size": 16, "lr": 0.002, "weight_decay": 0.0, "unroll": 1,
                  "gate_weight": 0.1, "seed": 0, "log_every": 100},
        "device": "cpu", "threads": 1}  # one thread: the same weights whatever the machine


def _train(out, **changes):
    from wfeval.benchmarks.gridworld import GridworldBenchmark
    from wfeval.cli.train import run

    cfg = json.loads(json.dumps(TINY))
    for section, values in changes.items():
        cfg[section].update(values)
    threads = torch.get_num_threads()
    try:
        return run({**cfg, "out": str(out)}, GridworldBenchmark(), log=lambda line: None)
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("recipe")
    meta = _train(folder / "ckpt")
    return folder, meta


def _evaluate(folder, model, *overrides, name=None):
    cfg = compose([f"model={model}", "metric=[psnr,ssim]", f"run.store_dir={folder / 'store'}", "run.progress=off",
                   *overrides])
    out = folder / "runs" / (name or model)
    summary = run_from_config(cfg, output_dir=out)
    return summary, out


def test_trained_model_ranks_between_oracle_and_static_and_degrades_with_the_horizon(trained):
    folder, meta = trained
    assert meta["result"]["final_loss"] < meta["result"]["losses"][0]
    ckpt = f"model.checkpoint={folder / 'ckpt' / 'model.pt'}"
    values = {}
    for model in ("oracle", "static", "learned"):
        summary, out = _evaluate(folder, model, *([ckpt] if model == "learned" else []))
        values[model] = {m: summary.results[f"gridworld.{m}"].normalized_stats["mean"] for m in ("psnr", "ssim")}
        if model == "learned":
            rows = [r for r in read_jsonl(out / "metrics.jsonl") if r["metric_id"] == "psnr"]
    for metric in ("psnr", "ssim"):
        assert values["oracle"][metric] > values["learned"][metric] > values["static"][metric], (metric, values)
    # quality vs horizon: the per-frame PSNR (averaged over the 32 samples) falls as errors compound
    curve = np.mean([r["components"]["per_frame"] for r in rows], axis=0)
    assert len(curve) == 15 and rows[0]["components"]["first_frame"] == 1
    assert curve[:5].mean() > curve[5:10].mean() > curve[10:].mean(), curve.round(2)
    assert np.corrcoef(np.arange(len(curve)), curve)[0, 1] < -0.8, curve.round(2)


def _requests(folder, n=3):
    rows = read_jsonl(folder / "runs" / "static" / "generations.jsonl")[:n]
    return [GenerationRequest.from_dict(r["request"]) for r in rows]


def test_step_interface_matches_generate_chunks_and_branches(trained):
    from wfeval.recipes.learned import LearnedModel

    folder, _ = trained
    if not (folder / "runs" / "static").exists():
        _evaluate(folder, "static")
    model = LearnedModel(str(folder / "ckpt"), device="cpu")
    requests = _requests(folder)
    request = requests[0]
    actions = list(request.controls["actions"])
    video = model.generate([request])[0].outputs["generated_video"]
    state = model.start(request)
    whole = model.step(state, actions)
    assert whole.frames.shape == (len(actions), 64, 64, 3) and whole.frames.dtype == np.uint8
    assert np.array_equal(video, np.concatenate([state.current[None], whole.frames]))
    # stepping in chunks gives the same frames as one chunk
    first = model.step(state, actions[:4])
    rest = model.step(first.state, actions[4:])
    assert np.array_equal(np.concatenate([first.frames, rest.frames]), whole.frames)
    # the state is never mutated: two branches from it agree, and it still holds the context frame
    again = model.step(state, actions[:4])
    assert np.array_equal(again.frames, first.frames) and again.state.steps == 4 and state.steps == 0
    assert not state.current.flags.writeable
    assert np.array_equal(state.current, video[0])
    # different actions give different futures (the model is action-conditioned)
    assert not np.array_equal(model.step(state, [1] * 4).frames, model.step(state, [2] * 4).frames)
    # batched stepping of chunks of different lengths agrees with stepping one by one
    states = [model.start(r) for r in requests]
    chunks = [actions[:3], [], list(requests[2].controls["actions"])[:5]]
    batched = model.step_many(states, chunks)
    for s, c, out in zip(states, chunks, batched):
        single = model.step(s, c)
        assert out.frames.shape == single.frames.shape
        assert np.abs(out.frames.astype(int) - single.frames.astype(int)).max(initial=0) <= 1
    assert batched[1].state is states[1]


def test_retrained_checkpoint_is_never_served_from_the_generation_cache(tmp_path):
    ckpt = tmp_path / "ckpt"
    _train(ckpt, train={"steps": 10})
    overrides = [f"model.checkpoint={ckpt}", "benchmark.num_samples=4"]
    first, _ = _evaluate(tmp_path, "learned", *overrides, name="first")
    again, _ = _evaluate(tmp_path, "learned", *overrides, name="again")
    assert (first.generated, again.generated, again.cached) == (4, 0, 4)
    _train(ckpt, train={"steps": 10})  # the same training again: the same bytes, served from the cache
    same, _ = _evaluate(tmp_path, "learned", *overrides, name="same")
    assert (same.generated, same.cached) == (0, 4)
    _train(ckpt, train={"steps": 10, "seed": 1})  # same path, same config keys: only the weights differ
    retrained, out = _evaluate(tmp_path, "learned", *overrides, name="retrained")
    assert (retrained.generated, retrained.cached) == (4, 0)
    fingerprints = [json.loads((tmp_path / "runs" / n / "manifest.json").read_text())["model"]["fingerprint"]
                    for n in ("first", "retrained")]
    assert fingerprints[0]["weights_sha256"] != fingerprints[1]["weights_sha256"]
    assert fingerprints[1]["weights_sha256"] == json.loads((ckpt / "model.json").read_text())["weights_sha256"]


def test_missing_or_mismatched_checkpoint_and_foreign_actions_are_refused(trained, tmp_path):
    from wfeval.recipes.learned import LearnedModel

    folder, _ = trained
    with pytest.raises(ConfigError, match="python -m wfeval.recipes.train"):
        _evaluate(tmp_path, "learned", f"model.checkpoint={tmp_path / 'nowhere' / 'model.pt'}")
    copy = tmp_path / "copy"
    shutil.copytree(folder / "ckpt", copy)
    state = torch.load(copy / "model.pt", weights_only=True)
    torch.save({k: v + 1 for k, v in state.items()}, copy / "model.pt")
    with pytest.raises(ConfigError, match="different training runs"):
        LearnedModel(str(copy), device="cpu").setup()
    if not (folder / "runs" / "static").exists():
        _evaluate(folder, "static")
    request = _requests(folder, 1)[0]
    foreign = GenerationRequest.from_dict({**request.to_dict(), "controls": {
        "actions": [0, 1], "action_names": ["NOOP", "FIRE", "RIGHT", "LEFT", "RIGHTFIRE", "LEFTFIRE"]}})
    [outcome] = LearnedModel(str(folder / "ckpt"), device="cpu").generate([foreign])
    assert isinstance(outcome, ValueError) and "trained on actions" in str(outcome)


def test_training_data_never_holds_an_evaluation_episode(monkeypatch):
    from wfeval.benchmarks.gridworld import GridworldBenchmark
    from wfeval.recipes import data

    bench = GridworldBenchmark(num_samples=32)
    evaluation = {bench._episode_seed(i) for i in range(32)}
    clean = data.record(bench, episodes=4, steps=2)
    assert not evaluation & set(clean.seeds) and clean.info["dropped_seeds"] == 0
    assert clean.frames.shape == (4, 3, 64, 64, 3) and clean.actions.shape == (4, 2)
    # a training stream that would hit evaluation seeds skips exactly those episodes
    hits = sorted(evaluation)[:2]
    original = data.episode_seed
    monkeypatch.setattr(data, "episode_seed", lambda family, seed, i: hits[i] if i < 2 else original(family, seed, i))
    guarded = data.record(bench, episodes=4, steps=2)
    assert guarded.info["dropped_seeds"] == 2 and not evaluation & set(guarded.seeds)
    assert guarded.seeds == [original("gridworld", 0, i) for i in range(2, 6)]


def test_atari_training_data_comes_from_the_game_with_the_benchmark_actions():
    pytest.importorskip("ale_py")
    from wfeval.benchmarks.atari import AtariBenchmark
    from wfeval.recipes import data

    bench = AtariBenchmark(name="atari_pong", env={"game": "pong"}, resize=[64, 64], warmup_steps=3,
                           splits=["test", "val"])
    rec = data.record(bench, episodes=2, steps=4)
    assert rec.frames.shape == (2, 5, 64, 64, 3) and rec.actions.shape == (2, 4)
    assert rec.action_names == bench.action_names and len(rec.action_names) == 6
    evaluation = {bench.trajectory_seed(i) for i in range(8)}
    assert not evaluation & set(rec.seeds)


def test_train_command_writes_a_checkpoint_and_config_errors_exit_2(tmp_path):

    from tests.conftest import cli_env

    def train(*args):
        return run_python(["-m", "wfeval.recipes.train", *args], cwd=tmp_path, env=cli_env(), timeout=300)

    ok = train("train.steps=2", "data.episodes=2", "data.steps=2", "net.channels=4", "out=ckpt")
    assert ok.returncode == 0, ok.stderr
    meta = json.loads((tmp_path / "ckpt" / "model.json").read_text())
    assert meta["benchmark"] == "gridworld" and meta["data"]["episodes"] == 2 and len(meta["result"]["losses"]) == 1
    assert meta["data"]["evaluation_seeds_excluded"] == 4096 and meta["train"]["steps"] == 2
    assert "python -m wfeval benchmark=gridworld model=learned model.checkpoint=ckpt/model.pt" in ok.stdout
    bad = train("net.patch=7", "out=never")
    assert bad.returncode == 2 and "net.patch=7 must divide the frame size 64x64" in bad.stderr
    assert "Traceback" not in bad.stderr and not (tmp_path / "never" / "model.pt").exists()
    unknown = train("benchmark=gridwrld")
    assert unknown.returncode == 2 and "Did you mean: gridworld" in unknown.stderr


def test_learned_model_runs_step_by_step_closed_loop_and_in_the_planning_task(trained):
    folder, _ = trained
    ckpt = f"model.checkpoint={folder / 'ckpt' / 'model.pt'}"
    small = "benchmark.num_samples=4"

    def per_sample(out, metric):
        return {r["sample_id"]: r["raw_value"] for r in read_jsonl(out / "metrics.jsonl") if r["metric_id"] == metric}

    _, open_loop = _evaluate(folder, "learned", ckpt, small, name="p_open")
    stepped, autoregressive = _evaluate(folder, "learned", ckpt, small, "protocol=autoregressive", name="p_auto")
    # step(start(r), actions) gives generate's frames: the same values sample by sample (up to a rounding
    # level flipped where a batch of 4 and a batch of 1 sum floats in another order)
    stepped_psnr, open_psnr = per_sample(autoregressive, "psnr"), per_sample(open_loop, "psnr")
    assert stepped_psnr.keys() == open_psnr.keys()
    assert all(stepped_psnr[k] == pytest.approx(open_psnr[k], abs=0.01) for k in open_psnr)
    assert stepped.generated == 4  # another protocol: generated again, not served from open loop's cache
    closed, _ = _evaluate(folder, "learned", ckpt, small, "protocol=closed_loop", name="p_closed")
    assert closed.results["gridworld.psnr"].n_valid == 4
    plans = {}
    for model in ("learned", "static"):
        cfg = compose([f"model={model}", *([ckpt] if model == "learned" else []), small, "task=goal_reaching",
                       "metric=[goal_success]", f"run.store_dir={folder / 'store'}", "run.progress=off"])
        summary = run_from_config(cfg, output_dir=folder / "runs" / f"plan_{model}")
        plans[model] = summary.results["gridworld.goal_success"].normalized_stats
    # planning inside the learned model reaches goals; inside a frozen frame it reaches none
    assert plans["static"]["ratio"] == 0 and plans["learned"]["ratio"] >= 0.75, plans
