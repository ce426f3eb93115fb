"""The identity of a live object's state: everything reachable from it, arrays hashed by content.

A model object handed over in Python (``wfeval.evaluate(model=...)``, a latent model's object)
may change between two calls -- a training step updates its weights in place -- so the cache
must key its outputs on the object's *state*, not on its name. :func:`state_digest` is that
state's one identity, computed by walking the object graph from the object:

* **arrays by content**: a torch tensor (parameters, buffers -- persistent or not -- and plain
  tensor attributes alike, on any device), a numpy array or scalar, a JAX array: sha256 over its
  dtype, shape and bytes; an object-dtype array by its elements;
* **containers and objects by their contents**: dicts (keys and values), lists, tuples, sets,
  ``functools.partial`` objects, bound methods (their object), functions (their closure values),
  and every object's attributes (``__dict__`` and ``__slots__``), followed as deep as they go.
  A torch module is such an object: its parameters, buffers, submodules, ``training`` flag and
  plain attributes are all reached, however they are held (a network in a list, two attributes
  deep, in a dict);
* plain values (numbers, strings, bytes, None) by their value;
* not part of the state: classes, modules and functions' code (the code identity covers code:
  :mod:`wfeval.utils.code_identity`), random generators (their state moves on with every draw;
  a stored output stands for the model's distribution), locks, loggers, files and weak references.

Shared references are hashed once and cycles end where they close, so the digest is a function
of the values reachable, not of how often they are reached. The walk is bounded
(:data:`MAX_OBJECTS` objects, :data:`MAX_DEPTH` levels): past a bound, or at an object whose
contents Python cannot read (an extension object with no attributes), :class:`StateUnseen` says
where -- the caller then relies on what the user says (``fingerprint()``, ``model_version``) or
refuses the object. Cost: one pass over the arrays' bytes (sha256, ~1 GB/s) plus ~2 µs per object.

:func:`fingerprint_value` is how a user's ``fingerprint()`` result enters an identity: a mapping,
bytes or a string (anything else is a clear error naming the type).
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any, Callable, Mapping

#: objects followed at most (past it: :class:`StateUnseen`)
MAX_OBJECTS = 200_000
#: levels followed at most (past it: :class:`StateUnseen`)
MAX_DEPTH = 100

_PLAIN = (type(None), bool, int, float, complex, str)
#: types whose instances hold no model state (their type name enters the digest)
_STATELESS_MODULES = ("_thread", "threading", "logging", "_io", "io", "weakref", "_weakref", "random", "_random",
                      "numpy.random", "concurrent.futures", "queue", "multiprocessing", "socket", "selectors",
                      "subprocess", "_ctypes", "re", "_sre")
#: torch's own types whose instances are plain values (by their repr) or random generators
_TORCH_PLAIN = ("device", "dtype", "Generator", "layout", "memory_format")


class FingerprintError(TypeError):
    """A ``fingerprint()`` returned something that is not a dict, bytes or a str."""


class StateUnseen(ValueError):
    """Part of an object's state cannot be hashed; the message names the path and the reason."""


def _is_stateless(value: Any, np: Any) -> bool:
    cls = type(value)
    module = cls.__module__ or ""
    if isinstance(value, type) or cls.__name__ == "module":
        return True
    if module.startswith("torch") and cls.__name__ in _TORCH_PLAIN:
        return True
    if np is not None and isinstance(value, np.dtype):
        return True
    return any(module == m or module.startswith(m + ".") for m in _STATELESS_MODULES)


class _Walk:
    def __init__(self, max_objects: int, max_depth: int):
        self.max_objects, self.max_depth = max_objects, max_depth
        self.done: dict[int, bytes] = {}
        self.active: dict[int, str] = {}
        self.keep: list[Any] = []  # the objects memoised by id stay alive until the walk ends
        self.objects = self.arrays = self.array_bytes = 0
        self.torch = sys.modules.get("torch")
        self.numpy = sys.modules.get("numpy")
        self.jax = sys.modules.get("jax")

    def digest(self, value: Any, path: str, depth: int) -> bytes:
        if isinstance(value, _PLAIN):
            return _h(b"v", type(value).__name__.encode(), repr(value).encode("utf-8", "surrogatepass"))
        if isinstance(value, (bytes, bytearray, memoryview)):
            return _h(b"b", bytes(value))
        key = id(value)
        if key in self.done:
            return self.done[key]
        if key in self.active:  # a cycle: the path where it closes
            return _h(b"cycle", self.active[key].encode())
        self.objects += 1
        if self.objects > self.max_objects:
            raise StateUnseen(f"{path}: more than {self.max_objects} objects are reachable from the model object")
        if depth > self.max_depth:
            raise StateUnseen(f"{path}: nested more than {self.max_depth} levels deep")
        self.active[key] = path
        try:
            out = self._node(value, path, depth)
        except (StateUnseen, RecursionError):
            raise
        except Exception as exc:  # noqa: BLE001 - a container whose reading fails (a lazy mapping, a missing value)
            raise StateUnseen(f"{path}: reading it raised {type(exc).__name__}: {exc}") from None
        finally:
            del self.active[key]
        self.done[key] = out
        self.keep.append(value)
        return out

    def _node(self, value: Any, path: str, depth: int) -> bytes:
        cls = type(value)
        kind = f"{cls.__module__}.{cls.__qualname__}".encode()
        array = self._array(value, path, depth)
        if array is not None:
            return array
        nxt = depth + 1
        if isinstance(value, Mapping):
            pairs = sorted((self.digest(k, f"{path}[{k!r}]", nxt), self.digest(v, f"{path}[{k!r}]", nxt))
                           for k, v in list(value.items()))
            return _h(b"map", kind, *[a + b for a, b in pairs])
        if isinstance(value, (list, tuple)):
            return _h(b"seq", kind, *[self.digest(v, f"{path}[{i}]", nxt) for i, v in enumerate(list(value))])
        if isinstance(value, (set, frozenset)):
            return _h(b"set", kind, *sorted(self.digest(v, f"{path}{{}}", nxt) for v in list(value)))
        if _is_stateless(value, self.numpy):
            plain = cls.__name__ in ("device", "dtype", "layout", "memory_format") or \
                (self.numpy is not None and isinstance(value, self.numpy.dtype))
            return _h(b"stateless", kind, repr(value).encode() if plain else b"")
        if cls.__name__ == "partial" and cls.__module__ == "functools":
            return _h(b"partial", self.digest(value.func, f"{path}.func", nxt),
                      self.digest(value.args, f"{path}.args", nxt),
                      self.digest(value.keywords, f"{path}.keywords", nxt))
        if hasattr(value, "__func__") and hasattr(value, "__self__"):  # a bound method: its object
            return _h(b"method", _name(value.__func__), self.digest(value.__self__, f"{path}.__self__", nxt))
        if callable(value) and hasattr(value, "__code__"):  # a function: its closure and defaults
            cells = []
            for i, cell in enumerate(value.__closure__ or ()):
                try:
                    cells.append(self.digest(cell.cell_contents, f"{path}.<closure {i}>", nxt))
                except ValueError:  # an empty cell
                    cells.append(b"")
            return _h(b"function", _name(value), *cells, self.digest(value.__defaults__, f"{path}.__defaults__", nxt),
                      self.digest(value.__kwdefaults__, f"{path}.__kwdefaults__", nxt))
        if cls.__module__ == "builtins" and callable(value):  # a builtin function (len, math.sqrt)
            return _h(b"builtin", _name(value))
        return self._attributes(value, kind, path, nxt)

    def _attributes(self, value: Any, kind: bytes, path: str, depth: int) -> bytes:
        attributes = dict(getattr(value, "__dict__", None) or {})
        for klass in type(value).__mro__:
            for slot in getattr(klass, "__slots__", ()) or ():
                if isinstance(slot, str) and slot not in ("__dict__", "__weakref__") and slot not in attributes:
                    try:
                        attributes[slot] = object.__getattribute__(value, slot)
                    except AttributeError:  # an empty slot
                        pass
        has_dict = isinstance(getattr(value, "__dict__", None), dict)
        if not attributes and not has_dict and not any(getattr(k, "__slots__", None) for k in type(value).__mro__):
            module = type(value).__module__ or ""
            if module == "torch" or module.startswith("torch."):  # torch's own extension objects (a scripted
                # module's C++ half): their tensors are reached through the module's state_dict below
                return _h(b"opaque", kind)
            raise StateUnseen(f"{path}: a {type(value).__module__}.{type(value).__qualname__} object, whose contents "
                              "cannot be read from Python")
        parts = [_h(str(name).encode(), self.digest(v, f"{path}.{name}", depth))
                 for name, v in sorted(attributes.items(), key=lambda kv: str(kv[0]))]
        if self.torch is not None and isinstance(value, self.torch.nn.Module):  # also what only its state_dict shows
            try:  # (a scripted module); the tensors already reached are not hashed again
                state = dict(value.state_dict(keep_vars=True))
            except Exception as exc:  # noqa: BLE001 - a user's state_dict override
                raise StateUnseen(f"{path}.state_dict() failed ({type(exc).__name__}: {exc})") from None
            parts.append(self.digest(state, f"{path}.state_dict()", depth))
        return _h(b"object", kind, *parts)

    def _array(self, value: Any, path: str, depth: int) -> bytes | None:
        torch, np = self.torch, self.numpy
        if torch is not None and isinstance(value, torch.Tensor):
            dtype, shape, data = _tensor_bytes(torch, value, path)
            return self._counted(b"tensor", dtype, shape, data)
        if self.jax is not None and isinstance(value, getattr(self.jax, "Array", ())):
            value = np.asarray(value)  # to the host (numpy is imported by jax)
        if np is not None and isinstance(value, (np.ndarray, np.generic)):
            array = np.asarray(value)
            if array.dtype.hasobject:  # an array of objects: its elements
                return _h(b"objects", str(array.shape).encode(),
                          *[self.digest(v, f"{path}.flat[{i}]", depth + 1)
                            for i, v in enumerate(array.ravel().tolist())])
            array = np.ascontiguousarray(array)
            data = memoryview(array.reshape(-1).view(np.uint8))
            return self._counted(b"ndarray", array.dtype.str, tuple(array.shape), data)
        return None

    def _counted(self, tag: bytes, dtype: str, shape: tuple[int, ...], data: Any) -> bytes:
        self.arrays += 1
        self.array_bytes += len(data)
        return _h(tag, f"{dtype}{shape}".encode(), data)


def _tensor_bytes(torch: Any, value: Any, path: str) -> tuple[str, tuple[int, ...], Any]:
    """A tensor's dtype, shape and bytes (copied to the CPU; sparse made dense; a meta tensor has no bytes)."""
    try:
        tensor = value.detach()
        if tensor.device.type == "meta":
            return str(tensor.dtype), tuple(tensor.shape), b"meta"
        if tensor.layout != torch.strided:
            tensor = tensor.to_dense()
        if tensor.is_quantized:
            tensor = tensor.int_repr()
        if tensor.device.type != "cpu":
            tensor = tensor.cpu()
        flat = tensor.contiguous().reshape(-1)
        raw = flat.view(torch.uint8) if flat.numel() else flat.to(torch.uint8)
        return str(tensor.dtype), tuple(tensor.shape), memoryview(raw.numpy()).cast("B")
    except (RuntimeError, TypeError, ValueError) as exc:
        raise StateUnseen(f"{path}: a tensor whose bytes cannot be read ({type(exc).__name__}: {exc})") from None


def _h(*parts: bytes | Any) -> bytes:
    digest = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, (bytes, memoryview)) else bytes(part)
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.digest()


def _name(fn: Any) -> bytes:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "")
    return f"{getattr(fn, '__module__', None)}.{name}".encode()


def state_digest(obj: Any, *, max_objects: int = MAX_OBJECTS, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """The identity of everything reachable from ``obj`` (see the module doc): ``sha256`` and what it
    covered (``arrays``, ``array_bytes``, ``objects``). Raises :class:`StateUnseen` naming where the
    walk could not see (an unreadable object, a bound passed)."""
    walk = _Walk(max_objects, max_depth)
    try:
        top = walk.digest(obj, "model", 0)
    except RecursionError:  # a deep chain under the interpreter's own limit (never raised here: process-wide)
        raise StateUnseen("model: nested deeper than the interpreter's recursion limit allows") from None
    return {"sha256": top.hex(), "arrays": walk.arrays, "array_bytes": walk.array_bytes, "objects": walk.objects}


def fingerprint_value(result: Any, owner: Any, digest: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """A ``fingerprint()`` result as an identity holds it: a mapping (values that are not plain JSON
    by their :func:`state_digest`), bytes (their sha256), a string, or None (nothing). Anything else:
    a :class:`FingerprintError` naming ``owner``'s class and the type returned."""
    if result is None:
        return {}
    if isinstance(result, (bytes, bytearray, memoryview)):
        return {"bytes_sha256": hashlib.sha256(bytes(result)).hexdigest()}
    if isinstance(result, str):
        return {"text": result} if len(result) <= 256 else {"text_sha256": hashlib.sha256(result.encode()).hexdigest()}
    if isinstance(result, Mapping):
        return {str(k): _json_or_digest(v) for k, v in result.items()}
    cls = type(owner)
    raise FingerprintError(f"{cls.__module__}.{cls.__qualname__}.fingerprint() returned a {type(result).__name__} "
                    f"({result!r:.60}); it must return a dict, bytes or a str that identifies the model's state")


def _json_or_digest(value: Any) -> Any:
    if isinstance(value, _PLAIN) and not isinstance(value, complex):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, _PLAIN) and not isinstance(v, complex) for v in value):
        return list(value)
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        return {k: _json_or_digest(v) for k, v in value.items()}
    return {"state_sha256": state_digest(value)["sha256"]}
