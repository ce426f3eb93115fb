"""The folders of an artifact store, named once: every module that reads or writes under the
store's root takes the name from here (docs/run-directory.md, ``python -m wfeval.store``).

::

    <store>/objects/ab/<sha256>.<ext>        content-addressed arrays (artifacts.py)
    <store>/generations/<model key>/<request key>.json   finished generations (generations.py)
    <store>/results/<metric digest>/ab/<key>.json        per-sample metric rows (metric_rows.py)
    <store>/features/<weights>-<recipe>/ab/<video sha256>.npy   I3D features (features.py)
    <store>/reference_stats/<key>.npz        reference feature statistics (features.py)
    <store>/recordings/<family>/ab/<key>.json   recorded trajectories (recordings.py)
    <store>/decoded/ab/<key>.json            decoded dataset files (decoded.py)
    <store>/seal.key                         the store's secret that seals every record above (seal.py)
"""

from __future__ import annotations

from pathlib import Path

OBJECTS = "objects"
GENERATIONS = "generations"
METRIC_ROWS = "results"
FEATURES = "features"
REFERENCE_STATS = "reference_stats"
RECORDINGS = "recordings"
DECODED = "decoded"

#: folders of JSON records that name objects by sha256 (``store prune`` removes the records of
#: objects it removes; ``store du`` sizes them)
RECORD_FOLDERS = (GENERATIONS, METRIC_ROWS, RECORDINGS, DECODED)


def folder(root: str | Path, name: str) -> Path:
    """``<root>/<name>`` for one of the names above."""
    return Path(root) / name
