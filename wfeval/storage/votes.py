"""People's votes on blind pairs of videos (``python -m wfeval.arena``), kept in SQLite.

One row per vote, committed when it is cast (WAL journal, ``synchronous=FULL``: a process killed
with ``kill -9`` loses at most the vote it had not yet committed). A vote names everything that was
seen, so it stays attached to the exact outputs: the benchmark column, the sample, for each side
(``a`` shown left, ``b`` right) the run folder's name, the run id, the model's name and cache key,
and the sha256 of the video shown. ``choice`` is ``a``, ``b``, ``tie`` or ``both_bad``. The vote id
is random and unique: importing votes exported elsewhere (JSONL or CSV) adds only those not yet
there, so votes from several machines merge without duplicates. ``client`` is the pseudonym of the
browser (or remote machine) that cast the vote (:mod:`wfeval.arena.core`): one client judges a pair
once, whatever rater names it types; votes written before it was recorded have ``""``.

The votes file is data in a sweep or run folder: it is never opened for writing through a symbolic
link (run-folder guarantee 9) -- a link at the file or at SQLite's side files (``-wal``, ``-shm``,
``-journal``) is refused, the file is opened with ``O_NOFOLLOW`` before SQLite opens it by name and
is checked to be the same file after -- and a file that is not a votes file (not SQLite, damaged,
another program's tables) is refused with a ValueError naming it, never changed.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import sqlite3
import stat
import threading
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Iterable, Iterator

CHOICES = ("a", "b", "tie", "both_bad")
SCHEMA_VERSION = 2  # 2: the client column
SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's files beside the database
ADVICE = "move it away, or give another votes file with --db"


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
    client: str = ""  # the pseudonym of the browser or machine that cast it ("" before it was recorded)

    def __post_init__(self) -> None:
        if self.choice not in CHOICES:
            raise ValueError(f"choice must be one of {', '.join(CHOICES)}, got {self.choice!r}")
        for f in fields(self):
            if not isinstance(getattr(self, f.name), str):
                raise ValueError(f"vote field {f.name} must be text, got {type(getattr(self, f.name)).__name__}")
        if not self.vote_id or not self.rater:
            raise ValueError("a vote needs a vote_id and a rater")


FIELDS = tuple(f.name for f in fields(Vote))
FIELDS_V1 = FIELDS[:-1]  # the votes of schema 1 (and their exports): no client
_CREATE = (f"CREATE TABLE IF NOT EXISTS votes ({', '.join(f + ' TEXT NOT NULL' for f in FIELDS)}, "
           "PRIMARY KEY (vote_id), CHECK (choice IN ('a', 'b', 'tie', 'both_bad')))")


class VoteStore:
    """The votes file: :meth:`add` commits one vote at once; safe to share between threads."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = _open_for_writing(self.path)
        try:
            _check_schema(self._db, self.path)  # before anything is written
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            _upgrade(self._db)
            self._db.execute(_CREATE)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            _refuse_side_links(self.path)  # the -wal and -shm SQLite made are its own files
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise ValueError(f"{self.path}: not a votes file ({exc}); {ADVICE}") from exc
        except BaseException:
            self._db.close()
            raise

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
        try:
            with self._lock:
                rows = self._db.execute(f"SELECT {', '.join(FIELDS)} FROM votes ORDER BY cast_at, vote_id").fetchall()
            return [Vote(*row) for row in rows]
        except (sqlite3.DatabaseError, TypeError, ValueError) as exc:  # damaged since it was opened
            raise ValueError(f"{self.path}: not a readable votes file ({exc}); {ADVICE}") from exc

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM votes").fetchone()[0])

    def remove(self, vote_id: str) -> bool:
        """Delete the vote ``vote_id`` (the arena's undo); False when there is none."""
        with self._lock:
            cursor = self._db.execute("DELETE FROM votes WHERE vote_id = ?", (vote_id,))
        return cursor.rowcount == 1

    def has(self, vote_id: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM votes WHERE vote_id = ?", (vote_id,)).fetchone() is not None

    def import_votes(self, votes: Iterable[Vote]) -> int:
        """Add the votes not yet here (by id), all in one transaction: every vote is parsed before
        the first is written, and an error leaves the file as it was. How many were added."""
        rows = [tuple(getattr(v, f) for f in FIELDS) for v in votes]
        insert = f"INSERT OR IGNORE INTO votes ({', '.join(FIELDS)}) VALUES ({', '.join('?' * len(FIELDS))})"
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                added = sum(self._db.execute(insert, row).rowcount for row in rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return added


def _side_files(path: Path) -> list[Path]:
    return [path.with_name(path.name + suffix) for suffix in SIDE_FILES]


def _refuse_side_links(path: Path) -> None:
    from wfeval.storage.safe_io import refuse_link

    for side in _side_files(path):
        refuse_link(side)


def _open_for_writing(path: Path) -> sqlite3.Connection:
    """SQLite's connection to the file at ``path``, never through a symbolic link: a link at the
    file or its side files raises ``OSError(ELOOP)``; the file is opened (created) with
    ``O_NOFOLLOW`` first, and the name must still be that very file once SQLite has opened it."""
    from wfeval.storage.safe_io import NOFOLLOW, refuse_link

    refuse_link(path)
    _refuse_side_links(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_link(path)
        raise
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise OSError(errno.EINVAL, "is not a regular file", str(path))
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        now = os.lstat(path)
        if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino) or stat.S_ISLNK(now.st_mode):
            db.close()
            raise OSError(errno.ELOOP, "was replaced while it was opened (a link?); wfeval never writes through "
                          "a link", str(path))
    finally:
        os.close(fd)
    return db


def _check_schema(db: sqlite3.Connection, path: Path) -> None:
    """Refuse another program's database; add the client column to a votes file of schema 1."""
    tables = sorted(name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    if set(tables) - {"votes"}:
        raise ValueError(f"{path}: not a votes file (it holds the tables {', '.join(tables)}); {ADVICE}")
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise ValueError(f"{path}: a votes file of a newer wfeval (schema {version}); update wfeval or {ADVICE}")
    if "votes" not in tables:
        return
    columns = tuple(row[1] for row in db.execute("PRAGMA table_info(votes)"))
    if columns not in (FIELDS, FIELDS_V1):
        raise ValueError(f"{path}: not a votes file (its votes table has the columns {', '.join(columns)}); {ADVICE}")


def _upgrade(db: sqlite3.Connection) -> None:
    """A votes file of schema 1 gains the client column (its votes: ``""``)."""
    columns = tuple(row[1] for row in db.execute("PRAGMA table_info(votes)"))
    if columns == FIELDS_V1:
        db.execute("ALTER TABLE votes ADD COLUMN client TEXT NOT NULL DEFAULT ''")


def read_votes(path: str | Path) -> list[Vote]:
    """The votes of a votes file, read only (an absent file: no votes); a file that is not a votes
    file, or a link where SQLite could write (the file's ``-wal``, ``-shm``), raises ValueError."""
    path = Path(path)
    if not path.is_file():
        return []
    try:
        _refuse_side_links(path)
    except OSError as exc:
        raise ValueError(f"{exc.filename}: {exc.strerror}; {ADVICE}") from exc
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        columns = tuple(row[1] for row in db.execute("PRAGMA table_info(votes)"))
        if columns not in (FIELDS, FIELDS_V1):
            raise sqlite3.DatabaseError("no votes table of wfeval's")
        rows = db.execute(f"SELECT {', '.join(columns)} FROM votes ORDER BY cast_at, vote_id").fetchall()
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"{path}: not a votes file ({exc})") from exc
    finally:
        db.close()
    try:
        return [Vote(*row) for row in rows]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: a vote in it is malformed ({exc})") from exc


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
    """Votes from exported text (with or without the ``client`` field); a malformed line raises
    ValueError naming its line number."""
    if fmt == "jsonl":
        records = _jsonl_records(text)
    elif fmt == "csv":
        records = _csv_records(text)
    else:
        raise ValueError(f"import format must be jsonl or csv, got {fmt!r}")
    for line, record in records:
        if not isinstance(record, dict) or set(record) not in (set(FIELDS), set(FIELDS_V1)):
            raise ValueError(f"line {line}: a vote needs exactly the fields {', '.join(FIELDS)} (client may be absent)")
        try:
            yield Vote(**record)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"line {line}: {exc}") from exc


def _jsonl_records(text: str) -> Iterator[tuple[int, object]]:
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                yield i, json.loads(line)
            except ValueError as exc:
                raise ValueError(f"line {i}: not a JSON object ({exc})") from exc


def _csv_records(text: str) -> Iterator[tuple[int, object]]:
    reader = csv.DictReader(io.StringIO(text))
    try:
        for record in reader:
            yield reader.line_num, (record if None not in record and None not in record.values() else None)
    except csv.Error as exc:
        raise ValueError(f"line {reader.line_num}: not CSV ({exc})") from exc
