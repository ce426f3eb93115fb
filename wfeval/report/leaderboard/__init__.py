"""Leaderboard: models as rows, benchmarks (with their task and protocol) as columns.

One :class:`Board` is built from the runs (:class:`~wfeval.report.runs.Entry`) and rendered the
same way everywhere — the terminal (:func:`render_text`, wrapped to a width), Markdown, CSV and
the HTML report — so they show the same rows in the same order with the same numbers.

* **Rows** are models: runs whose overrides differ only in what chooses the column (the benchmark,
  task, protocol) share a row. A row is named by what differs between the rows' overrides
  (``model.checkpoint=…/step_2000``; the bare value for ``model``), never two the same (a run
  folder tells apart two runs of the same overrides); long names are shortened, the full ones
  given in the legend.
* **Columns** are benchmarks (``gridworld``, ``gridworld/goal_reaching``, ``atari_pong@autoregressive``):
  each has one headline, the primary measurement of its scorecard (for a planning task, goal
  success), every measurement, the score and the eligibility.
* **Ranking** by any measurement of any column or by a column's score (``sort``), by default by
  the first column's primary measurement, in its direction. A value whose interval overlaps the
  best one's (and is not equal to it) is marked ``≈``; never for a measurement without direction.

The package: :mod:`.model` (the board, its cells, ranking and tables), :mod:`.build` (the board
from run entries: :func:`leaderboard`), :mod:`.render` (text, Markdown, CSV and their files).
"""

from wfeval.report.leaderboard.build import leaderboard
from wfeval.report.leaderboard.model import SCORE, TIE, Board, Cell, Column, Row
from wfeval.report.leaderboard.render import (
    fit_line,
    render_csv,
    render_markdown,
    render_text,
    terminal_width,
    wrap_table,
    write_leaderboard,
)

__all__ = ["leaderboard", "Board", "Column", "Row", "Cell", "SCORE", "TIE", "render_text", "render_markdown",
           "render_csv", "write_leaderboard", "terminal_width", "wrap_table", "fit_line"]
