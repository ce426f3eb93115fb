"""Where a command's config enters wfeval: the command line read, each job's config composed once
(:func:`wfeval.pipeline.compose.compose_run`; a ``-m`` sweep's jobs expanded as Hydra's basic sweeper does)
and trust-checked before anything is built from it (docs/trust.md: Hydra builds the code ``hydra.callbacks``
and ``hydra.*_logging`` name before a job starts, and any config file can write them). A plain run then runs
on that composition (:mod:`wfeval.cli.job`); a sweep goes to ``hydra.main``, each job reading its run config
from here (:func:`composed_job`)."""

from __future__ import annotations

import argparse
import contextlib
import itertools
from typing import Any, Callable, Iterator, Sequence

_COMPOSED: dict[tuple[str, ...], Any] = {}  # run configs composed and checked here, by the job's overrides


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
    return args is None or any((args.help, args.hydra_help, args.cfg, args.info, args.shell_completion, args.version,
                                args.experimental_rerun))


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


MAIN, CONFIG = "pkg://wfeval.conf", "config"  # wfeval's own app


@contextlib.contextmanager
def initialized(config_path: str = MAIN) -> Iterator[None]:
    """Hydra's compose API on ``config_path`` for the block (``hydra.job.name``: run, as ``hydra.main``'s)."""
    from hydra import initialize_config_dir, initialize_config_module

    from wfeval.config import register_schemas

    register_schemas()
    start = initialize_config_module if config_path.startswith("pkg://") else initialize_config_dir
    with start(config_path.removeprefix("pkg://"), version_base="1.3", job_name="run"):
        yield


def _check(policy: Any, overrides: Sequence[str], config_name: str) -> Callable[[Any], None]:
    """The check of one composed job config (its ``hydra`` node included): trust, then plugin conflicts."""
    from hydra.core.global_hydra import GlobalHydra

    from wfeval.config import trust
    from wfeval.config.plugin_refusals import refuse_composed_conflicts

    def check(cfg: Any) -> None:
        loader = GlobalHydra.instance().config_loader()
        trust.check_config(cfg, policy, lambda found: trust.locate_sources(loader, config_name, list(overrides),
                                                                           cfg, found))
        refuse_composed_conflicts(cfg)  # a chosen option two packages offer: exit 2, naming both
    return check


def compose_checked(overrides: Sequence[str], policy: Any, config_path: str = MAIN, config_name: str = CONFIG) -> Any:
    """The run config of a job of wfeval's app (:func:`~wfeval.pipeline.compose.compose_run`), checked with its
    ``hydra`` node; another app's config (``wfeval.recipes.train``) checked and returned as composed."""
    from hydra import compose

    from wfeval.pipeline.compose import compose_run

    with initialized(config_path):
        if (config_path, config_name) == (MAIN, CONFIG):
            return compose_run(overrides, config_name, check=_check(policy, overrides, config_name))
        cfg = compose(config_name=config_name, overrides=list(overrides), return_hydra_config=True)
        _check(policy, overrides, config_name)(cfg)
        return cfg


@contextlib.contextmanager
def checked(argv: Sequence[str], config_path: str = MAIN, config_name: str = CONFIG, keep: bool = False,
            task: Callable[[Any], Any] | None = None) -> Iterator[Callable[[], None] | None]:
    """The block of a command that builds: its trust policy in force (and handed to worker processes), every job
    config composed and checked first (``keep``: kept for :func:`composed_job`). ``task``: wfeval's job function; a
    plain run's block gets the function running it on this composition (:mod:`wfeval.cli.job`), else None."""
    from wfeval.config import trust
    from wfeval.config.plugin_refusals import PluginError

    _COMPOSED.clear()  # kept for one command: the next one (in this process too) composes its own
    args = command_args(argv)
    if builds_nothing(args):
        yield None
        return
    overrides, main = args.overrides or [], (config_path, config_name) == (MAIN, CONFIG)
    with trust.in_force(policy := trust.TrustPolicy.from_overrides(overrides)):
        if args.config_path or args.config_name or args.config_dir:  # Hydra composes another app's config
            yield None
            return
        if task is not None and main and not args.multirun:
            from wfeval.cli.job import plain_run

            with initialized(config_path):
                if run := plain_run(overrides, task, _check(policy, overrides, config_name), _COMPOSED):
                    yield run
                    return
        for job in job_override_lists(overrides, args.multirun):
            try:
                config = compose_checked(job, policy, config_path, config_name)
            except (trust.UntrustedTargetError, PluginError):
                raise
            except Exception:  # noqa: BLE001 - Hydra reports a config that does not compose itself
                break
            if keep:  # by the job's own overrides (Hydra's hydra.overrides.task: no hydra.* key)
                _COMPOSED[tuple(config.job.overrides)] = config
        yield None


def composed_job(overrides: Sequence[str]) -> Any | None:
    """The run config the boundary composed and checked for this override list, if it did."""
    return _COMPOSED.get(tuple(str(o) for o in overrides))
