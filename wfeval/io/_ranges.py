"""Part of a video: frames ``start … stop-1`` by index, or the frames shown at given times.

Dataset readers cut episodes out of video files in place (``benchmark=lerobot``, ``video_actions``):
a LeRobot v3 file holds many episodes one after another, located by timestamps; a plain episode
video is cut by frame index. Both decode only what they need (times: from the keyframe before the
first time on; indices: from the start up to ``stop``) and fail with a :class:`VideoReadError`
naming the file and the frames that are not there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from wfeval.io._errors import VideoReadError
from wfeval.io._limits import DEFAULT_LIMITS, Limits, check_video, ffmpeg_hint
from wfeval.io._pyav import THREADED_PIXELS, _av, _open_errors, _reason, _rgb, open_input


def _open(path: Path, limits: Limits) -> tuple[Any, Any, tuple]:
    errors = _open_errors(_av())
    container = open_input(path, limits)
    if not container.streams.video:
        container.close()
        raise VideoReadError(path, "the file has no video stream")
    stream = container.streams.video[0]
    context = stream.codec_context
    if (context.width or 0) * (context.height or 0) >= THREADED_PIXELS:
        stream.thread_type = "AUTO"
    else:
        context.thread_count = 1
    return container, stream, errors


def read_frame_range(path: str | Path, start: int, stop: int, *, limits: Limits | None = None) -> np.ndarray:
    """Frames ``start … stop-1`` (0-based decoding order) of the first video stream, ``(stop-start)×H×W×3``."""
    path, limits = Path(path), limits or DEFAULT_LIMITS
    if not 0 <= start < stop:
        raise VideoReadError(path, f"frame range {start}..{stop - 1} is empty or negative")
    check_video(path, stop - start, 1, 1, limits)
    container, stream, errors = _open(path, limits)
    frames: list[np.ndarray] = []
    index = -1
    with container:
        try:
            for frame in container.decode(stream):
                index += 1
                if index < start:
                    continue
                if not frames:
                    check_video(path, stop - start, frame.height, frame.width, limits)
                frames.append(_rgb(frame))
                if index + 1 >= stop:
                    break
        except errors as exc:
            raise VideoReadError(path, f"decoding failed at frame {index + 1} (corrupt or truncated): "
                                       f"{_reason(exc)}{ffmpeg_hint(exc, limits)}") from exc
    if len(frames) < stop - start:
        raise VideoReadError(path, f"frames {start}..{stop - 1} asked, but the video has only {index + 1} frame(s)")
    return np.stack(frames)


def read_frames_at(path: str | Path, times: Sequence[float], *, tolerance_s: float = 1e-4,
                   limits: Limits | None = None) -> np.ndarray:
    """The frames presented at ``times`` (seconds, ascending; each the frame whose time is nearest,
    which must be within ``tolerance_s``), ``len(times)×H×W×3``: LeRobot's way of finding an episode's
    frames in a file that holds several episodes."""
    path, limits = Path(path), limits or DEFAULT_LIMITS
    times = [float(t) for t in times]
    if not times or any(b < a for a, b in zip(times, times[1:])):
        raise VideoReadError(path, "frame times must be a non-empty ascending list")
    check_video(path, len(times), 1, 1, limits)
    container, stream, errors = _open(path, limits)
    base = float(stream.time_base) if stream.time_base else None
    first, last = times[0] - tolerance_s, times[-1] + tolerance_s
    found: list[tuple[float, np.ndarray]] = []
    with container:
        try:
            if base and first > 0:  # from the keyframe at or before the first time
                container.seek(int(first / base), stream=stream, backward=True, any_frame=False)
            for frame in container.decode(stream):
                if frame.pts is None or base is None:
                    raise VideoReadError(path, "frames carry no presentation time; cannot locate frames by time")
                t = frame.pts * base
                if t < first:
                    continue
                if t > last:
                    break
                if not found:
                    check_video(path, len(times), frame.height, frame.width, limits)
                found.append((t, _rgb(frame)))
        except VideoReadError:
            raise
        except errors as exc:
            raise VideoReadError(path, f"decoding failed near {first:.4f} s (corrupt or truncated): "
                                       f"{_reason(exc)}{ffmpeg_hint(exc, limits)}") from exc
    out = []
    for want in times:
        if not found:
            raise VideoReadError(path, f"no frame between {first:.4f} s and {last:.4f} s (the episode's "
                                       "frames are not in this file)")
        t, frame = min(found, key=lambda item: abs(item[0] - want))
        if abs(t - want) > tolerance_s:
            raise VideoReadError(path, f"no frame at {want:.4f} s: the nearest is at {t:.4f} s, farther than the "
                                       f"tolerance of {tolerance_s:g} s")
        out.append(frame)
    return np.stack(out)


def count_frames(path: str | Path, *, limits: Limits | None = None) -> tuple[int, float | None]:
    """(frames, fps) of a video file without decoding it: the count the container declares, else its
    video packets counted (VideoReadError naming the file when it cannot be opened)."""
    path, limits = Path(path), limits or DEFAULT_LIMITS
    container, stream, errors = _open(path, limits)
    with container:
        rate = stream.average_rate or stream.guessed_rate
        fps = float(rate) if rate else None
        declared = int(stream.frames or 0)
        if declared:
            return declared, fps
        try:
            count = sum(1 for packet in container.demux(stream) if packet.size)
        except errors as exc:
            raise VideoReadError(path, f"cannot be read to its end ({_reason(exc)})") from exc
    if not count:
        raise VideoReadError(path, "no frame in the video")
    return count, fps
