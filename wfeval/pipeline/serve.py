"""Refuse, before generation, a model that cannot serve the chosen benchmark.

A model may declare ``cannot_serve(request) -> str | None`` (a class method or a method): the
reason it cannot produce an output for that request (e.g. a simulator baseline on a benchmark
without its simulator), or None. If any request is refused, the run stops with exit 2 before
``setup()`` and names the built-in models that can serve the benchmark.
"""

from __future__ import annotations

from typing import Any, Iterable

from wfeval.api import GenerationRequest
from wfeval.config.errors import ConfigError


def refusal(model: Any, request: GenerationRequest) -> str | None:
    method = getattr(model, "cannot_serve", None)
    if not callable(method):
        return None
    reason = method(request)
    return str(reason) if reason else None


BASELINE_PACKAGE = "wfeval.benchmarks."  # the baselines a benchmark family ships declare what they serve


def _baselines() -> dict[str, Any]:
    """Built-in model options whose class is a benchmark family's baseline (wfeval.config.plugins):
    option name -> class (not instantiated). The generic adapters (precomputed, command, python and
    the recipes' learned model) serve any benchmark and are not imported to ask."""
    from wfeval.config.plugins import builtin_targets, import_target

    out = {}
    for option, target in builtin_targets("model").items():
        if not target.startswith(BASELINE_PACKAGE):
            continue
        try:
            out[option] = import_target(target)
        except (ImportError, AttributeError):  # a family whose package is not installed
            continue
    return out


def models_that_serve(request: GenerationRequest) -> list[str]:
    """Built-in model options that declare they can serve ``request``."""
    able = []
    for option, cls in _baselines().items():
        method = getattr(cls, "cannot_serve", None)
        if not callable(method):
            continue
        try:
            if not method(request):
                able.append(option)
        except TypeError:  # an instance method that needs its object: not decidable here
            continue
    return able


class ServeCheck:
    """:func:`check_model_serves` fed one request at a time (only counts are held)."""

    def __init__(self, model: Any):
        self.model = model
        self.asks = callable(getattr(model, "cannot_serve", None))
        self.total = self.refused = 0
        self.first: tuple[GenerationRequest, str] | None = None

    def add(self, request: GenerationRequest) -> None:
        from wfeval.benchmarks.base import input_error

        self.total += 1
        if not self.asks or input_error(request):
            return
        why = refusal(self.model, request)
        if why:
            self.refused += 1
            self.first = self.first or (request, why)

    def check(self, benchmark_id: str, model_choice: str | None = None) -> None:
        """ConfigError (exit 2) when the model refused any request."""
        if self.first is None:
            return
        request, why = self.first
        name = model_choice or getattr(self.model, "name", type(self.model).__name__)
        able = [m for m in models_that_serve(request) if m != name]
        raise ConfigError(
            f"model={name} cannot serve benchmark {benchmark_id!r} ({self.refused} of {self.total} sample(s); "
            f"first: {request.sample_id!r}: {why}). Models that can: {', '.join(able) or '(none built in)'}; "
            "or bring your own outputs with model=precomputed, command, python or learned. Nothing was generated."
        )


def check_model_serves(model: Any, requests: Iterable[GenerationRequest], benchmark_id: str,
                       model_choice: str | None = None) -> None:
    """ConfigError (exit 2) when the model refuses any request whose inputs are available."""
    checker = ServeCheck(model)
    for request in requests:
        checker.add(request)
    checker.check(benchmark_id, model_choice)
