"""Inverse-dynamics models (IDMs): recover each transition's action from frames (``idm_accuracy``).

One small convolutional IDM per benchmark family, trained by a recipe on the family's own
recorded episodes (seeds in their own namespace, every evaluation seed excluded and the episode
seeds kept in the sidecar so a scored sample can be checked against them), deterministic, saved
as ``idm.pt`` + ``idm.json``:

- :mod:`.net` — the network (frames ``t−1, t, t+1`` → the action between ``t`` and ``t+1``);
- :mod:`.data` — transitions recorded from a benchmark's simulator, or read from a dataset's split;
- :mod:`.fit` — deterministic training and the held-out figures (accuracy / R², chance);
- :mod:`.files` — checkpoints: save, load, verify; the IDMs shipped with wfeval, hashes pinned;
- :mod:`.provider` — :class:`~.provider.IDMProvider`: which IDM serves a sample (what the metric
  ``idm_accuracy`` calls).

``python -m wfeval.recipes.train_idm benchmark=...`` trains one (:mod:`wfeval.cli.train_idm`).
Nothing here is imported by the core; torch is imported when an IDM is trained or loaded.
"""
