"""Where the node's description comes from, and the description file it watches (no rclpy).

Exactly one of three parameters gives the description (``description_source``):
``robot_description`` (the text), ``description_file`` (a path, with ``description_args``
for xacro) or ``description_from_topic``; none or two is refused, naming them.

``DescriptionFileWatch`` owns a description file: it reads it (``description.loader``:
.urdf and .sdf as they are, .xacro expanded by xacro), then, polled twice a second by the
node's timer (``WATCH_PERIOD_S``), tells whether a save changed it. What it watches: the
file, and for xacro every file xacro read to expand it (its ``<xacro:include>``s and
``load_yaml`` files, as ``xacro --deps`` lists them). SDFormat ``<include>``d models and
meshes are not watched. A poll costs one ``os.stat`` per watched file; only when a file's
modification time, size or inode changed is it read again, and only when the text read
differs from the last text read (its SHA-256) is it loaded: saving unchanged text, or a
``touch``, loads nothing. A changed text that does not load is ``Refused`` with one reason
naming the file and line; the running model stays. The node applies a ``Reloaded`` model
through its one install path.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Generic, NamedTuple, TypeVar

from ..description.loader import FileDescription, XacroFailed, read_file
from ..errors import ModelError
from .parameters import ParameterRejected, Settings, xacro_mappings

#: Seconds between two checks of the description file (the node's timer, steady clock): a
#: save shows within about a second (a period, the load, the publication) even on a busy
#: machine, for a few ``os.stat`` calls per check.
WATCH_PERIOD_S = 0.5

T = TypeVar("T")


class DescriptionSource(Enum):
    """The parameter that gives the description (its value: the parameter's name)."""

    PARAMETER = "robot_description"
    FILE = "description_file"
    TOPIC = "description_from_topic"


def description_source(
    robot_description: str, description_file: str, from_topic: bool
) -> DescriptionSource:
    """The one source the parameters give; ParameterRejected naming them when two or more
    give one (or none does)."""
    given = [
        source
        for source, on in (
            (DescriptionSource.PARAMETER, bool(robot_description.strip())),
            (DescriptionSource.FILE, bool(description_file.strip())),
            (DescriptionSource.TOPIC, from_topic),
        )
        if on
    ]
    if len(given) == 1:
        return given[0]
    if not given:
        raise ParameterRejected(
            "parameter robot_description is empty: give the URDF or SDFormat text, a file in "
            "description_file, or set description_from_topic:=true"
        )
    names = " and ".join(source.value for source in given)
    raise ParameterRejected(
        f"{names} both give the robot description: set exactly one of robot_description, "
        "description_file and description_from_topic (to switch at runtime, clear the other "
        "in the same atomic change)"
    )


def loads_again(
    old_source: DescriptionSource,
    source: DescriptionSource,
    old: Settings,
    new: Settings,
    robot_description_set: bool,
) -> bool:
    """Whether a parameter change (settings ``old`` to ``new``, the source ``old_source`` to
    ``source``; ``robot_description_set``: the change sets that parameter) loads the
    description from ``source`` again: a new source, a new ``model_name``, other attachments,
    new text, or a new file or xacro arguments. A topic's description is loaded again from
    the text it gave."""
    if source is not old_source or new.model_name != old.model_name:
        return True
    if new.attachment_list != old.attachment_list:
        return True
    if source is DescriptionSource.PARAMETER:
        return robot_description_set
    if source is DescriptionSource.FILE:
        return (new.description_file, new.description_args) != (
            old.description_file,
            old.description_args,
        )
    return False


def refusal(
    source: DescriptionSource, err: ModelError | ParameterRejected, running: bool = True
) -> str:
    """The one line said (log, health report) when a description that ``source`` gave at
    runtime (a saved file, a topic message) does not load; ``running``: a model runs on."""
    stays = ", the running model stays" if running else ""
    if source is DescriptionSource.FILE:
        return f"description_file not reloaded{stays}: {err}"
    return f"robot description from topic rejected{stays}: {err}"


class FileStamp(NamedTuple):
    """What ``os.stat`` tells of a file that changes when it is saved (an editor that saves
    by renaming a new file over the old one changes the inode)."""

    mtime_ns: int
    size: int
    inode: int


def stamp_of(path: Path) -> FileStamp | None:
    """``path``'s stamp; None where it cannot be read (missing, no permission)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return FileStamp(stat.st_mtime_ns, stat.st_size, stat.st_ino)


@dataclass(frozen=True)
class Reloaded(Generic[T]):
    """A saved description file that loaded: what the node's ``load`` made of it."""

    loaded: T


@dataclass(frozen=True)
class Refused:
    """A saved description file that does not load: why (``refusal``), naming file and line."""

    reason: str


class DescriptionFileWatch:
    """The description file ``path`` (``~`` expanded; a relative path is relative to the
    node's working directory) and its xacro arguments ``args`` (``name:=value``; a .xacro
    file, or any file when given, is expanded by xacro). See the module docstring."""

    def __init__(self, path: str, args: tuple[str, ...] = ()) -> None:
        self.path = Path(os.path.expanduser(path.strip()))
        self.mappings = xacro_mappings(args)
        #: Each watched file's stamp when it was last read (None: unreadable then).
        self._stamps: dict[Path, FileStamp | None] = {}
        #: SHA-256 of the last text read (loaded or refused); None: the last read failed.
        self._digest: str | None = None

    @property
    def files(self) -> tuple[Path, ...]:
        """The files watched: this file and, for xacro, those it read."""
        return tuple(self._stamps) or (self.path,)

    def load(self, load: Callable[[FileDescription], T]) -> T:
        """Read the file now and ``load`` it (at start, or for a new path); ModelError (or
        what ``load`` raises) when it does not load."""
        return load(self._read())

    def changed(self) -> bool:
        """Whether a watched file was saved (or appeared, or went) since it was read."""
        return any(stamp_of(path) != stamp for path, stamp in self._stamps.items())

    def poll(self, load: Callable[[FileDescription], T]) -> Reloaded[T] | Refused | None:
        """Read the file again if a save changed it, and ``load`` a changed text; None when
        nothing changed. ``load`` raises ModelError or ParameterRejected for a description
        it refuses."""
        if not self.changed():
            return None
        last = self._digest
        try:
            read = self._read()
            if self._digest == last:
                return None
            return Reloaded(load(read))
        except (ModelError, ParameterRejected) as err:
            return Refused(refusal(DescriptionSource.FILE, err))

    def _read(self) -> FileDescription:
        """The file's description; records the stamps (taken before reading, so a save
        while it reads is seen by the next poll) and the text's digest."""
        before = {path: stamp_of(path) for path in (self.path, *self._stamps)}
        self._digest = None
        try:
            read = read_file(self.path, self.mappings)
        except XacroFailed as err:
            self._watch((*err.files, *self._stamps), before)
            raise
        except ModelError:
            self._watch((self.path, *self._stamps), before)
            raise
        self._watch(read.files, before)
        data = read.data.encode() if isinstance(read.data, str) else read.data
        self._digest = hashlib.sha256(data).hexdigest()
        return read

    def _watch(self, files: Iterable[Path], before: dict[Path, FileStamp | None]) -> None:
        """Watch ``files`` from now on (after a failed read, the caller adds those watched
        before: xacro may have stopped before the include whose save will fix it)."""
        self._stamps = {
            path: before[path] if path in before else stamp_of(path)
            for path in dict.fromkeys(files)
        }
