"""The tables of docs/metrics.md "Controllability, memory, policy evaluation": every baseline × every new
measure × every family, and the time each task takes on this machine.

Run: ``python perf/new_measures.py [--out docs/measures/new_measures.json] [--families gridworld,atari_pong,...]``

Each (family, task, baseline) is one real run (``run_from_config``, the benchmark's default 32 samples,
a fresh run folder, the artifact store under ``--store``: a first run records the games, later runs
read the recordings from it). Prints one Markdown table per family and task (value [95% interval];
idm_accuracy with the IDM's ceiling and the chance level) and the wall-clock seconds of each run;
writes every aggregate to ``--out`` (JSON) so the docs' numbers can be regenerated and compared.
A measure a family does not support is listed as not applicable, with the reason.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GRIDWORLD = {"oracle": ["model=oracle"], "static": ["model=static"], "random_actions": ["model=random_actions"],
             "lagged": ["model=lagged"], "noisy": ["model=noisy"], "blur": ["model=blur"],
             "forgetful": ["model=forgetful"]}
GAMES = {"oracle": ["model=game_oracle"], "static": ["model=static"], "random_actions": ["model=game_random_actions"],
         "lagged": ["model=lagged"], "noisy": ["model=noisy"], "blur": ["model=blur"]}
TASKS = {
    "controllability": ("action_sensitivity", "idm_accuracy"),
    "memory": ("revisit_error", "reversibility_error"),
    "policy_evaluation": ("policy_rank_correlation", "return_error"),
}
FAMILIES = {"gridworld": (GRIDWORLD, ("controllability", "memory", "policy_evaluation")),
            "atari_pong": (GAMES, ("controllability",)), "atari_breakout": (GAMES, ("controllability",)),
            "atari_boxing": (GAMES, ("controllability",)), "crafter": (GAMES, ("controllability",))}
NOT_APPLICABLE = {
    "memory": "the recorded games declare no revisit planning (no place to come back to in Atari; Crafter: not "
              "implemented)",
    "policy_evaluation": "the recorded games declare no scripted policies and frame reward",
}


def run(family: str, task: str, overrides: list[str], store: Path, out: Path) -> tuple[dict, float]:
    from hydra import compose, initialize_config_module

    from wfeval.config import register_schemas
    from wfeval.pipeline.runner import run_from_config

    register_schemas()
    with initialize_config_module("wfeval.conf", version_base="1.3"):
        cfg = compose("config", overrides=[f"benchmark={family}", f"task={task}", f"run.store_dir={store}",
                                           "run.progress=off", "run.report=false",
                                           f"metric=[psnr,{','.join(TASKS[task])}]", *overrides])
    started = time.perf_counter()
    summary = run_from_config(cfg, out)
    return {k.split(".", 1)[1]: a.to_dict() for k, a in summary.results.items()}, time.perf_counter() - started


def cell(agg: dict) -> str:
    if not agg.get("valid"):
        return "n/a"
    d, ci = agg["diagnostics"], agg.get("confidence_interval") or {}
    text = f"{d['value']:.3g}"
    if ci.get("low") is not None:
        text += f" [{ci['low']:.3g}, {ci['high']:.3g}]"
    if agg["n_valid"] < agg["n_total"]:
        text += f" ({agg['n_valid']}/{agg['n_total']})"
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--store", type=Path, default=Path("outputs/store"))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    found: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for family in args.families.split(","):
            models, tasks = FAMILIES[family]
            for task in TASKS:
                if task not in tasks:
                    print(f"\n{family} · {task}: not applicable: {NOT_APPLICABLE[task]}")
                    continue
                metrics = TASKS[task]
                rows = []
                for model, overrides in models.items():
                    results, seconds = run(family, task, overrides, args.store, Path(tmp) / f"{family}-{task}-{model}")
                    found.setdefault(family, {}).setdefault(task, {})[model] = {"results": results,
                                                                               "seconds": round(seconds, 1)}
                    extra = ""
                    if "idm_accuracy" in results and results["idm_accuracy"]["valid"]:
                        d = results["idm_accuracy"]["diagnostics"]
                        extra = f"{d['ceiling']:.3g} / {d['chance']:.3g}"
                    rows.append([model, cell(results["psnr"]), *(cell(results[m]) for m in metrics),
                                 *([extra] if task == "controllability" else []), f"{seconds:.0f}"])
                header = ["model", "psnr", *metrics, *(["IDM ceiling / chance"] if task == "controllability" else []),
                          "seconds"]
                print(f"\n{family} · task={task} ({results['psnr']['n_total']} samples)\n")
                print("| " + " | ".join(header) + " |\n|" + "|".join(" --- " for _ in header) + "|")
                for row in rows:
                    print("| " + " | ".join(row) + " |")
                sys.stdout.flush()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
