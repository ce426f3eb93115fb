"""Side-by-side moving pictures of one sample: reference | generated | |difference|, frame-aligned.

One animated WebP (Pillow, lossy at ``QUALITY``: pictures are for looking, the numbers come from
the stored arrays) per sample, inlined as a data URI. Frame ``t`` of every
panel is frame ``t`` of its video; a video shorter than the other shows a grey panel for the
frames it lacks. Bounds that keep a report small whatever the run size: at most
``MAX_FRAMES`` frames (evenly subsampled beyond) and panels at most ``MAX_SIDE`` pixels (shrunk
beyond, never enlarged: the page scales them up with ``image-rendering: pixelated``).
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from wfeval.api import ArtifactRef
from wfeval.storage.artifacts import ArtifactError, ArtifactStore, read_array

MAX_FRAMES = 48
MAX_SIDE = 128
DIFF_GAIN = 4  # |generated - reference| × 4, clipped to 255: small errors stay visible
GAP = 2
QUALITY = 80
# libwebp effort: on a 17-frame 128×388 Atari strip, 2 took 0.038 s for 75.0 KB where 4 took 0.078 s
# for 74.7 KB (6: 1.6 s, 66.8 KB); a warm run's report spends most of its time here
METHOD = 2
GREY = 96


@dataclass
class Strip:
    """An animated picture (``data_uri``) or, when a video cannot be read, why not (``problems``)."""

    data_uri: str | None
    frames: int
    problems: list[str]
    panels: tuple[str, ...] = ("reference", "generated", f"|diff| ×{DIFF_GAIN}")
    width: int = 0
    height: int = 0


def load_video(ref: ArtifactRef | None, store_dir: Path | None, what: str) -> tuple[np.ndarray | None, str | None]:
    """The array behind ``ref`` as T×H×W×3 uint8, or ``(None, why)``: a missing object is shown, not raised."""
    if ref is None:
        return None, f"{what}: none recorded"
    try:
        store = ArtifactStore(store_dir) if store_dir is not None else None
        array = read_array(ref, store=store)
    except ArtifactError as exc:
        return None, f"{what} missing from the store: {exc}"
    except Exception as exc:  # noqa: BLE001 - anything unreadable is reported on the page
        return None, f"{what} unreadable: {type(exc).__name__}: {exc}"
    return _as_video(array, what)


def _as_video(array: np.ndarray, what: str) -> tuple[np.ndarray | None, str | None]:
    if array.ndim == 3:  # one image
        array = array[None]
    if array.ndim == 4 and array.shape[-1] == 1:
        array = np.repeat(array, 3, axis=-1)
    if array.ndim != 4 or array.shape[-1] not in (3, 4) or 0 in array.shape:
        return None, f"{what}: shape {tuple(array.shape)} is not a T×H×W×3 video"
    if array.dtype != np.uint8:
        array = np.clip(array, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(array[..., :3]), None


def _fit(frames: np.ndarray, height: int, width: int) -> np.ndarray:
    """Frames resized (nearest) to height × width, for display only."""
    if frames.shape[1:3] == (height, width):
        return frames
    from PIL import Image

    return np.stack([np.asarray(Image.fromarray(f).resize((width, height), Image.NEAREST)) for f in frames])


def compose(reference: np.ndarray | None, generated: np.ndarray | None) -> np.ndarray:
    """T×H×(3W+2·GAP)×3 frames: reference, generated, gained |difference| (grey where absent)."""
    videos = [v for v in (reference, generated) if v is not None]
    if not videos:
        raise ValueError("no video to show")
    base = videos[0]
    height, width = base.shape[1:3]
    scale = min(1.0, MAX_SIDE / max(height, width))
    height, width = max(1, int(round(height * scale))), max(1, int(round(width * scale)))
    length = max(len(v) for v in videos)
    index = np.unique(np.linspace(0, length - 1, min(length, MAX_FRAMES)).round().astype(int))

    def panel(video: np.ndarray | None) -> np.ndarray:
        out = np.full((len(index), height, width, 3), GREY, np.uint8)
        if video is not None:
            have = index < len(video)
            out[have] = _fit(video[index[have]], height, width)
        return out

    ref, gen = panel(reference), panel(generated)
    diff = np.full_like(ref, GREY)
    if reference is not None and generated is not None:
        both = (index < len(reference)) & (index < len(generated))
        delta = np.abs(ref[both].astype(np.int16) - gen[both].astype(np.int16)) * DIFF_GAIN
        diff[both] = np.clip(delta, 0, 255).astype(np.uint8)
    gap = np.full((len(index), height, GAP, 3), 255, np.uint8)
    return np.concatenate([ref, gap, gen, gap, diff], axis=2)


def _pil_with_webp():
    """Pillow's ``Image`` with its WebP plugin registered: saving WEBP otherwise runs ``Image.init()``,
    which imports every one of Pillow's ~40 format plugins (0.1 s of a warm one-sample run)."""
    from PIL import Image, WebPImagePlugin  # noqa: F401 - registers WEBP's save

    return Image


def animated_webp(frames: np.ndarray, fps: float) -> bytes:
    Image = _pil_with_webp()

    images = [Image.fromarray(f) for f in frames]
    buffer = io.BytesIO()
    duration = int(round(1000 / fps)) if fps and fps > 0 else 125
    images[0].save(buffer, format="WEBP", save_all=True, append_images=images[1:], duration=duration, loop=0,
                   quality=QUALITY, method=METHOD)
    return buffer.getvalue()


def video_key(artifacts: dict[str, Any]) -> str | None:
    """The artifact that is the model's video: ``generated_video``, else the first whose name ends in
    ``video``; None for a run whose outputs are not pixels (a probe readout, predicted latents)."""
    if "generated_video" in artifacts:
        return "generated_video"
    return next((k for k in artifacts if str(k).endswith("video")), None)


def _generated(result: dict[str, Any], run_ref, store_dir: Path | None) -> tuple[np.ndarray | None, str | None]:
    """The model's video and why there is none; a run that records outputs but no video (a latent
    model: task=probing, latent goal reaching) has no pixels to show, which is not a problem."""
    artifacts = result.get("artifacts") or {}
    key = video_key(artifacts)
    if key is None:
        return None, (None if artifacts else "generated video: none recorded")
    return load_video(run_ref(artifacts.get(key)), store_dir, "generated video")


def _goal(request: dict[str, Any], run_ref, store_dir: Path | None) -> np.ndarray | None:
    """The goal image of a goal-reaching sample (``inputs.goal_image``), or None."""
    ref = (request.get("inputs") or {}).get("goal_image")
    return load_video(run_ref(ref), store_dir, "goal image")[0] if ref is not None else None


def sample_strip(request: dict[str, Any], result: dict[str, Any], run_ref, store_dir: Path | None) -> Strip:
    """The strip of one sample from its ``generations.jsonl`` record: reference, generated, their
    difference; for goal reaching the path taken in the true world beside the goal image and their
    difference (the last frame is the one reached), then the model's video if it drew one."""
    problems: list[str] = []
    reference, why = load_video(run_ref((request.get("references") or {}).get("video")), store_dir, "reference video")
    if why:
        problems.append(why)
    generated, why = _generated(result, run_ref, store_dir)
    if why:
        problems.append(why)
    goal = _goal(request, run_ref, store_dir)
    if reference is None and generated is None:
        return Strip(None, 0, problems)
    panels = Strip.panels
    if goal is not None and reference is not None:
        frames = compose(reference, np.repeat(goal[:1], len(reference), axis=0))
        panels = ("path taken (true world)", "goal", f"|frame − goal| ×{DIFF_GAIN}")
        if generated is not None:  # a pixel model's own video after them
            width = (frames.shape[2] - 2 * GAP) // 3
            extra = compose(generated, None)[:, :, :width]
            if extra.shape[:2] == frames.shape[:2] and extra.shape[2] == width:
                frames = np.concatenate([frames, np.full_like(extra[:, :, :GAP], 255), extra], axis=2)
                panels = (*panels, "generated")
    else:
        frames = compose(reference, generated)
    fps = float((request.get("generation") or {}).get("fps") or 8)
    data = animated_webp(frames, fps)
    return Strip("data:image/webp;base64," + base64.b64encode(data).decode("ascii"), len(frames), problems,
                 panels=panels, width=int(frames.shape[2]), height=int(frames.shape[1]))


# -- the sample viewer: one still sprite per video, the page steps through its frames -----------

SPRITE_QUALITY = 80


@dataclass
class Sprite:
    """A video's frames side by side in one still WebP (``frames`` of ``width`` × ``height`` px),
    or why there is none (``problem``)."""

    data_uri: str | None
    frames: int = 0
    width: int = 0
    height: int = 0
    problem: str | None = None


def sprite(video: np.ndarray | None, problem: str | None = None, size: tuple[int, int] | None = None) -> Sprite:
    """The frames of ``video`` (at most ``MAX_FRAMES``, evenly), each at most ``MAX_SIDE`` px (or
    ``size`` = (height, width), to match another video), as one row of one still WebP."""
    if video is None:
        return Sprite(None, problem=problem)
    Image = _pil_with_webp()

    height, width = size or video.shape[1:3]
    if size is None:
        scale = min(1.0, MAX_SIDE / max(height, width))
        height, width = max(1, int(round(height * scale))), max(1, int(round(width * scale)))
    index = np.unique(np.linspace(0, len(video) - 1, min(len(video), MAX_FRAMES)).round().astype(int))
    frames = _fit(video[index], height, width)
    row = np.concatenate(list(frames), axis=1)
    buffer = io.BytesIO()
    Image.fromarray(row).save(buffer, format="WEBP", quality=SPRITE_QUALITY, method=METHOD)
    uri = "data:image/webp;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
    return Sprite(uri, len(index), width, height, problem)


def sample_videos(request: dict[str, Any], result: dict[str, Any], run_ref, store_dir: Path | None
                  ) -> tuple[tuple[np.ndarray | None, str | None], tuple[np.ndarray | None, str | None]]:
    """((reference, why not), (generated, why not)) of one ``generations.jsonl`` record."""
    reference = load_video(run_ref((request.get("references") or {}).get("video")), store_dir, "reference video")
    return reference, _generated(result, run_ref, store_dir)
