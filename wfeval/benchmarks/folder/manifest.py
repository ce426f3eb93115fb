"""The dataset folder format ``wfeval.dataset/1``: parse and check ``manifest.jsonl`` line by line.

Nothing is decoded here: a line is checked for JSON, keys, types, a safe unique ``sample_id``
and safe relative paths, and the files it names are checked to exist. A line that cannot define
a sample is *refused*; a sample whose files are missing is kept and marked *unreadable*.
"""

from __future__ import annotations

import difflib
import json
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from wfeval.api import ActionSpace, ContractError
from wfeval.benchmarks.base import INPUT_ERROR
from wfeval.io import unsafe_id_reason, unsafe_path_reason

FORMAT = "wfeval.dataset/1"
MANIFEST = "manifest.jsonl"
DATASET_JSON = "dataset.json"
DEFAULT_SPLIT = "default"
LINE_KEYS = ("sample_id", "split", "initial_frame", "reference_video", "actions", "prompt", "fps", "num_frames",
             "controls", "inputs", "references", "metadata")
DATASET_KEYS = ("format", "name", "version", "description", "fps", "action_names", "action_space", "splits", "tags",
                "source", "metadata")
_PATH_FIELDS = ("initial_frame", "reference_video")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the dataset, where it is, and whether its line was refused."""

    line: int | None
    message: str
    sample_id: str | None = None
    refused: bool = True
    split: str | None = None  # the refused line's split, when it could be read (it still counts there)

    def __str__(self) -> str:
        where = f"{MANIFEST}:{self.line}" if self.line else DATASET_JSON
        who = f" sample {self.sample_id!r}:" if self.sample_id and not self.refused else ""
        return f"{where}:{who} {self.message}" + (" (line refused)" if self.refused else "")

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "sample_id": self.sample_id, "refused": self.refused, "message": self.message}


@dataclass(frozen=True)
class Record:
    """One usable manifest line: paths are still relative to the dataset root."""

    line: int
    sample_id: str
    split: str
    inputs: Mapping[str, str] = field(default_factory=dict)
    references: Mapping[str, str] = field(default_factory=dict)
    actions: Any = None  # a list, a relative path to a .json/.npy file, or None
    prompt: str | None = None
    fps: float | None = None
    num_frames: int | None = None
    controls: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    missing: tuple[str, ...] = ()  # "<field> '<path>': file not found" for each file that is not there
    refused: tuple[str, ...] = ()  # a refused line, kept as a sample that counts against coverage: why


@dataclass(frozen=True)
class DatasetInfo:
    name: str | None = None
    version: str | None = None
    description: str = ""
    fps: float | None = None
    action_names: tuple[str, ...] | None = None
    action_space: ActionSpace | None = None
    splits: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)


def _unknown(key: str, valid: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(key, valid, n=2)
    hint = f" (did you mean: {', '.join(close)}?)" if close else f"; valid: {', '.join(valid)}"
    return f"unknown key {key!r}{hint}"


def read_json_file(path: Path, expected: type, label: str) -> Any:
    """The JSON value in ``path``, which must be a ``expected`` (dict or list); ValueError naming
    ``label`` when the file cannot be read or holds something else."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{label}: not readable JSON ({exc})") from exc
    if not isinstance(data, expected):
        kind = "object" if expected is dict else "list"
        raise ValueError(f"{label}: expected a JSON {kind}, got {type(data).__name__}")
    return data


def read_dataset_info(root: Path) -> DatasetInfo:
    """``dataset.json`` (optional); a broken one refuses the whole dataset (ValueError)."""
    path = root / DATASET_JSON
    if not path.exists():
        return DatasetInfo()
    data = read_json_file(path, dict, str(path))
    problems = [_unknown(k, DATASET_KEYS) for k in data if k not in DATASET_KEYS]
    if data.get("format", FORMAT) != FORMAT:
        problems.append(f"format {data['format']!r} is not {FORMAT!r}")
    fps = data.get("fps")
    if fps is not None and not (isinstance(fps, numbers.Real) and not isinstance(fps, bool) and fps > 0):
        problems.append(f"fps must be a positive number, got {fps!r}")
    names = data.get("action_names")
    if names is not None and not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        problems.append("action_names must be a list of strings")
    space = None
    if data.get("action_space") is not None:
        try:
            space = action_space_from(data["action_space"])
        except (ContractError, TypeError, ValueError) as exc:
            problems.append(f"action_space: {exc}")
    if problems:
        raise ValueError(f"{path}: " + "; ".join(problems))
    return DatasetInfo(action_space=space,
        name=data.get("name"), version=None if data.get("version") is None else str(data["version"]),
        description=str(data.get("description") or ""), fps=fps,
        action_names=tuple(names) if names is not None else None,
        splits=tuple(data.get("splits") or ()), tags=tuple(data.get("tags") or ()), raw=data,
    )


def action_space_from(value: Any) -> ActionSpace:
    """An :class:`ActionSpace` from its JSON form (``{"shape": [2], "low": -1, "high": 1, ...}``;
    ``kind`` defaults to continuous; a single number stands for every element's bound)."""
    if not isinstance(value, Mapping):
        raise ValueError(f"expected an object such as {{\"shape\": [2], \"low\": -1, \"high\": 1}}, "
                         f"got {type(value).__name__}")
    data = dict(value)
    for key in ("low", "high"):
        if isinstance(data.get(key), numbers.Real) and not isinstance(data.get(key), bool):
            data[key] = [data[key]]
        elif data.get(key) is None:
            data.pop(key, None)
    if data.get("kind", "continuous") == "discrete":
        data.setdefault("dtype", "int64")
        data.setdefault("n", len(data.get("names") or ()))
    return ActionSpace.from_dict(data)


def _check_path_map(value: Any, key: str, errors: list[str]) -> dict[str, str]:
    if not isinstance(value, dict):
        errors.append(f"{key} must be an object of name -> relative path, got {type(value).__name__}")
        return {}
    out = {}
    for name, text in value.items():
        reason = unsafe_path_reason(text)
        if reason:
            errors.append(f"{key}.{name}: {reason}")
        else:
            out[str(name)] = text
    return out


def _positive(value: Any, integer: bool) -> bool:
    kind = numbers.Integral if integer else numbers.Real
    return isinstance(value, kind) and not isinstance(value, bool) and value > 0


def parse_line(number: int, data: Any) -> tuple[Record | None, list[str], str | None]:
    """(record or None, problems, the sample id if one could be read)."""
    if not isinstance(data, dict):
        return None, [f"expected a JSON object, got {type(data).__name__}"], None
    errors = [_unknown(k, LINE_KEYS) for k in data if k not in LINE_KEYS]
    sample_id = data.get("sample_id")
    if "sample_id" not in data:
        errors.append("missing sample_id")
        sample_id = None
    else:
        reason = unsafe_id_reason(sample_id)
        if reason:
            errors.append(f"sample_id {sample_id!r} {reason}")
            sample_id = None
    split = data.get("split", DEFAULT_SPLIT)
    if not isinstance(split, str) or not split:
        errors.append(f"split must be a non-empty string, got {split!r}")
    inputs = _check_path_map(data.get("inputs", {}), "inputs", errors)
    references = _check_path_map(data.get("references", {}), "references", errors)
    for key, target, slot in (("initial_frame", inputs, "image"), ("reference_video", references, "video")):
        if data.get(key) is None:
            continue
        reason = unsafe_path_reason(data[key])
        if reason:
            errors.append(f"{key}: {reason}")
        elif slot in target:
            errors.append(f"{key} and {'inputs' if key == 'initial_frame' else 'references'}.{slot} both given")
        else:
            target[slot] = data[key]
    actions = data.get("actions")
    if actions is not None and not isinstance(actions, list):
        reason = unsafe_path_reason(actions) if isinstance(actions, str) else "must be a list or a path"
        if reason or not actions.endswith((".json", ".npy")):
            errors.append(f"actions: {reason or 'a path must name a .json or .npy file'}")
    prompt = data.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        errors.append(f"prompt must be a string, got {type(prompt).__name__}")
    if data.get("fps") is not None and not _positive(data["fps"], integer=False):
        errors.append(f"fps must be a positive number, got {data['fps']!r}")
    if data.get("num_frames") is not None and not _positive(data["num_frames"], integer=True):
        errors.append(f"num_frames must be a positive integer, got {data['num_frames']!r}")
    controls = data.get("controls", {})
    if not isinstance(controls, dict) or "actions" in controls or "action_space" in controls:
        errors.append("controls must be an object without 'actions' or 'action_space' (give actions in their own "
                      "key, the action space in dataset.json)")
    metadata = data.get("metadata", {})
    if not isinstance(metadata, dict) or INPUT_ERROR in metadata:
        errors.append(f"metadata must be an object without the reserved key {INPUT_ERROR!r}")
    if not inputs and not references and prompt is None and not errors:
        errors.append("nothing to condition on: give initial_frame, reference_video, inputs or prompt")
    if errors or sample_id is None:
        return None, errors, sample_id
    record = Record(line=number, sample_id=sample_id, split=split, inputs=inputs, references=references,
                    actions=actions, prompt=prompt, fps=data.get("fps"), num_frames=data.get("num_frames"),
                    controls=dict(controls), metadata=dict(metadata))
    return record, [], sample_id


def read_manifest(root: Path) -> tuple[list[Record], list[Problem], int]:
    """Usable records (file order), problems (line order) and the number of non-blank lines."""
    path = root / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the manifest ({exc})") from exc
    records: list[Record] = []
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    n_lines = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        n_lines += 1
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(Problem(number, f"malformed JSON ({exc.msg} at column {exc.colno})"))
            continue
        record, errors, sample_id = parse_line(number, data)
        if sample_id is not None and sample_id in first_line:
            errors.insert(0, f"duplicate sample_id {sample_id!r} (first on line {first_line[sample_id]})")
            record = None
        elif sample_id is not None:
            first_line[sample_id] = number
        if errors:
            split = data.get("split", DEFAULT_SPLIT) if isinstance(data, dict) else None
            problems.extend(Problem(number, e, sample_id=sample_id, split=split if isinstance(split, str) else None)
                            for e in errors)
            continue
        records.append(_with_missing_files(root, record))
    if n_lines == 0:
        raise ValueError(f"{path}: the manifest has no sample lines")
    return records, problems, n_lines


def refused_records(problems: list[Problem], taken: set[str]) -> list[Record]:
    """One placeholder record per refused line, in line order: the line is still a sample of the
    dataset, whose inputs could not be read, so it counts against coverage (``refused`` says why).
    Its id is the line's own when it was readable and unused, else ``refused-line-<N>``."""
    by_line: dict[int, list[Problem]] = {}
    for problem in problems:
        if problem.refused and problem.line:
            by_line.setdefault(problem.line, []).append(problem)
    out = []
    for line, found in sorted(by_line.items()):
        own = found[0].sample_id
        sample_id = own if own and own not in taken and not unsafe_id_reason(own) else f"refused-line-{line}"
        while sample_id in taken:
            sample_id += "_"
        taken.add(sample_id)
        out.append(Record(line=line, sample_id=sample_id, split=found[0].split or DEFAULT_SPLIT,
                          refused=tuple(p.message for p in found)))
    return out


def _with_missing_files(root: Path, record: Record) -> Record:
    missing = []
    named = [(f"inputs.{k}" if k != "image" else "initial_frame", p) for k, p in record.inputs.items()]
    named += [(f"references.{k}" if k != "video" else "reference_video", p) for k, p in record.references.items()]
    if isinstance(record.actions, str):
        named.append(("actions", record.actions))
    for name, rel in named:
        if not (root / rel).exists():
            missing.append(f"{name} {rel!r}: file not found")
    if not missing:
        return record
    return Record(**{**record.__dict__, "missing": tuple(missing)})
