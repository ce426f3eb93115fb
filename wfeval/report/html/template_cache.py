"""The report page's template compiled once per template text, kept in ``<cache>/templates/``.

Compiling ``report.html.j2`` (Jinja2's code generation, then Python's ``compile``) was a third of a small
run's report and the largest single cost left in a warm one-sample run (issue 51). Its code object is
kept (``marshal``, as Python keeps byte code) under a key that is the sha256 of the template's text, the
environment's settings that shape the code (:func:`settings`), Jinja2's version and the Python version:
any edit to the template or to those settings compiles it again, so a kept entry never outlives its
source. ``<cache>``: ``$WFEVAL_CACHE``, default ``~/.cache/wfeval`` (:func:`wfeval.utils.paths.cache_dir`).
An unreadable, foreign or corrupt file (its bytes are checked against the sha256 written before them)
is ignored and the template compiled; a cache that cannot be written costs only the time. The 8 most
recently written files are kept.
"""

from __future__ import annotations

import hashlib
import marshal
import sys
import types
from pathlib import Path
from typing import Any

FORMAT = 1
KEEP = 8


def settings(env: Any) -> str:
    """What of the environment is compiled into the template's code (filters and tests by name: the code
    looks their functions up when it renders)."""
    return repr((env.autoescape, env.undefined.__name__, env.trim_blocks, env.lstrip_blocks,
                 env.keep_trailing_newline, env.newline_sequence, env.optimized, sorted(env.extensions),
                 env.block_start_string, env.variable_start_string, env.comment_start_string,
                 env.line_statement_prefix, env.line_comment_prefix, sorted(env.filters), sorted(env.tests)))


def _folder() -> Path:
    from wfeval.utils.paths import cache_dir

    return cache_dir() / "templates"


def from_source(env: Any, source: str, name: str) -> Any:
    """``env.from_string(source)``, its code read from the cache when this text was compiled before."""
    import jinja2

    key = hashlib.sha256(f"{FORMAT}\0{jinja2.__version__}\0{sys.version}\0{settings(env)}\0{source}".encode())
    path = _folder() / f"{name}-{key.hexdigest()}.code"
    code = _read(path)
    if code is None:
        code = env.compile(source)
        data = marshal.dumps(code)
        _keep(path, hashlib.sha256(data).digest() + data)
    return env.template_class.from_code(env, code, env.make_globals(None))


def _read(path: Path) -> types.CodeType | None:
    """The kept code; None when missing, or when its bytes do not match the digest before them (corrupt)."""
    try:
        kept = path.read_bytes()
        digest, data = kept[:32], kept[32:]
        code = marshal.loads(data) if hashlib.sha256(data).digest() == digest else None
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) else None


def _keep(path: Path, data: bytes) -> None:
    from wfeval.storage.safe_io import atomic_write_bytes

    try:
        atomic_write_bytes(path, data, durable=False)
        kept = sorted(path.parent.glob("*.code"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
