"""A model's identity covers the code it runs: :func:`code_identity` lives in
:mod:`wfeval.utils.code_identity` (metrics use it too: the metric-result cache keys on a metric's
code and on every callable it was given)."""

from wfeval.utils.code_identity import FRAMEWORK, MAX_FILES, callable_identity, code_identity

__all__ = ["FRAMEWORK", "MAX_FILES", "callable_identity", "code_identity"]
