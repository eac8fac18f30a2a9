"""rosbag2 bags in and out, through ``rosbags`` (imported here, when a command runs).

``open_bag`` reads a bag folder (``metadata.yaml`` and its files, several included) or a bare
``.db3`` or ``.mcap`` file; ``BagOutput`` writes a new bag into a folder beside the output
and renames it to the output only when it is complete, so an interrupted or failed repair
never leaves something that looks like a finished bag. Every failure is a ``BagError`` whose
text names the bag and the reason.

The QoS written for ``/tf`` and ``/tf_static`` are the node's (``ros/qos.py``, ``tf_qos``
and ``tf_static_qos``; a test compares them), so ``ros2 bag play`` offers ``/tf_static``
reliable and transient local: a late subscriber gets the statics, as from the node.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import shutil
import stat
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rosbags.interfaces import Connection, Qos
    from rosbags.rosbag2 import Reader

#: How to install what the bag commands need, in one line.
INSTALL_HINT = (
    "the bag commands need the rosbags library: pip install rosbags "
    "(or pip install 'joint_tf_publisher[bag]')"
)
#: A bag folder's description of itself, and the key rosbag2 writes at its top.
METADATA = "metadata.yaml"
METADATA_KEY = "rosbag2_bagfile_information"
#: Largest metadata.yaml read to decide whether a folder is a bag (a split bag of a long
#: recording lists thousands of files in a few hundred KB).
MAX_METADATA_BYTES = 16 * 1024 * 1024
#: The storages ``--storage`` takes, as rosbag2 names them.
STORAGES = ("sqlite3", "mcap")
#: History depths of ``/tf`` and ``/tf_static`` (``ros/qos.py``'s ``TF_DEPTH`` and
#: ``latched_qos``).
TF_DEPTH = 100
TF_STATIC_DEPTH = 1
#: The ROS 2 type names of the messages the repair writes.
TF_MESSAGE = "tf2_msgs/msg/TFMessage"
STRING = "std_msgs/msg/String"
JOINT_STATE = "sensor_msgs/msg/JointState"
MULTI_DOF_JOINT_STATE = "sensor_msgs/msg/MultiDOFJointState"
DIAGNOSTIC_ARRAY = "diagnostic_msgs/msg/DiagnosticArray"


class BagError(RuntimeError):
    """A bag that cannot be read or written; the text says which and why (exit status 1)."""


def rosbags_installed() -> None:
    """BagError with ``INSTALL_HINT`` unless rosbags imports."""
    try:
        import rosbags.rosbag2  # noqa: F401
    except ImportError:
        raise BagError(INSTALL_HINT) from None


def storage_of(path: Path) -> str:
    """``sqlite3`` or ``mcap``: the storage of the bag at ``path`` (its files' suffixes: a
    file rosbag2 compressed whole is ``NAME.mcap.zstd``)."""
    files = [path] if path.is_file() else sorted(path.iterdir())
    return "mcap" if any(".mcap" in file.suffixes for file in files) else "sqlite3"


@dataclass(frozen=True)
class Compression:
    """A rosbag2 bag's compression: ``mode`` ``file`` (each file compressed whole) or
    ``message`` (each message), as its metadata.yaml names them, or ``storage`` (the
    storage's own: MCAP's compressed chunks); ``format`` ``zstd``."""

    mode: str
    format: str


#: MCAP's chunks compressed with zstd: what rosbag2's MCAP plugin writes by default (libmcap's
#: writer options, which its ``none`` preset leaves as they are).
MCAP_CHUNKS = Compression("storage", "zstd")


def output_compression(given: Compression | None, storage: str) -> Compression | None:
    """The compression of a bag written in ``storage`` from one compressed ``given``: the
    input's rosbag2 compression where it has one (a compressed recording stays compressed
    alike), else MCAP's zstd chunks for MCAP (rosbag2's default; about a third of the bytes
    for joint states and their TF), else none (sqlite3 has no compression of its own)."""
    if given is not None:
        return given
    return MCAP_CHUNKS if storage == "mcap" else None


@dataclass
class InputBag:
    """An open bag: its reader, path and storage."""

    reader: Reader
    path: Path
    storage: str

    @property
    def compression(self) -> Compression | None:
        """The bag's compression (None: none, or the storage's own, as MCAP's chunks)."""
        mode, fmt = self.reader.compression_mode, self.reader.compression_format
        return Compression(mode, fmt) if mode and fmt else None

    @property
    def connections(self) -> list[Connection]:
        return list(self.reader.connections)

    def of_topic(self, topic: str) -> list[Connection]:
        """The bag's connections of ``topic``."""
        return [c for c in self.reader.connections if c.topic == topic]

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
    from ...description.files import read_regular_file
    from ...errors import ModelError

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
    from ...description.files import read_regular_file
    from ...errors import ModelError

    if not path.is_dir():
        return [path]
    metadata = path / METADATA
    try:
        text = read_regular_file(metadata, MAX_METADATA_BYTES)
    except ModelError as exc:
        raise BagError(f"cannot read the bag: {exc}") from None
    try:
        import yaml

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


def qos(depth: int, transient_local: bool) -> Qos:
    """Keep last ``depth``, reliable, volatile or transient local; the rest at the defaults."""
    from rosbags.interfaces import (
        Qos,
        QosDurability,
        QosHistory,
        QosLiveliness,
        QosReliability,
        QosTime,
    )

    zero = QosTime(0, 0)
    durability = QosDurability.TRANSIENT_LOCAL if transient_local else QosDurability.VOLATILE
    return Qos(
        QosHistory.KEEP_LAST,
        depth,
        QosReliability.RELIABLE,
        durability,
        zero,
        zero,
        QosLiveliness.AUTOMATIC,
        zero,
        False,
    )


def tf_qos() -> Qos:
    """``/tf`` as the node publishes it: keep last 100, reliable, volatile."""
    return qos(TF_DEPTH, transient_local=False)


def tf_static_qos() -> Qos:
    """``/tf_static`` (and ``robot_description``) as the node publishes it: keep last 1,
    reliable, transient local."""
    return qos(TF_STATIC_DEPTH, transient_local=True)


def is_latched(profiles: Sequence[Qos]) -> bool:
    """Whether ``ros2 bag play`` offers a topic recorded with ``profiles`` transient local:
    every profile recorded is (none recorded: it plays volatile)."""
    from rosbags.interfaces import QosDurability

    return bool(profiles) and all(p.durability is QosDurability.TRANSIENT_LOCAL for p in profiles)


#: Messages sent to the writing process at a time, at most (a few MB of joint states and TF:
#: memory stays flat).
WRITE_BATCH = 256
#: Bytes of messages sent to the writing process at a time, at most (a batch of camera
#: images is sent at this size, not at 256 of them: 6 MB images were 1.5 GB a batch); a
#: message larger than this alone is a batch of its own.
WRITE_BATCH_BYTES = 8 * 1024 * 1024
#: The largest message the pipe to the writing process carries: its length is a uint32 in
#: the batch (``writer_process.MESSAGE``), and rosbag2's own formats hold no more either.
MAX_MESSAGE_BYTES = 2**32 - 1
#: Bytes the pipe to the writing process holds (Linux; the system's default otherwise).
PIPE_BYTES = 1 << 20


class BagOutput:
    """A new bag written beside ``path`` and renamed to ``path`` by ``finish``: written as
    ``path.name`` inside a hidden partial folder (so its files are named as the bag's,
    ``NAME.db3`` or ``NAME.mcap``, and ``metadata.yaml`` lists them so); ``abort`` removes
    the partial folder. ``force``: an existing ``path`` is replaced at the rename, not
    before.

    rosbags' writer runs in a child process (``writer_process``), fed through a pipe in
    batches of ``WRITE_BATCH`` messages or ``WRITE_BATCH_BYTES`` bytes, whichever comes
    first: it writes while the caller computes the next ones.
    Messages keep their order; a failure of the writer comes back as a ``BagError`` at the
    next ``connection`` or at ``finish``. ``connection`` gives the output connection's
    number, which ``write`` takes."""

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
        self.partial = path.parent / f".{path.name}.partial-{os.getpid()}"
        if self.partial.exists():
            shutil.rmtree(self.partial)
        #: Whether ``abort`` leaves the partial folder (it holds what took the output's name).
        self.keep_partial = False
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
            self.partial.mkdir()
        except OSError as exc:
            stop_writer(self.process)
            raise BagError(f"{path}: cannot write the bag: {exc}") from None
        try:
            wanted = None if compression is None else (compression.mode, compression.format)
            self._call("open", str(self.partial / path.name), storage, wanted)
        except BagError:
            self.abort()
            raise

    def _call(self, name: str, *arguments: Any) -> Any:
        """``name(*arguments)`` in the writing process after what is queued, its answer;
        BagError naming the output if it, or a write before it, failed."""
        from .writer_process import ANSWER, CALL, read_frame, write_frame

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
        from .writer_process import BATCH, batch_bytes, write_frame

        if self._batch:
            try:
                write_frame(self._requests, BATCH, batch_bytes(self._batch))
            except (BrokenPipeError, OSError) as exc:
                raise BagError(f"{self.path}: cannot write the bag: {exc}") from None
            self._batch = []
            self._batch_size = 0
            self.batches_sent += 1

    def connection(
        self,
        topic: str,
        msgtype: str,
        msgdef: str | None,
        digest: str,
        profiles: Sequence[Qos],
        serialization_format: str = "cdr",
    ) -> int:
        """The number of the output connection of ``topic`` with this type, definition and
        QoS (one per distinct set: a bag's several recorded connections of one topic stay
        several). ``msgdef`` None: rosbags' own definition and hash of ``msgtype``
        (``types.typestore``, loaded in the writing process; ``digest`` unused)."""
        key = (topic, msgtype, serialization_format, tuple(profiles))
        found = self._connections.get(key)
        if found is None:
            keywords: dict[str, Any] = {
                "serialization_format": serialization_format,
                "offered_qos_profiles": list(profiles),
            }
            if msgdef is not None:
                keywords.update(msgdef=msgdef, rihs01=digest or "unknown")
            found = self._connections[key] = self._call("connection", topic, msgtype, keywords)
            self._topics[found] = topic
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
        refusal = replacement_refusal(self.path, force=True)  # again: it may have changed
        if refusal is not None:
            raise BagError(refusal)
        try:
            if self.path.exists() or self.path.is_symlink():  # moved aside first, so the
                replaced = self.partial / f"replaced-{self.path.name}"  # name is never empty
                os.replace(self.path, replaced)
                # what was moved is checked, not what was there before: a swap since the
                # check (a symlink to the input, another folder, the input renamed) goes back
                refusal = replacement_refusal(replaced, force=True) or self._holds_input(replaced)
                if refusal is not None:
                    self._put_back(replaced)
                    raise BagError(refusal.replace(str(replaced), str(self.path)))
                os.replace(self.partial / self.path.name, self.path)
                shutil.rmtree(replaced)
            else:
                os.replace(self.partial / self.path.name, self.path)
            self.partial.rmdir()
        except OSError as exc:
            raise BagError(f"{self.path}: cannot write the bag: {exc}") from None

    def _holds_input(self, folder: Path) -> str | None:
        """Why ``folder`` must not be removed: it is the input bag or holds it; else None."""
        if self._source is None:
            return None
        for root, folders, files in os.walk(folder):  # symlinks not followed
            for name in (".", *folders, *files):
                with contextlib.suppress(OSError):
                    info = os.stat(os.path.join(root, name), follow_symlinks=False)
                    if (info.st_dev, info.st_ino) == self._source:
                        return (
                            f"{self.path}: the output is now the input bag or holds it (it "
                            "changed after it was checked): left as it is"
                        )
        return None

    def _put_back(self, replaced: Path) -> None:
        """``replaced`` moved back to the output's name; where something took that name
        since, kept where it is (``abort`` then leaves the partial folder) and said."""
        try:
            if self.path.exists() or self.path.is_symlink():
                raise FileExistsError(self.path)
            os.rename(replaced, self.path)
        except OSError:
            self.keep_partial = True
            raise BagError(
                f"{self.path}: changed while the bag was written; what was there is kept in "
                f"{replaced}"
            ) from None

    def abort(self) -> None:
        """Remove the partial bag (what is queued is dropped)."""
        self._batch = []
        self._batch_size = 0
        stop_writer(self.process)
        if not self.keep_partial:
            shutil.rmtree(self.partial, ignore_errors=True)


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


def stop_writer(process: subprocess.Popen[bytes]) -> None:
    """A writing process ended and waited for: its pipe closed (after what it was sent; at
    the pipe's end it closes its bag as it is) and the process reaped."""
    if process.stdin is not None:
        with contextlib.suppress(OSError):  # the process is gone already
            process.stdin.close()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


def start_writer() -> subprocess.Popen[bytes]:
    """A writing process (``writer_process``), this package importable in it, for a
    ``BagOutput`` to take (else ``stop_writer``)."""
    from ...child_process import python_command  # isolated from the caller's folder

    child = subprocess.Popen(
        python_command("joint_tf_publisher.cli.bag.writer_process"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        import fcntl

        fcntl.fcntl(child.stdin.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)  # type: ignore[union-attr]
    except (ImportError, AttributeError, OSError):  # not Linux, or above the system's limit
        pass
    return child
