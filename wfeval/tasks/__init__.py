"""The tasks a benchmark family may serve beside plain generation, one module each: what the task
asks of a family (its interface, implemented in the family's own package ``wfeval/benchmarks/<family>/``),
the helpers a family builds its samples with, and what the run says when a family lacks it.

- :mod:`wfeval.tasks.memory`: ``task=memory`` (revisits planned from the exact state, or found in a
  dataset's recorded state);
- :mod:`wfeval.tasks.behavioural_fidelity`: ``task=behavioural_fidelity`` (policies that read their
  frames, the true episode, optionally its reward read off frames);
- :mod:`wfeval.tasks.policy_evaluation`: ``task=policy_evaluation`` (scripted policies, the true episode
  and its reward);
- :mod:`wfeval.tasks.policy_optimization`: ``task=policy_optimization`` (a learner's observation and reward,
  the true simulator at held-out starts);
- :mod:`wfeval.tasks.probing`: ``task=probing`` (the exact state per frame);
- :mod:`wfeval.tasks.goal_reaching`: ``task=goal_reaching`` (a goal environment in the true simulator);
- :mod:`wfeval.tasks.controllability`: ``task=controllability`` (``task.data.counterfactual``; a family
  needs nothing beyond actions in its samples).

Each declares a :class:`~wfeval.tasks.family.FamilyNeed`; the task's protocol names it
(``Protocol.family_need``) and :meth:`wfeval.protocols.base.Protocol.check` refuses, before any
generation, a benchmark that lacks it. Adding a task touches its module here, its config files and the
families that serve it (docs/architecture.md).
"""
