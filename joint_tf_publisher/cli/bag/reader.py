"""The input: a rosbag2 bag opened for reading, through ``rosbags`` (imported when a command
runs).

``open_bag`` reads a bag folder (``metadata.yaml`` and its files, several included) or a bare
``.db3`` or ``.mcap`` file, given by any spelling (``bag_location``); the ``InputBag`` it
gives is a context manager that closes the bag. Every failure is a ``BagError`` whose text
names the bag and the reason. Imports ``errors``, ``settings`` and the description's
bounded file read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from ...description.files import read_regular_file
from ...errors import ModelError
from .errors import BagError, rosbags_installed
from .settings import MAX_METADATA_BYTES, METADATA, METADATA_KEY, Compression

if TYPE_CHECKING:
    from rosbags.interfaces import Connection
    from rosbags.rosbag2 import Reader


def storage_of(path: Path) -> str:
    """``sqlite3`` or ``mcap``: the storage of the bag at ``path`` (its files' suffixes: a
    file rosbag2 compressed whole is ``NAME.mcap.zstd``)."""
    files = [path] if path.is_file() else sorted(path.iterdir())
    return "mcap" if any(".mcap" in file.suffixes for file in files) else "sqlite3"


@dataclass
class InputBag:
    """An open bag: its reader, path and storage; ``with`` closes it."""

    reader: Reader
    path: Path
    storage: str

    def __enter__(self) -> InputBag:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    @property
    def compression(self) -> Compression | None:
        """The bag's compression (None: none, or the storage's own, as MCAP's chunks)."""
        mode, fmt = self.reader.compression_mode, self.reader.compression_format
        return Compression(mode, fmt) if mode and fmt else None

    @property
    def connections(self) -> list[Connection]:
        return list(self.reader.connections)

    def messages(
        self, connections: Sequence[Connection] = ()
    ) -> Iterator[tuple[Connection, int, bytes]]:
        """(connection, log time in ns, serialized message) in log-time order, of
        ``connections`` (all for none); BagError for a file that breaks while read."""
        from rosbags.rosbag2 import ReaderError

        if not self.reader.connections:
            return
        try:
            yield from self.reader.messages(connections=connections)
        except (ReaderError, OSError, ValueError, KeyError) as exc:
            raise BagError(f"{self.path}: cannot read the bag: {exc}") from None
        except Exception as exc:  # sqlite3.DatabaseError, mcap's own errors
            raise BagError(
                f"{self.path}: cannot read the bag: {type(exc).__name__}: {exc}"
            ) from None

    def close(self) -> None:
        self.reader.close()


def bag_location(path: Path) -> Path:
    """The bag ``path`` names, absolute, every symlink and ``..`` resolved: a bag folder
    whether named by itself (``.``, a trailing slash), its ``metadata.yaml`` or one of its
    files (the folder's ``metadata.yaml`` lists them all: a split bag is read whole); else
    the path itself (a bare ``.db3`` or ``.mcap`` file, or nothing there)."""
    resolved = path.resolve()
    if resolved.is_file() and (resolved.parent / METADATA).is_file():
        return resolved.parent
    return resolved


def _is_regular(path: Path) -> bool:
    """Whether ``path`` is a regular file (through symlinks); False where it is missing."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def bag_files(path: Path) -> list[Path]:
    """The files rosbags opens to read the bag at ``path`` (``bag_location``): a bare file
    itself; a folder's ``metadata.yaml`` and the files it lists that are there (named in
    the folder, as rosbags names them). BagError naming ``metadata.yaml`` where it is not a
    regular file of at most ``MAX_METADATA_BYTES`` (a FIFO, a device, a 1 GB file)."""
    if not path.is_dir():
        return [path]
    metadata = path / METADATA
    try:
        text = read_regular_file(metadata, MAX_METADATA_BYTES)
    except ModelError as exc:
        raise BagError(f"cannot read the bag: {exc}") from None
    try:
        import yaml  # type: ignore[import-untyped]

        document = yaml.safe_load(text)
        listed = document[METADATA_KEY]["relative_file_paths"]
        names = [PurePath(str(name)).name for name in listed]
    except Exception:  # not a bag's metadata: rosbags says what is wrong with it
        return [metadata]
    return [metadata, *(path / name for name in names if name and (path / name).exists())]


def open_bag(path: Path) -> InputBag:
    """The bag at ``path`` (any spelling: ``bag_location``) opened for reading; BagError
    naming it if it is missing, of a storage this cannot read, or broken."""
    rosbags_installed()
    from rosbags.rosbag2 import Reader, ReaderError

    path = bag_location(path)
    if not path.exists():
        raise BagError(
            f"{path}: no such bag (a folder with metadata.yaml, or a .db3 or .mcap file)"
        )
    if path.is_dir() and not (path / METADATA).exists():
        raise BagError(f"{path}: not a rosbag2 bag (no metadata.yaml in the folder)")
    for file in bag_files(path):  # rosbags would wait forever on a FIFO, read a device
        if not _is_regular(file):
            raise BagError(f"{file}: cannot read the bag: not a regular file")
    try:
        reader = Reader(path)
        reader.open()
    except (ReaderError, OSError, ValueError, KeyError) as exc:
        raise BagError(f"{path}: cannot read the bag: {exc}") from None
    except Exception as exc:  # sqlite3.DatabaseError, mcap's own errors
        raise BagError(f"{path}: cannot read the bag: {type(exc).__name__}: {exc}") from None
    return InputBag(reader, path, storage_of(path))
