"""Where metrics compute: ``run.device`` handed to every metric that takes a ``device`` argument.

``auto`` is cuda when torch sees one, else the CPU (torch then uses all its intra-op threads).
No torch import here until a device is actually resolved.
"""

from __future__ import annotations

import contextlib
import inspect
from typing import Any, Iterator, Mapping

DEVICE_CHOICES = "auto | cpu | cuda | cuda:N"


def _accepts_device(target: str, key: str) -> bool:
    from wfeval.config.code import load
    from wfeval.config.errors import ConfigError

    try:
        cls = load(target, f"{key}._target_" if key else "_target_")  # through the door: trust checked first
        return "device" in inspect.signature(cls).parameters
    except (ImportError, AttributeError, ValueError, TypeError, ConfigError):
        return False  # the builder reports an unknown or refused target with its own message


def with_device(node: Any, device: str | None, key: str = "") -> Any:
    """``node`` with ``device`` filled in when the metric class takes one and the node leaves it unset
    (``key``: the node's key, ``metric.<id>``, at which its ``_target_`` is checked)."""
    from omegaconf import DictConfig, OmegaConf

    if device is None or not isinstance(node, (DictConfig, Mapping)) or "_target_" not in node:
        return node
    if isinstance(node, DictConfig) and OmegaConf.missing_keys(node):
        return node  # the builder names the missing keys
    if node.get("device") is not None or not _accepts_device(str(node["_target_"]), key):
        return node
    plain = OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else dict(node)
    return {**plain, "device": device}


def resolve_device(device: str | None = "auto") -> Any:
    """The ``torch.device`` of a device name; a clear error for a device this machine lacks."""
    import torch

    name = device or "auto"
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        out = torch.device(name)
    except RuntimeError as exc:
        raise ValueError(f"run.device: {name!r} is not a device ({DEVICE_CHOICES})") from exc
    if out.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"run.device={name!r}: torch sees no CUDA device here; use auto or cpu")
    return out


class DeviceMixin:
    """For metrics with a torch twin: ``device`` is a torch device name (``auto`` …) or ``numpy``
    (the float64 numpy reference implementation that tests compare the torch path against).

    A metric whose value for uint8 videos is exact on every device (:attr:`exact_for_uint8`: psnr, mse
    and mae sum integer differences exactly) scores uint8 videos with numpy under ``auto``: the same
    numbers as on any torch device, without importing torch (~1 s) for a run that needs it for
    nothing else. Other inputs (float videos) still go to the device (torch imported when first met)."""

    device: str = "auto"
    exact_for_uint8: bool = False

    def _set_device(self, device: str | None) -> None:
        name = str(device or "auto")
        if name not in ("numpy", "auto", "cpu"):
            resolve_device(name)  # a device this machine lacks is a build-time error (torch imported only here)
        self.device = name
        self._torch_device: Any = None

    def on_host(self, *arrays: Any) -> bool:
        """Whether ``arrays`` are scored with numpy as they are (``numpy``; or uint8 videos under ``auto`` for a
        metric exact on them) rather than as tensors on the device."""
        if self.device == "numpy":
            return True
        return self.device == "auto" and self.exact_for_uint8 and all(str(a.dtype) == "uint8" for a in arrays)

    def needs_torch(self) -> bool:
        """Whether scoring is expected to import torch (the run imports it before its scoring thread starts,
        pipeline/overlap.py): not for ``numpy``, nor under ``auto`` for a metric exact on uint8 videos (the
        videos a model's output is always stored as)."""
        return self.device != "numpy" and not (self.device == "auto" and self.exact_for_uint8)

    def as_input(self, array: Any) -> Any:
        """``array`` as the metric computes on it: numpy as is, else a tensor on the device."""
        if self.device == "numpy":
            return array
        import warnings

        import numpy as np
        import torch

        if self._torch_device is None:
            self._torch_device = resolve_device(self.device)
        with warnings.catch_warnings():  # a shared read-only array (wfeval.storage.artifacts.preloaded): torch only reads it
            warnings.simplefilter("ignore", UserWarning)
            return torch.from_numpy(np.ascontiguousarray(array)).to(self._torch_device)

    @contextlib.contextmanager
    def one_cpu_thread(self) -> Iterator[None]:
        """One sample's work on the CPU with one torch thread (a torch device only; numpy and a
        GPU are left as they are). A sample's tensors are small: torch's own intra-op threads
        gain little on them and, on a busy machine, wait on every operation (a 16-frame 64×64
        flicker took 35 ms on 2 threads against 0.14 ms on one under load, docs/performance.md).
        The metrics that use it sum integers exactly, so the thread count never changes a value."""
        if self.device == "numpy":
            yield
            return
        if self._torch_device is None:
            self._torch_device = resolve_device(self.device)
        if self._torch_device.type != "cpu":
            yield
            return
        from wfeval.utils.parallel import one_torch_thread

        with one_torch_thread():
            yield

    @staticmethod
    def to_numpy(value: Any) -> Any:
        """A curve back on the host as float64 numpy."""
        import numpy as np

        if isinstance(value, np.ndarray):
            return value.astype(np.float64, copy=False)
        return value.detach().to("cpu").double().numpy()
