"""The dataset folder benchmark: a ``manifest.jsonl`` of samples whose files sit beside it."""

from __future__ import annotations

import fnmatch
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from wfeval.api import (
    ActionSpace,
    BenchmarkSpec,
    ContractError,
    EvaluationProtocolSpec,
    GenerationRequest,
    WorldTaskConfig,
    action_space_of,
)
from wfeval.benchmarks.base import INPUT_ERROR, metric_specs
from wfeval.benchmarks.folder import manifest as mf
from wfeval.benchmarks.folder.runtime import FolderRuntime
from wfeval.benchmarks.folder.scorer import FolderScorer
from wfeval.config.errors import ConfigError
from wfeval.io import Limits
from wfeval.storage.artifacts import ArtifactStore
from wfeval.storage.decoded import file_ref
from wfeval.utils.hashing import file_sha256


class FolderBenchmark:
    """Samples of ``<dataset_root>/manifest.jsonl`` (format ``wfeval.dataset/1``, docs/dataset-folder.md).

    ``split`` (None: every split) and ``subset`` (sample ids or shell patterns such as
    ``scene1-*``; empty: all) select samples. Problems are collected in :attr:`problems`;
    ``strict=True`` refuses the whole dataset when there is any.
    """

    option_schemas = {"limits": Limits}  # benchmark.limits: what one sample's files may make wfeval decode

    def __init__(
        self,
        dataset_root: str,
        name: str | None = None,
        version: str | None = None,
        description: str = "",
        split: str | None = None,
        subset: Sequence[str] = (),
        fps: float = 8.0,
        strict: bool = False,
        check_complete: bool = True,
        metrics: Sequence[str] = (),  # metric ids, each optionally pinned: psnr==1.0
        tags: Sequence[str] = (),
        follow_symlinks: bool = False,
        limits: Mapping[str, Any] | None = None,
    ):
        try:
            self.limits = Limits.from_mapping(limits, "benchmark.limits")
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        self.strict, self.follow_symlinks = bool(strict), bool(follow_symlinks)
        root = Path(dataset_root).expanduser().resolve()
        if not root.is_dir():
            raise ConfigError(f"benchmark.dataset_root: {root} is not a folder")
        if not (root / mf.MANIFEST).is_file():
            raise ConfigError(f"benchmark.dataset_root: {root} has no {mf.MANIFEST} (see docs/dataset-folder.md)")
        for own in (mf.MANIFEST, mf.DATASET_JSON):
            target = (root / own).resolve()
            if not self.follow_symlinks and (root / own).exists() and root not in target.parents:
                raise ConfigError(f"benchmark.dataset_root: {root / own} is a symbolic link to {target}, outside the "
                                  "dataset root; it is not read (set benchmark.follow_symlinks=true to read it)")
        try:
            self.info = mf.read_dataset_info(root)
            records, self.problems, self.n_lines = mf.read_manifest(root)
        except ValueError as exc:
            raise ConfigError(f"benchmark.dataset_root: {exc}") from exc
        self.root = root
        self.fps = self.info.fps or fps
        self.check_complete = check_complete
        self.split, self.subset = split, tuple(subset)
        usable = self._select(records)
        refused = [r for r in mf.refused_records(self.problems, {r.sample_id for r in records}) if self._wanted(r)]
        self._records = sorted([*usable, *refused], key=lambda r: r.line)  # a refused line counts against coverage
        self._lines = {r.sample_id: r.line for r in self._records}
        self._files = {r.sample_id: {**r.inputs, **{f"reference.{k}": p for k, p in r.references.items()}}
                       for r in self._records}
        self.problems += [mf.Problem(r.line, m, r.sample_id, refused=False) for r in self._records for m in r.missing]
        self._escapes = {r.sample_id: self._escaping(r) for r in self._records}
        self.problems += [mf.Problem(self._lines[s], m, s, refused=False) for s, ms in self._escapes.items() for m in ms]
        if strict and self.problems:
            raise ConfigError(self.report(header="benchmark.strict: the dataset has problems; nothing was generated"))
        all_splits = sorted({r.split for r in records})
        self.spec = BenchmarkSpec(
            name=name or self.info.name or root.name,
            version=str(version or self.info.version or "1.0"),
            description=description or self.info.description,
            splits=tuple(self.info.splits or all_splits or (mf.DEFAULT_SPLIT,)),
            metrics=metric_specs(metrics),
            tags=tuple(tags or self.info.tags),
            dataset_root=str(root),
            metadata={"family": "folder", "split": split, "subset": list(self.subset)},
            action_space=self.info.action_space,
        )
        self.runtime = FolderRuntime(self)
        self.scorer = FolderScorer(self)

    # -- selection -------------------------------------------------------------------------------

    def _select(self, records: list[mf.Record]) -> list[mf.Record]:
        splits = sorted({r.split for r in records})
        chosen = [r for r in records if self.split is None or r.split == self.split]
        if self.split is not None and not chosen:
            raise ConfigError(f"benchmark.split: {self.split!r} selects no sample of {self.root / mf.MANIFEST}; "
                              f"its splits: {', '.join(splits) or '(none usable)'}")
        if self.subset:
            unmatched = [p for p in self.subset
                         if not any(ch in p for ch in "*?[") and p not in {r.sample_id for r in chosen}]
            if unmatched:
                raise ConfigError(f"benchmark.subset: no sample {', '.join(map(repr, unmatched))} "
                                  f"in the selected split(s) of {self.root}")
            chosen = [r for r in chosen if any(fnmatch.fnmatchcase(r.sample_id, p) for p in self.subset)]
        if not chosen:
            raise ConfigError(f"benchmark: no usable sample in {self.root} after the split/subset filters\n"
                              + self.report())
        return chosen

    def _wanted(self, record: mf.Record) -> bool:
        """Whether the split/subset filters select ``record`` (a refused line's placeholder too)."""
        return (self.split is None or record.split == self.split) and (
            not self.subset or any(fnmatch.fnmatchcase(record.sample_id, p) for p in self.subset))

    def _escaping(self, record: mf.Record) -> list[str]:
        """Files of ``record`` that resolve outside the dataset root (a symlink leaving it), unless
        ``follow_symlinks``; each is the sample's input error."""
        if self.follow_symlinks:
            return []
        named = [(_label(k, "image"), p) for k, p in record.inputs.items()]
        named += [(_label(k, "video"), p) for k, p in record.references.items()]
        if isinstance(record.actions, str):
            named.append(("actions", record.actions))
        out = []
        for label, rel in named:
            target = (self.root / rel).resolve()
            if target != self.root and self.root not in target.parents:
                out.append(f"{label} {rel!r}: resolves to {target}, outside the dataset root (a symlink leaving "
                           "it); set benchmark.follow_symlinks=true to read it anyway")
            elif target.is_dir():  # a folder of frames: each frame file stays inside too
                out += [f"{label} {rel!r}: its frame {frame.name} resolves to {frame.resolve()}, outside the dataset "
                        "root (a symlink leaving it); set benchmark.follow_symlinks=true to read it anyway"
                        for frame in _frame_files(target) if self.root not in frame.resolve().parents][:1]
        return out

    def records(self) -> list[mf.Record]:
        """The selected manifest lines in file order (cheap: nothing decoded); a refused line is a
        placeholder record (``refused``: why) that becomes an input-error sample."""
        return list(self._records)

    def line_of(self, sample_id: str) -> int | None:
        return self._lines.get(sample_id)

    def files_of(self, sample_id: str) -> dict[str, str]:
        return dict(self._files.get(sample_id, {}))

    # -- requests --------------------------------------------------------------------------------

    def materialize(self, record: mf.Record, *, store: ArtifactStore, task: WorldTaskConfig,
                    protocol: EvaluationProtocolSpec) -> GenerationRequest:
        """One sample's request; its files are read in place (refs to the dataset's files, decoded once per
        store to learn their content, never copied); a file that cannot be read marks it unreadable (never raises)."""
        from wfeval.io import FILE_DECODER

        inputs, references = {}, {}
        errors = list(record.missing) + list(self._escapes.get(record.sample_id, ()))
        if record.refused:  # the line is a sample nothing can be read of: it counts, as an input error
            errors = [f"{mf.MANIFEST} line {record.line} refused: {'; '.join(record.refused)}"]
        actions = record.actions
        if not errors:
            for target, files, slot in ((inputs, record.inputs, "image"), (references, record.references, "video")):
                for key, rel in files.items():
                    label = _label(key, slot)
                    exact, path = (slot if key == slot else None), self.root / rel
                    try:  # read in place, decoded once per store by file content (wfeval.storage.decoded)
                        kind, options = self._how(path, exact)
                        ref = file_ref(store, path, kind=kind, decoder=FILE_DECODER, options=options,
                                       decode=lambda: self._read(path, exact=exact)[0])
                        if ref.kind == "video":  # also for a video decoded by an earlier run
                            from wfeval.io._limits import check_frames

                            check_frames(path, int(ref.shape[0]), self.limits)
                        target[key] = ref
                    except ValueError as exc:  # wfeval.io.MediaError is a ValueError
                        errors.append(f"{label} {rel!r}: {getattr(exc, 'reason', exc)}")
                        continue
            if isinstance(actions, str):
                try:
                    actions = _load_actions(self.root / actions, self.limits)
                except ValueError as exc:
                    errors.append(f"actions {record.actions!r}: {getattr(exc, 'reason', exc)}")
            problem = _action_problem(actions, self.limits, self.info.action_space) \
                if isinstance(actions, list) else None
            if problem:
                errors.append(f"actions{f' {record.actions!r}' if isinstance(record.actions, str) else ''}: {problem}")
            if record.num_frames is not None and record.num_frames > self.limits.max_frames:
                errors.append(f"num_frames {record.num_frames:,} exceeds the limit of {self.limits.max_frames:,} "
                              f"(raise it with benchmark.limits.max_frames={record.num_frames} if it is right)")
            if not errors and "image" not in inputs and "video" in references:  # the video's first frame
                from wfeval.io._decoder import options_for

                inputs["image"] = file_ref(store, Path(references["video"].uri), kind="image", decoder=FILE_DECODER,
                                           options=options_for("first_frame", limits=self.limits))
        num_frames = record.num_frames
        if num_frames is None:
            if isinstance(actions, list):
                num_frames = len(actions) + 1
            elif "video" in references:
                num_frames = references["video"].shape[0]
        controls: dict[str, Any] = {}
        if isinstance(actions, list):
            controls["actions"] = actions
        if self.info.action_names is not None:
            controls["action_names"] = list(self.info.action_names)
        if self.info.action_space is not None:
            controls["action_space"] = self.info.action_space.to_dict()
        controls.update(record.controls)
        metadata = dict(record.metadata)
        if errors and record.refused:
            metadata[INPUT_ERROR] = errors[0]
        elif errors:
            metadata[INPUT_ERROR] = "; ".join(errors)
            known = {(p.line, p.message) for p in self.problems}
            self.problems += [mf.Problem(record.line, e, record.sample_id, refused=False)
                              for e in errors if (record.line, e) not in known]
            if self.strict:  # every kind of unreadable sample stops a strict run, before any generation
                raise ConfigError(self.report(header="benchmark.strict: the dataset has problems; nothing was "
                                                     "generated"))
        generation = {**dict(task.generation_defaults or {}), "fps": record.fps or self.fps}
        if num_frames is not None:
            generation["num_frames"] = int(num_frames)
        return GenerationRequest(
            sample_id=record.sample_id, task_id=task.task_id or "", benchmark_id=self.spec.benchmark_id,
            split=record.split, protocol=protocol.name, inputs=inputs, controls=controls,
            references=references, generation=generation, prompt=record.prompt, metadata=metadata,
        )

    def _how(self, path: Path, exact: str | None) -> tuple[str, dict[str, Any]]:
        """(artifact kind, decoding options): ``exact`` forces an image or a video, else the file type decides."""
        from wfeval.io import VideoReadError, media_kind
        from wfeval.io._decoder import options_for

        kind = media_kind(path)
        if exact == "image" or (exact is None and kind == "image"):
            return "image", options_for("image", limits=self.limits)
        if exact == "video" or kind in ("video", "frames"):
            return "video", options_for("video", check_complete=self.check_complete, limits=self.limits)
        if kind == "array":
            return "array", options_for("array", limits=self.limits)
        raise VideoReadError(path, f"unsupported file type {path.suffix!r}")

    def _read(self, path: Path, *, exact: str | None) -> tuple[np.ndarray, str]:
        """(array, artifact kind), decoded as a ref of this file decodes it when read."""
        from wfeval.io import FILE_DECODER

        kind, options = self._how(path, exact)
        return FILE_DECODER.decode(path, options), kind

    def requests(self, *, store: ArtifactStore, task: WorldTaskConfig,
                 protocol: EvaluationProtocolSpec) -> list[GenerationRequest]:
        return [self.materialize(r, store=store, task=task, protocol=protocol) for r in self._records]

    # -- identity and report ---------------------------------------------------------------------

    def fingerprint(self) -> dict[str, Any]:
        return {
            "family": "folder",
            "format": mf.FORMAT,
            "root": str(self.root),
            **{key: file_sha256(path) if path.is_file() else None for key, path in (
                ("manifest_sha256", self.root / mf.MANIFEST), ("dataset_json_sha256", self.root / mf.DATASET_JSON))},
            "split": self.split,
            "subset": list(self.subset),
            "n_lines": self.n_lines,
            "n_selected": len(self._records),
        }

    def report(self, header: str | None = None) -> str:
        """The problems, one per line, each naming the manifest line and the file."""
        problems = sorted(self.problems, key=lambda p: (p.line or 0, p.message))
        lines = [header or f"dataset {self.root}: {len(problems)} problem(s)"]
        lines += [f"  {p}" for p in problems]
        return "\n".join(lines)


def _load_actions(path: Path, limits: Any = None) -> list:
    if path.suffix == ".npy":
        from wfeval.io import load_array

        return load_array(path, limits)[0].tolist()
    return mf.read_json_file(path, list, f"actions file {path}")


def _action_problem(actions: list, limits: Any, space: ActionSpace | None = None) -> str | None:
    """Why a list of actions cannot be given to a model (too many, a non-finite number; against the
    declared action space: a wrong shape, out of bounds; undeclared vectors: ragged), or None."""
    if len(actions) > limits.max_actions:
        return (f"{len(actions):,} actions exceed the limit of {limits.max_actions:,} "
                f"(raise it with benchmark.limits.max_actions={len(actions)} if they are right)")
    stack = [(i, a) for i, a in enumerate(actions)]
    while stack:
        index, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return f"action {index} holds a non-finite number ({value!r}); actions must be finite"
        if isinstance(value, (list, tuple)):
            stack.extend((index, v) for v in value)
        elif isinstance(value, dict):
            stack.extend((index, v) for v in value.values())
    if space is None:
        try:
            space = action_space_of(GenerationRequest("check", controls={"actions": actions}))
        except (ContractError, TypeError, ValueError):
            space = None
        space = space if space is not None and space.is_continuous else None
    if space is not None:
        problem = space.problem(actions)
        if problem:
            return f"{problem} ({space.describe()})"
    return None


def _frame_files(folder: Path) -> list[Path]:
    from wfeval.io import frame_files

    try:
        return frame_files(folder)
    except ValueError:  # an unlistable folder: reading it reports that
        return []


def _label(key: str, slot: str) -> str:
    if key == slot:
        return "initial_frame" if slot == "image" else "reference_video"
    return f"{'inputs' if slot == 'image' else 'references'}.{key}"
