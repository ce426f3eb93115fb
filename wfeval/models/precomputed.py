"""``model=precomputed``: videos generated elsewhere, one per sample, found by sample id.

``<root>/<path_template>.<ext>`` (default template ``{sample_id}``; fields ``{sample_id}``,
``{split}``, ``{benchmark}``, ``{task}``) in any format :func:`wfeval.io.read_video` reads, or a
folder of frames ``<root>/<sample_id>/``. A sample without a file is *not generated* (not a
failure of the model, not an error of a metric); an unreadable file is a failed generation
naming the file. The model identity includes a fingerprint of the folder's content, so
changed files are never served from the generation cache.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

from wfeval.api import GenerationRequest
from wfeval.models._files import read_output, tree_digest
from wfeval.models.protocol import Generated, NotGenerated, SampleFailed

TEMPLATE_FIELDS = ("sample_id", "split", "benchmark", "task")
_FIELD = re.compile(r"\{([^{}]*)\}")


class PrecomputedModel:
    #: options whose files fingerprint() already identifies (not hashed again: wfeval/models/_files.py)
    fingerprinted_options = ("root",)  # its own tree digest (fingerprint_mode) identifies the folder

    def __init__(
        self,
        root: str,
        name: str = "precomputed",
        version: str = "1.0",
        path_template: str = "{sample_id}",
        formats: Sequence[str] = (),
        output_key: str = "generated_video",
        fingerprint_mode: str = "content",
        check_complete: bool = True,
    ):
        from wfeval.io import VIDEO_SUFFIXES

        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise ValueError(f"model.root: {self.root} is not a folder")
        unknown = [f for f in _FIELD.findall(path_template) if f not in TEMPLATE_FIELDS]
        if unknown or not _FIELD.search(path_template):
            raise ValueError(f"model.path_template: {path_template!r} must use {{sample_id}} and only the fields "
                             f"{', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}")
        suffixes = tuple(f".{f.lstrip('.').lower()}" for f in formats)
        bad = [s for s in suffixes if s not in (*VIDEO_SUFFIXES, ".frames")]
        if bad:
            raise ValueError(f"model.formats: unsupported {', '.join(bad)}; use any of "
                             f"{', '.join(s[1:] for s in VIDEO_SUFFIXES)} or frames (a folder of images)")
        if fingerprint_mode not in ("content", "stat"):
            raise ValueError(f"model.fingerprint_mode: {fingerprint_mode!r} is not content or stat")
        self.name, self.version = name, version
        self.path_template, self.output_key = path_template, output_key
        self.suffixes = suffixes
        self.fingerprint_mode, self.check_complete = fingerprint_mode, check_complete
        self._fingerprint: dict[str, Any] | None = None

    def fingerprint(self) -> dict[str, Any]:
        """A digest of every file under ``root`` (content, or size + mtime with ``fingerprint_mode=stat``)."""
        if self._fingerprint is None:
            self._fingerprint = {"mode": self.fingerprint_mode, **tree_digest(self.root, self.fingerprint_mode)}
        return self._fingerprint

    def stem(self, request: GenerationRequest) -> Path:
        from wfeval.io import unsafe_path_reason

        values = {"sample_id": request.sample_id, "split": request.split, "benchmark": request.benchmark_id,
                  "task": request.task_id}
        rel = _FIELD.sub(lambda m: str(values[m.group(1)]), self.path_template)
        reason = unsafe_path_reason(rel)
        if reason:
            raise ValueError(f"sample {request.sample_id!r}: path {reason}")
        return self.root / rel

    def _one(self, request: GenerationRequest) -> Any:
        from wfeval.io import VIDEO_SUFFIXES, find_media

        try:
            stem = self.stem(request)
        except ValueError as exc:
            return SampleFailed(str(exc))
        wanted = tuple(s for s in self.suffixes if s != ".frames") or VIDEO_SUFFIXES
        found = find_media(stem, wanted)
        if stem.is_dir() and (not self.suffixes or ".frames" in self.suffixes) and stem not in found:
            found.append(stem)
        if not found:
            return NotGenerated(f"no file for sample {request.sample_id!r}: looked for "
                                f"{stem.relative_to(self.root)}{{{','.join(wanted)}}} or a frame folder in {self.root}")
        if len(found) > 1:
            names = ", ".join(str(p.relative_to(self.root)) for p in found)
            return SampleFailed(f"several files for sample {request.sample_id!r} ({names}); keep one or set "
                                "model.formats")
        try:
            frames, fps = read_output(found[0], check_complete=self.check_complete)
        except ValueError as exc:  # VideoReadError names the file
            return exc
        return Generated({self.output_key: frames}, {"source": str(found[0].relative_to(self.root)), "source_fps": fps})

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        return [self._one(r) for r in requests]
