"""The process that writes a repaired bag: rosbags' ``Writer`` fed through a pipe, the
protocol on the pipe, and the parent's control of the process (``start_writer``,
``stop_writer``). Imports ``types`` (the type store) and the package's child command line;
rosbags in the child.

``bag repair`` spends about as long writing (rosbags' writer: sqlite3 or MCAP, a Python
call and an ``INSERT`` per message) as reading and computing; in one process those add up,
and a thread does not help (the writer's Python half holds the GIL). So ``BagOutput``
(``writer``) starts this module's ``main`` in a child process and sends it the
messages; the child writes them while the repair computes the next ones, on the other core.

The protocol, on the child's stdin (requests) and stdout (answers), each frame a tag byte,
a little-endian uint64 length, then that many bytes:

- ``B`` (a batch of messages, no answer): a little-endian uint32 count, then per message
  its output connection's number (uint32), log time (int64, ns) and length (uint32), then
  the messages' bytes one after the other;
- ``C`` (a call, answered): a pickled tuple ``(name, arguments)``: ``open`` (path, storage,
  compression), ``connection`` (rosbags' ``add_connection`` arguments; answer: the
  connection's number), ``close`` (answer: None, the bag complete);
- the answer: ``O`` and the pickled result, or ``E`` and the failure's text (a failure
  while writing a batch is answered at the next call; batches after it are dropped);
- the pipe's end (the parent closes it) or a frame cut short: the bag closed as it is (the
  parent removes an aborted bag's folder), the child ends.

Only rosbags' public API is used. Messages keep their order (one pipe, one writer).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ...child_process import python_command
from .types import typestore

if TYPE_CHECKING:
    from rosbags.interfaces import Connection
    from rosbags.rosbag2 import Writer

#: A frame's head: its tag (one byte) and its length (bytes).
FRAME = struct.Struct("<cQ")
#: A batch's count, then each message's head: connection number, log time (ns), length.
COUNT = struct.Struct("<I")
MESSAGE = struct.Struct("<IqI")
BATCH, CALL, ANSWER, FAILURE = b"B", b"C", b"O", b"E"
#: Frames read ahead of the writer (memory: a few batches).
READ_AHEAD = 2
#: The largest message the pipe carries: its length is a uint32 in the batch (``MESSAGE``),
#: and rosbag2's own formats hold no more either.
MAX_MESSAGE_BYTES = 2**32 - 1
#: Bytes the pipe to the writing process holds (Linux; the system's default otherwise).
PIPE_BYTES = 1 << 20


def write_frame(stream: IO[bytes], tag: bytes, payload: bytes | bytearray | memoryview) -> None:
    """One frame on ``stream`` (not flushed)."""
    stream.write(FRAME.pack(tag, len(payload)))
    stream.write(payload)


def read_frame(stream: IO[bytes]) -> tuple[bytes, bytes] | None:
    """The next frame of ``stream``: (tag, payload); None at its end."""
    head = stream.read(FRAME.size)
    if len(head) < FRAME.size:
        return None
    tag, length = FRAME.unpack(head)
    payload = stream.read(length)
    if len(payload) < length:
        return None
    return tag, payload


def batch_bytes(messages: list[tuple[int, int, bytes | memoryview]]) -> bytes:
    """A batch frame's payload for ``messages`` (connection number, log time, bytes)."""
    heads = b"".join(MESSAGE.pack(number, time_ns, len(data)) for number, time_ns, data in messages)
    return b"".join([COUNT.pack(len(messages)), heads, *(data for _, _, data in messages)])


def batch_messages(payload: bytes) -> list[tuple[int, int, memoryview]]:
    """``batch_bytes``' messages back (their bytes as views into ``payload``)."""
    (count,) = COUNT.unpack_from(payload)
    view = memoryview(payload)
    start = COUNT.size + count * MESSAGE.size
    found = []
    for number, time_ns, length in MESSAGE.iter_unpack(view[COUNT.size : start]):
        found.append((number, time_ns, view[start : start + length]))
        start += length
    return found


# -- the parent's side: the process started and stopped --------------------------------------


def start_writer() -> subprocess.Popen[bytes]:
    """A writing process (this module's ``main``), this package importable in it (isolated
    from the caller's folder), for a ``BagOutput`` to take (else ``stop_writer``). In a
    session of its own: a terminal's Ctrl-C is the parent's, which ends it through its pipe
    (its own ``SIG_IGN`` comes too late for one during its interpreter's start-up: a
    traceback of the child's, under the parent's exit 130)."""
    child = subprocess.Popen(
        python_command("joint_tf_publisher.cli.bag.writer_process"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        import fcntl

        fcntl.fcntl(child.stdin.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)  # type: ignore[union-attr]
    except (ImportError, AttributeError, OSError):  # not Linux, or above the system's limit
        pass
    return child


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


# -- the child's side ----------------------------------------------------------------------


class WriterServer:
    """The child's side: one rosbags ``Writer`` and the calls and batches it is sent."""

    def __init__(self) -> None:
        self.writer: Writer | None = None
        self.connections: dict[int, Connection] = {}
        self.failure: str | None = None

    def open(self, path: str, storage: str, compression: tuple[str, str] | None) -> None:
        """rosbags' ``Writer`` at ``path``; ``compression``: (mode, format) as metadata.yaml
        names them (``message``, ``zstd``), None for none."""
        from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer

        plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
        writer = Writer(Path(path), version=Writer.VERSION_LATEST, storage_plugin=plugin)
        if compression is not None:
            mode, fmt = compression
            writer.set_compression(CompressionMode[mode.upper()], CompressionFormat[fmt.upper()])
        writer.open()
        self.writer = writer

    def connection(self, topic: str, msgtype: str, keywords: dict[str, Any]) -> int:
        """rosbags' ``add_connection``; its own definition of ``msgtype`` where ``keywords``
        give none."""
        assert self.writer is not None
        if "msgdef" not in keywords:
            keywords = {**keywords, "typestore": typestore()}
        connection = self.writer.add_connection(topic, msgtype, **keywords)
        self.connections[connection.id] = connection
        return connection.id

    def write(self, payload: bytes) -> None:
        if self.failure is not None:
            return
        assert self.writer is not None
        write, connections = self.writer.write, self.connections
        try:
            for number, time_ns, data in batch_messages(payload):
                write(connections[number], time_ns, data)
        except Exception as exc:  # answered at the next call
            self.failure = f"{type(exc).__name__}: {exc}"

    def close(self) -> None:
        assert self.writer is not None
        writer, self.writer = self.writer, None
        writer.close()

    def abort(self) -> None:
        """The writer closed as it is, unless ``close`` closed it (the caller removes an
        aborted bag's folder)."""
        writer, self.writer = self.writer, None
        if writer is not None:
            try:
                writer.close()
            except Exception:  # broken already
                pass

    def call(self, name: str, arguments: tuple[Any, ...]) -> Any:
        if self.failure is not None:
            raise RuntimeError(self.failure)
        return getattr(self, name)(*arguments)


def serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """Take frames from ``requests`` until their end, answering on ``answers``; then the
    bag closed as it is."""
    server = WriterServer()
    frames: queue.Queue[tuple[bytes, bytes] | None] = queue.Queue(READ_AHEAD)

    def receive() -> None:  # the pipe read while the writer writes (both release the GIL)
        while True:
            frame = read_frame(requests)
            frames.put(frame)
            if frame is None:
                return

    receiver = threading.Thread(target=receive, name="bag-receive", daemon=True)
    receiver.start()
    try:
        _serve(server, frames, answers)
    finally:
        server.abort()
        while receiver.is_alive():  # until the parent closes the pipe (no exit while it
            try:  # reads stdin: the interpreter would abort at its end)
                frames.get(timeout=0.1)
            except queue.Empty:
                pass


def _serve(
    server: WriterServer,
    frames: queue.Queue[tuple[bytes, bytes] | None],
    answers: IO[bytes],
) -> None:
    """``serve``'s loop: the frames read, until the pipe's end or a frame cut short."""
    while True:
        frame = frames.get()
        if frame is None:
            return
        tag, payload = frame
        if tag == BATCH:
            server.write(payload)
            continue
        try:
            name, arguments = pickle.loads(payload)
        except Exception:  # a frame cut short (the parent interrupted): the end
            return
        try:
            result = server.call(name, arguments)
        except Exception as exc:
            write_frame(answers, FAILURE, str(exc).encode() or type(exc).__name__.encode())
        else:
            write_frame(answers, ANSWER, pickle.dumps(result))
        answers.flush()


def main() -> None:
    """The child: frames on stdin, answers on stdout; Ctrl-C is the parent's to handle. The
    type store is loaded first: the parent reads the description meanwhile. A parent gone
    (its answers' pipe closed) ends it quietly (its bag closed as it is)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    typestore()
    try:
        serve(sys.stdin.buffer, sys.stdout.buffer)
    except BrokenPipeError:  # the parent is gone (killed): no one to answer, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    # ``start_writer`` runs this file as ``__main__``: the module itself (imported by its name,
    # as the parent's copy is) does the work, so that the process holds one copy of it, whose
    # functions are named as imported (make mutate's mutants switch on by that name).
    from joint_tf_publisher.cli.bag import writer_process

    writer_process.main()
