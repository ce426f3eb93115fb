"""The software renderer Memory Maze draws with: MuJoCo on EGL, Mesa's llvmpipe, set up here.

The family sets the environment itself, before MuJoCo or dm_control is imported (the user never
does): ``MUJOCO_GL=egl`` and ``PYOPENGL_PLATFORM=egl`` (headless, no display), and Mesa's
software rasteriser (``LIBGL_ALWAYS_SOFTWARE=1``, glvnd restricted to Mesa's EGL vendor when its
file is present), so that a machine with a GPU draws the same pixels as one without. A variable
the user set already is left as it is; what the renderer really is (GL vendor, renderer and
version strings, e.g. ``llvmpipe (LLVM 15.0.6, 256 bits)``) is read from a live context and is part
of the recording's identity, so frames from another renderer never pass for the pinned ones.

Debian 12 packages the renderer needs (found in a bare ``debootstrap --variant=minbase`` root):
``libegl1`` (glvnd's EGL), ``libopengl0`` (glvnd's ``libOpenGL.so.0``, which PyOpenGL opens),
``libegl-mesa0`` (Mesa's EGL vendor) and ``libgl1-mesa-dri`` (llvmpipe); ``.ci/run`` installs them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from pathlib import Path
from typing import Any

from wfeval.config.errors import ConfigError
from wfeval.config.extras import install_hint

MESA_EGL_VENDOR = Path("/usr/share/glvnd/egl_vendor.d/50_mesa.json")
APT_PACKAGES = ("libegl1", "libopengl0", "libegl-mesa0", "libgl1-mesa-dri")
INSTALL_HINT = (f"{install_hint('memory-maze')} for the Python packages, and Mesa's software EGL renderer for "
                f"the pictures (Debian: apt-get install {' '.join(APT_PACKAGES)})")
_PACKAGES = ("memory_maze", "dm_control", "mujoco", "labmaze", "gym")


def configure() -> dict[str, str]:
    """Set the renderer's environment variables the user did not set; return the ones in force."""
    import logging

    for name in ("absl", "OpenGL.acceleratesupport"):  # INFO lines on every import under Hydra's logging
        if logging.getLogger(name).level < logging.WARNING:
            logging.getLogger(name).setLevel(logging.WARNING)
    _absl_to_process_stderr()
    os.environ.setdefault("MUJOCO_GL", "egl")
    if os.environ["MUJOCO_GL"] == "egl":
        os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
        os.environ.setdefault("LIBGL_ALWAYS_SOFTWARE", "1")
        if MESA_EGL_VENDOR.is_file():
            os.environ.setdefault("__EGL_VENDOR_LIBRARY_FILENAMES", str(MESA_EGL_VENDOR))
    keys = ("MUJOCO_GL", "PYOPENGL_PLATFORM", "LIBGL_ALWAYS_SOFTWARE", "__EGL_VENDOR_LIBRARY_FILENAMES",
            "MUJOCO_EGL_DEVICE_ID", "GALLIUM_DRIVER")
    return {k: os.environ[k] for k in keys if k in os.environ}


def _absl_to_process_stderr() -> None:
    """absl (imported by dm_control) makes its handler on import, writing to the ``sys.stderr`` of that
    moment, and closes that stream when logging is configured again (Hydra's job logging does, on every
    run in the process) unless it is the ``sys.stderr`` of *that* moment: a run in a process whose
    stderr was swapped in between (a test runner's capture, a notebook) closed the swapped-out stream,
    someone else's. Its stream becomes the process's own stderr, which it never closes."""
    try:
        from absl import logging as absl_logging
    except ImportError:
        return
    handler = getattr(absl_logging.get_absl_handler(), "python_handler", None)
    if handler is not None and sys.__stderr__ is not None and handler.stream is not sys.__stderr__:
        with handler.lock or contextlib.nullcontext():
            handler.stream = sys.__stderr__


def require() -> None:
    """Refuse, with what to install, a machine without the Python packages."""
    import importlib.util

    missing = [m for m in _PACKAGES if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(f"The memory_maze benchmark family needs {', '.join(missing)}, which is not installed: "
                          f"{INSTALL_HINT}")


def import_tasks() -> Any:
    """``memory_maze.tasks``, imported quietly with the renderer configured first."""
    configure()
    require()
    import io
    import logging
    import warnings

    logging.getLogger("absl").setLevel(logging.ERROR)  # "Cannot set velocity on Entity with no free joint"
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        from memory_maze import tasks  # imports legacy gym, which prints a notice on import
    return tasks


@functools.lru_cache(maxsize=None)
def gl_identity() -> dict[str, Any]:
    """What draws the pixels: the GL strings of a live MuJoCo context, and the variables in force.

    Raises :class:`RendererUnavailable` (naming what to install) when no context can be made.
    """
    env = configure()
    require()
    try:
        import mujoco
        from dm_control.mujoco import Physics

        physics = Physics.from_xml_string("<mujoco><worldbody><light pos='0 0 1'/></worldbody></mujoco>")
        physics.render(8, 8)  # makes the context
        from OpenGL import GL

        with physics.contexts.gl.make_current() as ctx:
            strings = ctx.call(lambda: {k: GL.glGetString(getattr(GL, f"GL_{k.upper()}")).decode()
                                        for k in ("vendor", "renderer", "version")})
        physics.free()
    except Exception as exc:  # noqa: BLE001 - any failure to make a context means: no renderer here
        raise RendererUnavailable(f"MuJoCo cannot render with MUJOCO_GL={env.get('MUJOCO_GL')} here "
                                  f"({type(exc).__name__}: {exc}). {INSTALL_HINT}") from exc
    return {"gl": strings, "mujoco": mujoco.__version__, "environment": env}


class RendererUnavailable(ConfigError):
    """No MuJoCo rendering context can be made on this machine."""
