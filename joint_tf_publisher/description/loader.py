"""Pick the parser for a robot description: URDF or SDFormat text, or a file (xacro expanded)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelError
from ..model.elements import RobotModel
from .xacro_process import XACRO_TIME_LIMIT_S, XacroFailed, XacroRun
from .xmlio import (
    MAX_DESCRIPTION_BYTES,
    drop_root_namespace,
    line_of,
    parse_xml,
    read_description,
    written_tag,
)

__all__ = [
    "FileDescription",
    "XacroFailed",
    "expand_xacro",
    "expand_xacro_file",
    "load_file",
    "load_string",
    "read_file",
]


def load_string(
    text: str | bytes,
    source: str = "<string>",
    model_name: str | None = None,
    path: Path | None = None,
) -> RobotModel:
    """Parse URDF (root ``<robot>``) or SDFormat (root ``<sdf>``) text into a Robot.

    The root element may carry a namespace (``<robot xmlns="...">``): it is dropped from the
    root and the elements in the same namespace (``xmlio.drop_root_namespace``). ``path`` is
    the file the text came from: SDFormat ``<include>``s of relative paths start from its
    folder (else from the working directory).
    """
    root = drop_root_namespace(parse_xml(text, source))
    tag = root.tag if isinstance(root.tag, str) else ""
    if tag == "robot":
        from .urdf import robot_from_element

        return robot_from_element(root, source)
    if tag == "sdf":
        from .sdf import robot_from_element as sdf_robot_from_element

        return sdf_robot_from_element(root, source, model_name=model_name, path=path)
    raise ModelError(
        f"root element is <{written_tag(root)}>, expected <robot> (URDF) or <sdf> (SDFormat)",
        source=source,
        line=line_of(root),
    )


def load_file(path: Path, model_name: str | None = None) -> RobotModel:
    """Read a .urdf, .sdf or .xacro file (xacro expanded with the ``xacro`` package)."""
    read = read_file(path)
    return load_string(read.data, source=read.source, model_name=model_name, path=path)


@dataclass(frozen=True)
class FileDescription:
    """A description read from a file: ``data`` the file's bytes, or xacro's output;
    ``source`` what errors in it name (the path; for xacro output ``<path> (expanded)``, as
    line numbers then count in xacro's output as ``xacro <path>`` prints it); ``files``
    every file read to make it (the file, and for xacro each file it included, in the order
    xacro read them)."""

    data: str | bytes
    source: str
    files: tuple[Path, ...]

    @property
    def path(self) -> Path:
        """The file read (the first of ``files``)."""
        return self.files[0]

    def text(self) -> str:
        """``data`` as text (a file's bytes read as UTF-8); ModelError naming the file and
        the byte offset of the first byte that is not UTF-8."""
        if isinstance(self.data, str):
            return self.data
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ModelError(
                f"not UTF-8 text: byte 0x{self.data[exc.start]:02x} at offset {exc.start}",
                source=self.source,
            ) from None


def read_file(path: Path, xacro_args: Mapping[str, str] | None = None) -> FileDescription:
    """The description in the file ``path``: a .xacro file (or any file when ``xacro_args``
    are given, as xacro's command line takes them) expanded by xacro with those arguments,
    any other file's bytes as they are; ModelError naming the file (and line) it failed on."""
    if path.suffix == ".xacro" or xacro_args:
        return expand_xacro_file(path, xacro_args or {})
    data = read_description(path)
    return FileDescription(data, str(path), (path,))


def expand_xacro(path: Path) -> str:
    """Expanded URDF text of a .xacro file; ModelError if xacro is missing or fails."""
    text = expand_xacro_file(path, {}).data
    assert isinstance(text, str)
    return text


def expand_xacro_file(
    path: Path, mappings: Mapping[str, str], *, time_limit_s: float = XACRO_TIME_LIMIT_S
) -> FileDescription:
    """xacro's output for ``path`` with the arguments ``mappings``, and the files it read
    (what xacro's ``--deps`` prints; also where it failed), expanded in a child process
    (``xacro_process.XacroRun``: within ``time_limit_s`` and the memory limit, under the
    current ``files.FileRules``; a wait that stops when they say the process stops).
    ModelError if xacro is missing, fails, or runs out of time or memory: naming the file it
    was reading and, for malformed XML, the line."""
    run = XacroRun(path, mappings, limit_bytes=MAX_DESCRIPTION_BYTES, time_limit_s=time_limit_s)
    return expanded(run.wait(), path)


def expanded(output: tuple[str, tuple[Path, ...]], path: Path) -> FileDescription:
    """The FileDescription of xacro's ``output`` (text, files read) for ``path``. Indented as
    xacro's command line prints it (the runner's ``toprettyxml``): a line number of an error
    in the expanded text is the line of what ``xacro <path> <args>`` prints."""
    text, files = output
    return FileDescription(text, f"{path} (expanded)", files)
