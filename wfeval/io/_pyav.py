"""Containers and images through PyAV (its wheels carry FFmpeg; no system ffmpeg needed).

``av`` is imported inside the functions: importing :mod:`wfeval.io` stays cheap.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from wfeval.io._errors import VideoReadError, VideoWriteError
from wfeval.io._limits import DEFAULT_LIMITS, Limits, check_frame, check_video, ffmpeg_hint, ffmpeg_max_pixels
from wfeval.storage.safe_io import atomic_target

#: suffix -> (FFmpeg muxer, default codec). ffv1 (in .mkv/.avi) and png (in .mov) are lossless.
CONTAINERS = {
    ".mkv": ("matroska", "ffv1"),
    ".avi": ("avi", "ffv1"),
    ".mov": ("mov", "png"),
    ".mp4": ("mp4", "libx264"),
}
READ_ONLY_CONTAINERS = (".webm", ".gif", ".m4v")
LOSSLESS_CODECS = ("ffv1", "png")
#: pixel format each codec encodes RGB into; libx264 depends on the size (see write_container)
_PIX_FMT = {"ffv1": "bgr0", "png": "rgb24"}
#: frames of at least this many pixels are decoded with FFmpeg's own threads
THREADED_PIXELS = 256 * 256


def _av() -> Any:
    import av

    return av


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


def _open_errors(av: Any) -> tuple[type[BaseException], ...]:
    return (av.error.FFmpegError, OSError, ValueError, EOFError, UnicodeDecodeError)


HEADER_BYTES = 1 << 16  # read from an image file to find the size it declares


def open_input(path: Path, limits: Limits, what: str = "video") -> Any:
    """An input container of ``path`` whose decoders refuse frames over ``limits.max_frame_pixels``.

    An image file's declared size is read from its header first (:func:`~wfeval.io._headers.declared_size`);
    FFmpeg's ``max_pixels`` holds every stream to the limit while the file is probed (probing decodes
    a frame) and decoded, so a frame that declares more is refused before it is allocated. The
    returned container's first video stream's dimensions are checked against the limit too."""
    from wfeval.io._headers import check_image_header

    av = _av()
    errors = _open_errors(av)
    if path.is_file() and path.stat().st_size == 0:
        raise VideoReadError(path, "empty file (0 bytes)")
    if path.is_file():
        try:
            with open(path, "rb") as handle:
                head = handle.read(HEADER_BYTES)
        except OSError as exc:
            raise VideoReadError(path, f"cannot be read ({exc.strerror or exc})") from exc
        check_image_header(path, head, limits)
    pixels = str(ffmpeg_max_pixels(limits))
    try:
        container = av.open(str(path), mode="r", options={"max_pixels": pixels})
    except errors as exc:
        raise VideoReadError(path, f"not a readable {what} ({_reason(exc)}{ffmpeg_hint(exc, limits)})") from exc
    for stream in container.streams.video:
        stream.codec_context.options = {**stream.codec_context.options, "max_pixels": pixels}
    if container.streams.video:
        context = container.streams.video[0].codec_context
        try:
            check_frame(path, int(context.height or 0), int(context.width or 0), limits)
        except VideoReadError:
            container.close()
            raise
    return container


def read_container(path: Path, *, max_frames: int | None = None,
                   check_complete: bool = True, limits: Limits | None = None) -> tuple[np.ndarray, dict]:
    """All frames (``T×H×W×3`` uint8) of the first video stream, plus fps/codec metadata.

    A file that decodes to fewer frames than its container declares (truncated) is an error
    when ``check_complete`` is true: by frame count where the container records one (mp4, avi,
    mov), else by time (the last frame must reach the container's duration, to half a frame).
    """
    av = _av()
    errors = _open_errors(av)
    limits = limits or DEFAULT_LIMITS
    container = open_input(path, limits)
    with container:
        if not container.streams.video:
            raise VideoReadError(path, "the file has no video stream")
        stream = container.streams.video[0]
        context = stream.codec_context
        declared = int(stream.frames or 0)
        if declared and max_frames is None:
            check_video(path, declared, int(context.height or 0), int(context.width or 0), limits)
        if (context.width or 0) * (context.height or 0) >= THREADED_PIXELS:
            stream.thread_type = "AUTO"  # worth it for large frames only: thread start-up costs more below
        else:
            context.thread_count = 1
        frames: list[np.ndarray] = []
        last = None
        try:
            for frame in container.decode(stream):
                if len(frames) >= limits.max_frames:  # more frames than declared: stop at the limit
                    raise VideoReadError(path, f"more than {limits.max_frames:,} frames, the limit (raise it with "
                                               f"benchmark.limits.max_frames=<the video's frame count>)")
                if not frames:
                    check_video(path, 1, frame.height, frame.width, limits)
                elif (len(frames) + 1) * frame.height * frame.width > limits.max_video_pixels:
                    check_video(path, len(frames) + 1, frame.height, frame.width, limits)
                frames.append(_rgb(frame))
                last = frame
                if max_frames is not None and len(frames) >= max_frames:
                    break
        except VideoReadError:
            raise
        except errors as exc:
            raise VideoReadError(path, f"decoding failed after {len(frames)} frame(s) "
                                       f"(corrupt or truncated): {_reason(exc)}{ffmpeg_hint(exc, limits)}") from exc
        rate = stream.average_rate or stream.guessed_rate
        fps = float(rate) if rate else None
        meta = {"container": container.format.name, "codec": stream.codec_context.name,
                "pix_fmt": stream.codec_context.pix_fmt, "declared_frames": int(stream.frames or 0)}
        if not frames:
            raise VideoReadError(path, "no frame could be decoded (empty or corrupt video)")
        if check_complete and max_frames is None:
            _check_complete(path, container, stream, last, len(frames), fps)
    shapes = {f.shape for f in frames}
    if len(shapes) > 1:
        raise VideoReadError(path, f"frame size changes inside the video: {sorted(shapes)}")
    return np.stack(frames), {**meta, "fps": fps}


def _rgb(frame: Any) -> np.ndarray:
    """``H×W×3`` uint8 RGB; packed RGB formats are copied straight from the frame (no swscale)."""
    name = frame.format.name
    if name in ("bgr0", "bgra"):
        plane = frame.planes[0]
        packed = np.frombuffer(plane, np.uint8).reshape(frame.height, plane.line_size // 4, 4)
        return packed[:, : frame.width, 2::-1].copy()
    if name == "rgb24":
        return frame.to_ndarray()
    return frame.to_ndarray(format="rgb24")


def _check_complete(path: Path, container: Any, stream: Any, last: Any, decoded: int, fps: float | None) -> None:
    declared = int(stream.frames or 0)
    if declared:
        if decoded < declared:
            raise VideoReadError(path, f"truncated: decoded {decoded} of the {declared} frames the file declares")
        return
    if not (container.duration and fps and last is not None and last.pts is not None and stream.time_base):
        return
    start = float(stream.start_time * stream.time_base) if stream.start_time is not None else 0.0
    frame_time = float(last.duration * stream.time_base) if last.duration else 1.0 / fps
    reached = float(last.pts * stream.time_base) - start + frame_time
    duration = container.duration / 1_000_000
    if reached < duration - 0.5 / fps:
        raise VideoReadError(path, f"truncated: frames stop at {reached:.3f} s of the declared {duration:.3f} s "
                                   f"({decoded} frame(s) decoded)")


def write_container(path: Path, frames: np.ndarray, fps: float, *, codec: str | None = None,
                    crf: int | None = None) -> None:
    """Encode ``frames`` (``T×H×W×3`` uint8) into ``path`` (its suffix picks the container)."""
    av = _av()
    muxer, default_codec = CONTAINERS[path.suffix.lower()]
    codec = codec or default_codec
    height, width = int(frames.shape[1]), int(frames.shape[2])
    if codec == "libx264":
        # yuv420p (plays everywhere) needs even sizes; odd sizes keep their size in yuv444p.
        pix_fmt = "yuv420p" if height % 2 == 0 and width % 2 == 0 else "yuv444p"
    else:
        pix_fmt = _PIX_FMT.get(codec, "rgb24")
    try:
        with atomic_target(path) as tmp, av.open(str(tmp), mode="w", format=muxer) as container:
            stream = container.add_stream(codec, rate=Fraction(fps).limit_denominator(1001))
            stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
            if codec == "libx264":
                stream.options = {"crf": str(17 if crf is None else int(crf)), "preset": "medium"}
            for array in frames:
                for packet in stream.encode(av.VideoFrame.from_ndarray(array, format="rgb24")):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)
    except (av.error.FFmpegError, ValueError, OSError) as exc:
        raise VideoWriteError(path, f"cannot encode with {codec!r} ({_reason(exc)})") from exc


def read_image_file(path: Path, limits: Limits | None = None) -> np.ndarray:
    """The first picture of an image file (PNG, JPEG, BMP, ...) as ``H×W×3`` uint8; refused
    (VideoReadError) before decoding when its size exceeds ``limits.max_frame_pixels``."""
    av = _av()
    errors = _open_errors(av)
    limits = limits or DEFAULT_LIMITS
    with open_input(path, limits, "image") as container:
        if not container.streams.video:
            raise VideoReadError(path, "the file holds no picture")
        try:
            for frame in container.decode(container.streams.video[0]):
                check_frame(path, frame.height, frame.width, limits)
                return frame.to_ndarray(format="rgb24")
        except VideoReadError:
            raise
        except errors as exc:
            raise VideoReadError(path, f"not a readable image ({_reason(exc)}{ffmpeg_hint(exc, limits)})") from exc
    raise VideoReadError(path, "no picture could be decoded (empty or corrupt image)")


def encode_image(image: np.ndarray, suffix: str) -> bytes:
    """PNG (lossless) or JPEG bytes of an ``H×W×3`` uint8 image."""
    av = _av()
    if suffix == ".png":
        codec, pix_fmt = "png", "rgb24"
    else:
        codec, pix_fmt = "mjpeg", "yuvj444p"
    context = av.CodecContext.create(codec, "w")
    context.width, context.height, context.pix_fmt = int(image.shape[1]), int(image.shape[0]), pix_fmt
    context.time_base = Fraction(1, 1)
    if codec == "mjpeg":
        context.options = {"qscale": "2"}
    frame = av.VideoFrame.from_ndarray(image, format="rgb24")
    if pix_fmt != "rgb24":
        frame = frame.reformat(format=pix_fmt)
    packets = list(context.encode(frame)) + list(context.encode(None))
    return b"".join(bytes(p) for p in packets)
