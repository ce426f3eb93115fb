"""Config schemas of the core, plugin discovery and derived schemas, trust and friendly config errors
(imports no plugin package: a plugin's class is imported by the string its config file names).
Importing this package imports nothing heavy (OmegaConf, Hydra): its names are loaded on first use."""

from typing import Any

__all__ = ["ConfigError", "register_core_schemas", "register_schemas"]


def __getattr__(name: str) -> Any:
    if name == "ConfigError":
        from wfeval.config.errors import ConfigError

        return ConfigError
    if name == "register_schemas":
        from wfeval.config.derive import register_schemas

        return register_schemas
    if name == "register_core_schemas":
        from wfeval.config.schema import register_core_schemas

        return register_core_schemas
    raise AttributeError(f"module 'wfeval.config' has no attribute {name!r}")
