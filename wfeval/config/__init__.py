"""Config schemas of the core, plugin discovery and derived schemas, trust and friendly config errors
(imports no plugin package: a plugin's class is imported by the string its config file names)."""

from wfeval.config.derive import register_schemas
from wfeval.config.errors import ConfigError
from wfeval.config.schema import register_core_schemas

__all__ = ["ConfigError", "register_core_schemas", "register_schemas"]
