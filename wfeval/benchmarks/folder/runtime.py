"""Runtime hook of the folder family: report the dataset's problems before generation starts,
and check at the end that the manifest did not change under the run."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Mapping

from wfeval.benchmarks.base import RunContext, input_error
from wfeval.benchmarks.folder import manifest as mf
from wfeval.utils.hashing import file_sha256

if TYPE_CHECKING:
    from wfeval.benchmarks.folder.adapter import FolderBenchmark


class FolderRuntime:
    def __init__(self, benchmark: FolderBenchmark):
        self.benchmark = benchmark
        self._manifest_sha256: str | None = None

    def summary(self, context: RunContext) -> dict[str, Any]:
        bench = self.benchmark
        refused = {r.sample_id for r in bench.records() if r.refused}  # samples of their own (input errors)
        unreadable = [r.sample_id for r in context.requests if input_error(r) and r.sample_id not in refused]
        counted = [r for r in context.requests if r.sample_id in refused]
        usable = len(context.requests) - len(unreadable) - len(counted)
        considered = len(context.requests)
        return {
            "root": str(bench.root),
            "lines": bench.n_lines,
            "samples": len(context.requests) - len(counted),
            "usable": usable,
            "unreadable": len(unreadable),
            "refused_lines": len(counted),
            "coverage": usable / considered if considered else 0.0,
            "problems": [p.to_dict() for p in sorted(bench.problems, key=lambda p: (p.line or 0, p.message))],
        }

    @staticmethod
    def _manifest_digest(bench: Any) -> str | None:
        path = bench.root / mf.MANIFEST
        return file_sha256(path) if path.is_file() else None

    def prepare(self, context: RunContext) -> Mapping[str, Any]:
        bench = self.benchmark
        self._manifest_sha256 = self._manifest_digest(bench)
        summary = self.summary(context)
        context.event("dataset_checked", **{k: v for k, v in summary.items() if k != "problems"},
                      problems=[str(p) for p in bench.problems])
        if bench.problems:
            header = (f"dataset {bench.root}: {summary['usable']} of {summary['samples'] + summary['refused_lines']} "
                      f"sample(s) usable (coverage {summary['coverage']:.3f}); {summary['refused_lines']} line(s) "
                      f"refused, {summary['unreadable']} sample(s) unreadable and skipped by every metric:")
            print(bench.report(header=header), file=sys.stderr, flush=True)
        return {"dataset": summary}

    def finalize(self, context: RunContext, *, status: str) -> Mapping[str, Any]:
        now = self._manifest_digest(self.benchmark)
        changed = self._manifest_sha256 is not None and now != self._manifest_sha256
        if changed:
            print(f"warning: {self.benchmark.root / mf.MANIFEST} changed during the run", file=sys.stderr)
        return {"manifest_changed_during_run": changed}
