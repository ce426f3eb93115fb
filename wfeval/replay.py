"""``python -m wfeval.replay RUN_DIR [--out DIR]``: rebuild a run's results from its files alone.

Nothing is generated and no metric scores a sample again: the per-sample rows of
``metrics.jsonl`` are aggregated by the same metric classes (built from ``.hydra/config.yaml``)
with the benchmark rules recorded in ``manifest.json``. The rebuilt ``results.json`` equals the
original byte for byte; ``results.md`` and the printed table come with it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wfeval.api import GenerationRequest, MetricResult
from wfeval.pipeline.rundir import RunDirectory, read_jsonl


def load_run(run_dir: Path):
    """(manifest, metric objects, per-metric rows in run order, requests) of a finished run."""
    from omegaconf import OmegaConf

    from wfeval.pipeline import build

    rundir = RunDirectory(run_dir, create=False)
    manifest = rundir.read_json("manifest.json")
    config = run_dir / ".hydra" / "config.yaml"
    if manifest is None or not config.is_file() or not rundir.file("metrics.jsonl").is_file():
        raise SystemExit(f"wfeval.replay: {run_dir} is not a wfeval run directory "
                         "(needs manifest.json, .hydra/config.yaml and metrics.jsonl)")
    cfg = OmegaConf.load(config)
    metric_ids = list(manifest.get("metrics") or {})
    metrics = build.build_metrics({m: cfg.metric[m] if m in cfg.metric else _extra_node(m) for m in metric_ids})
    requests = [GenerationRequest.from_dict(row["request"]) for row in read_jsonl(rundir.file("generations.jsonl"))]
    latest: dict[tuple[str, str], MetricResult] = {}
    for row in read_jsonl(rundir.file("metrics.jsonl")):
        result = MetricResult.from_dict(row)
        latest[(result.metric_id, result.sample_id)] = result
    per_metric = {}
    for m in metric_ids:
        missing = [r.sample_id for r in requests if (m, r.sample_id) not in latest]
        if missing:
            raise SystemExit(f"wfeval.replay: metrics.jsonl has no {m!r} row for {len(missing)} sample(s), "
                             f"e.g. {missing[0]!r}: the run did not finish scoring")
        per_metric[m] = [latest[(m, r.sample_id)] for r in requests]
    return manifest, metrics, per_metric, requests


def _extra_node(metric_id: str):
    from wfeval.pipeline.build import _compose_metric_nodes

    return _compose_metric_nodes([metric_id])[metric_id]


def replay(run_dir: Path, out_dir: Path) -> dict:
    from wfeval.pipeline.results import build_results
    from wfeval.report.markdown import results_markdown
    from wfeval.report.table import results_table

    manifest, metrics, per_metric, requests = load_run(run_dir)
    results, document = build_results(
        manifest=manifest, metrics=metrics, per_metric=per_metric, requests=requests,
        rules=manifest.get("rules") or {}, required_metrics=manifest["benchmark"].get("metrics", ()),
    )
    out = RunDirectory(out_dir)
    out.write_json("results.json", document)
    out.write_text("results.md", results_markdown(document))
    title = f"{manifest['model']['name']} on {manifest['benchmark']['id']}  (replayed {run_dir})"
    print(results_table(results, title=title))
    return document


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m wfeval.replay", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: RUN_DIR/replay)")
    args = parser.parse_args(argv)
    run_dir = args.run_dir.expanduser().resolve()
    replay(run_dir, args.out or run_dir / "replay")


if __name__ == "__main__":
    sys.exit(main())
