"""Structured-config schemas (Hydra ConfigStore) and friendly config errors."""

from wfeval.config.errors import ConfigError
from wfeval.config.schema import register_schemas

__all__ = ["ConfigError", "register_schemas"]
