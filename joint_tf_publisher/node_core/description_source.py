"""Where the node's description comes from, and the description file it watches (no rclpy).

Exactly one of three parameters gives the description (``description_source``):
``robot_description`` (the text), ``description_file`` (a path, with ``description_args``
for xacro) or ``description_from_topic``; none or two is refused, naming them.

``DescriptionFileWatch`` owns a description file: it reads it (``description.loader``:
.urdf and .sdf as they are, .xacro expanded by xacro in a child process), then, polled twice a
second by the node's timer (``WATCH_PERIOD_S``), tells whether a save changed it. What it
watches: the file, and for xacro every file xacro read to expand it (its ``<xacro:include>``s
and ``load_yaml`` files, as ``xacro --deps`` lists them). SDFormat ``<include>``d models and
meshes are not watched. A poll costs one ``os.stat`` per watched file and never blocks: a
save is read once it has settled (its modification time, size, inode and change time the same
on two polls in a row: a file still being written is not read half way), a xacro expansion is
started by one poll and collected by a later one; a file that could not be read (no
permission, not a regular file) is tried again without a new save (a ``chmod`` that fixes it
loads it), its refusal said once. Only a text that differs from the last text read (its
SHA-256) is loaded: saving unchanged text, or a ``touch``, loads nothing. A changed text that
does not load is ``Refused`` with one reason naming the file and line; the running model
stays. The node applies a ``Reloaded`` model through its one install path.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from functools import partial
from pathlib import Path
from typing import Generic, NamedTuple, TypeVar

from ..description.loader import FileDescription, XacroFailed, expanded, read_file
from ..description.xacro_process import XacroRun
from ..description.xmlio import MAX_DESCRIPTION_BYTES
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
    by renaming a new file over the old one changes the inode), or when its permissions or
    owner change (``ctime_ns``: a chmod that makes a refused file readable)."""

    mtime_ns: int
    size: int
    inode: int
    ctime_ns: int


def stamp_of(path: Path) -> FileStamp | None:
    """``path``'s stamp; None where it cannot be read (missing, no permission)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return FileStamp(stat.st_mtime_ns, stat.st_size, stat.st_ino, stat.st_ctime_ns)


Stamps = dict[Path, FileStamp | None]


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
        self._stamps: Stamps = {}
        #: SHA-256 of the last text read (loaded or refused); None: the last read failed.
        self._digest: str | None = None
        #: The stamps of a save seen on the last poll, read once a poll sees them again.
        self._settling: Stamps | None = None
        #: The last read could not read the file itself (no permission, not a regular file):
        #: it is read again (once settled) without waiting for a save.
        self._retry = False
        #: The last refusal said (a retry that fails the same way says nothing).
        self._refused: str | None = None
        #: A xacro expansion under way (started by a poll, collected by a later one).
        self._run: tuple[XacroRun, Stamps] | None = None

    @property
    def xacro(self) -> bool:
        """Whether the file is expanded by xacro (a .xacro file, or xacro arguments given)."""
        return self.path.suffix == ".xacro" or bool(self.mappings)

    @property
    def files(self) -> tuple[Path, ...]:
        """The files watched: this file and, for xacro, those it read."""
        return tuple(self._stamps) or (self.path,)

    def load(self, load: Callable[[FileDescription], T]) -> T:
        """Read the file now and ``load`` it (at start, or for a new path; a xacro expansion
        is waited for, under the current ``FileRules``); ModelError (or what ``load``
        raises) when it does not load."""
        before = self._current()
        return load(self._record(before, self._read_now))

    def changed(self) -> bool:
        """Whether a watched file was saved (or appeared, or went) since it was read."""
        return self._current() != self._stamps

    def poll(self, load: Callable[[FileDescription], T]) -> Reloaded[T] | Refused | None:
        """Never blocks: read the file again once a save that changed it has settled (its
        stamps the same on two polls in a row), or when the last read could not read it;
        ``load`` a changed text. A xacro expansion is started by one poll and its result
        loaded by a later one. None when there is nothing (yet) to load; ``load`` raises
        ModelError or ParameterRejected for a description it refuses."""
        if self._run is not None:
            run, before = self._run
            if not run.done():
                return None
            self._run = None
            collected = partial(expanded_result, run, self.path)
            return self._outcome(load, partial(self._record, before, collected))
        now = self._current()
        if now == self._stamps and not self._retry:
            self._settling = None
            return None
        if now != self._settling:  # a save seen for the first time: it may still be written
            self._settling = now
            return None
        self._settling = None
        if not self.xacro:
            return self._outcome(load, partial(self._record, now, partial(read_file, self.path)))
        try:
            run = self._start()
        except ModelError as err:
            unreadable = partial(_unreadable, self, err)
            return self._outcome(load, partial(self._record, now, unreadable))
        self._run = (run, now)
        return None

    @property
    def expanding(self) -> bool:
        """Whether a xacro expansion started by a poll is under way."""
        return self._run is not None

    def close(self) -> None:
        """Stop a xacro expansion under way (the watch is no longer used)."""
        if self._run is not None:
            self._run[0].cancel()
            self._run = None

    def _current(self) -> Stamps:
        return {path: stamp_of(path) for path in (self.path, *self._stamps)}

    def _start(self) -> XacroRun:
        """A xacro expansion of the file started; ModelError (and a retry on the next
        polls) when the file itself cannot be read."""
        try:
            return XacroRun(self.path, self.mappings, limit_bytes=MAX_DESCRIPTION_BYTES)
        except ModelError:
            self._retry = True
            raise

    def _read_now(self) -> FileDescription:
        """The file's description, read now (a xacro expansion waited for)."""
        if self.xacro:
            return expanded(self._start().wait(), self.path)
        return read_file(self.path)

    def _outcome(
        self, load: Callable[[FileDescription], T], read: Callable[[], FileDescription]
    ) -> Reloaded[T] | Refused | None:
        """``read``, then ``load`` a text other than the last one read; a refusal is said
        once (the same reason again, from a retry, is None)."""
        last = self._digest
        try:
            description = read()
            if self._digest == last:
                return None
            loaded = Reloaded(load(description))
        except (ModelError, ParameterRejected) as err:
            reason = refusal(DescriptionSource.FILE, err)
            if reason == self._refused:
                return None
            self._refused = reason
            return Refused(reason)
        self._refused = None
        return loaded

    def _record(self, before: Stamps, read: Callable[[], FileDescription]) -> FileDescription:
        """``read``'s description; records the stamps ``before`` it (so a save while it reads
        is seen by the next poll), the files to watch and the text's digest."""
        self._digest = None
        self._retry = False  # set again where the file itself cannot be read
        try:
            description = read()
        except XacroFailed as err:
            self._watch((*err.files, *self._stamps), before)
            raise
        except ModelError:
            self._retry = self._retry or not self.xacro  # read_file fails on reading only
            self._watch((self.path, *self._stamps), before)
            raise
        self._watch(description.files, before)
        data = description.data
        self._digest = hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()
        return description

    def _watch(self, files: Iterable[Path], before: Stamps) -> None:
        """Watch ``files`` from now on (after a failed read, the caller adds those watched
        before: xacro may have stopped before the include whose save will fix it)."""
        self._stamps = {
            path: before[path] if path in before else stamp_of(path)
            for path in dict.fromkeys(files)
        }


def expanded_result(run: XacroRun, path: Path) -> FileDescription:
    """The FileDescription of the finished xacro expansion ``run`` of ``path``."""
    return expanded(run.result(), path)


def _unreadable(watch: DescriptionFileWatch, err: ModelError) -> FileDescription:
    """Raise ``err``, a failure to read ``watch``'s file itself (read again on later polls)."""
    watch._retry = True
    raise err
