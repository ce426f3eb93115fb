"""What an HDF5 dataset reads beyond its own file, and reading it the same way every time.

An HDF5 dataset's bytes may live outside the ``.hdf5`` file: an ``ExternalLink`` on the way to it
(``data/demo_0`` → ``other.h5:/demo``), external raw storage (``create_dataset(external=...)``: the
rows are in a plain file) or a virtual dataset (its rows are other files' datasets; a missing
source reads as the fill value, silently). :func:`resolve` finds every such file for one key:
links are followed here (never by HDF5 itself, whose search also tries the working folder), a
relative name is taken next to the file that names it, and the dataset is opened with HDF5's
``${ORIGIN}`` prefixes so that the library reads exactly the files listed. The reader checks that
each one exists, is a regular file and lies inside the dataset's folder (``benchmark.
allow_outside_root``); the sample's identity holds each one's sha256 and every read checks them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable

MAX_HOPS = 16  # links followed for one key (a cycle of links is an error, not a hang)
MAX_DEPTH = 4  # virtual datasets whose sources are virtual datasets


@dataclass(frozen=True)
class Dependency:
    kind: str  # "external link", "external raw storage", "virtual source"
    path: Path  # as HDF5 will open it (absolute, not resolved through symlinks)
    where: str  # the file and key that name it


@dataclass
class Resolved:
    file: Path  # the file that holds the dataset itself
    key: str  # its key in that file
    dependencies: list[Dependency] = field(default_factory=list)


class HDF5LinkError(ValueError):
    """A key that cannot be followed (a missing target, a cycle of links)."""


def _next_to(holder: Path, name: str) -> Path:
    target = Path(name)
    return target if target.is_absolute() else holder.parent / target


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _follow(path: Path, key: str, root: Path | None = None) -> tuple[Path, str, list[Dependency]]:
    """The file and key the object ``key`` of ``path`` really is, with the external links crossed (never
    one leading out of ``root``: that file is not opened)."""
    import h5py

    file, parts, deps = Path(path), [p for p in key.split("/") if p], []
    trail: list[str] = []  # each link crossed, as "file[/key]"
    seen: dict[tuple[str, str], int] = {}
    for _ in range(MAX_HOPS):
        if not file.is_file():
            raise HDF5LinkError(f"{file}: file not found")
        state = (str(file), "/".join(parts))
        if state in seen:  # back where a link already led: a cycle, named link by link
            loop = trail[seen[state]:] + [trail[seen[state]]]
            raise HDF5LinkError(f"{Path(path).name}[{key}]: more than {MAX_HOPS} links on the way: the links form a "
                                f"cycle, {' -> '.join(loop)}")
        seen[state] = len(trail)
        with h5py.File(file, "r") as handle:
            node, done = handle["/"], []
            for index, name in enumerate(parts):
                link = node.get(name, getlink=True) if isinstance(node, h5py.Group) else None  # never followed
                if link is None:
                    raise HDF5LinkError(f"{file.name}[{'/'.join(done + [name])}]: no such dataset")
                rest = parts[index + 1:]
                here = f"{file.name}[/{'/'.join(done + [name])}]"
                if isinstance(link, h5py.ExternalLink):
                    target = _next_to(file, _text(link.filename))
                    deps.append(Dependency("external link", target, f"{file.name}[{'/'.join(done + [name])}]"))
                    if root is not None and not _inside(target, root):
                        raise HDF5LinkError(f"{deps[-1].where}: its external link {target} lies outside the dataset's "
                                            f"folder {root}; set benchmark.allow_outside_root=true to read it")
                    trail.append(here)
                    file, parts = target, [p for p in _text(link.path).split("/") if p] + rest
                    break
                if isinstance(link, h5py.SoftLink):
                    soft = _text(link.path)
                    base = [] if soft.startswith("/") else done
                    trail.append(here)
                    parts = [p for p in PurePosixPath(*base, soft).parts if p != "/"] + rest
                    break
                node = node[name]
                done.append(name)
            else:
                return file, "/".join(parts), deps
    raise HDF5LinkError(f"{Path(path).name}[{key}]: more than {MAX_HOPS} links on the way (a cycle?): "
                        f"{' -> '.join(trail[:4])} -> ...")


def resolve(path: Path, key: str, depth: int = 0, root: Path | None = None) -> Resolved:
    """Where the dataset ``key`` of ``path`` is and every other file its rows come from; ``root``: no
    file outside this folder is opened on the way (HDF5LinkError for a link; :func:`problems` for the rest)."""
    import h5py

    file, inner, deps = _follow(path, key, root)
    found = Resolved(file, inner, deps)
    with h5py.File(file, "r") as handle:
        data = handle[inner] if inner else handle["/"]
        if not isinstance(data, h5py.Dataset):
            return found
        where = f"{file.name}[{inner}]"
        for name, _offset, _size in data.external or ():
            found.dependencies.append(Dependency("external raw storage", _next_to(file, _text(name)), where))
        if data.is_virtual:
            if depth >= MAX_DEPTH:
                raise HDF5LinkError(f"{where}: virtual datasets nested more than {MAX_DEPTH} deep")
            for source in data.virtual_sources():
                name = _text(source.file_name)
                target = file if name == "." else _next_to(file, name)
                if target != file:
                    found.dependencies.append(Dependency("virtual source", target, where))
                if not target.is_file() or (root is not None and not _inside(target, root)):
                    continue  # reported by problems() (a missing source would read as the fill value)
                found.dependencies += resolve(target, _text(source.dset_name), depth + 1, root).dependencies
    return found


def open_dataset(handle: Any, key: str) -> Any:
    """The dataset ``key`` of an open file, with external raw storage and virtual sources found next to
    the file (``${ORIGIN}``), as :func:`resolve` listed them, never relative to the working folder."""
    import h5py

    access = h5py.h5p.create(h5py.h5p.DATASET_ACCESS)
    access.set_efile_prefix(b"${ORIGIN}")
    access.set_virtual_prefix(b"${ORIGIN}")
    return h5py.Dataset(h5py.h5d.open(handle.id, key.encode("utf-8"), access))


def problems(resolved: Resolved, root: Path | None) -> list[str]:
    """Why the files ``resolved`` depends on cannot be read: missing, not a regular file, or outside
    ``root`` (a folder; ``None``: anywhere)."""
    out = []
    for dep in resolved.dependencies:
        if not dep.path.is_file():
            out.append(f"{dep.where}: its {dep.kind} {dep.path} is not a readable regular file")
        elif root is not None and not _inside(dep.path, root):
            out.append(f"{dep.where}: its {dep.kind} {dep.path} lies outside the dataset's folder {root}; set "
                       "benchmark.allow_outside_root=true to read it")
    named = {d.path for d in resolved.dependencies}
    if root is not None and not _inside(resolved.file, root) and resolved.file not in named:
        out.append(f"{resolved.file}: outside the dataset's folder {root}; set benchmark.allow_outside_root=true "
                   "to read it")
    return list(dict.fromkeys(out))


def _inside(path: Path, root: Path) -> bool:
    target = path.resolve()
    return target == root or root in target.parents


def digests(resolved: Resolved, digest: Callable[[Path], str]) -> list[list[str]]:
    """``[kind, path, sha256]`` of every file the dataset reads beyond its own file (what a sample's
    identity holds and each read checks); ``digest``: the decoder's (remembered per file state)."""
    files = dict.fromkeys((d.kind, d.path) for d in resolved.dependencies)
    return [[kind, str(path), digest(path)] for kind, path in files]
