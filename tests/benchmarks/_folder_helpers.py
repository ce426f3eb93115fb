"""Build dataset folders for the folder-family tests from the shipped example."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "datasets" / "gridworld_tiny"


def copy_example(dest: Path) -> Path:
    shutil.copytree(EXAMPLE, dest)
    return dest


def lines(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "manifest.jsonl").read_text().splitlines() if line.strip()]


def write_lines(root: Path, rows: list) -> None:
    text = "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)
    (root / "manifest.jsonl").write_text(text)


def bad_dataset(dest: Path) -> Path:
    """The example (lines 1-4) plus: 5 a corrupt reference video, 6 a missing initial frame,
    7 a duplicated id, 8 a '../' id, 9 a malformed line."""
    root = copy_example(dest)
    rows = lines(root)
    good = rows[0]
    data = (root / good["reference_video"]).read_bytes()
    (root / "videos" / "corrupt.mkv").write_bytes(data[: len(data) // 2])
    rows += [
        {**good, "sample_id": "bad-corrupt", "reference_video": "videos/corrupt.mkv"},
        {**good, "sample_id": "bad-missing", "initial_frame": "frames/missing.png"},
        {**good},
        {**good, "sample_id": "../evil"},
        '{"sample_id": "broken", ',
    ]
    write_lines(root, rows)
    return root
