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
    manifest, doc = run.manifest, run.results or {}
    argv = [str(a) for a in manifest.get("argv") or []]
    command = " ".join([_program(argv[0]), shlex.join(argv[1:])]).strip() if argv else ""
    single = "python -m wfeval " + shlex.join(run.overrides) if run.overrides is not None else ""
    fvd = []
    for m, agg in (doc.get("results") or {}).items():
        diag = agg.get("diagnostics") or {}
        if "recipe" in diag or "weights" in diag:
            recipe = diag.get("recipe")
            if isinstance(recipe, dict):
                recipe = ", ".join(f"{k}={v}" for k, v in recipe.items())
            fvd.append({"measurement": m, "recipe": recipe, "recipe_digest": diag.get("recipe_digest"),
                        "weights": (diag.get("weights") or {}).get("sha256") or "–",
                        "n": f"{diag.get('n_real', '–')} reference / {diag.get('n_generated', '–')} generated",
                        "rank_note": diag.get("rank_note")})
    bench, model = manifest.get("benchmark") or {}, manifest.get("model") or {}
    return {
        "label": run.label, "run_id": run.run_id, "path": str(run.path), "status": run.status,
        "error": manifest.get("error"),
        "fields": [
            ("status", run.status), ("started", manifest.get("started_at")), ("finished", manifest.get("finished_at")),
            ("config hash", manifest.get("config_hash")), ("benchmark", f"{bench.get('id', '?')} {bench.get('version', '')}"),
            ("dataset hash", bench.get("dataset_hash")), ("samples", bench.get("n_samples")),
            ("model", f"{model.get('name', '?')} {model.get('version', '')} ({model.get('target') or 'no target'})"),
            ("model cache key", model.get("key")), ("store", manifest.get("store_dir")),
            ("host", manifest.get("host")), ("working directory", manifest.get("cwd")),
        ],
        "versions": sorted((manifest.get("versions") or {}).items()),
        "metrics": sorted((k, v.get("version"), v.get("class")) for k, v in (manifest.get("metrics") or {}).items()),
        "command": command, "single": single if single != command else "", "fvd": fvd,
        "evidence_rules": (doc.get("evidence") or {}).get("rules"),
    }
