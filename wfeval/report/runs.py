"""A run as tables see it: its results, its folder, what it was asked to be (Hydra's overrides) and
its task, read as plain data from the run folder (never a target built from it).

Leaderboards put a *model* in a row and a *benchmark* (with its task and protocol) in a column:
:func:`column_key` says which column a run belongs to; :func:`row_key` what identifies its row —
the run's own overrides, less those that choose the column (``benchmark=``, ``task=``,
``protocol=``, ``policy=``, their sub-keys, ``run.limit``, ``run.shard``) and those that change
nothing in the results (:data:`~wfeval.config.run_config.RESULT_NEUTRAL_RUN_KEYS`: where files go,
progress, the device, the batch size, overlapped scoring, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from wfeval.config.run_config import RESULT_NEUTRAL_RUN_KEYS
from wfeval.report.rows import find_results, load_document
from wfeval.results.record import OPEN_LOOP, Aggregate, RunResults
from wfeval.storage.rundir import FILES

COLUMN_KEYS = ("benchmark", "task", "protocol", "policy", "run.limit", "run.shard")
#: overrides that never change a run's numbers: Hydra's own and the result-neutral run options (one list)
SILENT_KEYS = ("hydra", *(f"run.{key}" for key in RESULT_NEUTRAL_RUN_KEYS))
DEFAULT_TASK = "action_video"


@dataclass
class Entry:
    """One run: its results (None when it has none: a failed run), folder and config choices."""

    document: RunResults | None
    run_dir: Path | None = None
    overrides: list[str] | None = None
    task: str | None = None
    model_name: str = "?"
    benchmark: str = ""
    protocol: str = OPEN_LOOP
    status: str = "completed"
    error: str | None = None
    run_id: str = ""
    model_key: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # what a caller attaches (the report: its RunData)

    def __post_init__(self) -> None:
        if self.document is not None and not isinstance(self.document, RunResults):  # results given as data
            self.document = RunResults.from_dict(self.document)

    @classmethod
    def of_document(cls, document: RunResults | Mapping[str, Any], run_dir: Path | None = None, **kw: Any) -> "Entry":
        if not isinstance(document, RunResults):
            document = RunResults.from_dict(document)
        return cls(document, run_dir=run_dir, model_name=document.model_name, benchmark=document.benchmark_id,
                   protocol=document.protocol.label, run_id=str(document.run_id or ""),
                   model_key=str(document.model.key or ""), **kw)

    @property
    def folder(self) -> str:
        return self.run_dir.name if self.run_dir is not None else self.run_id

    @property
    def results(self) -> dict[str, Aggregate]:
        return self.document.results if self.document is not None else {}


def read_hydra(run_dir: Path) -> tuple[list[str] | None, str | None]:
    """(the job's overrides, the task's name) from ``.hydra/``; (None, None) where absent or unreadable."""
    import yaml  # PyYAML, a dependency of omegaconf

    from wfeval.utils.yaml_data import load_yaml

    def load(name: str) -> Any:
        path = run_dir / FILES.hydra / name
        if not path.is_file():
            return None
        try:
            return load_yaml(path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, OSError, UnicodeDecodeError):
            return None

    overrides = load("overrides.yaml")
    config = load("config.yaml")
    task = (config.get("task") or {}).get("name") if isinstance(config, dict) else None
    return ([str(o) for o in overrides] if isinstance(overrides, list) else None,
            str(task) if isinstance(task, str) else None)


def load_entries(paths: Iterable[str | Path]) -> list[Entry]:
    """Every run with a results.json under ``paths`` (run folders, sweep folders)."""
    entries = []
    for path in find_results(paths):
        overrides, task = read_hydra(path.parent)
        entries.append(Entry.of_document(load_document(path), path.parent, overrides=overrides, task=task))
    return entries


def parse_overrides(overrides: Iterable[str]) -> dict[str, str]:
    """``["model=learned", "+model.x=1"]`` → ``{"model": "learned", "model.x": "1"}`` (``~key`` kept as removed)."""
    out: dict[str, str] = {}
    for item in overrides:
        text = str(item)
        if text.startswith("~"):
            key, _, value = text[1:].partition("=")
            out[key] = f"~{value}" if value else "~"
            continue
        key, sep, value = text.lstrip("+").partition("=")
        if sep:
            out[key] = value
    return out


def _under(key: str, names: Iterable[str]) -> bool:
    return any(key == n or key.startswith(n + ".") for n in names)


def row_key(entry: Entry) -> dict[str, str]:
    """What identifies the run's row: its overrides less column and silent keys; without recorded
    overrides, its model's name and cache key."""
    if entry.overrides is None:
        return {"model": entry.model_name, "#model key": entry.model_key}
    return {k: v for k, v in parse_overrides(entry.overrides).items()
            if not _under(k, COLUMN_KEYS) and not _under(k, SILENT_KEYS)}


def column_key(entry: Entry) -> str:
    """``gridworld``; ``gridworld/goal_reaching`` for another task; ``gridworld@autoregressive`` for
    another protocol of the default task. Results in different columns are never ranked together."""
    key = entry.benchmark or "?"
    if entry.task and entry.task != DEFAULT_TASK:
        return f"{key}/{entry.task}"
    if entry.protocol != OPEN_LOOP:
        return f"{key}@{entry.protocol}"
    return key
