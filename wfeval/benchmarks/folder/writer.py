"""Write requests (of any benchmark) as a dataset folder: the inverse of :class:`FolderBenchmark`.

Reading the folder back gives the same requests (same ids, splits, array contents, controls and
metadata) as long as the video format is lossless (the default ``.mkv``/ffv1 is).
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.base import input_error
from wfeval.benchmarks.folder import manifest as mf
from wfeval.storage.artifacts import ArtifactStore, read_array
from wfeval.storage.safe_io import atomic_write_bytes

_RESERVED_GENERATION = ("fps", "num_frames")


def _is_image(array: np.ndarray) -> bool:
    return array.dtype == np.uint8 and array.ndim == 3 and array.shape[-1] in (1, 3, 4)


def _is_video(array: np.ndarray) -> bool:
    return array.dtype == np.uint8 and array.ndim == 4 and array.shape[-1] in (1, 3, 4)


def _write_array(root: Path, rel_stem: str, array: np.ndarray, video_suffix: str, fps: float, verify: bool) -> str:
    from wfeval.io import LOSSLESS_SUFFIXES, read_image, read_video, write_image, write_video

    if _is_image(array):
        rel = f"{rel_stem}.png"
        write_image(root / rel, array)
        back = read_image(root / rel) if verify else None
    elif _is_video(array):
        rel = f"{rel_stem}{video_suffix}"
        write_video(root / rel, array, fps=fps)
        back = read_video(root / rel).frames if verify and video_suffix in LOSSLESS_SUFFIXES else None
    else:
        rel = f"{rel_stem}.npy"
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        atomic_write_bytes(root / rel, buffer.getvalue(), durable=False)
        back = None
    if back is not None and not np.array_equal(back, array if array.shape[-1] == 3 else back):
        raise RuntimeError(f"{root / rel}: written file does not read back exactly")
    return rel


def write_dataset(
    requests: Sequence[GenerationRequest],
    root: str | Path,
    *,
    store: ArtifactStore | None = None,
    name: str | None = None,
    version: str = "1.0",
    description: str = "",
    video_suffix: str = ".mkv",
    overwrite: bool = False,
    verify: bool = True,
    source: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write ``requests`` as ``root/manifest.jsonl`` + ``dataset.json`` + files; return a summary.

    Initial frames become ``frames/<id>.png``, reference videos ``videos/<id><video_suffix>``,
    other image/video/array artifacts ``inputs/<key>/`` or ``references/<key>/``. Requests whose
    inputs were unreadable are left out (and counted).
    """
    from wfeval.io import unsafe_id_reason

    root = Path(root)
    if root.exists() and any(root.iterdir()):
        if not overwrite:
            raise FileExistsError(f"{root} is not empty; pass overwrite=True (--force) to replace it")
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    action_names = {json.dumps(r.to_dict()["controls"].get("action_names")) for r in requests}
    shared_names = json.loads(action_names.pop()) if len(action_names) == 1 else None
    spaces = {json.dumps(r.to_dict()["controls"].get("action_space"), sort_keys=True) for r in requests}
    if len(spaces) > 1:
        raise ValueError("the requests declare different action spaces (controls['action_space']); a dataset "
                         "folder has one, in dataset.json")
    shared_space = json.loads(spaces.pop()) if spaces else None
    lines, skipped, fps_values = [], [], set()
    for request in requests:
        if input_error(request):
            skipped.append({"sample_id": request.sample_id, "reason": input_error(request)})
            continue
        reason = unsafe_id_reason(request.sample_id)
        if reason:
            raise ValueError(f"sample_id {request.sample_id!r} {reason}")
        fps = request.generation.get("fps") or 8
        fps_values.add(fps)
        line: dict[str, Any] = {"sample_id": request.sample_id, "split": request.split}
        for field, refs, folder, slot in (("initial_frame", request.inputs, "frames", "image"),
                                          ("reference_video", request.references, "videos", "video")):
            extra = {}
            for key, ref in refs.items():
                array = read_array(ref, store=store)
                stem = f"{folder}/{request.sample_id}" if key == slot else \
                    f"{'inputs' if slot == 'image' else 'references'}/{key}/{request.sample_id}"
                rel = _write_array(root, stem, array, video_suffix, fps, verify)
                if key == slot:
                    line[field] = rel
                else:
                    extra[key] = rel
            if extra:
                line["inputs" if slot == "image" else "references"] = extra
        controls = dict(request.controls)
        if "actions" in controls:
            line["actions"] = list(controls.pop("actions"))
        if shared_names is not None:
            controls.pop("action_names", None)
        controls.pop("action_space", None)  # one for the dataset, in dataset.json
        if controls:
            line["controls"] = controls
        if request.prompt is not None:
            line["prompt"] = request.prompt
        line["fps"] = fps
        if request.generation.get("num_frames") is not None:
            line["num_frames"] = int(request.generation["num_frames"])
        if request.metadata:
            line["metadata"] = request.to_dict()["metadata"]
        lines.append(line)
    text = "".join(json.dumps(_plain(line), ensure_ascii=False, sort_keys=False) + "\n" for line in lines)
    atomic_write_bytes(root / mf.MANIFEST, text.encode("utf-8"), durable=False)
    info: dict[str, Any] = {"format": mf.FORMAT, "name": name or root.name, "version": version,
                            "description": description}
    if len(fps_values) == 1:
        info["fps"] = fps_values.pop()
    if shared_names is not None:
        info["action_names"] = list(shared_names)
    if shared_space is not None:
        info["action_space"] = shared_space
    info["splits"] = sorted({line["split"] for line in lines})
    if source:
        info["source"] = dict(source)
    atomic_write_bytes(root / mf.DATASET_JSON,
                       (json.dumps(_plain(info), indent=2, ensure_ascii=False) + "\n").encode("utf-8"), durable=False)
    return {"root": str(root), "samples": len(lines), "skipped_unreadable": skipped}


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
