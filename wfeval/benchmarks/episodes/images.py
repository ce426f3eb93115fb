"""Frames stored as one encoded image per step: LeRobot image features (``use_videos=False``: a
``{bytes, path}`` struct of PNG bytes per parquet row) and Minari image observations (one JPEG per
step in an HDF5 dataset, variable-length ``uint8`` or fixed-length rows). Decoded with Pillow, as
the libraries that wrote them decode them; every size is checked against the run's
:class:`~wfeval.io.Limits` before a pixel is decoded.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from wfeval.io import Limits, VideoReadError


def decode_images(blobs: Sequence[Any], path: Path, where: str, limits: Limits) -> np.ndarray:
    """``T×H×W×3`` uint8 frames from ``T`` encoded images (bytes, or 1-D uint8 arrays). The size each
    one declares is checked against ``limits`` before Pillow opens it (its header, parsed here;
    Pillow's own lazy ``.size`` for the formats not parsed here); any failure to decode is a
    VideoReadError naming the frame, never Pillow's own exception."""
    from PIL import Image

    from wfeval.io import check_image_header, check_video

    if len(blobs) > limits.max_frames:
        raise VideoReadError(path, f"{where}: {len(blobs):,} frames exceed the limit of {limits.max_frames:,} "
                                   f"(raise it with benchmark.limits.max_frames={len(blobs)} if it is right)")
    frames = []
    for index, blob in enumerate(blobs):
        data = np.asarray(blob, dtype=np.uint8).tobytes() if not isinstance(blob, (bytes, bytearray)) else bytes(blob)
        if not data:
            raise VideoReadError(path, f"{where}: frame {index} holds no image bytes")
        if len(data) > limits.max_array_bytes:
            raise VideoReadError(path, f"{where}: frame {index} is {len(data):,} bytes, over the limit of "
                                       f"{limits.max_array_bytes:,} (benchmark.limits.max_array_bytes)")
        check_image_header(path, data, limits, f"{where}: frame {index} ")
        try:
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
                check_video(path, len(blobs), height, width, limits)
                if image.mode not in ("RGB", "L"):
                    raise VideoReadError(path, f"{where}: frame {index} is a {image.mode} image; frames must be "
                                               "RGB (or grayscale)")
                frame = np.asarray(image.convert("RGB") if image.mode == "L" else image, dtype=np.uint8)
        except VideoReadError as exc:
            raise VideoReadError(path, exc.reason if exc.reason.startswith(where) else
                                 f"{where}: frame {index}: {exc.reason}") from None
        except Exception as exc:  # Pillow's errors (DecompressionBombError is not an OSError) and its plugins'
            raise VideoReadError(path, f"{where}: frame {index} is not a readable image "
                                       f"({type(exc).__name__}: {exc})") from None
        if frames and frame.shape != frames[0].shape:
            raise VideoReadError(path, f"{where}: frame {index} is {frame.shape[1]}×{frame.shape[0]}, frame 0 is "
                                       f"{frames[0].shape[1]}×{frames[0].shape[0]}")
        frames.append(frame)
    if not frames:
        raise VideoReadError(path, f"{where}: no frame")
    return np.stack(frames)


def parquet_column_bytes(path: Path, column: str) -> int:
    """The uncompressed size of a parquet column (its footer's numbers: nothing decoded)."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    total = 0
    for group in range(meta.num_row_groups):
        row_group = meta.row_group(group)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            if chunk.path_in_schema == column or chunk.path_in_schema.startswith(column + "."):
                total += int(chunk.total_uncompressed_size)
    return total


def read_parquet_images(path: Path, column: str, rows: Sequence[int], limits: Limits) -> np.ndarray:
    """The images of ``rows`` (positions in the file) of the image column ``column`` of a parquet file."""
    import pyarrow.parquet as pq

    where = f"{column!r}"
    try:
        size = parquet_column_bytes(path, column)
        if size > limits.max_array_bytes:
            raise VideoReadError(path, f"{where}: the column is {size:,} bytes uncompressed, over the limit of "
                                       f"{limits.max_array_bytes:,} (raise it with benchmark.limits.max_array_bytes="
                                       f"{size} if it is right)")
        table = pq.read_table(path, columns=[column])
        if max(rows, default=-1) >= table.num_rows or min(rows, default=0) < 0:
            raise VideoReadError(path, f"{where}: rows {min(rows)}..{max(rows)} asked, the file has {table.num_rows}")
        values = table.column(column).take(list(rows)).to_pylist()
    except VideoReadError:
        raise
    except Exception as exc:  # pyarrow's own error types for a corrupt file
        raise VideoReadError(path, f"not a readable parquet image column {where} ({type(exc).__name__}: {exc})") \
            from None
    blobs = []
    for row, value in zip(rows, values):
        blob = value.get("bytes") if isinstance(value, dict) else value
        if not isinstance(blob, (bytes, bytearray)):
            raise VideoReadError(path, f"{where} row {row}: no embedded image bytes (a path to another file is not "
                                       "followed)")
        blobs.append(blob)
    return decode_images(blobs, path, where, limits)
