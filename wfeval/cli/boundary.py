"""Where a command's config enters wfeval: the command line read, the config composed with Hydra's
compose API and trust-checked before Hydra builds anything from it (docs/trust.md).

Hydra builds code a config names before a job starts -- ``hydra.callbacks``, the logging factories
of ``hydra.*_logging`` -- and a config file on the search path can write those keys. So before
``hydra.main`` runs, :func:`checked` composes every job of the command line (one; or each job of a
basic ``-m`` sweep, its values expanded as Hydra's basic sweeper expands them) through the public
compose API and refuses the command (:class:`~wfeval.config.trust.UntrustedTargetError`, exit 2)
when one names code the user did not choose, naming the file the value came from. The composed job
configs are kept: the job reads its config from here (:func:`composed_job`), so wfeval's config is
composed once; Hydra composes its own copy for its own machinery (run folder, callbacks, launcher).
Nothing here reaches into Hydra's internals.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
from typing import Any, Iterator, Sequence

#: job configs composed and checked at the boundary, by their override list (this process)
_COMPOSED: dict[tuple[str, ...], Any] = {}


def command_parser() -> argparse.ArgumentParser:
    """Hydra's command-line flags (as ``python -m wfeval --hydra-help`` lists them), read the same way."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("overrides", nargs="*")
    for flags in (("--help", "-h"), ("--hydra-help",), ("--resolve",), ("--run", "-r"), ("--multirun", "-m"),
                  ("--shell-completion", "-sc"), ("--version",)):
        parser.add_argument(*flags, action="store_true")
    for flags in (("--cfg", "-c"), ("--package", "-p"), ("--config-path", "-cp"), ("--config-name", "-cn"),
                  ("--config-dir", "-cd"), ("--experimental-rerun",)):
        parser.add_argument(*flags)
    parser.add_argument("--info", "-i", nargs="?", const="all")
    return parser


def command_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """The parsed command line; None when Hydra will refuse it (it says why)."""
    try:
        args, _ = command_parser().parse_known_args(list(argv))
    except SystemExit:
        return None
    return args


def builds_nothing(args: argparse.Namespace | None) -> bool:
    """--help, --cfg, --info, ... print and exit: no policy, no check."""
    return args is None or bool(args.help or args.hydra_help or args.cfg or args.info or args.shell_completion
                                or args.version or args.experimental_rerun)


def job_override_lists(overrides: Sequence[str], multirun: bool) -> list[list[str]]:
    """The override list of every job: the command line itself, or for ``-m`` each combination of the
    sweep values (Hydra's basic sweeper: the cartesian product, in order)."""
    if not multirun:
        return [list(overrides)]
    from hydra.core.override_parser.overrides_parser import OverridesParser

    choices: list[list[str]] = []
    for text, override in zip(overrides, OverridesParser.create().parse_overrides(list(overrides))):
        if override.is_sweep_override():
            key = override.get_key_element()
            choices.append([f"{key}={value}" for value in override.sweep_string_iterator()])
        else:
            choices.append([text])
    return [list(combination) for combination in itertools.product(*choices)]


@contextlib.contextmanager
def _initialized(config_path: str) -> Iterator[None]:
    from hydra import initialize_config_dir, initialize_config_module

    from wfeval.config import register_schemas

    register_schemas()
    if config_path.startswith("pkg://"):
        with initialize_config_module(config_path[len("pkg://"):], version_base="1.3"):
            yield
    else:
        with initialize_config_dir(config_path, version_base="1.3"):
            yield


def compose_checked(overrides: Sequence[str], policy: Any, config_path: str = "pkg://wfeval.conf",
                    config_name: str = "config") -> Any:
    """The config of one job composed (with its ``hydra`` node) and trust-checked; the job config
    (without ``hydra``) is returned. Raises :class:`~wfeval.config.trust.UntrustedTargetError`."""
    from hydra import compose
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import open_dict

    from wfeval.config import trust
    from wfeval.config.plugin_refusals import refuse_composed_conflicts

    with _initialized(config_path):
        cfg = compose(config_name=config_name, overrides=list(overrides), return_hydra_config=True)
        loader = GlobalHydra.instance().config_loader()

        def locate(found: list) -> list:
            return trust.locate_sources(loader, config_name, list(overrides), cfg, found)

        trust.check_config(cfg, policy, locate=locate)
        refuse_composed_conflicts(cfg)  # a chosen option two packages offer: exit 2, naming both
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg


@contextlib.contextmanager
def checked(argv: Sequence[str], config_path: str = "pkg://wfeval.conf", config_name: str = "config",
            keep: bool = False) -> Iterator[None]:
    """The block of a command that builds: its trust policy in force (and handed to worker processes),
    every job config composed and checked first. ``keep``: keep the job configs for :func:`composed_job`.
    A command that builds nothing (--help, --cfg, ...) or does not compose is left to Hydra as it is."""
    from wfeval.config import trust
    from wfeval.config.plugin_refusals import PluginError

    args = command_args(argv)
    if builds_nothing(args):
        yield
        return
    policy = trust.TrustPolicy.from_overrides(args.overrides or [])
    with trust.in_force(policy):
        if not (args.config_path or args.config_name or args.config_dir):  # Hydra composes another app's config
            for overrides in job_override_lists(args.overrides or [], args.multirun):
                try:
                    cfg = compose_checked(overrides, policy, config_path, config_name)
                except (trust.UntrustedTargetError, PluginError):
                    raise
                except Exception:  # noqa: BLE001 - Hydra reports a config that does not compose itself
                    break
                if keep:
                    _COMPOSED[tuple(overrides)] = cfg
        yield


def composed_job(overrides: Sequence[str]) -> Any | None:
    """The job config the boundary composed and checked for this override list, if it did."""
    return _COMPOSED.get(tuple(str(o) for o in overrides))
