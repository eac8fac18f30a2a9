"""How the description layer reads a file: safely, and at runtime only from allowed folders.

``read_regular_file`` is the one way a description file, an attachment's file, an SDFormat
``<include>`` (and its ``model.config``) or a file a xacro expansion includes is read: its path
resolved (symlinks, ``..``) and checked against the rules, then what was checked is opened
(``open_checked``: one component at a time from ``/``, none followed if it is a symbolic
link, so a symlink swapped in after the check cannot lead elsewhere), with ``O_RDONLY |
O_NONBLOCK | O_CLOEXEC`` (a FIFO or a device cannot block the open), checked with ``fstat`` on
the open descriptor (only a regular file is read: never a FIFO, a device, a directory or a
socket) and against a size limit before a byte is read, then read up to that limit and one
byte more. A refusal names the file and the reason, never its content.

``FileRules`` say what may be read now: the folders allowed (None: any, as at start, on the
command line and in ``Robot.load``), the read-only parameter that lists more of them (named
in a refusal) and how a wait for a xacro expansion learns that the process is stopping. The
node applies them (``reading_under``) around what a request or a file watch asks at runtime;
every read of the layer checks ``current_rules()``. No rclpy here (stdlib only, so that the
xacro runner stays light).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelError, valid_utf8

#: The read-only node parameter listing the folders allowed at runtime besides the default ones.
ALLOWED_FOLDERS_PARAMETER = "allowed_description_folders"

#: What ``fstat``'s file type is called in a refusal.
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class FileRefused(ModelError):
    """A file the description layer does not read: ``why`` is the reason alone (the message
    is ``<source>: cannot read file: <why>``)."""

    def __init__(self, why: str, source: str) -> None:
        super().__init__(f"cannot read file: {why}", source=source)
        self.why = valid_utf8(why)


def _never() -> bool:
    return False


@dataclass(frozen=True)
class FileRules:
    """What the description layer may read now: files under ``allowed`` (resolved folders;
    None: anywhere, as at start), ``parameter`` naming where more folders are given,
    ``stopped`` telling a wait for a xacro expansion to give up (the process is stopping),
    ``start_arguments`` the xacro arguments (name, value) the start gave: the operator's own,
    passed on at runtime as they are (any other value given at runtime must be plain:
    ``xacro_process.check_arguments``)."""

    allowed: tuple[Path, ...] | None = None
    parameter: str = ALLOWED_FOLDERS_PARAMETER
    stopped: Callable[[], bool] = _never
    start_arguments: frozenset[tuple[str, str]] = frozenset()

    @property
    def at_runtime(self) -> bool:
        """Whether these are a running node's rules (what the graph asks), not the start's."""
        return self.allowed is not None

    def check(self, path: Path, source: str | None = None) -> Path:
        """``path`` resolved (symlinks and ``..``); ModelError (``source``: what it names,
        default the path) if it lies outside the allowed folders, or names no file (a NUL
        byte; relative, and the working folder gone; a symlink on it swapped while resolved)."""
        expanded = os.path.expanduser(str(path))
        try:
            resolved = Path(os.path.realpath(expanded))
        except ValueError:  # a NUL byte: no file has that name
            raise FileRefused("its name holds a NUL byte", source or repr(str(path))) from None
        except OSError as exc:  # realpath's readlink after its lstat, or os.getcwd, failed
            why = (
                "its path changed while it was resolved (a symbolic link removed or replaced)"
                if os.path.isabs(expanded)
                else "a relative path, and the working folder is gone"
            )
            raise FileRefused(f"{why}: {_reason(exc)}", source or str(path)) from None
        if self.allowed is None or any(_inside(resolved, folder) for folder in self.allowed):
            return resolved
        folders = ", ".join(str(folder) for folder in self.allowed) or "none"
        raise FileRefused(
            f"refused at runtime: {resolved} is outside the folders allowed ({folders}); "
            f"list its folder in the read-only parameter {self.parameter} at start",
            source or str(path),
        )


#: The rules in force in this thread (None: no restriction, ``FileRules()``).
_RULES: ContextVar[FileRules | None] = ContextVar("joint_tf_publisher_file_rules", default=None)
_ANYWHERE = FileRules()


def current_rules() -> FileRules:
    """The rules in force (``FileRules()``, no restriction, unless ``reading_under`` some)."""
    return _RULES.get() or _ANYWHERE


@contextmanager
def reading_under(rules: FileRules) -> Iterator[None]:
    """Apply ``rules`` to every read of the description layer inside (this thread only)."""
    token = _RULES.set(rules)
    try:
        yield
    finally:
        _RULES.reset(token)


def allowed_folders(folders: Iterable[str | Path]) -> tuple[Path, ...]:
    """``folders`` resolved (``~`` expanded, symlinks and ``..`` resolved), duplicates dropped."""
    resolved = (Path(os.path.realpath(os.path.expanduser(str(f)))) for f in folders if str(f))
    return tuple(dict.fromkeys(resolved))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


#: How ``open_checked`` opens each folder on the way: without following a symlink, and with
#: ``O_PATH`` where there is one (Linux: a folder one may pass through but not list, 0711,
#: still opens).
_FOLDER_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: How ``open_checked`` opens the file: read only, never blocking, never a symlink.
_FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW


def open_checked(resolved: Path) -> int:
    """A descriptor of the file at ``resolved`` (an absolute path without symlinks, as
    ``FileRules.check`` returns it), opened one component at a time from ``/`` without
    following any symlink: the file that was checked, or OSError (``ELOOP`` where a symlink
    took a component's place since)."""
    fd = os.open("/", _FOLDER_FLAGS)
    try:
        for part in resolved.parts[1:-1]:
            try:
                folder = os.open(part, _FOLDER_FLAGS, dir_fd=fd)
            except NotADirectoryError:  # O_PATH | O_NOFOLLOW met a symlink: say so
                if stat.S_ISLNK(os.lstat(part, dir_fd=fd).st_mode):
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP)) from None
                raise
            os.close(fd)
            fd = folder
        return os.open(resolved.name, _FILE_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)


def read_regular_file(path: Path, limit: int, source: str | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit``; ModelError (``source``:
    what it names, default the path) for a file that cannot be opened, is not a regular
    file, or holds more than ``limit`` bytes. Never blocks on a FIFO or a device; reads the
    file the rules checked (``open_checked``)."""
    where = source or str(path)
    checked = current_rules().check(path, where)
    try:
        fd = open_checked(checked)
    except OSError as exc:
        raise FileRefused(_reason(exc), where) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"not a regular file ({_kind(info.st_mode)})", where)
        if info.st_size > limit:
            raise FileRefused(f"{info.st_size} bytes, more than the {limit} allowed", where)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:  # a file that grows while read: at most limit + 1 bytes
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise FileRefused(_reason(exc), where) from None
    finally:
        os.close(fd)
    if size > limit:
        raise FileRefused(f"more than the {limit} bytes allowed", where)
    return b"".join(chunks)


def _kind(mode: int) -> str:
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "not a regular file"


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:  # open_checked follows no symlink: a loop, or a swap
        return (
            "a part of its path is a symbolic link, not followed (a loop, or a link put "
            "there after the path was checked)"
        )
    return exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))
