"""Provenance of a run: the command that ran, hashes, identities, versions, the FVD recipe."""

from __future__ import annotations

import shlex
from pathlib import PurePath
from typing import Any

from wfeval.report.html.load import RunData


def _program(path: str) -> str:
    """``python -m wfeval.resume`` for ``.../wfeval/resume.py`` (``-m`` puts the file in argv[0])."""
    parts = PurePath(path).with_suffix("").parts
    if "wfeval" in parts and path.endswith(".py"):
        module = list(parts[len(parts) - 1 - parts[::-1].index("wfeval"):])
        return "python -m " + ".".join(module[:-1] if module[-1] == "__main__" else module)
    return shlex.quote(path)  # a console script (``wfeval``) or a program of the user's


def provenance(run: RunData) -> dict[str, Any]:
    manifest, doc = run.manifest, run.results
    argv = [str(a) for a in manifest.argv or []]
    command = " ".join([_program(argv[0]), shlex.join(argv[1:])]).strip() if argv else ""
    single = "python -m wfeval " + shlex.join(run.overrides) if run.overrides is not None else ""
    fvd = []
    for m, agg in (doc.results if doc is not None else {}).items():
        diag = agg.diagnostics or {}
        if "recipe" in diag or "weights" in diag:
            recipe = diag.get("recipe")
            if isinstance(recipe, dict):
                recipe = ", ".join(f"{k}={v}" for k, v in recipe.items())
            fvd.append({"measurement": m, "recipe": recipe, "recipe_digest": diag.get("recipe_digest"),
                        "weights": (diag.get("weights") or {}).get("sha256") or "–",
                        "n": f"{diag.get('n_real', '–')} reference / {diag.get('n_generated', '–')} generated",
                        "rank_note": diag.get("rank_note")})
    bench, model = manifest.benchmark_info, manifest.model_info
    return {
        "label": run.label, "run_id": run.run_id, "path": str(run.path), "status": run.status,
        "error": manifest.error,
        "fields": [
            ("status", run.status), ("started", manifest.started_at), ("finished", manifest.finished_at),
            ("config hash", manifest.config_hash), ("benchmark", f"{_or(bench.id, '?')} {_or(bench.version, '')}"),
            ("dataset hash", bench.dataset_hash), ("samples", bench.n_samples),
            ("model", f"{_or(model.name, '?')} {_or(model.version, '')} ({model.target or 'no target'})"),
            ("model cache key", model.key), ("store", manifest.store_dir),
            ("host", manifest.host), ("working directory", manifest.cwd),
        ],
        "versions": sorted((manifest.versions or {}).items()),
        "metrics": sorted((k, v.version, v.metric_class) for k, v in (manifest.metrics or {}).items()),
        "command": command, "single": single if single != command else "", "fvd": fvd,
        "evidence_rules": doc.evidence.rules if doc is not None else None,
    }


def _or(value: Any, missing: str) -> Any:
    """``value``, or ``missing`` where the record has none (as a record without the key shows it)."""
    return missing if value is None else value
