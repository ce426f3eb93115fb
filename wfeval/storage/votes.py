"""People's votes on blind pairs of videos (``python -m wfeval.arena``), kept in SQLite.

One row per vote, committed when it is cast (WAL journal, ``synchronous=FULL``: a process killed
with ``kill -9`` loses at most the vote it had not yet committed). A vote names everything that was
seen, so it stays attached to the exact outputs: the benchmark column, the sample, for each side
(``a`` shown left, ``b`` right) the run folder's name, the run id, the model's name and cache key,
and the sha256 of the video shown. ``choice`` is ``a``, ``b``, ``tie`` or ``both_bad``. The vote id
is random and unique: importing votes exported elsewhere (JSONL or CSV) adds only those not yet
there, so votes from several machines merge without duplicates.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import threading
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Iterable, Iterator

CHOICES = ("a", "b", "tie", "both_bad")
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Vote:
    vote_id: str
    cast_at: str  # ISO 8601, UTC
    rater: str
    column: str  # the leaderboard column (benchmark, task, protocol) the pair belongs to
    sample_id: str
    run_a: str  # the run folder's name
    run_b: str
    run_id_a: str
    run_id_b: str
    model_a: str
    model_b: str
    model_key_a: str
    model_key_b: str
    video_a: str  # sha256 of the video shown on the left
    video_b: str
    choice: str

    def __post_init__(self) -> None:
        if self.choice not in CHOICES:
            raise ValueError(f"choice must be one of {', '.join(CHOICES)}, got {self.choice!r}")
        for f in fields(self):
            if not isinstance(getattr(self, f.name), str):
                raise ValueError(f"vote field {f.name} must be text, got {type(getattr(self, f.name)).__name__}")
        if not self.vote_id or not self.rater:
            raise ValueError("a vote needs a vote_id and a rater")


FIELDS = tuple(f.name for f in fields(Vote))
_CREATE = (f"CREATE TABLE IF NOT EXISTS votes ({', '.join(f + ' TEXT NOT NULL' for f in FIELDS)}, "
           "PRIMARY KEY (vote_id), CHECK (choice IN ('a', 'b', 'tie', 'both_bad')))")


class VoteStore:
    """The votes file: :meth:`add` commits one vote at once; safe to share between threads."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(_CREATE)
        self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> "VoteStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def add(self, vote: Vote) -> bool:
        """Commit ``vote``; False (nothing written) when a vote with its id is already there."""
        values = tuple(getattr(vote, f) for f in FIELDS)
        with self._lock:
            cursor = self._db.execute(f"INSERT OR IGNORE INTO votes ({', '.join(FIELDS)}) "
                                      f"VALUES ({', '.join('?' * len(FIELDS))})", values)
        return cursor.rowcount == 1

    def votes(self) -> list[Vote]:
        with self._lock:
            rows = self._db.execute(f"SELECT {', '.join(FIELDS)} FROM votes ORDER BY cast_at, vote_id").fetchall()
        return [Vote(*row) for row in rows]

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM votes").fetchone()[0])

    def has(self, vote_id: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM votes WHERE vote_id = ?", (vote_id,)).fetchone() is not None

    def import_votes(self, votes: Iterable[Vote]) -> int:
        """Add the votes not yet here (by id); how many were added."""
        return sum(self.add(v) for v in votes)


def read_votes(path: str | Path) -> list[Vote]:
    """The votes of a votes file, read only (an absent file: no votes)."""
    path = Path(path)
    if not path.is_file():
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute(f"SELECT {', '.join(FIELDS)} FROM votes ORDER BY cast_at, vote_id").fetchall()
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"{path}: not a votes file ({exc})") from exc
    finally:
        db.close()
    return [Vote(*row) for row in rows]


def export_votes(votes: Iterable[Vote], fmt: str) -> str:
    """The votes as JSONL (one object a line) or CSV (a header row of the field names)."""
    votes = list(votes)
    if fmt == "jsonl":
        return "".join(json.dumps(asdict(v), sort_keys=False) + "\n" for v in votes)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(asdict(v) for v in votes)
        return out.getvalue()
    raise ValueError(f"export format must be jsonl or csv, got {fmt!r}")


def parse_votes(text: str, fmt: str) -> Iterator[Vote]:
    """Votes from exported text; a malformed line raises ValueError naming its line number."""
    if fmt == "jsonl":
        records = ((i, json.loads(line)) for i, line in enumerate(text.splitlines(), 1) if line.strip())
    elif fmt == "csv":
        records = enumerate(csv.DictReader(io.StringIO(text)), 2)
    else:
        raise ValueError(f"import format must be jsonl or csv, got {fmt!r}")
    for line, record in records:
        if not isinstance(record, dict) or set(record) != set(FIELDS):
            raise ValueError(f"line {line}: a vote needs exactly the fields {', '.join(FIELDS)}")
        try:
            yield Vote(**record)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"line {line}: {exc}") from exc
