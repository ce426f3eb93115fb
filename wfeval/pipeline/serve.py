"""Refuse, before generation, a model that cannot serve the chosen benchmark.

A model may declare ``cannot_serve(request) -> str | None`` (a class method or a method): the
reason it cannot produce an output for that request (e.g. a simulator baseline on a benchmark
without its simulator), or None. If any request is refused, the run stops with exit 2 before
``setup()`` and names the models (built in or installed) that can serve the benchmark.
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


def _model_classes() -> dict[str, Any]:
    """Every model option's class, through the model registry (wfeval.config.plugins): the built-in files
    ``conf/model/*.yaml`` and installed plugins' ``wfeval.models`` entry points; option name -> class (not
    instantiated). A class that cannot be imported (a family whose package is not installed, a broken
    plugin) is left out."""
    from wfeval.config.code import import_target
    from wfeval.config.plugins import builtin_targets, installed_plugins

    targets = dict(builtin_targets("model"))
    for offer in installed_plugins().offers:
        if offer.group == "model" and offer.target and offer.option not in targets:
            targets[offer.option] = offer.target
    out = {}
    for option, target in targets.items():
        try:
            out[option] = import_target(target)
        except Exception:  # noqa: BLE001 - named when chosen (wfeval.config.plugin_refusals)
            continue
    return out


def models_that_serve(request: GenerationRequest) -> list[str]:
    """Model options (built in or installed) whose class declares it can serve ``request``: its
    ``cannot_serve`` answers None when asked as a class method (an instance method that needs its
    object cannot be asked here)."""
    able = []
    for option, cls in _model_classes().items():
        method = getattr(cls, "cannot_serve", None)
        if not callable(method):
            continue
        try:
            if not method(request):
                able.append(option)
        except Exception:  # noqa: BLE001 - an instance method that needs its object: not decidable here
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
            f"first: {request.sample_id!r}: {why}). Models that can: {', '.join(able) or '(none installed)'}; "
            "or bring your own outputs with model=precomputed, command, python or learned. Nothing was generated."
        )


def check_model_serves(model: Any, requests: Iterable[GenerationRequest], benchmark_id: str,
                       model_choice: str | None = None) -> None:
    """ConfigError (exit 2) when the model refuses any request whose inputs are available."""
    checker = ServeCheck(model)
    for request in requests:
        checker.add(request)
    checker.check(benchmark_id, model_choice)
