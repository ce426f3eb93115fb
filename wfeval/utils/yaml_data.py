"""YAML read as data (a benchmark file, a run folder's recorded config): PyYAML's safe loader, in C
(libyaml) where PyYAML was built with it — the same values as the pure-Python loader, ~10x faster."""

from __future__ import annotations

from typing import Any


def load_yaml(text: str) -> Any:
    """The value of one YAML document; raises ``yaml.YAMLError`` on bad YAML."""
    import yaml  # PyYAML, a dependency of omegaconf

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
