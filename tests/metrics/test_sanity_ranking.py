"""wfeval's meta-evaluation: the built-in baselines, run through the real pipeline, must be ranked
by each metric the way the metric claims to measure. A metric that cannot rank these is broken.

Baselines (wfeval/benchmarks/gridworld/baselines.py): oracle (exact), static (first frame repeated),
random_actions (right dynamics, wrong actions), lagged (actions one step late), blur, and noisy at
σ = 4, 16, 64 uint8 levels.

LPIPS runs on test weights (a random backbone and random heads, tests/features/_lpips.py: the
ImageNet backbone cannot be downloaded here), so its ranking checks the metric's machinery
(per-frame distances of unit-normalised conv features), not the perceptual calibration of the
published network.
"""

from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import MAZE_SMALL, compose
from tests.features._lpips import lpips_test_overrides
from wfeval.pipeline.runner import run_from_config

SAMPLES = 8
METRICS = ("psnr", "ssim", "mse", "mae", "lpips", "flicker", "motion_magnitude", "frame_repeat_rate",
           "action_following", "agent_position_error")
MODELS = {
    "oracle": ["model=oracle"],
    "static": ["model=static"],
    "random_actions": ["model=random_actions"],
    "lagged": ["model=lagged"],
    "blur": ["model=blur"],
    "noisy4": ["model=noisy", "model.sigma=4"],
    "noisy16": ["model=noisy", "model.sigma=16"],
    "noisy64": ["model=noisy", "model.sigma=64"],
}
REFERENCE = {"psnr": True, "ssim": True, "mse": False, "mae": False, "lpips": False}  # metric → higher is better


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """model → metric id → aggregate value, all from real runs on the same 8 gridworld episodes."""
    root = tmp_path_factory.mktemp("sanity")
    out = {}
    for name, overrides in MODELS.items():
        cfg = compose([f"run.store_dir={root / 'store'}", "run.progress=off", "run.report=false",
                       f"benchmark.num_samples={SAMPLES}", f"metric=[{','.join(METRICS)}]",
                       *lpips_test_overrides(root / "lpips"), *overrides])
        summary = run_from_config(cfg, output_dir=root / name)
        out[name] = {}
        for key, agg in summary.results.items():
            assert agg.valid and agg.n_valid == SAMPLES, (name, key, agg.diagnostics)
            out[name][key.split(".", 1)[1]] = agg.diagnostics["value"]
    return out


def column(table, metric):
    return {model: values[metric] for model, values in table.items()}


@pytest.mark.parametrize("metric,higher", REFERENCE.items())
def test_oracle_is_strictly_best_on_every_reference_metric(table, metric, higher):
    values = column(table, metric)
    best = max(values, key=values.get) if higher else min(values, key=values.get)
    assert best == "oracle" and list(values.values()).count(values["oracle"]) == 1, values


def test_random_actions_is_worst_on_action_following_and_position_error(table):
    accuracy, error = column(table, "action_following"), column(table, "agent_position_error")
    assert min(accuracy, key=accuracy.get) == "random_actions", accuracy
    assert max(error, key=error.get) == "random_actions", error
    assert accuracy["random_actions"] < 0.4 and error["random_actions"] > 10.0


def test_random_actions_is_close_to_the_oracle_on_flicker(table):
    flicker = column(table, "flicker")
    assert abs(flicker["random_actions"] - flicker["oracle"]) < 0.003, flicker
    assert abs(flicker["noisy16"] - flicker["oracle"]) > 0.05  # "close" is tight: noise is far away


def test_static_is_best_on_flicker_but_poor_on_psnr_and_action_following(table):
    flicker, psnr, accuracy = column(table, "flicker"), column(table, "psnr"), column(table, "action_following")
    assert flicker["static"] == 1.0 and all(v < 1.0 for m, v in flicker.items() if m != "static"), flicker
    for better in ("oracle", "random_actions", "lagged", "blur", "noisy4"):
        assert psnr["static"] < psnr[better], psnr
    assert psnr["static"] < psnr["oracle"] - 50
    assert accuracy["static"] < 0.6 and all(accuracy[m] == 1.0 for m in ("oracle", "blur", "noisy4", "noisy16"))


def test_static_freezes_motion_and_repeats_every_frame(table):
    assert table["static"]["motion_magnitude"] == 0.0 and table["static"]["frame_repeat_rate"] == 1.0
    assert table["oracle"]["frame_repeat_rate"] < 0.1


@pytest.mark.parametrize("metric", ["psnr", "ssim", "mse", "mae", "lpips", "flicker", "motion_magnitude"])
def test_noisy_degrades_monotonically_with_sigma(table, metric):
    ladder = [table[m][metric] for m in ("oracle", "noisy4", "noisy16", "noisy64")]  # σ = 0, 4, 16, 64
    worse_is_lower = metric in ("psnr", "ssim", "flicker")
    assert ladder == sorted(ladder, reverse=worse_is_lower) and len(set(ladder)) == 4, ladder


def test_pixel_degradation_keeps_control_and_lag_loses_part_of_it(table):
    accuracy = column(table, "action_following")
    assert accuracy["blur"] == accuracy["noisy64"] == 1.0
    assert accuracy["random_actions"] < accuracy["lagged"] < accuracy["oracle"]


# -- controllability, memory, policy evaluation (task=controllability | memory | policy_evaluation) ------------

def _values(root, task: str, models: dict, extra=(), samples: int = SAMPLES) -> dict:
    """model → metric id → aggregate (as a dict), from real runs of ``task`` on the same samples."""
    out = {}
    for name, overrides in models.items():
        cfg = compose([f"run.store_dir={root / 'store'}", "run.progress=off", "run.report=false", f"task={task}",
                       *extra, *overrides])
        bench = next((o.split("=", 1)[1] for o in extra if o.startswith("benchmark=")), "gridworld")
        summary = run_from_config(cfg, output_dir=root / f"{task}-{bench}-{name}")
        out[name] = {k.split(".", 1)[1]: agg.to_dict() for k, agg in summary.results.items()}
        for key, agg in out[name].items():
            assert agg["valid"] and agg["n_valid"] == agg["n_total"] == samples, (name, key, agg["diagnostics"])
    return out


def value(table, model, metric):
    return table[model][metric]["diagnostics"]["value"]


CONTROL_GRIDWORLD = {**{m: MODELS[m] for m in ("oracle", "static", "random_actions", "lagged", "blur")},
                     "noisy16": MODELS["noisy16"], "forgetful": ["model=forgetful"]}
GAME = {"oracle": ["model=game_oracle"], "static": ["model=static"], "random_actions": ["model=game_random_actions"],
        "lagged": ["model=lagged"]}
GAME_SAMPLES = ["benchmark.num_trajectories=2", "benchmark.windows_per_trajectory=4"]


@pytest.fixture(scope="module")
def controllability(tmp_path_factory):
    root = tmp_path_factory.mktemp("control")
    metrics = "metric=[psnr,action_sensitivity,idm_accuracy]"
    return {
        "gridworld": _values(root, "controllability", CONTROL_GRIDWORLD, [f"benchmark.num_samples={SAMPLES}", metrics]),
        "atari_pong": _values(root, "controllability", GAME, ["benchmark=atari_pong", *GAME_SAMPLES, metrics]),
        "crafter": _values(root, "controllability", GAME, ["benchmark=crafter", *GAME_SAMPLES, metrics]),
    }


@pytest.mark.parametrize("family", ["gridworld", "atari_pong", "crafter"])
def test_controllability_ranks_the_baselines_as_designed(controllability, family):
    table = controllability[family]
    sensitivity = {m: value(table, m, "action_sensitivity") for m in table}
    accuracy = {m: value(table, m, "idm_accuracy") for m in table}
    idm = {m: table[m]["idm_accuracy"]["diagnostics"] for m in table}
    # models that ignore their actions give the same video for every action sequence: exactly 0
    assert sensitivity["static"] == sensitivity["random_actions"] == 0.0, sensitivity
    assert max(sensitivity, key=sensitivity.get) == "oracle" and sensitivity["oracle"] > 20.0
    assert 0.0 < sensitivity["lagged"] < sensitivity["oracle"]
    # the oracle's frames are the reference's: its IDM accuracy is the ceiling, exactly
    assert accuracy["oracle"] == idm["oracle"]["ceiling"]
    # best, up to the IDM's own noise: it may read a degraded copy of the true frames a hair better
    assert all(accuracy["oracle"] >= v - 0.03 for v in accuracy.values()), accuracy
    assert idm["oracle"]["ceiling"] > idm["oracle"]["chance"] + 0.1, idm["oracle"]
    for frozen in ("static", "random_actions"):  # ≈ chance: what the IDM reads is independent of the actions
        assert abs(accuracy[frozen] - idm[frozen]["chance"]) < 0.12, (frozen, accuracy[frozen], idm[frozen])
    # lagged between: below the oracle by a good part of what the IDM can read above chance (Crafter's
    # IDM reads little: ceiling 0.28)
    readable = idm["oracle"]["ceiling"] - idm["oracle"]["chance"]
    assert accuracy["lagged"] < accuracy["oracle"] - 0.3 * readable, (accuracy, idm["oracle"]["chance"])
    if family == "gridworld":  # the IDM reads a lagged step's action from the next transition: half right
        assert max(accuracy["static"], accuracy["random_actions"]) + 0.1 < accuracy["lagged"]
    assert idm["oracle"]["idm"]["pinned"] is True and idm["oracle"]["uniform"] == 1 / len(idm["oracle"]["idm"]
                                                                                          ["heldout"]["action_names"])


def test_pixel_degradation_keeps_the_actions_readable(controllability):
    table = controllability["gridworld"]
    for model in ("blur", "noisy16"):  # the pixels are worse, the control is the oracle's
        assert value(table, model, "action_sensitivity") > 2.0
        assert value(table, model, "idm_accuracy") > value(table, "oracle", "idm_accuracy") - 0.1
    # a 16-frame clip is shorter than forgetful's memory: it is the oracle, frame for frame
    assert value(table, "forgetful", "idm_accuracy") == value(table, "oracle", "idm_accuracy")
    assert value(table, "forgetful", "action_sensitivity") == value(table, "oracle", "action_sensitivity")


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    root = tmp_path_factory.mktemp("memory")
    return _values(root, "memory", CONTROL_GRIDWORLD,
                   [f"benchmark.num_samples={SAMPLES}", "metric=[psnr,revisit_error,reversibility_error]"])


def test_forgetful_is_worst_at_memory_and_the_oracle_exact(memory):
    for metric in ("revisit_error", "reversibility_error"):
        errors = {m: value(memory, m, metric) for m in memory}
        assert errors["oracle"] == errors["static"] == 0.0, errors  # static is trivially self-consistent
        assert max(errors, key=errors.get) == "forgetful", errors
        curve = {m: memory[m][metric]["diagnostics"]["curve"] for m in memory}
        longest = max(curve["forgetful"], key=int)  # what forgetful forgets: the long gaps
        assert curve["forgetful"][longest]["mean"] > 5.0
        assert all(curve[m][longest]["mean"] < curve["forgetful"][longest]["mean"] / 3 for m in memory if m != "forgetful")
        assert curve["forgetful"]["2"]["mean"] == 0.0  # short gaps: remembered exactly


MAZE_MEMORY = {"oracle": ["model=oracle"], "static": ["model=static"], "forgetful": ["model=forgetful"]}


@pytest.fixture(scope="module")
def maze_memory(maze_store, tmp_path_factory):
    """The maze at small size: 2 samples, legs of 2, 8 (looking away and back) and 48 steps (a walk)."""
    root = tmp_path_factory.mktemp("maze_memory")
    out = {}
    for name, overrides in MAZE_MEMORY.items():
        cfg = compose([f"run.store_dir={maze_store}", "run.progress=off", "run.report=false", "task=memory",
                       *MAZE_SMALL, "run.limit=2", "task.data.memory.gaps=[2,8,48]",
                       "metric=[revisit_error,reversibility_error]", *overrides])
        summary = run_from_config(cfg, output_dir=root / name)
        out[name] = {k.split(".", 1)[1]: agg.to_dict() for k, agg in summary.results.items()}
        for key, agg in out[name].items():
            assert agg["n_valid"] == agg["n_total"] == 2, (name, key, agg["diagnostics"])
    return out


def test_on_the_maze_the_oracle_is_exact_and_forgetful_forgets_only_the_long_gap(maze_memory):
    for metric in ("revisit_error", "reversibility_error"):
        errors = {m: value(maze_memory, m, metric) for m in maze_memory}
        assert errors["oracle"] == 0.0, errors  # the model's change is the true change, exactly
        curve = {m: maze_memory[m][metric]["diagnostics"]["curve"] for m in maze_memory}
        assert sorted(curve["forgetful"], key=int) == ["2", "8", "64"]
        # legs of 2 and 8 steps end before forgetful's 16-step horizon: remembered exactly
        assert curve["forgetful"]["2"]["mean"] == curve["forgetful"]["8"]["mean"] == 0.0
        assert curve["forgetful"]["64"]["mean"] > 10.0
        # the frozen view shows no change where the truth changes a little: small, far below forgetful
        assert 0.0 < curve["static"]["64"]["mean"] < curve["forgetful"]["64"]["mean"] / 3


def test_forgetful_is_the_oracle_on_short_clips(table, tmp_path):
    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false", "model=forgetful",
                   f"benchmark.num_samples={SAMPLES}", "metric=[psnr,ssim]"])
    results = run_from_config(cfg, output_dir=tmp_path / "forgetful").results
    assert results["gridworld.psnr"].diagnostics["value"] == table["oracle"]["psnr"] == 100.0
    assert results["gridworld.ssim"].diagnostics["value"] == table["oracle"]["ssim"] == 1.0


@pytest.fixture(scope="module")
def policy_evaluation(tmp_path_factory):
    root = tmp_path_factory.mktemp("policy")
    models = {m: CONTROL_GRIDWORLD[m] for m in ("oracle", "static", "random_actions", "lagged", "noisy16")}
    return _values(root, "policy_evaluation", models,
                   [f"benchmark.num_samples={SAMPLES}", "metric=[psnr,policy_rank_correlation,return_error]"])


def test_the_oracle_ranks_policies_exactly_and_frozen_models_cannot_rank_them(policy_evaluation):
    rank = {m: value(policy_evaluation, m, "policy_rank_correlation") for m in policy_evaluation}
    error = {m: value(policy_evaluation, m, "return_error") for m in policy_evaluation}
    assert rank["oracle"] == 1.0 and error["oracle"] == 0.0
    assert policy_evaluation["oracle"]["policy_rank_correlation"]["confidence_interval"]["low"] == 1.0
    true = policy_evaluation["oracle"]["policy_rank_correlation"]["diagnostics"]["mean_returns"]["true"]
    assert len(set(true.values())) == len(true)  # the scripted policies differ in skill
    for frozen in ("static", "random_actions"):
        assert rank[frozen] == 0.0 and policy_evaluation[frozen]["policy_rank_correlation"]["diagnostics"]["model_returns_tie"]
        assert error[frozen] > error["lagged"] > error["oracle"]
# -- exploitability (task=goal_reaching's plan audit): the exploitable model is caught -----------------

AUDIT = "metric=[goal_success,chosen_plan_gap,random_plan_gap,exploitability,selection_regret,plan_rank_agreement]"


@pytest.fixture(scope="module")
def goal_audit(tmp_path_factory):
    root = tmp_path_factory.mktemp("audit")
    models = {"oracle": MODELS["oracle"], "noisy16": MODELS["noisy16"], "exploitable": ["model=exploitable"],
              "static": MODELS["static"]}
    # 32 plans imagined per step (the planner's default 64 finds the same lie: gaps 0.79 / 0.79, regrets 17.4 / 18.0)
    out = _values(root, "goal_reaching", models, ["benchmark.num_samples=4", AUDIT, "protocol.planner.candidates=32"],
                  samples=4)
    out["exploitable_open_loop"] = _values(root, "action_video", {"exploitable": ["model=exploitable"]},
                                           [f"benchmark.num_samples={SAMPLES}", "metric=[psnr]"])["exploitable"]
    return out


def test_exploitability_catches_the_exploitable_model_that_looks_exact_on_pixels(goal_audit, table):
    gap = {m: value(goal_audit, m, "exploitability") for m in ("oracle", "noisy16", "exploitable", "static")}
    assert gap["oracle"] == 0.0 and gap["exploitable"] > 0.5 and gap["exploitable"] > gap["noisy16"] + 0.5, gap
    assert value(goal_audit, "exploitable", "chosen_plan_gap") > 0.8 > 0.35 > value(goal_audit, "exploitable",
                                                                                    "random_plan_gap")
    assert value(goal_audit, "exploitable", "goal_success") == 0.0 < value(goal_audit, "noisy16", "goal_success")
    assert value(goal_audit, "exploitable_open_loop", "psnr") >= table["noisy16"]["psnr"] - 1.0  # looks excellent
    regret = {m: value(goal_audit, m, "selection_regret") for m in gap}
    assert regret["oracle"] == 0.0 and regret["noisy16"] < 1.0 and regret["exploitable"] > 5 and regret["static"] > 5
    rank = {m: value(goal_audit, m, "plan_rank_agreement") for m in gap}
    assert rank["oracle"] == pytest.approx(1.0) and rank["static"] == 0.0 and rank["exploitable"] < 0.9, rank


# -- policy optimisation (task=policy_optimization, rung L7): the lift brackets the baselines --------------

LIFT = "metric=[optimization_lift,model_trained_return,simulator_trained_return,random_policy_return,exploitability]"
ONE_SEED = "task.data.optimization.seeds=1"  # the interval then resamples the held-out episodes of each sample


@pytest.fixture(scope="module")
def policy_optimization(tmp_path_factory):
    root = tmp_path_factory.mktemp("optimization")
    grid = {"oracle": MODELS["oracle"], "static": MODELS["static"], "exploitable": ["model=exploitable"]}
    out = {"gridworld": _values(root, "policy_optimization", grid, ["benchmark.num_samples=4", LIFT, ONE_SEED,
                                                                    "task.data.optimization.train_episodes=60"],
                                samples=4)}
    if importlib.util.find_spec("ale_py") is not None:
        pong = {"oracle": ["model=oracle"], "static": ["model=static"]}
        out["atari_pong"] = _values(root, "policy_optimization", pong, [
            "benchmark=atari_pong", "benchmark.num_trajectories=1", "benchmark.windows_per_trajectory=2", LIFT, ONE_SEED],
            samples=2)
    return out


@pytest.mark.parametrize("family", ["gridworld", "atari_pong"])
def test_the_oracle_lifts_fully_and_the_static_model_not_at_all(policy_optimization, family):
    if family not in policy_optimization:
        pytest.skip("ale-py is not installed")
    runs = policy_optimization[family]
    oracle = runs["oracle"]["optimization_lift"]
    assert oracle["diagnostics"]["value"] == 1.0 and oracle["confidence_interval"]["low"] >= 0.8
    assert value(runs, "oracle", "model_trained_return") == value(runs, "oracle", "simulator_trained_return")
    ceiling, floor = (value(runs, "oracle", m) for m in ("simulator_trained_return", "random_policy_return"))
    assert ceiling > floor + 0.3 and oracle["diagnostics"]["simulator_ceiling"] == pytest.approx(ceiling)
    assert value(runs, "static", "optimization_lift") <= 0.2
    assert value(runs, "static", "random_policy_return") == floor  # the same floor for every model
    if family == "gridworld":  # it learns the one plan its model lies about, and fails when deployed
        assert value(runs, "exploitable", "optimization_lift") < 0.5
        assert value(runs, "exploitable", "exploitability") > value(runs, "oracle", "exploitability") == 0.0


def test_lpips_sees_a_frozen_video_and_wrong_actions_as_further_than_blur_lag_or_light_noise(table):
    lpips = column(table, "lpips")
    assert lpips["oracle"] == 0.0
    for closer in ("lagged", "blur", "noisy4"):
        assert lpips[closer] < lpips["random_actions"] < lpips["static"], lpips


# -- probing (task=probing): the calibration encoders and predictors bracket every probe -----------

PROBING = {"state_oracle": ["model=state_oracle"], "state_static": ["model=state_oracle", "model.predictor=static"],
           "random_projection": ["model=random_projection"], "pixels_pca": ["model=pixels_pca"]}
PROBING_SIZE = ["protocol.train_episodes=8", "task.data.probing.num_frames=17"]  # k = 16 from one start


@pytest.fixture(scope="module")
def probing(tmp_path_factory):
    root = tmp_path_factory.mktemp("probing")
    return _values(root, "probing", PROBING, [f"benchmark.num_samples={SAMPLES}", *PROBING_SIZE])


def test_the_state_oracle_is_the_ceiling_and_pixel_encoders_sit_far_below_it(probing):
    assert value(probing, "state_oracle", "probe_r2") == pytest.approx(1.0, abs=1e-6)
    assert value(probing, "state_oracle", "probe_accuracy") == 1.0
    assert probing["state_oracle"]["probe_r2"]["confidence_interval"]["low"] == pytest.approx(1.0, abs=1e-6)
    for pixels in ("random_projection", "pixels_pca"):
        r2 = probing[pixels]["probe_r2"]
        assert r2["confidence_interval"]["high"] < 0.6, pixels  # an untrained encoder: far below the ceiling
        assert value(probing, pixels, "probe_accuracy") < 0.9


def test_the_oracle_predictor_keeps_the_state_and_the_static_one_loses_it_after_one_step(probing):
    for k in (1, 2, 4, 8, 16):
        assert value(probing, "state_oracle", f"imagined_probe_r2_k{k}") == pytest.approx(1.0, abs=1e-6)
    static = [value(probing, "state_static", f"imagined_probe_r2_k{k}") for k in (1, 4)]
    assert 0.5 < static[0] < 0.99 and static[1] < static[0] - 0.2  # z never moves: worse the further ahead
    assert probing["state_static"]["imagined_probe_r2_k4"]["confidence_interval"]["high"] < 1.0


@pytest.fixture(scope="module")
def probing_orby(tmp_path_factory):
    pytest.importorskip("tiny_jepa")
    root = tmp_path_factory.mktemp("probing_orby")
    models = {m: PROBING[m] for m in ("state_oracle", "state_static", "random_projection")}
    return _values(root, "probing", models, ["benchmark=orby", "benchmark.num_trajectories=2", *PROBING_SIZE,
                                             "metric=[probe_r2,imagined_probe_r2]",  # no discrete variable
                                             "metric.imagined_probe_r2.horizons=[1,4]"])


def test_orby_probes_rank_the_state_oracle_over_pixels_and_the_static_predictor_decays(probing_orby):
    assert value(probing_orby, "state_oracle", "probe_r2") == pytest.approx(1.0, abs=1e-6)
    assert probing_orby["random_projection"]["probe_r2"]["confidence_interval"]["high"] < 0.9
    static = [value(probing_orby, "state_static", f"imagined_probe_r2_k{k}") for k in (1, 4)]
    assert static[0] < 1.0 and static[1] < static[0]


@pytest.fixture(scope="module")
def probing_pong(tmp_path_factory):
    pytest.importorskip("ale_py")
    root = tmp_path_factory.mktemp("probing_pong")
    models = {m: PROBING[m] for m in ("state_oracle", "state_static", "random_projection")}
    return _values(root, "probing", models, ["benchmark=atari_pong", "benchmark.num_trajectories=2",
                                             "benchmark.windows_per_trajectory=4", "protocol.train_episodes=8",
                                             "metric=[probe_r2,imagined_probe_r2]", "metric.imagined_probe_r2.horizons=[1,8]"])


def test_pong_ram_probes_rank_the_state_oracle_over_pixels_with_intervals(probing_pong):
    """AtariARI's Pong variables (RAM): the state itself is read exactly, a random projection of the
    pixels far less (its interval below the ceiling), and a static predictor loses the moving ball."""
    assert value(probing_pong, "state_oracle", "probe_r2") == pytest.approx(1.0, abs=1e-6)
    assert probing_pong["random_projection"]["probe_r2"]["confidence_interval"]["high"] < 0.9
    assert value(probing_pong, "state_static", "imagined_probe_r2_k8") < value(probing_pong, "state_static",
                                                                                "imagined_probe_r2_k1") < 1.0
