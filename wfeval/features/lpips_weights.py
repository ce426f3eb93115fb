"""The LPIPS weights: the linear heads (pip, ``lpips`` wheel) and the ImageNet backbone (URL or a
local file); verified, cached, recorded.

LPIPS v0.1 (Zhang et al. 2018) is two files:

* the **linear heads** (``lpips/weights/v0.1/{alex,vgg}.pth``, a few kB) ship inside the wheel of
  ``lpips==0.1.4`` on PyPI: fetched with ``pip download --no-deps --only-binary :all:``, the wheel
  checked against :data:`HEADS_WHEEL_SHA256`, the member against the sha256 pinned in
  :data:`NETS` (the sdist has no weights);
* the **backbone** is torchvision's ImageNet classifier (``alexnet-owt-7be5be79.pth``,
  ``vgg16-397923af.pth``), on PyTorch's download server only (no package registry has it).
  torchvision publishes no full sha256 for these files: the 8 hex digits in the file name are the
  start of the file's sha256, which is all torchvision itself checks
  (``load_state_dict_from_url(check_hash=True)``). wfeval checks the same prefix -- an integrity
  check against a corrupt or wrong file, not a proof against a crafted one -- and records the full
  sha256 of the bytes it loaded in every result, so two results can be compared exactly.

:func:`stage_lpips_weights` (``python -m wfeval.features.fetch lpips``) puts both into
``<cache>/weights/lpips/``: the heads from pip (or a local wheel / ``.pth``), the backbone from a
local file (``--from``), from torch's own hub cache when it is already there, or from its official
URL. :func:`resolve_lpips_weights` (what the metric calls) never fetches: missing weights raise
:class:`~wfeval.features.weights.WeightsUnavailable` naming the command.

A config may name other files (``metric.lpips.backbone=PATH``, ``metric.lpips.heads=PATH``, e.g.
test weights): they are loaded only if their structure is LPIPS's, and the result says
``official: false`` with their sha256 -- never a silent substitute.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import urllib.request
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from wfeval.features.weights import WeightsUnavailable, pip_download
from wfeval.storage.safe_io import atomic_target, atomic_write_bytes, open_nofollow
from wfeval.utils.hashing import file_sha256
from wfeval.utils.paths import cache_dir

HEADS_REQUIREMENT = "lpips==0.1.4"
HEADS_WHEEL = "lpips-0.1.4-py3-none-any.whl"
HEADS_WHEEL_SHA256 = "fd537af5828b69d2e6ffc0a397bd506dbc28ca183543617690844c08e102ec5e"
LPIPS_VERSION = "0.1"
FETCH_COMMAND = "python -m wfeval.features.fetch lpips"


@dataclass(frozen=True)
class NetFiles:
    """The two files of one LPIPS network and what pins them."""

    backbone_file: str  # torchvision's file name; the hex digits after the last '-' start its sha256
    backbone_url: str
    heads_member: str  # inside the lpips wheel
    heads_sha256: str
    upper_bound: float  # 2 * sum over layers of the largest head weight (see docs/metrics.md), rounded up

    @property
    def backbone_prefix(self) -> str:
        return self.backbone_file.rsplit("-", 1)[-1].split(".", 1)[0]

    @property
    def heads_file(self) -> str:
        return f"lpips-v{LPIPS_VERSION}-{Path(self.heads_member).stem}-heads.pth"


NETS: dict[str, NetFiles] = {
    "alex": NetFiles("alexnet-owt-7be5be79.pth", "https://download.pytorch.org/models/alexnet-owt-7be5be79.pth",
                     "lpips/weights/v0.1/alex.pth",
                     "df73285e35b22355a2df87cdb6b70b343713b667eddbda73e1977e0c860835c0", 8.0474),
    "vgg": NetFiles("vgg16-397923af.pth", "https://download.pytorch.org/models/vgg16-397923af.pth",
                    "lpips/weights/v0.1/vgg.pth",
                    "a78928a0af1e5f0fcb1f3b9e8f8c3a2a5a3de244d830ad5c1feddc79b8432868", 6.6216),
}
BACKBONE_CHECK = ("sha256 prefix {prefix} (the digits in torchvision's file name, all torchvision checks; "
                  "torchvision publishes no full sha256)")
HEADS_CHECK = f"sha256 pinned (from the {HEADS_REQUIREMENT} wheel, itself pinned)"
UNCHECKED = "none: a file named in the config, not the official {what}"


@dataclass(frozen=True)
class LPIPSWeights:
    """Which weights an LPIPS value came from (recorded in every row and aggregate)."""

    net: str
    backbone_path: str
    backbone_sha256: str  # of the bytes checked and then loaded
    backbone_check: str
    heads_path: str
    heads_sha256: str
    heads_check: str
    official: bool  # both files are the official ones (checked as above)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def record(self) -> dict[str, Any]:
        """What a result records: the network, both hashes, how they were checked, official or not."""
        return {"net": self.net, "version": LPIPS_VERSION, "official": self.official,
                "backbone_sha256": self.backbone_sha256, "backbone_check": self.backbone_check,
                "heads_sha256": self.heads_sha256, "heads_check": self.heads_check}


def net_files(net: str) -> NetFiles:
    if net not in NETS:
        raise ValueError(f"LPIPS net must be one of {', '.join(NETS)}, got {net!r}")
    return NETS[net]


def lpips_dir(root: str | os.PathLike[str] | None = None) -> Path:
    return cache_dir(root) / "weights" / "lpips"


def _say(message: str, stream: TextIO | None) -> None:
    print(f"wfeval: {message}", file=stream or sys.stderr, flush=True)


def _staging_hint(net: str) -> str:
    files = net_files(net)
    return (f"stage them once: `{FETCH_COMMAND} --net {net}` (the heads through pip; the backbone from "
            f"{files.backbone_url}), or offline `{FETCH_COMMAND} --net {net} --from {files.backbone_file}` "
            "with the file downloaded elsewhere")


# -- checks --------------------------------------------------------------------------------------
def backbone_matches(sha256: str, net: str) -> bool:
    return sha256.startswith(net_files(net).backbone_prefix)


def _check_backbone(path: Path, net: str) -> str:
    """The file's sha256 if it starts with the official prefix; else :class:`WeightsUnavailable`."""
    sha = file_sha256(path)
    files = net_files(net)
    if not backbone_matches(sha, net):
        raise WeightsUnavailable(f"{path}: sha256 {sha} does not start with {files.backbone_prefix}, so it is not "
                                 f"torchvision's {files.backbone_file}; refusing it")
    return sha


def _heads_bytes_from_wheel(wheel: Path, net: str) -> bytes:
    actual = file_sha256(wheel)
    if actual != HEADS_WHEEL_SHA256:
        raise WeightsUnavailable(f"{wheel}: sha256 {actual} is not the {HEADS_REQUIREMENT} wheel "
                                 f"({HEADS_WHEEL_SHA256}); refusing it")
    member = net_files(net).heads_member
    with zipfile.ZipFile(wheel) as archive:
        try:
            return archive.read(member)
        except KeyError:
            raise WeightsUnavailable(f"{wheel}: no {member} inside") from None


def _verified_heads(data: bytes, net: str, where: str) -> bytes:
    actual = hashlib.sha256(data).hexdigest()
    if actual != net_files(net).heads_sha256:
        raise WeightsUnavailable(f"{where}: sha256 {actual} is not LPIPS v{LPIPS_VERSION} {net} heads "
                                 f"({net_files(net).heads_sha256}); refusing it")
    return data


# -- staging (the fetch command) -----------------------------------------------------------------
def fetch_heads_wheel(dest: Path, *, timeout: float = 600) -> Path:
    """``pip download --no-deps --only-binary :all: lpips==0.1.4 -d dest``; the verified wheel."""
    return pip_download(HEADS_REQUIREMENT, HEADS_WHEEL, dest, binary=True, timeout=timeout)


def stage_heads(net: str, root: str | os.PathLike[str] | None = None, *, source: Path | None = None,
                stream: TextIO | None = None) -> Path:
    """The verified heads in the cache: kept if there, else from ``source`` (the lpips wheel or the
    ``.pth`` itself) or fetched with pip."""
    dest = lpips_dir(root) / net_files(net).heads_file
    if dest.is_file() and file_sha256(dest) == net_files(net).heads_sha256 and source is None:
        return dest
    if source is not None:
        data = _heads_bytes_from_wheel(source, net) if source.suffix == ".whl" else source.read_bytes()
    else:
        _say(f"fetching the LPIPS heads: {HEADS_REQUIREMENT} wheel (54 kB) with pip", stream)
        with tempfile.TemporaryDirectory(prefix="wfeval-lpips-") as tmp:
            data = _heads_bytes_from_wheel(fetch_heads_wheel(Path(tmp)), net)
    atomic_write_bytes(dest, _verified_heads(data, net, str(source or HEADS_REQUIREMENT)))
    return dest


def torch_hub_checkpoint(name: str) -> Path:
    """Where torchvision keeps a downloaded file (``$TORCH_HOME/hub/checkpoints``; no torch import)."""
    home = os.environ.get("TORCH_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                         os.path.expanduser("~/.cache"), "torch")
    return Path(home).expanduser() / "hub" / "checkpoints" / name


def _copy_in(source: Path, dest: Path) -> None:
    """Copy a large file into the cache atomically (a partial copy never has the final name)."""
    with atomic_target(dest) as tmp:
        shutil.copyfile(source, tmp)


def download(url: str, dest: Path, *, timeout: float = 60) -> None:
    """Stream ``url`` into ``dest`` atomically."""
    with atomic_target(dest) as tmp, urllib.request.urlopen(url, timeout=timeout) as response, \
            open_nofollow(tmp, "wb") as out:  # noqa: S310
        shutil.copyfileobj(response, out, 1 << 20)


def stage_backbone(net: str, root: str | os.PathLike[str] | None = None, *, source: Path | None = None,
                   fetch: bool = True, stream: TextIO | None = None) -> Path:
    """The backbone in the cache under its official name, its sha256 prefix checked: kept if there,
    else copied from ``source`` or torch's hub cache, else downloaded from the official URL."""
    files = net_files(net)
    dest = lpips_dir(root) / files.backbone_file
    if source is not None:
        if not source.is_file():
            raise WeightsUnavailable(f"{source}: no such file")
        _check_backbone(source, net)
        _say(f"copying {source} into {dest}", stream)
        _copy_in(source, dest)
        return dest
    if dest.is_file():
        try:
            _check_backbone(dest, net)
            return dest
        except WeightsUnavailable as exc:
            _say(f"{exc}; staging it again", stream)
    hub = torch_hub_checkpoint(files.backbone_file)
    if hub.is_file() and backbone_matches(file_sha256(hub), net):
        _say(f"copying torchvision's own download {hub} into {dest}", stream)
        _copy_in(hub, dest)
        return dest
    if not fetch:
        raise WeightsUnavailable(f"the LPIPS {net} backbone is not staged ({dest}); {_staging_hint(net)}")
    _say(f"downloading {files.backbone_url} into {dest}", stream)
    try:
        download(files.backbone_url, dest)
    except OSError as exc:  # URLError, timeouts, refused connections
        raise WeightsUnavailable(f"downloading {files.backbone_url} failed ({exc}); download it where that server "
                                 f"is reachable and stage it: `{FETCH_COMMAND} --net {net} --from "
                                 f"{files.backbone_file}`") from None
    try:
        _check_backbone(dest, net)
    except WeightsUnavailable:
        dest.unlink(missing_ok=True)
        raise
    return dest


def stage_lpips_weights(net: str = "alex", root: str | os.PathLike[str] | None = None, *,
                        source: Path | None = None, heads_source: Path | None = None, fetch: bool = True,
                        stream: TextIO | None = None) -> LPIPSWeights:
    """Both files of ``net`` in the cache, checked (``fetch=False``: only check what is there)."""
    if fetch or heads_source is not None:
        stage_heads(net, root, source=heads_source, stream=stream)
    stage_backbone(net, root, source=source, fetch=fetch, stream=stream)
    return resolve_lpips_weights(net, root=root)


# -- resolving (what the metric calls; never fetches) --------------------------------------------
def resolve_lpips_weights(net: str = "alex", backbone: str = "auto", heads: str = "auto",
                          root: str | os.PathLike[str] | None = None) -> LPIPSWeights:
    """The staged official files (``auto``) or the files a config names, with their sha256 and how
    they were checked; :class:`WeightsUnavailable` with the staging command when missing or wrong."""
    files = net_files(net)
    folder = lpips_dir(root)
    if backbone in ("auto", "", None):
        path = folder / files.backbone_file
        if not path.is_file():
            raise WeightsUnavailable(f"the LPIPS {net} backbone ({files.backbone_file}) is not staged in {folder}; "
                                     f"{_staging_hint(net)}")
        try:
            backbone_sha = _check_backbone(path, net)
        except WeightsUnavailable as exc:
            raise WeightsUnavailable(f"{exc}; {_staging_hint(net)}") from None
        backbone_check, backbone_official = BACKBONE_CHECK.format(prefix=files.backbone_prefix), True
    else:
        path = Path(backbone).expanduser().resolve()
        if not path.is_file():
            raise WeightsUnavailable(f"metric.lpips.backbone: {path} does not exist")
        backbone_sha = file_sha256(path)
        backbone_official = backbone_matches(backbone_sha, net)
        backbone_check = (BACKBONE_CHECK.format(prefix=files.backbone_prefix) if backbone_official
                          else UNCHECKED.format(what=f"torchvision {files.backbone_file}"))
    if heads in ("auto", "", None):
        heads_path = folder / files.heads_file
        if not heads_path.is_file():
            raise WeightsUnavailable(f"the LPIPS {net} heads are not staged in {folder}; {_staging_hint(net)}")
        heads_sha = file_sha256(heads_path)
        if heads_sha != files.heads_sha256:
            raise WeightsUnavailable(f"{heads_path}: sha256 {heads_sha} is not the LPIPS v{LPIPS_VERSION} {net} heads "
                                     f"({files.heads_sha256}); not used; {_staging_hint(net)}")
        heads_official = True
    else:
        heads_path = Path(heads).expanduser().resolve()
        if not heads_path.is_file():
            raise WeightsUnavailable(f"metric.lpips.heads: {heads_path} does not exist")
        heads_sha = file_sha256(heads_path)
        heads_official = heads_sha == files.heads_sha256
    return LPIPSWeights(net=net, backbone_path=str(path), backbone_sha256=backbone_sha, backbone_check=backbone_check,
                        heads_path=str(heads_path), heads_sha256=heads_sha,
                        heads_check=HEADS_CHECK if heads_official else UNCHECKED.format(what=f"{net} heads"),
                        official=backbone_official and heads_official)
