"""The output contract: every model output is checked against its request before it is stored.

A video output (``generated_video``, any key ending in ``_video``, or a key the task declares as
``video`` in ``task.metadata.output_layout``) must be

- a numeric ``T×H×W×3`` array (RGB, channels last),
- ``uint8``; an integer array whose values all lie in 0..255 is cast losslessly; a float array
  only when the model config declares its range (``model.output_range: [0, 1]`` or
  ``[0, 255]``): it is then mapped to 0..255, rounded and stored as uint8 (converted exactly once,
  recorded in the result's metadata and in the manifest),
- finite (no NaN or infinity),
- of the frame count the request asks for (``generation.num_frames``, else one frame per
  action plus the initial frame, else the reference video's length),
- of the reference video's resolution where the request has a reference video.

An ``image`` output is ``H×W×3`` with the same value rules; any other output is a finite numeric
array. Every output key the task lists (``task.output_keys``) must be present.

A violation raises :class:`ContractViolation`, whose message names the sample, the output and
what was wrong; the pipeline records it as a **failed** generation (never a skip), so the sample
stays in every denominator that counts generations and lowers the coverage of the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from wfeval.api import GenerationRequest

LAYOUTS = ("video", "image", "array")
#: declared float ranges a model may use (``model.output_range``)
OUTPUT_RANGES = ((0.0, 1.0), (0.0, 255.0))
#: how far a float value may lie outside its declared range (rounding noise), relative to the range
RANGE_TOLERANCE = 1e-6


class ContractViolation(ValueError):
    """A model output does not meet its request's contract (recorded as a failed generation)."""


@dataclass(frozen=True)
class OutputContract:
    """What the pipeline accepts from a model: the required keys, layouts and a declared float range."""

    required_keys: tuple[str, ...] = ("generated_video",)
    output_range: tuple[float, float] | None = None
    layouts: Mapping[str, str] = field(default_factory=dict)

    def layout(self, key: str) -> str:
        if key in self.layouts:
            return self.layouts[key]
        return "video" if key == "generated_video" or key.endswith("_video") else "array"

    def describe(self) -> dict[str, Any]:
        """What the manifest records about the contract."""
        out: dict[str, Any] = {"required_keys": list(self.required_keys), "dtype": "uint8",
                               "video_layout": "T×H×W×3 RGB"}
        out["output_range"] = list(self.output_range) if self.output_range else None
        out["conversion"] = conversion_text(self.output_range) if self.output_range else None
        if self.layouts:
            out["layouts"] = dict(self.layouts)
        return out


def parse_output_range(value: Any) -> tuple[float, float] | None:
    """``model.output_range`` as a pair; ValueError naming the key when it is not [0, 1] or [0, 255]."""
    if value is None:
        return None
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"model.output_range: expected [0, 1] or [0, 255] (the range of a float output), "
                         f"got {value!r}") from None
    if (low, high) not in OUTPUT_RANGES:
        raise ValueError(f"model.output_range: expected [0, 1] or [0, 255], got [{low:g}, {high:g}]")
    return low, high


def parse_layouts(value: Any) -> dict[str, str]:
    """``task.metadata.output_layout``: output key -> video | image | array."""
    if not value:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"task.metadata.output_layout: expected a mapping of output key -> "
                         f"{' | '.join(LAYOUTS)}, got {value!r}")
    bad = {k: v for k, v in value.items() if v not in LAYOUTS}
    if bad:
        raise ValueError(f"task.metadata.output_layout: {bad} — each layout must be one of {', '.join(LAYOUTS)}")
    return {str(k): str(v) for k, v in value.items()}


def conversion_text(output_range: tuple[float, float]) -> str:
    low, high = output_range
    return f"float [{low:g}, {high:g}] -> uint8: round((x - {low:g}) * {255 / (high - low):g}), clipped to 0..255"


def expected_frames(request: GenerationRequest) -> tuple[int | None, str]:
    """(frame count the request asks for, where that number comes from) or (None, '')."""
    num_frames = request.generation.get("num_frames")
    if num_frames is not None:
        return int(num_frames), "generation.num_frames"
    actions = request.controls.get("actions")
    if isinstance(actions, (list, tuple)):
        return len(actions) + 1, f"{len(actions)} actions + the initial frame"
    reference = request.references.get("video")
    if reference is not None and len(reference.shape) >= 1:
        return int(reference.shape[0]), "the reference video's length"
    return None, ""


def expected_resolution(request: GenerationRequest) -> tuple[int, int] | None:
    """(H, W) of the request's reference video, or None when it has none."""
    reference = request.references.get("video")
    if reference is not None and len(reference.shape) == 4:
        return int(reference.shape[1]), int(reference.shape[2])
    return None


def _values(array: np.ndarray, where: str, output_range: tuple[float, float] | None) -> tuple[np.ndarray, str | None]:
    """The array as uint8 (and the conversion applied, if any)."""
    if array.dtype == np.uint8:
        return array, None
    if np.issubdtype(array.dtype, np.integer):
        low, high = int(array.min()), int(array.max())
        if low < 0 or high > 255:
            raise ContractViolation(f"{where}: {array.dtype} values span {low}..{high}; expected uint8 0..255")
        return array.astype(np.uint8), f"{array.dtype} 0..255 -> uint8 (lossless cast)"
    if np.issubdtype(array.dtype, np.floating):
        finite = np.isfinite(array)
        if not finite.all():
            bad = int(array.size - int(finite.sum()))
            raise ContractViolation(f"{where}: {bad} non-finite value(s) (NaN or infinity) in a {array.dtype} output")
        low_v, high_v = float(array.min()), float(array.max())
        if output_range is None:
            raise ContractViolation(
                f"{where}: {array.dtype} output (values {low_v:.4g}..{high_v:.4g}) but the model declares no range; "
                "return uint8 frames, or declare the float range in the model config: "
                "model.output_range=[0,1] or [0,255]")
        low, high = output_range
        slack = RANGE_TOLERANCE * (high - low)
        if low_v < low - slack or high_v > high + slack:
            raise ContractViolation(f"{where}: {array.dtype} values span {low_v:.6g}..{high_v:.6g}, outside the "
                                    f"declared model.output_range [{low:g}, {high:g}]")
        scaled = np.rint((array.astype(np.float64) - low) * (255.0 / (high - low)))
        return np.clip(scaled, 0, 255).astype(np.uint8), conversion_text(output_range)
    if array.dtype == np.bool_:
        raise ContractViolation(f"{where}: boolean output; expected uint8 RGB values")
    raise ContractViolation(f"{where}: dtype {array.dtype} is not a pixel type (expected uint8)")


def _check_layout(array: np.ndarray, where: str, layout: str, request: GenerationRequest) -> None:
    shape = tuple(array.shape)
    if layout == "image":
        if array.ndim != 3 or shape[-1] != 3:
            raise ContractViolation(f"{where}: shape {shape}; expected an H×W×3 RGB image")
        return
    if array.ndim != 4 or shape[-1] != 3:
        hint = ""
        if array.ndim == 4 and shape[1] == 3:
            hint = " (it looks channel-first: move the channel axis last)"
        elif array.ndim == 4 and shape[-1] in (1, 4):
            hint = f" ({shape[-1]} channel(s): convert to RGB)"
        raise ContractViolation(f"{where}: shape {shape}; expected a T×H×W×3 RGB video{hint}")
    frames, source = expected_frames(request)
    if frames is not None and shape[0] != frames:
        raise ContractViolation(f"{where}: {shape[0]} frame(s); the request asks for {frames} ({source})")
    resolution = expected_resolution(request)
    if resolution is not None and shape[1:3] != resolution:
        raise ContractViolation(f"{where}: resolution {shape[1]}×{shape[2]} (H×W); the reference video is "
                                f"{resolution[0]}×{resolution[1]}")


def check_outputs(request: GenerationRequest, outputs: Any,
                  contract: OutputContract | None = None) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """(the outputs as arrays ready to store, conversions applied by key); :class:`ContractViolation`
    naming the sample and the output when one breaks the contract."""
    contract = contract or OutputContract()
    sample = f"sample {request.sample_id!r}"
    if not isinstance(outputs, Mapping):
        raise ContractViolation(f"{sample}: the model returned {type(outputs).__name__}; expected a mapping of "
                                "output key -> array (e.g. {'generated_video': T×H×W×3 uint8})")
    missing = [k for k in contract.required_keys if k not in outputs]
    if missing:
        raise ContractViolation(f"{sample}: missing output(s) {', '.join(map(repr, missing))} "
                                f"(returned: {', '.join(map(repr, outputs)) or 'nothing'})")
    arrays: dict[str, np.ndarray] = {}
    conversions: dict[str, str] = {}
    for key, value in outputs.items():
        where = f"{sample}, output {str(key)!r}"
        try:
            array = np.asarray(value)
        except Exception as exc:  # a ragged list, an object that is not array-like
            raise ContractViolation(f"{where}: not an array ({type(exc).__name__}: {exc})") from None
        if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
            raise ContractViolation(f"{where}: not a numeric array (dtype {array.dtype})")
        if array.size == 0:
            raise ContractViolation(f"{where}: empty array (shape {tuple(array.shape)})")
        layout = contract.layout(str(key))
        if layout == "array":
            if np.issubdtype(array.dtype, np.inexact) and not np.isfinite(array).all():
                raise ContractViolation(f"{where}: non-finite value(s) (NaN or infinity)")
            arrays[str(key)] = array
            continue
        _check_layout(array, where, layout, request)
        array, how = _values(array, where, contract.output_range)
        if how:
            conversions[str(key)] = how
        arrays[str(key)] = array
    return arrays, conversions


def build_contract(model_cfg: Mapping[str, Any], task: Any) -> OutputContract:
    """The contract of a run from the model config (``output_range``) and the task (``output_keys``,
    ``metadata.output_layout``)."""
    output_range = parse_output_range(model_cfg.get("output_range"))
    keys: Sequence[str] = tuple(getattr(task, "output_keys", None) or ("generated_video",))
    layouts = parse_layouts((getattr(task, "metadata", None) or {}).get("output_layout"))
    return OutputContract(required_keys=tuple(keys), output_range=output_range, layouts=layouts)
