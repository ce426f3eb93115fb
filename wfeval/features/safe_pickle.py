"""A restricted unpickler for checkpoints that are nested dicts of numpy arrays, and nothing else.

``pickle.load`` runs whatever callables a file names; this reader resolves only the names a plain
numpy array needs (``numpy.core.multiarray._reconstruct``, ``numpy.ndarray`` and ``numpy.dtype``
for pickle protocols 3–4, ``numpy.core.numeric._frombuffer`` for protocol 5), refuses object
dtypes (whose payload would be arbitrary pickles) and persistent ids, and checks that the result
is a tree of ``str``-keyed dicts with numeric-array leaves. Protocol-2 pickles of arrays (which
call ``_codecs.encode``) are refused.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

import numpy as np

try:  # numpy >= 2 moved the implementation; old pickles still name numpy.core
    from numpy._core.multiarray import _reconstruct
    from numpy._core.numeric import _frombuffer
except ImportError:  # pragma: no cover - numpy < 2
    from numpy.core.multiarray import _reconstruct  # type: ignore[no-redef]
    from numpy.core.numeric import _frombuffer  # type: ignore[no-redef]


class UnsafePickleError(pickle.UnpicklingError):
    """The pickle asks for something other than plain numeric numpy arrays in dicts."""


def _numeric_dtype(*args: Any) -> np.dtype:
    dtype = np.dtype(*args)
    if dtype.hasobject:
        raise UnsafePickleError(f"refusing a pickled object array (dtype {dtype})")
    return dtype


def _numeric_frombuffer(buffer: Any, dtype: Any, shape: Any, order: Any) -> np.ndarray:
    return _frombuffer(buffer, _numeric_dtype(dtype), shape, order)


_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): _numeric_dtype,
    ("numpy.core.numeric", "_frombuffer"): _numeric_frombuffer,
    ("numpy._core.numeric", "_frombuffer"): _numeric_frombuffer,
}


class NumpyOnlyUnpickler(pickle.Unpickler):
    """Resolves only the numpy array reconstruction callables; everything else is an error."""

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            raise UnsafePickleError(f"refusing to unpickle {module}.{name}: only numpy arrays are allowed") from None

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafePickleError("refusing a persistent id in a numpy-only pickle")


def _check_tree(node: Any, path: str) -> None:
    if isinstance(node, np.ndarray):
        if node.dtype.hasobject or node.dtype.kind not in "fiub":
            raise UnsafePickleError(f"{path}: array of dtype {node.dtype} is not numeric")
        return
    if not isinstance(node, dict):
        raise UnsafePickleError(f"{path}: expected a dict or a numpy array, got {type(node).__name__}")
    for key, value in node.items():
        if not isinstance(key, str):
            raise UnsafePickleError(f"{path}: non-string key {key!r}")
        _check_tree(value, f"{path}/{key}")


def load_array_tree(data: bytes) -> dict[str, Any]:
    """Unpickle ``data`` that must be nested ``{str: dict | numeric ndarray}``; raise otherwise."""
    tree = NumpyOnlyUnpickler(io.BytesIO(data)).load()
    _check_tree(tree, "")
    return tree
