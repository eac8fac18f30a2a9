"""The folders a running node may read description files from (no rclpy here).

What the node's start was given (command line, launch file, parameters file) is read freely.
What a request from the graph names at runtime (a new ``description_file``, an attachment's
file, an SDFormat ``<include>``, what a xacro file includes) is read only from the folders
allowed at start (``start_folders``): those listed in the read-only parameter
``allowed_description_folders``; the folders of the files the node started with (its
``description_file`` and the files xacro read for it, its attachments' files); and the share
folders of the packages its start description names (``package://NAME/`` and
``$(find NAME)``, found as ``description.ament_index.ament_share`` finds them). Symlinks and
``..`` are resolved before the check (``description.files.FileRules``). So a runtime swap to
another file of the start file's folder, or of its package, works; a ``.xacro`` elsewhere is
refused without being expanded, naming the parameter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from ..description.ament_index import ament_share
from ..description.files import (
    ALLOWED_FOLDERS_PARAMETER,
    FileRules,
    allowed_folders,
    read_regular_file,
)
from ..description.xmlio import MAX_DESCRIPTION_BYTES
from ..errors import ModelError
from .parameters import Settings, xacro_mappings

#: ``package://NAME/`` and ``$(find NAME)`` in a description or a xacro file.
_PACKAGE_REFERENCE = re.compile(r"package://([A-Za-z0-9_.-]+)/|\$\(find\s+([A-Za-z0-9_.-]+)\)")


def package_names(text: str) -> set[str]:
    """The packages ``text`` names by ``package://NAME/`` or ``$(find NAME)``."""
    return {a or b for a, b in _PACKAGE_REFERENCE.findall(text)}


def start_folders(
    settings: Settings, files: Iterable[Path], texts: Iterable[str]
) -> tuple[Path, ...]:
    """The folders allowed at runtime, for a node started with ``settings`` that read
    ``files`` at start (its description file and what xacro read for it) and whose start
    description is ``texts`` (the description, the composed description): resolved, in
    order, each once."""
    read = [*files, *(Path(a.file).expanduser() for a in settings.attachment_list if a.file)]
    names: set[str] = set()
    for text in texts:
        names |= package_names(text)
    for path in read:  # the $(find NAME) of xacro files are gone from their output
        if path.suffix == ".xacro":
            names |= package_names(_text_of(path))
    shares = (ament_share(name) for name in sorted(names))
    return allowed_folders(
        [
            *settings.allowed_description_folders,
            *(path.expanduser().resolve().parent for path in read),
            *(share for share in shares if share is not None),
        ]
    )


def runtime_rules(
    folders: tuple[Path, ...], stopped: Callable[[], bool], settings: Settings
) -> FileRules:
    """The rules of a running node started with ``settings``: ``folders`` allowed
    (``start_folders``), ``stopped`` its stop flag, its start's xacro arguments passed as
    they are (any other runtime value must be plain: ``xacro_process.check_arguments``)."""
    start_arguments = frozenset(xacro_mappings(settings.description_args).items())
    return FileRules(folders, ALLOWED_FOLDERS_PARAMETER, stopped, start_arguments)


def start_rules(stopped: Callable[[], bool]) -> FileRules:
    """The rules while the node starts: any folder, ``stopped`` its stop flag."""
    return FileRules(None, ALLOWED_FOLDERS_PARAMETER, stopped)


def _text_of(path: Path) -> str:
    """``path``'s text ("" where it cannot be read: it was read at start, so rarely)."""
    try:
        return read_regular_file(path, MAX_DESCRIPTION_BYTES).decode("utf-8", errors="replace")
    except ModelError:
        return ""
