"""People beside the numbers: a local web app for blind side-by-side votes on the same sample from
two models (``python -m wfeval.arena RUNS_OR_SWEEP``; the command: :mod:`wfeval.cli.arena`).

:mod:`.pool` (the runs and their pairs on shared samples), :mod:`.core` (sessions, which pair
next, casting a vote), :mod:`.app` (the Starlette app), :mod:`.page` (its pages),
:mod:`.simulate` (a simulated rater). Votes are kept by :mod:`wfeval.storage.votes`; what they say
(ratings, rater and measure agreement) is :mod:`wfeval.report.votes`. Starlette, uvicorn and
Jinja2 (the ``arena`` extra) are imported only when the app is built.
"""
