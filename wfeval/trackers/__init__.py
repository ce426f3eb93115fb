"""Experiment trackers as Hydra callbacks: ``python -m wfeval tracker=mlflow`` (or ``tensorboard``,
``wandb``; several: ``tracker=[mlflow,tensorboard]``). Optional extra ``trackers``.

Modules (importing this package imports no tracker library):

* ``base``: the callback every tracker shares (package check, one record per job, shards merged);
* ``record``: what is logged, read from the run folder (``results.json`` numbers, config, report files);
* ``mlflow_tracker``, ``tensorboard_tracker``, ``wandb_tracker``: one class each.

See docs/trackers.md.
"""
