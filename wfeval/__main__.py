"""``python -m wfeval``: the Hydra entry (:mod:`wfeval.cli.run`)."""

from wfeval.cli.run import main

if __name__ == "__main__":
    main()
