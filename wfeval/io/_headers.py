"""The size an image declares, read from its header before any decoder sees it.

A PNG or JPEG of a few hundred bytes can declare 60000×60000 pixels; a decoder sizes its buffers
from that declaration (Pillow stops with ``DecompressionBombError``, FFmpeg allocates the frame
while it probes). Every reader of dataset images checks this size against
:class:`~wfeval.io.Limits` first (:func:`check_image_header`), so such a frame is its sample's input
error naming the size and the limit. PNG, JPEG, GIF and BMP are parsed here; any other format is
held to the same limit by the decoder's own lazy header (Pillow's ``.size``) or by FFmpeg's
``max_pixels`` (:mod:`._pyav`).
"""

from __future__ import annotations

import struct
from typing import Any

from wfeval.io._limits import Limits

_PNG = b"\x89PNG\r\n\x1a\n"
#: JPEG start-of-frame markers (they carry the size); C4 (DHT), C8 (JPG) and CC (DAC) are not frames
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def declared_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` an encoded image declares, or None when its format is not one parsed here
    (or its header is cut short: the decoder then reports it). A JPEG's largest frame header counts."""
    if data.startswith(_PNG) and len(data) >= 24 and data[12:16] == b"IHDR":
        return struct.unpack(">II", data[16:24])
    if data.startswith(b"\xff\xd8"):
        return _jpeg_size(data)
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return struct.unpack("<HH", data[6:10])
    if data.startswith(b"BM") and len(data) >= 26:
        width, height = struct.unpack("<ii", data[18:26])
        return abs(width), abs(height)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    found: tuple[int, int] | None = None
    index = 2
    while index + 4 <= len(data):
        if data[index] != 0xFF:
            return found  # not a marker where one must be: the decoder says what is wrong
        marker = data[index + 1]
        if marker == 0xFF:  # fill byte
            index += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:  # markers without a length
            index += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image, start of scan: the headers are over
            return found
        length = struct.unpack(">H", data[index + 2:index + 4])[0]
        if marker in _SOF and index + 9 <= len(data):
            height, width = struct.unpack(">HH", data[index + 5:index + 9])
            if found is None or width * height > found[0] * found[1]:
                found = (width, height)
        index += 2 + length
    return found


def check_image_header(path: Any, data: bytes, limits: Limits, where: str = "") -> None:
    """VideoReadError naming ``path`` (and ``where``, e.g. ``"frame 4 "``) when the image ``data``
    declares more pixels than ``limits.max_frame_pixels``; nothing is decoded."""
    from wfeval.io._errors import VideoReadError

    size = declared_size(data)
    if size is None or size[0] * size[1] <= limits.max_frame_pixels:
        return
    width, height = size
    raise VideoReadError(path, f"{where}declares {width}×{height} = {width * height:,} pixels, over the limit of "
                               f"{limits.max_frame_pixels:,}; not decoded (raise it with "
                               f"benchmark.limits.max_frame_pixels={width * height} if the file is right)")
