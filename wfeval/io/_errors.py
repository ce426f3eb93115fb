"""The error types of video I/O: each names the file and says what is wrong with it."""

from __future__ import annotations

import os


class MediaError(ValueError):
    """A media file cannot be read or written; ``path`` names it, ``reason`` says why."""

    def __init__(self, path: str | os.PathLike[str], reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class VideoReadError(MediaError):
    """A video, image or array file is missing, empty, truncated, corrupt or of the wrong shape."""


class VideoWriteError(MediaError):
    """Frames cannot be written (unsupported format, bad array, encoder failure)."""
