"""wfeval's built-in Hydra configs; installed as the package ``wfeval.conf``."""
