"""Recipes: reproducible learned baselines kept apart from the core (docs/evaluate-your-pytorch-model.md).

- :mod:`wfeval.recipes.train` — ``python -m wfeval.recipes.train benchmark=gridworld``: record
  episodes from the benchmark's simulator (never its evaluation samples), train a small
  action-conditioned frame predictor on the CPU, save ``model.pt`` + ``model.json``;
- :mod:`wfeval.recipes.record` — ``python -m wfeval.recipes.record benchmark=pusht``: the same
  recorded episodes written as a dataset (LeRobot v3.0, HDF5, npz; :mod:`wfeval.recipes.data_files`);
- :mod:`wfeval.recipes.learned` — ``model=learned``: serve the checkpoint through ``generate``
  and the step interface;
- :mod:`wfeval.recipes.latency` — per-step latency of a checkpoint on a device.

Nothing here is imported by the core; torch is imported when a recipe runs.
"""
