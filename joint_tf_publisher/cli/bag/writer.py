"""The output: a new rosbag2 bag, written through ``rosbags`` in a child process
(``writer_process``) and renamed to its name only when it is complete.

``BagOutput`` writes into a hidden folder beside the output and renames it to the output at
``finish``, so an interrupted or failed repair never leaves something that looks like a
finished bag; as a context manager it finishes when its block ends and aborts when the block
raises. ``BagTopic`` describes one output topic. ``checked_output`` and
``replacement_refusal`` say what an output may be and replace. Every failure is a
``BagError`` naming the output and the reason. Imports ``errors``, ``settings``,
``writer_process`` and the description's bounded file read; rosbags' types only for typing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pickle
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ...description.files import read_regular_file
from ...errors import ModelError
from .errors import BagError, rosbags_installed
from .settings import (
    MAX_METADATA_BYTES,
    METADATA,
    METADATA_KEY,
    WRITE_BATCH,
    WRITE_BATCH_BYTES,
    Compression,
)
from .stops import STOPS
from .writer_process import (
    ANSWER,
    BATCH,
    CALL,
    MAX_MESSAGE_BYTES,
    batch_bytes,
    read_frame,
    start_writer,
    stop_writer,
    write_frame,
)

if TYPE_CHECKING:
    from rosbags.interfaces import Qos


@dataclass(frozen=True)
class BagTopic:
    """A topic of the output bag, one connection of it: its name, ROS 2 type, offered QoS
    profiles, message definition and type hash (``msgdef`` None: rosbags' own definition
    and hash of ``msgtype``, from ``types.typestore`` in the writing process; ``digest``
    unused) and serialization format. Equal descriptions are one connection."""

    name: str
    msgtype: str
    profiles: tuple[Qos, ...] = ()
    msgdef: str | None = None
    digest: str = ""
    serialization_format: str = "cdr"


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one file or folder (also through a bind mount or a
    hard link); False where either is missing."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def checked_output(source: Path, output: Path) -> Path:
    """``output`` absolute with every symlink resolved, the bag to write for the input bag
    at ``source`` (``bag_location``); BagError when it is the input, inside it or holds it,
    whatever the spelling (``..``, symlinks, bind mounts), or is itself a symlink (a dangling
    one had the bag written where it pointed, without ``--force``; one to another bag had
    ``--force`` replace that bag)."""
    resolved = output.resolve()
    for folder in (resolved, *resolved.parents):
        if folder == source or _same_file(folder, source):
            where = "is the input bag" if folder == resolved else "is inside the input bag"
            raise BagError(f"{output}: the output {where} {source}; give an output beside it")
    for folder in source.parents:
        if folder == resolved or _same_file(folder, resolved):
            raise BagError(
                f"{output}: the output holds the input bag {source}: replacing it would remove "
                "the input; give an output beside it"
            )
    if output.is_symlink():  # written through, it would land where the link points
        raise BagError(
            f"{output}: the output is a symbolic link (to {os.readlink(output)}): give the "
            "folder itself, or another output"
        )
    return resolved


def is_rosbag2_bag(folder: Path) -> bool:
    """Whether ``folder`` is a bag rosbag2 (or rosbags) wrote: a folder (no symlink) whose
    ``metadata.yaml`` is a regular file of at most ``MAX_METADATA_BYTES`` holding
    ``rosbag2_bagfile_information``."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    try:
        text = read_regular_file(folder / METADATA, MAX_METADATA_BYTES)
    except ModelError:
        return False
    try:
        import yaml  # type: ignore[import-untyped]

        document = yaml.safe_load(text)
    except Exception:  # not YAML (yaml's errors, a recursion in a hostile file)
        return False
    return isinstance(document, dict) and isinstance(document.get(METADATA_KEY), dict)


class BagOutput:
    """A new bag written beside ``path`` and renamed to ``path`` by ``finish``: written as
    ``path.name`` inside a hidden partial folder (so its files are named as the bag's,
    ``NAME.db3`` or ``NAME.mcap``, and ``metadata.yaml`` lists them so); ``abort`` removes
    the new bag and the partial folder, nothing another put in it. ``force``: an existing
    ``path`` is replaced at the rename, not before; without it a bag that took the name
    meanwhile is refused there too.

    rosbags' writer runs in a child process (``writer_process``), fed through a pipe in
    batches of ``WRITE_BATCH`` messages or ``WRITE_BATCH_BYTES`` bytes, whichever comes
    first: it writes while the caller computes the next ones.
    Messages keep their order; a failure of the writer comes back as a ``BagError`` at the
    next ``connection`` or at ``finish``. ``connection`` gives the output connection's
    number, which ``write`` takes.

    ``with BagOutput(...) as out:`` finishes the bag when the block ends and aborts it when
    the block (or ``finish``) raises, Ctrl-C included."""

    def __init__(
        self,
        path: Path,
        storage: str,
        force: bool,
        process: subprocess.Popen[bytes] | None = None,
        compression: Compression | None = None,
        source: Path | None = None,
    ) -> None:
        """``process``: a writing process ``start_writer`` started (so its start-up overlaps
        the caller's), which this output then owns; None: one is started here.
        ``compression``: the output's (rosbags' ``set_compression``), None for none.
        ``source``: the input bag (``bag_location``), which ``finish`` never removes, whatever
        took the output's name since it was checked."""
        rosbags_installed()
        #: The input's (device, inode), None where there is none.
        self._source: tuple[int, int] | None = None
        if source is not None:
            with contextlib.suppress(OSError):
                info = os.stat(source)
                self._source = (info.st_dev, info.st_ino)
        refusal = replacement_refusal(path, force)
        if refusal is not None:
            if process is not None:
                stop_writer(process)
            raise BagError(refusal)
        self.path = path
        self.force = force
        #: The hidden folder the bag is written in (``_new_partial``, made below).
        self.partial: Path
        #: After ``finish``: what of the replaced bag could not be removed, and where it is
        #: (a line for the user), or None.
        self.left_behind: str | None = None
        self._connections: dict[tuple[Any, ...], int] = {}
        self._batch: list[tuple[int, int, bytes | memoryview]] = []
        #: Bytes of the messages in ``_batch``; batches sent so far.
        self._batch_size = 0
        self.batches_sent = 0
        #: The topic of each output connection's number (for what a refusal names).
        self._topics: dict[int, str] = {}
        #: The writing process (``writer_process``).
        self.process = process or start_writer()
        assert self.process.stdin is not None and self.process.stdout is not None
        self._requests: IO[bytes] = self.process.stdin
        self._answers: IO[bytes] = self.process.stdout
        try:
            self.partial = _new_partial(path)
        except OSError as exc:
            stop_writer(self.process)
            raise BagError(f"{path}: cannot write the bag: {exc}") from None
        try:
            wanted = None if compression is None else (compression.mode, compression.format)
            self._call("open", str(self.partial / path.name), storage, wanted)
        except BaseException:  # Ctrl-C too, while the writing process starts: nothing left
            self.abort()
            raise

    def __enter__(self) -> BagOutput:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exception: object) -> None:
        """``finish``, or ``abort`` where the block raised (a ``kind`` of exception) or
        ``finish`` did."""
        if kind is not None:
            self.abort()
            return
        try:
            self.finish()
        except BaseException:
            self.abort()
            raise

    def _call(self, name: str, *arguments: Any) -> Any:
        """``name(*arguments)`` in the writing process after what is queued, its answer;
        BagError naming the output if it, or a write before it, failed."""
        self._send()
        try:
            write_frame(self._requests, CALL, pickle.dumps((name, arguments)))
            self._requests.flush()
            frame = read_frame(self._answers)
        except (BrokenPipeError, OSError) as exc:
            raise BagError(f"{self.path}: cannot write the bag: {exc}") from None
        if frame is None:
            raise BagError(f"{self.path}: cannot write the bag: the writing process ended")
        tag, payload = frame
        if tag != ANSWER:
            raise BagError(f"{self.path}: cannot write the bag: {payload.decode()}")
        return pickle.loads(payload)

    def _send(self) -> None:
        """The messages queued so far to the writing process."""
        if self._batch:
            try:
                write_frame(self._requests, BATCH, batch_bytes(self._batch))
            except (BrokenPipeError, OSError) as exc:
                raise BagError(f"{self.path}: cannot write the bag: {exc}") from None
            self._batch = []
            self._batch_size = 0
            self.batches_sent += 1

    def connection(self, topic: BagTopic) -> int:
        """The number of the output connection of ``topic`` (one per distinct name, type,
        serialization format and QoS: a bag's several recorded connections of one topic stay
        several; the first description's definition for later equal ones)."""
        key = (topic.name, topic.msgtype, topic.serialization_format, topic.profiles)
        found = self._connections.get(key)
        if found is None:
            keywords: dict[str, Any] = {
                "serialization_format": topic.serialization_format,
                "offered_qos_profiles": list(topic.profiles),
            }
            if topic.msgdef is not None:
                keywords.update(msgdef=topic.msgdef, rihs01=topic.digest or "unknown")
            found = self._call("connection", topic.name, topic.msgtype, keywords)
            self._connections[key] = found
            self._topics[found] = topic.name
        return found

    def write(self, connection: int, time_ns: int, data: bytes | memoryview) -> None:
        """Queue the message for connection number ``connection``; written in order, sent
        in batches of at most ``WRITE_BATCH`` messages and ``WRITE_BATCH_BYTES`` bytes (a
        larger message alone). BagError naming the topic for a message over
        ``MAX_MESSAGE_BYTES``."""
        size = len(data)
        if size > MAX_MESSAGE_BYTES:
            raise BagError(
                f"{self.path}: a message of {self._topics.get(connection, '?')} is {size} bytes, "
                f"more than the {MAX_MESSAGE_BYTES} a bag's message holds"
            )
        if self._batch and self._batch_size + size > WRITE_BATCH_BYTES:
            self._send()
        batch = self._batch
        batch.append((connection, time_ns, data))
        self._batch_size += size
        if len(batch) >= WRITE_BATCH or self._batch_size >= WRITE_BATCH_BYTES:
            self._send()

    def finish(self) -> None:
        """Write what is queued, close the bag and give it its name (replacing what was
        there with ``force``)."""
        self._call("close")
        stop_writer(self.process)
        # again, as given: it may have changed (without ``force``, a bag that took the name
        # meanwhile, another repair's or a recorder's, is no more the user's to replace)
        refusal = replacement_refusal(self.path, self.force)
        if refusal is not None:
            raise BagError(refusal)
        replaced = self.partial / f"replaced-{self.path.name}"  # what the output replaces
        moved = False  # whether the old bag is at ``replaced`` (not another's of that name)
        # the command's stops are held over each rename (``STOPS``): one raised as the rename
        # returns, before what it did was noted, had ``abort`` remove the new bag with the old
        # one moved aside (neither at the name), or put the old bag back over the new one
        # (refused: "changed while the bag was written", exit 1), or end before the removal
        # said a word
        try:
            if self.force and (self.path.exists() or self.path.is_symlink()):  # moved aside
                STOPS.hold()
                os.replace(self.path, replaced)  # first, so the name is never empty
                moved = True
                STOPS.release()  # a stop meanwhile: raised here, the old bag goes back
                # what was moved is checked, not what was there before: a swap since the
                # check (a symlink to the input, another folder, the input renamed) goes back
                refusal = replacement_refusal(replaced, force=True) or self._holds_input(replaced)
                if refusal is not None:
                    moved = False
                    self._put_back(replaced)
                    raise BagError(refusal.replace(str(replaced), str(self.path)))
            STOPS.hold()  # released in ``_remove_partial``'s try, where a stop is said
            rename_to_free_name(self.partial / self.path.name, self.path)
        except BaseException as exc:  # Ctrl-C too: the old bag is never lost with the new one
            try:
                if moved:  # the new bag did not take its place: the old one goes back
                    self._put_back(replaced)
                if isinstance(exc, OSError):
                    raise BagError(f"{self.path}: cannot write the bag: {exc}") from None
                raise
            finally:
                STOPS.release()
        self._remove_partial(replaced if moved else None)

    def _remove_partial(self, replaced: Path | None) -> None:
        """The partial folder removed, with the bag the output ``replaced`` (checked, moved
        into it; None: none), and nothing else (a file another put there stays, even one
        named as the old bag). The output is in place by now: what cannot be removed is no
        failure; it stays in the partial folder, said in ``left_behind``. A stop (Ctrl-C,
        SIGTERM) while the old bag is removed, or held (``STOPS``) while the new bag took the
        name, ends the removal, said there too where anything is left, and goes on
        up: the process ends as stopped, with the new bag in place."""
        try:
            STOPS.release()
            if replaced is not None:
                shutil.rmtree(replaced)
            self.partial.rmdir()
        except (OSError, RecursionError) as exc:  # rmtree recurses per folder level
            self.left_behind = self._left_behind(str(exc))
        except BaseException:
            try:  # a stop after the last of the old bag went leaves nothing to say
                self.partial.rmdir()
            except FileNotFoundError:  # the stop came after the rmdir
                pass
            except OSError:
                self.left_behind = self._left_behind("stopped")
            raise

    def _left_behind(self, reason: str) -> str:
        """The line that says the output is written and where the rest of the partial folder
        is, which ``reason`` kept there."""
        return (
            f"{self.path}: written, but its partial folder was not removed entirely "
            f"({reason}): what is left is in {self.partial}"
        )

    def _holds_input(self, folder: Path) -> str | None:
        """Why ``folder`` must not be removed: it is the input bag or holds it, at any depth
        (walked by descriptors, as ``rmtree`` removes: a path longer than PATH_MAX is no
        blind spot), or holds a folder that cannot be searched (mode ``r--``, or nested
        deeper than Python recurses: the input could be in it); else None."""
        if self._source is None:
            return None

        def unsearchable(exc: OSError) -> None:
            raise exc

        try:  # symlinks not followed; a folder that cannot be opened or searched is no answer
            for _, folders, files, here in os.fwalk(folder, onerror=unsearchable):
                for name in (".", *folders, *files):
                    try:
                        info = os.stat(name, dir_fd=here, follow_symlinks=False)
                    except FileNotFoundError:  # gone since it was listed
                        continue
                    if (info.st_dev, info.st_ino) == self._source:
                        return (
                            f"{self.path}: the output is now the input bag or holds it (it "
                            "changed after it was checked): left as it is"
                        )
        except (OSError, RecursionError) as exc:  # os.fwalk recurses per folder level
            return (
                f"{self.path}: the output holds what cannot be searched for the input bag "
                f"({exc}): left as it is"
            )
        return None

    def _put_back(self, replaced: Path) -> None:
        """``replaced`` moved back to the output's name; where something took that name
        since, kept where it is (``abort`` leaves the partial folder holding it) and said."""
        try:
            rename_to_free_name(replaced, self.path)
        except OSError:
            raise BagError(
                f"{self.path}: changed while the bag was written; what was there is kept in "
                f"{replaced}"
            ) from None

    def abort(self) -> None:
        """Remove the partial bag (what is queued is dropped), and the partial folder where
        nothing else is in it: an old bag that could not go back, or what another put there,
        stays."""
        self._batch = []
        self._batch_size = 0
        stop_writer(self.process)
        shutil.rmtree(self.partial / self.path.name, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.partial.rmdir()


def rename_to_free_name(source: Path, target: Path) -> None:
    """``source`` renamed to ``target`` only where nothing has that name: FileExistsError
    otherwise (``os.rename`` replaces a file or an empty folder without a word, so what took
    the name after it was checked was lost). The check comes just before the rename: what
    takes the name between the two (microseconds) is still replaced; Python offers no rename
    that refuses a taken name (Linux's ``renameat2`` flag has no binding in ``os``)."""
    if os.path.lexists(target):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(target))
    os.rename(source, target)


#: How many partial folders of one output ``_new_partial`` tries beside those already there.
MAX_PARTIAL_TRIES = 100


def _new_partial(path: Path) -> Path:
    """A new hidden folder beside ``path`` to write its bag in, made here (owner only):
    ``.NAME.partial-PID``, or ``-PID-1``, ``-PID-2``... where that name is taken. One of that
    name is never removed: it may be an earlier repair's (a process of the same PID, as in a
    container whose every run has the same one) holding what it kept and named, or a live
    repair's (another PID namespace sharing the folder). OSError where none can be made."""
    base = f".{path.name}.partial-{os.getpid()}"
    for attempt in range(MAX_PARTIAL_TRIES):
        partial = path.parent / (base if attempt == 0 else f"{base}-{attempt}")
        try:
            partial.mkdir(mode=0o700)
        except FileExistsError:  # a folder, file or symlink of that name: not ours
            continue
        return partial
    raise FileExistsError(
        errno.EEXIST, f"{MAX_PARTIAL_TRIES} partial folders {base}[-N] are there already"
    )


def replacement_refusal(path: Path, force: bool) -> str | None:
    """Why the output ``path`` cannot be written, or None: it exists and ``force`` is not
    given, or it is anything but a bag folder (``is_rosbag2_bag``): ``--force`` replaces a
    bag, never another file or folder."""
    if not (path.exists() or path.is_symlink()):
        return None
    if not force:
        return f"{path} exists: give another output or --force to replace it"
    if not is_rosbag2_bag(path):
        return (
            f"{path} exists and is not a rosbag2 bag (a folder with the metadata.yaml rosbag2 "
            "writes): --force replaces only a bag; give another output"
        )
    return None
