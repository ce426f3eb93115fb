"""What comes from a run folder, made inert for the format it is written in: one helper per format.

Run folders are data anyone could have written (a folder copied from elsewhere, a shared disk): a
model's name, a benchmark id, a run folder's name or a failure reason can hold newlines, Markdown,
HTML or a spreadsheet formula. Every writer of Markdown, CSV and HTML passes such text through the
helper of its format, so an opened table shows the text and never acts on it:

* :func:`md_inline`: one line of Markdown text — line breaks become spaces, HTML's ``<``, ``>`` and
  ``&`` become entities (no tag, no comment, no ``<script>`` or ``<iframe>``), and the characters
  that make a link, code or a table cell (a ``]`` before ``(``, ``[`` or ``:``, a backtick, ``|``,
  ``\\``) are escaped, and so is what would start a block at the start of the text (a heading's
  ``#``, a quote, a list);
  :func:`md_cell` the same inside a line; :func:`markdown_table` applies it to every cell.
* :func:`csv_cell` / :func:`csv_text`: a cell a spreadsheet would read as a formula (``=``, ``+``,
  ``-``, ``@``, a tab or a carriage return first: OWASP's list) gets a ``'`` in front, unless it
  is a plain number (``-0.5`` stays a number).
* :func:`html_text`: text for HTML and SVG (``markupsafe``/``html.escape``); the report's Jinja
  templates escape every value themselves (``autoescape``).
"""

from __future__ import annotations

import csv
import html
import io
import re
from typing import Any, Iterable, Sequence

_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")  # what a terminal or viewer could act on
_MD_SPECIAL = re.compile(r"([\\`|]|\](?=[(\[:]))")
_MD_BLOCK_START = re.compile(r"^(\s*)(#|>|[-+*=](?=\s|$)|\d+[.)](?=\s|$))")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def plain(text: object) -> str:
    """One line of text with no control characters (a terminal's escape sequences included)."""
    return _CONTROL.sub("?", _LINE_BREAKS.sub(" ", str(text)))


def md_cell(text: object) -> str:
    """``text`` as inert Markdown inside a line: shown as written, never a link, tag, code or cell break."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(plain(text), quote=False))


def md_inline(text: object) -> str:
    """:func:`md_cell`, and a line of its own too: never a heading, quote or list item either."""
    return _MD_BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2), md_cell(text))


def markdown_table(header: Sequence[object], body: Iterable[Sequence[object]]) -> str:
    """A GitHub-flavoured Markdown table, every cell through :func:`md_cell`."""
    lines = ["| " + " | ".join(md_cell(c) for c in header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def csv_cell(value: Any) -> Any:
    """``value`` safe for a spreadsheet: text that would start a formula gets a leading ``'``."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _is_number(value.strip()):
        return "'" + value
    return value


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A CSV document (``\\n`` line ends), every cell through :func:`csv_cell`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_cell(c) for c in header])
    writer.writerows([csv_cell(c) for c in row] for row in rows)
    return buffer.getvalue()


def html_text(text: object) -> str:
    """``text`` for HTML or SVG: ``<``, ``>``, ``&`` and quotes as entities."""
    return html.escape(str(text), quote=True)
