"""Video I/O into one in-memory convention: uint8, ``T×H×W×3`` (videos) / ``H×W×3`` (images), RGB.

Reads containers through PyAV (``.mp4``, ``.mkv``, ``.avi``, ``.mov``, ``.webm``, ``.gif``),
``.npy``/``.npz`` arrays, image files and folders of PNG/JPEG frames; writes lossless ``.mkv``
(ffv1), ``.avi`` (ffv1), ``.mov`` (png), ``.npy``/``.npz``, lossy ``.mp4`` (h264) and PNG
frame folders. Every failure to read is a :class:`VideoReadError` naming the file. ``av`` is
imported only when a container or image is actually read or written.
"""

from wfeval.io._api import (
    ARRAY_SUFFIXES,
    CONTAINER_SUFFIXES,
    IMAGE_SUFFIXES,
    LOSSLESS_SUFFIXES,
    VIDEO_SUFFIXES,
    WRITABLE_VIDEO_SUFFIXES,
    find_media,
    load_array,
    media_kind,
    read_image,
    read_video,
    write_image,
    write_video,
)
from wfeval.io._convention import Video, to_rgb_uint8
from wfeval.io._decoder import DECODER as FILE_DECODER  # registers the decoder of dataset files read in place
from wfeval.io._errors import MediaError, VideoReadError, VideoWriteError
from wfeval.io._frames import frame_files
from wfeval.io._headers import check_image_header, declared_size
from wfeval.io._limits import DEFAULT_LIMITS, Limits, check_array_header, check_video
from wfeval.io._paths import inside, unsafe_id_reason, unsafe_path_reason
from wfeval.io._ranges import count_frames, read_frame_range, read_frames_at

__all__ = [
    "Video",
    "FILE_DECODER",
    "Limits",
    "DEFAULT_LIMITS",
    "check_array_header",
    "check_image_header",
    "declared_size",
    "check_video",
    "MediaError",
    "VideoReadError",
    "VideoWriteError",
    "read_video",
    "read_image",
    "read_frame_range",
    "count_frames",
    "read_frames_at",
    "write_video",
    "write_image",
    "to_rgb_uint8",
    "media_kind",
    "load_array",
    "find_media",
    "frame_files",
    "unsafe_id_reason",
    "unsafe_path_reason",
    "inside",
    "ARRAY_SUFFIXES",
    "CONTAINER_SUFFIXES",
    "IMAGE_SUFFIXES",
    "LOSSLESS_SUFFIXES",
    "VIDEO_SUFFIXES",
    "WRITABLE_VIDEO_SUFFIXES",
]
