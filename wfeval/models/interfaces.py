"""What an object lacks of the interface a run needs, listed whole before the run starts.

The latent interface (wfeval/models/latent.py) and the step interface (wfeval/models/protocol.py)
are declared in their own modules; this one names their required methods once, with the
positional arguments the drivers call them with, so a protocol's ``check`` can refuse an object
with one error that lists every missing method and every method that cannot take those arguments
(``encode(self)`` without ``frames``), the task that needs them and the page that explains them.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from wfeval.config.errors import ConfigError


@dataclass(frozen=True)
class Interface:
    name: str
    methods: tuple[tuple[str, tuple[str, ...]], ...]  # (method, the positional arguments it is called with)
    docs: str


LATENT = Interface("latent interface", (("encode", ("frames",)), ("predict", ("z", "actions"))),
                   "docs/latent-models.md")
STEP = Interface("step interface", (("start", ("request",)), ("step", ("state", "actions"))), "docs/protocols.md")


def user_object(model: Any) -> Any:
    """The object the user wrote: the one ``model=python`` / ``wfeval.evaluate`` wraps, else the model."""
    held = getattr(model, "state_object", None)
    return model if held is None else held


def _call(method: str, params: tuple[str, ...]) -> str:
    return f"{method}({', '.join(params)})"


def problems(model: Any, interface: Interface) -> list[str]:
    """Every method of ``interface`` that ``model`` lacks, that is not callable, or whose signature
    cannot take the positional arguments the drivers pass (empty when the object has the interface)."""
    target = user_object(model)
    out = []
    for method, params in interface.methods:
        fn = getattr(target, method, None)
        if fn is None:
            out.append(f"{_call(method, params)} is missing")
            continue
        if not callable(fn):
            out.append(f"{method} is a {type(fn).__name__}, not a method {_call(method, params)}")
            continue
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):  # a builtin without a signature: cannot tell, take it as it is
            continue
        try:
            signature.bind(*params)
        except TypeError:
            out.append(f"{method}{signature} cannot be called as {_call(method, params)}")
    return out


def has(model: Any, interface: Interface) -> bool:
    return not problems(model, interface)


def require(model: Any, interface: Interface, needed_by: str, more: str = "") -> None:
    """ConfigError listing everything ``model`` lacks of ``interface``, which ``needed_by`` (``task=probing``,
    ``protocol.driver=closed_loop``) needs; nothing when it has it all."""
    found = problems(model, interface)
    if not found:
        return
    name = getattr(model, "name", None) or type(model).__name__
    cls = type(user_object(model))
    raise ConfigError(f"{needed_by} needs the {interface.name} ({', '.join(_call(m, p) for m, p in interface.methods)}; "
                      f"{interface.docs}), and model {name!r} ({cls.__module__}.{cls.__qualname__}) does not have it: "
                      f"{'; '.join(found)}{more}")
