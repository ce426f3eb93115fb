"""``python -m wfeval.arena PATH... [--db FILE] [--host HOST] [--port N]``: blind side-by-side votes.

PATH is a run folder or a sweep folder. Serves the voting page on 127.0.0.1 (``--host`` must be
given to listen beyond this machine) and opens it in a browser (``--no-browser``: not). Votes go
to ``--db`` (default: ``arena.sqlite`` in the first PATH), where ``python -m wfeval.compare`` and
``python -m wfeval.report`` find them. Without serving: ``--simulate N`` casts N votes by a
simulated rater (``--noise``, ``--rater``, ``--seed``), ``--export FILE`` / ``--import FILE``
(``.jsonl`` or ``.csv``) move votes between machines without duplicates (an import: one
transaction), ``--ratings`` prints the ratings and which measure agrees with people.

Exit 2, naming why: a votes file that is a link or not a votes file, an import's bad line, two run
folders with one run id, runs without videos, no pair to judge (docs/arena.md, the threat model).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wfeval.cli.command import command
from wfeval.config.extras import install_command


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m wfeval.arena", description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="run folder(s) or sweep folder(s)")
    p.add_argument("--db", type=Path, default=None, help="the votes file (default: PATH/arena.sqlite)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--no-browser", action="store_true", help="do not open the page in a browser")
    p.add_argument("--simulate", type=int, default=None, metavar="N", help="cast N votes by a simulated rater")
    p.add_argument("--noise", type=float, default=0.0, help="the simulated rater's share of random votes")
    p.add_argument("--rater", default="simulated", help="the simulated rater's name")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--export", type=Path, default=None, metavar="FILE", help="write the votes (.jsonl or .csv)")
    p.add_argument("--import", dest="import_", type=Path, default=None, metavar="FILE",
                   help="add the votes of FILE (.jsonl or .csv) not yet in the votes file")
    p.add_argument("--ratings", action="store_true", help="print the ratings and the measure agreement")
    return p


def _fmt(path: Path) -> str:
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in ("jsonl", "csv"):
        raise ValueError(f"{path}: votes are moved as .jsonl or .csv")
    return fmt


@command("wfeval.arena")
def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from wfeval.storage.rundir import FILES
    from wfeval.storage.votes import VoteStore, export_votes, parse_votes

    db = args.db or args.paths[0] / FILES.arena
    try:
        if not args.paths[0].is_dir():
            raise FileNotFoundError(f"{args.paths[0]}: no such folder")
        from wfeval.arena.core import Arena
        from wfeval.arena.pool import Pool

        pool = Pool(args.paths)
        where = ", ".join(map(str, args.paths))
        if pool.entries and not pool.videos:
            raise ValueError(f"no run under {where} generated a video ({len(pool.entries)} runs; a probing run "
                             "scores latents): the arena shows videos side by side; give it runs of a video task")
        if not pool.candidates and (args.simulate is not None or not (args.ratings or args.export or args.import_)):
            raise ValueError(f"no pair to judge under {where} ({pool.describe()}): the "
                             "arena needs runs of at least two models on the same samples of one benchmark")
        store = VoteStore(db)
        if args.import_ is not None:
            fmt = _fmt(args.import_)
            try:
                votes = list(parse_votes(args.import_.read_text(encoding="utf-8"), fmt))
            except (ValueError, UnicodeDecodeError) as exc:
                raise ValueError(f"{args.import_}: {exc}; nothing was imported") from exc
            added = store.import_votes(votes)  # one transaction: all of them or none
            print(f"imported {added} new votes from {args.import_} into {db} ({len(store)} in all)")
        if args.export is not None:
            from wfeval.storage.outputs import write_output

            write_output(args.export, export_votes(store.votes(), _fmt(args.export)))  # never a run's own file
            print(f"wrote {len(store)} votes to {args.export}")
    except (FileNotFoundError, ValueError, OSError) as exc:
        print(f"wfeval.arena: {exc}", file=sys.stderr)
        return 2
    arena = Arena(pool, store, seed=args.seed)
    if args.simulate is not None:
        from wfeval.arena.simulate import simulate

        cast = simulate(arena, args.simulate, rater=args.rater, noise=args.noise, seed=args.seed)
        print(f"{args.rater} cast {cast} votes into {db} ({len(store)} in all)")
    if args.ratings:
        from wfeval.report.votes import render_text

        try:
            summary = arena.summary()
        except ValueError as exc:
            print(f"wfeval.arena: {exc}", file=sys.stderr)
            return 2
        print(render_text(summary) if summary else "no votes yet")
    if args.simulate is not None or args.ratings or args.export or args.import_:
        return 0
    return _serve(arena, args, db)


def _serve(arena, args, db: Path) -> int:
    try:
        import uvicorn

        from wfeval.arena.app import build_app
    except ImportError as exc:
        print(f"wfeval.arena: the web app needs the arena extra ({install_command('arena')}): {exc}",
              file=sys.stderr)
        return 2
    url = f"http://{args.host}:{args.port}/"
    print(f"wfeval arena: {arena.pool.describe()}; votes in {db}\nopen {url} (Ctrl+C stops)", flush=True)
    if not args.no_browser:
        import webbrowser

        webbrowser.open(url)
    uvicorn.run(build_app(arena), host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
