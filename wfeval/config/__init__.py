"""Config schemas of the core and friendly config errors (imports no plugin package)."""

from wfeval.config.errors import ConfigError
from wfeval.config.schema import register_core_schemas

__all__ = ["ConfigError", "register_core_schemas"]
