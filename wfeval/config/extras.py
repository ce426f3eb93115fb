"""The optional extras of ``pyproject.toml``, and every "needs package X: pip install ..." message.

:data:`EXTRAS` is the one table in the code of which extra installs which distributions (the
names of ``[project.optional-dependencies]`` without their versions; ``tests/config/test_extras.py``
holds it equal to ``pyproject.toml`` and README's extras table). A message that a package is
missing is made here from it (:func:`install_hint`, :func:`missing`, :func:`require`), so it cannot
name an extra that does not exist or one that does not install the package.
"""

from __future__ import annotations

import importlib.util
from typing import Iterable

from wfeval.config.errors import ConfigError

#: extra -> the distributions it installs (pip's names, as pyproject.toml spells them)
EXTRAS: dict[str, tuple[str, ...]] = {
    "launchers": ("hydra-joblib-launcher", "hydra-submitit-launcher"),
    "games": ("ale-py", "crafter"),
    "maze3d": ("memory-maze", "dm-control", "mujoco", "labmaze", "gym"),
    "bench": ("torchmetrics",),
    "report": ("jinja2", "pillow"),
    "datasets": ("pyarrow", "h5py"),
    "trackers": ("mlflow-skinny", "sqlalchemy", "alembic", "tensorboard", "wandb"),
    "arena": ("starlette", "uvicorn", "jinja2", "pillow"),
    "tinyjepa": ("tiny-jepa",),
}
#: ``dev`` (the test suite's) installs every extra above but ``bench``, and the test tools
DEV = "dev"

#: import name -> distribution, where the distribution is not the import name with ``-`` for ``_``
_DISTRIBUTION_OF_MODULE = {"PIL": "pillow"}


def distribution_of(module: str) -> str:
    """The distribution that installs the top-level import ``module`` (``ale_py`` -> ``ale-py``)."""
    top = module.split(".")[0]
    return _DISTRIBUTION_OF_MODULE.get(top, top.replace("_", "-").lower())


def extra_of(package: str, extra: str | None = None) -> str:
    """The extra that installs ``package``: ``extra`` when given (checked: it must exist and hold the
    package), else the only one that does. A wrong or ambiguous call is the code's error (ValueError)."""
    if extra is not None:
        if package not in EXTRAS.get(extra, ()):
            raise ValueError(f"the extra {extra!r} does not install {package!r}: {EXTRAS.get(extra)}")
        return extra
    holders = [name for name, packages in EXTRAS.items() if package in packages]
    if len(holders) != 1:
        raise ValueError(f"{package!r} is installed by {holders or 'no extra'}: name the extra")
    return holders[0]


def install_command(*extras: str) -> str:
    """``pip install 'wfeval[a,b]'`` (each extra checked)."""
    unknown = [e for e in extras if e not in EXTRAS and e != DEV]
    if unknown or not extras:
        raise ValueError(f"no such extra: {unknown or '(none given)'}; the extras are {sorted(EXTRAS)}")
    return f"pip install 'wfeval[{','.join(extras)}]'"


def install_hint(packages: str | Iterable[str], extra: str | None = None) -> str:
    """How to get ``packages``: the command installing their extra (one extra for all of them)."""
    names = [packages] if isinstance(packages, str) else list(packages)
    found = {extra_of(p, extra) for p in names}
    if len(found) != 1:
        raise ValueError(f"{names} come from several extras {sorted(found)}: one hint each")
    return install_command(found.pop())


def missing(what: str, modules: str | Iterable[str], extra: str | None = None, more: str = "") -> ConfigError:
    """The error for ``what`` (``"model=tiny_jepa"``) when ``modules`` are not importable:
    ``<what> needs the 'tiny-jepa' package, which is not installed: pip install 'wfeval[tinyjepa]'``."""
    names = [modules] if isinstance(modules, str) else list(modules)
    packages = [distribution_of(m) for m in names]
    quoted = ", ".join(f"'{p}'" for p in packages)
    noun = "package, which is" if len(packages) == 1 else "packages, which are"
    return ConfigError(f"{what} needs the {quoted} {noun} not installed: {install_hint(packages, extra)}{more}")


def not_importable(modules: Iterable[str]) -> list[str]:
    """The modules of ``modules`` that cannot be imported here (found without importing them)."""
    out = []
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a parent that is absent, or a module set to None in sys.modules
            found = False
        if not found:
            out.append(module)
    return out


def require(what: str, modules: str | Iterable[str], extra: str | None = None, more: str = "") -> None:
    """Refuse ``what`` (a :class:`ConfigError`, exit 2) when any of ``modules`` is not installed,
    naming the missing packages and the extra that installs them."""
    absent = not_importable([modules] if isinstance(modules, str) else modules)
    if absent:
        raise missing(what, absent, extra, more)
