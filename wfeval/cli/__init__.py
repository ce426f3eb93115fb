"""The commands, one module each; ``python -m wfeval.<command>`` runs them (thin shims at the top).

``run`` (``python -m wfeval``, the Hydra entry), ``resume``, ``replay``, ``merge``, ``compare``,
``export``, ``export_dataset``, ``store``, ``report``, ``fetch`` (``wfeval.features.fetch``),
``train`` (``wfeval.recipes.train``); ``sweep`` is the Hydra callback that ends a multirun;
``command`` makes each into ``main(argv) -> int``, callable in-process (the caller's process given back
after it); ``exits`` maps every exception a command lets through to its exit status and message.
"""
