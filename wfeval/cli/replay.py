"""``python -m wfeval.replay RUN_DIR [--out DIR]``: rebuild a run's results from its files alone.

Nothing is generated and no metric scores a sample again: the per-sample rows of
``metrics.jsonl`` are aggregated by the same metric classes (built from ``.hydra/config.yaml``)
with the benchmark rules recorded in ``manifest.json``, a chunk of samples at a time into the
runner's result table (memory does not grow with the samples). The rebuilt ``results.json`` equals the
original byte for byte; ``results.md`` and the printed table come with it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wfeval.pipeline.stored import StoredRunError, load_table
from wfeval.storage.rundir import FILES, RunDirectory
from wfeval.storage.safe_io import refuse_link


def replay(run_dir: Path, out_dir: Path) -> dict:
    from wfeval.config import register_schemas
    from wfeval.report.markdown import results_markdown
    from wfeval.report.table import results_table
    from wfeval.results import build_results

    register_schemas()  # a metric the run added with extra_metrics is read from its packaged config
    manifest, metrics, table = load_table(run_dir)
    results, document = build_results(
        manifest=manifest, metrics=metrics, table=table, rules=manifest.get("rules") or {},
        required_metrics=manifest["benchmark"].get("metrics", ()),
    )
    out = RunDirectory(out_dir)
    out.write_json(FILES.results, document)
    out.write_text(FILES.results_md, results_markdown(document))
    title = f"{manifest['model']['name']} on {manifest['benchmark']['id']}  (replayed {run_dir})"
    print(results_table(results, title=title))
    return document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wfeval.replay", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: RUN_DIR/replay)")
    args = parser.parse_args(argv)
    run_dir = args.run_dir.expanduser().resolve()
    out = args.out or run_dir / FILES.replay
    try:
        refuse_link(out)  # a run folder is data: its `replay` may be a link to someone else's folder
        replay(run_dir, out)
    except StoredRunError as exc:
        print(f"wfeval.replay: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        from wfeval.pipeline.failure import describe_os_error

        print(f"wfeval.replay: cannot write the results: {describe_os_error(exc)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
