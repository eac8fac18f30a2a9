"""``BagOutput``'s writing process (``writer_process``): what it is sent comes out in order,
byte for byte, in both storages; a failure in it, or its death, is a ``BagError`` naming the
output, and ``abort`` leaves nothing behind; the process a repair starts early ends with a
repair that fails before writing."""

from __future__ import annotations

import errno
import io
import os
import pickle
import queue
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from bag_maker import recording
from repo_paths import REPO_ROOT
from rosbags.rosbag2 import Reader

from joint_tf_publisher.child_process import python_command
from joint_tf_publisher.cli.bag import writer, writer_process
from joint_tf_publisher.cli.bag.errors import BagError
from joint_tf_publisher.cli.bag.qos import tf_qos
from joint_tf_publisher.cli.bag.repair import Repair, RepairOptions
from joint_tf_publisher.cli.bag.settings import (
    MCAP_CHUNKS,
    WRITE_BATCH,
    WRITE_BATCH_BYTES,
    Compression,
)
from joint_tf_publisher.cli.bag.writer import BagOutput, BagTopic, is_rosbag2_bag
from joint_tf_publisher.cli.bag.writer_process import (
    ANSWER,
    BATCH,
    CALL,
    MAX_MESSAGE_BYTES,
    batch_bytes,
    batch_messages,
    read_frame,
    serve,
    start_writer,
    stop_writer,
    write_frame,
)

DEFINITION = "string data\n"


def messages_of(count: int) -> list[tuple[int, bytes]]:
    """``count`` messages of different lengths (empty included), log times out of order."""
    return [((count - k) * 1000 + k % 3, bytes([k % 251]) * (k * 37 % 5000)) for k in range(count)]


def test_a_frame_cut_short_reads_as_the_pipes_end() -> None:
    """The protocol's frame (a tag byte, a little-endian uint64 length, the payload) reads
    back whole; cut anywhere (in its head or its payload: a writer interrupted mid-frame),
    it reads as the stream's end does (None), which the writing process takes as the pipe's
    end: its bag closed as it is."""
    stream = io.BytesIO()
    write_frame(stream, CALL, b"payload")
    whole = stream.getvalue()
    assert whole == b"C" + (7).to_bytes(8, "little") + b"payload"
    assert read_frame(io.BytesIO(whole)) == (CALL, b"payload")
    assert [cut for cut in range(len(whole)) if read_frame(io.BytesIO(whole[:cut]))] == []


def test_a_batch_round_trips() -> None:
    sent = [(1, -5, b""), (7, 2**62, b"abc"), (65535, 0, bytes(range(256)) * 9)]
    assert [(n, t, bytes(d)) for n, t, d in batch_messages(batch_bytes(sent))] == sent


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_what_is_written_comes_out_in_order_byte_for_byte(tmp_path: Path, storage: str) -> None:
    wanted = messages_of(3 * WRITE_BATCH + 5)  # several batches and a partial one
    out = BagOutput(tmp_path / "out", storage, force=False)
    first = out.connection(BagTopic("/a", "std_msgs/msg/String", (tf_qos(),), msgdef=DEFINITION))
    second = out.connection(BagTopic("/b", "std_msgs/msg/String", msgdef=DEFINITION))
    assert (
        out.connection(BagTopic("/a", "std_msgs/msg/String", (tf_qos(),), msgdef=DEFINITION))
        == first
    )
    for k, (time_ns, data) in enumerate(wanted):
        out.write(first if k % 2 else second, time_ns, data)
    out.finish()
    assert out.process.returncode == 0
    with Reader(tmp_path / "out") as reader:
        found = [(c.topic, t, d) for c, t, d in reader.messages()]
    expected = [("/a" if k % 2 else "/b", t, d) for k, (t, d) in enumerate(wanted)]
    assert found == sorted(expected, key=lambda m: m[1])
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_connection_without_a_definition_gets_rosbags_own(tmp_path: Path) -> None:
    from joint_tf_publisher.cli.bag.types import typestore

    out = BagOutput(tmp_path / "out", "mcap", force=False)
    out.connection(BagTopic("/tf", "tf2_msgs/msg/TFMessage", (tf_qos(),)))
    out.finish()
    store = typestore()
    with Reader(tmp_path / "out") as reader:
        (connection,) = reader.connections
    definition, _ = store.generate_msgdef("tf2_msgs/msg/TFMessage", ros_version=2)
    assert connection.msgdef.data == definition and "geometry_msgs/TransformStamped" in definition
    assert connection.digest == store.hash_rihs01("tf2_msgs/msg/TFMessage")


def test_a_failed_write_is_a_bag_error_at_finish(tmp_path: Path) -> None:
    out = BagOutput(tmp_path / "out", "sqlite3", force=False)
    topic = out.connection(BagTopic("/a", "std_msgs/msg/String", msgdef=DEFINITION))
    out.write(topic, 1, b"x")
    out.write(topic + 100, 2, b"y")  # no such connection in the writing process
    with pytest.raises(BagError, match=r"out: cannot write the bag: KeyError: 101"):
        out.finish()
    out.abort()
    assert list(tmp_path.iterdir()) == []
    assert out.process.returncode == 0


def test_a_writing_process_that_dies_is_a_bag_error(tmp_path: Path) -> None:
    out = BagOutput(tmp_path / "out", "sqlite3", force=False)
    topic = out.connection(BagTopic("/a", "std_msgs/msg/String", msgdef=DEFINITION))
    out.process.kill()
    out.process.wait()
    with pytest.raises(BagError, match=r"out: cannot write the bag"):
        for k in range(4 * WRITE_BATCH):
            out.write(topic, k, b"x" * 1000)
        out.finish()
    out.abort()
    assert list(tmp_path.iterdir()) == []


def test_an_output_in_a_with_block_is_finished_at_its_end_and_aborted_when_it_raises(
    tmp_path: Path,
) -> None:
    """``with BagOutput(...)``: the bag complete under its name after the block; a block that
    raises (Ctrl-C too) or a ``finish`` that fails (the output's name taken meanwhile by a
    folder that is no bag) leaves no partial folder, the writing process ended by itself at
    the pipe's end (exit 0: it closed its bag as it was; not killed after ``stop_writer``'s
    wait)."""
    topic = BagTopic("/a", "std_msgs/msg/String", msgdef=DEFINITION)
    with BagOutput(tmp_path / "done", "sqlite3", force=False) as out:
        out.write(out.connection(topic), 1, b"x")
    with Reader(tmp_path / "done") as reader:
        assert [bytes(data) for _, _, data in reader.messages()] == [b"x"]
    assert out.process.returncode == 0
    with pytest.raises(KeyboardInterrupt), BagOutput(tmp_path / "cut", "sqlite3", False) as out:
        out.write(out.connection(topic), 1, b"x")
        raise KeyboardInterrupt
    assert out.process.returncode == 0
    with pytest.raises(BagError, match="taken exists and is not a rosbag2 bag"):
        with BagOutput(tmp_path / "taken", "sqlite3", force=True) as out:
            out.write(out.connection(topic), 1, b"x")
            (tmp_path / "taken").mkdir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["done", "taken"]
    assert list((tmp_path / "taken").iterdir()) == []
    assert out.process.returncode == 0


def test_an_output_it_cannot_create_is_a_bag_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(BagError, match=r"file/out: cannot write the bag"):
        BagOutput(tmp_path / "file" / "out", "sqlite3", force=False)
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


@pytest.mark.parametrize("existing", [False, True])
def test_a_repair_that_fails_before_writing_ends_its_writing_process(
    tmp_path: Path, existing: bool
) -> None:
    arm = REPO_ROOT / "urdf" / "demo_arm.urdf"
    bag, _ = recording(tmp_path / "in", arm, count=5, description=existing)
    if existing:  # fails at the output: it exists
        (tmp_path / "out").mkdir()
    repair = Repair(RepairOptions(bag, tmp_path / "out"))
    with pytest.raises(BagError, match="exists" if existing else "no /robot_description"):
        repair.run()
    assert repair.out is None
    assert repair.writer is not None and repair.writer.poll() == 0


def test_batches_are_bounded_by_bytes_and_the_output_is_identical(tmp_path: Path) -> None:
    """Camera images of 3 MB: two a batch (WRITE_BATCH_BYTES, 8 MB), not 256 (768 MB)."""
    size = 3 * 1024 * 1024
    assert 2 * size <= WRITE_BATCH_BYTES < 3 * size
    wanted = [(k * 1000, bytes([k]) * size) for k in range(20)]
    out = BagOutput(tmp_path / "out", "mcap", force=False)
    image = out.connection(BagTopic("/camera/image_raw", "std_msgs/msg/String", msgdef=DEFINITION))
    for time_ns, data in wanted:
        out.write(image, time_ns, data)
    out.finish()
    assert out.batches_sent == 10
    with Reader(tmp_path / "out") as reader:
        assert [(t, bytes(d)) for _, t, d in reader.messages()] == wanted


def test_a_message_over_the_pipes_limit_is_a_bag_error_naming_its_topic(tmp_path: Path) -> None:
    """4 GiB + 1 byte (zero pages the system maps lazily: no memory is used): refused when
    queued, naming the topic and the size (was a struct.error traceback when sent)."""
    huge = memoryview(np.zeros(MAX_MESSAGE_BYTES + 1, dtype=np.uint8))
    out = BagOutput(tmp_path / "out", "sqlite3", force=False)
    cloud = out.connection(BagTopic("/points", "std_msgs/msg/String", msgdef=DEFINITION))
    out.write(cloud, 1, b"small")
    with pytest.raises(BagError, match=rf"/points is {MAX_MESSAGE_BYTES + 1} bytes, more than"):
        out.write(cloud, 2, huge)
        out.finish()
    out.abort()
    assert list(tmp_path.iterdir()) == []


def test_a_batch_of_small_messages_is_sent_at_write_batch_messages(tmp_path: Path) -> None:
    """Small messages wait for the batch: ``WRITE_BATCH`` - 1 of them are not sent yet; the
    ``WRITE_BATCH``-th sends them, one batch; they come out as written."""
    out = BagOutput(tmp_path / "out", "sqlite3", force=False)
    topic = out.connection(BagTopic("/a", "std_msgs/msg/String", msgdef=DEFINITION))
    for k in range(WRITE_BATCH - 1):
        out.write(topic, k, b"x")
    assert out.batches_sent == 0
    out.write(topic, WRITE_BATCH, b"y")
    assert out.batches_sent == 1
    out.finish()
    wanted = [b"x"] * (WRITE_BATCH - 1) + [b"y"]
    with Reader(tmp_path / "out") as reader:
        assert [bytes(data) for _, _, data in reader.messages()] == wanted


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_a_recorded_definition_and_hash_are_written_as_given(tmp_path: Path, storage: str) -> None:
    """A topic of a type rosbags does not know, copied with its recorded definition and type
    hash: the output's connection holds them as given (not rosbags' own, which it has none
    of); one recorded by rosbag2 before Iron (no definition, no hash) is copied without a
    definition. Both topics' messages come out byte for byte."""
    reading = "float64 value\nstring unit\n"
    digest = "RIHS01_" + "5a" * 32
    sent = [("/reading", bytes(range(17))), ("/old", b"\x00\x01\x00\x00\x07")]
    out = BagOutput(tmp_path / "out", storage, force=False)
    numbers = [
        out.connection(BagTopic("/reading", "my_msgs/msg/Reading", msgdef=reading, digest=digest)),
        out.connection(BagTopic("/old", "my_msgs/msg/Old", msgdef="")),
    ]
    for time_ns, (number, (_, data)) in enumerate(zip(numbers, sent, strict=True)):
        out.write(number, time_ns, data)
    out.finish()
    with Reader(tmp_path / "out") as reader:
        connections = {c.topic: c for c in reader.connections}
        assert [(c.topic, bytes(d)) for c, _, d in reader.messages()] == sent
    assert connections["/reading"].msgdef.data == reading
    assert connections["/reading"].digest == digest
    assert connections["/old"].msgdef.data == ""


def test_a_partial_folder_removed_meanwhile_is_a_bag_error_and_nothing_is_left(
    tmp_path: Path,
) -> None:
    """The hidden folder the bag is written in removed by another process while the bag is
    written (a clean-up of dot folders): the ``with`` block ends in the BagError naming the
    output (``abort`` finds nothing to remove: no FileNotFoundError out of it), nothing is
    left, the writing process has ended."""
    topic = BagTopic("/a", "std_msgs/msg/String", msgdef=DEFINITION)
    with pytest.raises(BagError, match=r"out: cannot write the bag"):
        with BagOutput(tmp_path / "out", "sqlite3", force=False) as out:
            out.write(out.connection(topic), 1, b"x")
            shutil.rmtree(out.partial)
    assert list(tmp_path.iterdir()) == []
    assert out.process.returncode == 0


def test_ctrl_c_reaching_the_writing_process_is_left_to_the_parent(tmp_path: Path) -> None:
    """Ctrl-C at a terminal reaches the whole process group, the writing process too: it
    ignores it (the parent decides: ``bag repair`` aborts, a caller that goes on writes on),
    so the bag written after it is complete and the process ends cleanly. (Sent once the
    output is open: the process has answered, so it is serving. Had it taken the signal, it
    would answer no more: the timer then ends it and the test fails, not hangs.)"""
    out = BagOutput(tmp_path / "out", "sqlite3", force=False)
    os.kill(out.process.pid, signal.SIGINT)
    stuck = threading.Timer(120, out.process.kill)
    stuck.start()
    try:
        topic = out.connection(BagTopic("/a", "std_msgs/msg/String", msgdef=DEFINITION))
        out.write(topic, 1, b"x")
        out.finish()
    finally:
        stuck.cancel()
    with Reader(tmp_path / "out") as reader:
        assert [bytes(data) for _, _, data in reader.messages()] == [b"x"]
    assert out.process.returncode == 0


def test_a_call_to_a_writing_process_that_died_is_a_bag_error_naming_the_output(
    tmp_path: Path,
) -> None:
    """A call to a writing process that died (its pipe broken) is a BagError naming the
    output and the broken pipe, never a bare one; nothing is left."""
    out = BagOutput(tmp_path / "dead", "sqlite3", force=False)
    out.process.kill()
    out.process.wait()
    with pytest.raises(BagError, match=r"dead: cannot write the bag: \[Errno 32\] Broken pipe"):
        out.connection(BagTopic("/a", "std_msgs/msg/String", msgdef=DEFINITION))
    out.abort()
    assert list(tmp_path.iterdir()) == []


def test_a_stopped_writing_process_leaves_no_pipe_open_in_the_parent() -> None:
    """``stop_writer``: the process ended by itself at its pipe's end (exit 0, not killed)
    and both of its pipes closed in the parent (a repair, and each test, holds no descriptor
    of a finished writer)."""
    process = start_writer()
    stop_writer(process)
    assert process.returncode == 0
    assert process.stdin is not None and process.stdin.closed
    assert process.stdout is not None and process.stdout.closed


def test_an_output_that_cannot_be_put_in_place_is_a_bag_error_and_the_old_bag_goes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``finish`` failing on the file system as it gives the new bag its name (here an
    input/output error) is a BagError naming the output and the system's reason, never a
    bare one; the old bag ``force`` moved aside goes back to its name."""
    path = tmp_path / "out"
    first = BagOutput(path, "sqlite3", force=False)
    first.finish()
    (path / "mark").write_text("the old bag")
    out = BagOutput(path, "sqlite3", force=True)
    topic = out.connection(BagTopic("/a", "std_msgs/msg/String", msgdef=DEFINITION))
    out.write(topic, 1, b"\x00\x01\x00\x00\x01\x00\x00\x00\x00")
    real = writer.rename_to_free_name

    def failing(source: Path, target: Path) -> None:
        if source == out.partial / "out":  # the new bag, to its name
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(source, target)

    monkeypatch.setattr(writer, "rename_to_free_name", failing)
    with pytest.raises(BagError, match=r"out: cannot write the bag: \[Errno 5\] Input/output"):
        out.finish()
    assert (path / "mark").read_text() == "the old bag"


def test_a_partial_folder_given_a_file_by_another_is_left_and_said(tmp_path: Path) -> None:
    """The partial folder given a file meanwhile by someone else: the bag has its name (no
    failure), the file is not removed, and ``left_behind`` says where it is and why the
    folder stayed (which the repair prints as a warning)."""
    out = BagOutput(tmp_path / "out", "sqlite3", force=False)
    topic = out.connection(BagTopic("/a", "std_msgs/msg/String", msgdef=DEFINITION))
    out.write(topic, 1, b"\x00\x01\x00\x00\x01\x00\x00\x00\x00")
    (out.partial / "left by another").write_text("x")
    out.finish()
    assert (tmp_path / "out" / "metadata.yaml").is_file()
    assert (out.partial / "left by another").read_text() == "x"
    assert out.left_behind is not None
    assert out.left_behind.startswith(f"{tmp_path / 'out'}: written")
    assert str(out.partial) in out.left_behind and "[Errno 39]" in out.left_behind


def test_a_folder_named_as_the_replaced_bag_put_in_the_partial_folder_by_another_is_kept(
    tmp_path: Path,
) -> None:
    """Only what ``finish`` itself moved aside is removed or put back: a ``replaced-out``
    another put in the partial folder is no old bag. With no old bag (a new output) it is
    kept and said in ``left_behind`` (it was removed, as the old bag); over an old bag that
    cannot be moved onto it, the old bag stays at its name, the error is the system's
    reason (it said the old bag was kept in the other's folder) and the other's folder is
    kept."""
    path = tmp_path / "out"
    out = BagOutput(path, "sqlite3", force=False)
    planted = out.partial / "replaced-out"
    planted.mkdir()
    (planted / "theirs").write_text("x")
    out.finish()
    assert (planted / "theirs").read_text() == "x" and (path / "metadata.yaml").is_file()
    assert out.left_behind is not None and str(out.partial) in out.left_behind
    (path / "mark").write_text("the old bag")
    again = BagOutput(path, "sqlite3", force=True)
    planted = again.partial / "replaced-out"
    planted.mkdir()
    (planted / "theirs").write_text("y")
    with pytest.raises(BagError, match=r"out: cannot write the bag: \[Errno 39\]"):
        again.finish()
    again.abort()
    assert (path / "mark").read_text() == "the old bag"
    assert (planted / "theirs").read_text() == "y"


def test_ctrl_c_while_the_writing_process_opens_the_bag_leaves_no_partial_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C (SIGINT) while ``BagOutput`` waits for the writing process to open the bag (its
    start-up, about a second: the likeliest moment of an early Ctrl-C): the partial folder is
    removed and the process ended. (Only a BagError aborted there: a real SIGINT 0.9 to
    1.3 s into ``bag repair`` left ``.OUT.partial-PID/OUT``, one per run.)"""
    real = BagOutput._call

    def interrupted(self: BagOutput, name: str, *arguments: object) -> object:
        if name == "open":
            real(self, name, *arguments)  # the bag opened in the partial folder: then Ctrl-C
            raise KeyboardInterrupt
        return real(self, name, *arguments)

    monkeypatch.setattr(BagOutput, "_call", interrupted)
    process = start_writer()
    with pytest.raises(KeyboardInterrupt):
        BagOutput(tmp_path / "out", "sqlite3", force=False, process=process)
    assert list(tmp_path.iterdir()) == []
    assert process.poll() is not None


def test_the_writing_process_is_out_of_reach_of_a_terminals_ctrl_c() -> None:
    """The writing process is in a process group of its own: a terminal's Ctrl-C (SIGINT to
    the foreground group) reaches the parent only, which ends the child through its pipe.
    (In the parent's group, a Ctrl-C during the child's interpreter start-up, before its
    ``SIG_IGN``, printed the child's KeyboardInterrupt traceback under the repair's exit
    130: seen in 13 of 30 real Ctrl-Cs 0.3 to 1.5 s into ``bag repair``.)"""
    process = start_writer()
    try:
        assert os.getpgid(process.pid) != os.getpgid(0)
    finally:
        stop_writer(process)
    assert process.returncode == 0


def test_a_rename_to_a_free_name_never_replaces_what_has_it(tmp_path: Path) -> None:
    """``rename_to_free_name``: a folder renamed to a free name; onto an empty folder, a file
    or a dangling symlink it is FileExistsError and both stay as they were (``os.rename``
    replaced the empty folder and the file)."""
    source = tmp_path / "new"
    source.mkdir()
    (source / "bag").write_text("new")
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "file").write_text("mine")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    for taken in ("empty", "file", "link"):
        with pytest.raises(FileExistsError):
            writer.rename_to_free_name(source, tmp_path / taken)
    assert empty.is_dir() and list(empty.iterdir()) == []
    assert (tmp_path / "file").read_text() == "mine" and (tmp_path / "link").is_symlink()
    writer.rename_to_free_name(source, tmp_path / "free")
    assert (tmp_path / "free" / "bag").read_text() == "new" and not source.exists()


def test_an_old_bag_nested_deeper_than_python_recurses_goes_back_named(tmp_path: Path) -> None:
    """``force`` over a bag holding folders nested deeper than Python's recursion limit (the
    search for the input and ``rmtree`` recurse per level): a BagError naming the output and
    why, the old bag back at its name whole. (A RecursionError came out of ``finish``: the
    repair said "maximum recursion depth exceeded", exit 1, the old bag gone from its name
    into the partial folder, said nowhere.)"""
    source, _ = recording(tmp_path / "in", REPO_ROOT / "urdf" / "demo_arm.urdf", "sqlite3", 2)
    path = tmp_path / "out"
    BagOutput(path, "sqlite3", force=False).finish()
    fd = os.open(path, os.O_RDONLY)
    try:  # by descriptors: the path is longer than PATH_MAX
        for _ in range(sys.getrecursionlimit() + 100):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(os.open("mark", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    finally:
        os.close(fd)
    out = BagOutput(path, "sqlite3", force=True, source=source)
    try:
        with pytest.raises(BagError, match=r"out: the output holds what cannot be searched"):
            out.finish()
        out.abort()
        assert is_rosbag2_bag(path) and (path / "d" / "d").is_dir()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]
    finally:
        subprocess.run(["rm", "-rf", str(path)], check=True, timeout=60)


def test_a_writing_process_whose_parent_is_gone_ends_without_a_word(tmp_path: Path) -> None:
    """The parent gone (SIGTERM or SIGKILL mid-repair: its pipes closed by the system) while
    the writing process answers: it ends quietly, nothing on the terminal they share. (It
    printed a BrokenPipeError traceback under the killed repair.)"""
    child = subprocess.Popen(
        python_command("joint_tf_publisher.cli.bag.writer_process"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    child.stdout.close()  # the parent's end of the answers, as the system closes it
    write_frame(child.stdin, CALL, pickle.dumps(("open", (str(tmp_path / "b"), "sqlite3", None))))
    child.stdin.close()
    assert child.stderr.read() == b""
    assert child.wait(timeout=60) == 0


@pytest.mark.parametrize(
    ("storage", "compression", "files", "named"),
    [
        ("sqlite3", None, ["out.db3"], ("", "")),
        ("mcap", MCAP_CHUNKS, ["out.mcap"], ("", "")),  # a repair's MCAP: zstd chunks
        ("sqlite3", Compression("message", "zstd"), ["out.db3"], ("message", "zstd")),
        ("mcap", Compression("file", "zstd"), ["out.mcap.zstd"], ("file", "zstd")),
    ],
)
def test_the_bag_is_written_in_the_storage_and_compression_asked(
    tmp_path: Path,
    storage: str,
    compression: Compression | None,
    files: list[str],
    named: tuple[str, str],
) -> None:
    """The writing process writes the storage and the compression ``BagOutput`` is given, as
    rosbag2 writes and names them (docs/recordings.md): ``OUT.db3`` or ``OUT.mcap`` (a file
    compressed whole: ``OUT.mcap.zstd``), ``metadata.yaml`` naming the storage, the files
    and rosbag2's compression (``named``: none for MCAP's own zstd chunks, whose chunk
    records name ``zstd``, a uint32-prefixed string in the MCAP spec); the message reads
    back whole."""
    import yaml

    sent = b"\x00\x01\x00\x00\x06\x00\x00\x00hello\x00"
    out = BagOutput(tmp_path / "out", storage, force=False, compression=compression)
    topic = out.connection(BagTopic("/a", "std_msgs/msg/String", msgdef=DEFINITION))
    out.write(topic, 7, sent)
    out.finish()
    bag = tmp_path / "out"
    assert sorted(path.name for path in bag.iterdir()) == sorted([*files, "metadata.yaml"])
    metadata = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert metadata["storage_identifier"] == storage
    assert metadata["relative_file_paths"] == files
    assert (metadata["compression_mode"], metadata["compression_format"]) == named
    if compression == MCAP_CHUNKS:
        assert b"\x04\x00\x00\x00zstd" in (bag / "out.mcap").read_bytes()
    with Reader(bag) as reader:
        assert [(c.topic, t, bytes(d)) for c, t, d in reader.messages()] == [("/a", 7, sent)]


def test_at_the_pipes_end_before_close_the_bag_is_closed_as_it_is(tmp_path: Path) -> None:
    """The writing process's protocol (``writer_process``): the pipe's end before ``close``
    (the parent aborting, or gone) closes the bag as it is: what it was sent is in it and its
    ``metadata.yaml`` is written, a bag rosbag2 reads. ``serve`` run here on the frames a
    parent sends."""
    sent = b"\x00\x01\x00\x00\x06\x00\x00\x00hello\x00"
    keywords = {"msgdef": DEFINITION, "rihs01": "unknown"}
    requests = io.BytesIO()
    write_frame(requests, CALL, pickle.dumps(("open", (str(tmp_path / "out"), "sqlite3", None))))
    write_frame(
        requests, CALL, pickle.dumps(("connection", ("/a", "std_msgs/msg/String", keywords)))
    )
    write_frame(requests, BATCH, batch_bytes([(1, 7, sent)]))  # rosbags numbers from 1
    requests.seek(0)
    answers = io.BytesIO()
    serve(requests, answers)
    answers.seek(0)
    assert [read_frame(answers), read_frame(answers)] == [
        (ANSWER, pickle.dumps(None)),
        (ANSWER, pickle.dumps(1)),
    ]
    with Reader(tmp_path / "out") as reader:
        assert [(c.topic, t, bytes(d)) for c, t, d in reader.messages()] == [("/a", 7, sent)]


class _EndSeenLate(queue.Queue[tuple[bytes, bytes] | None]):
    """``serve``'s queue of frames, whose reading thread, having put the pipe's end, ends
    only once the server asks for a frame again: the window between that thread's last
    ``put`` and its end (which a loaded machine can open at any length) held open."""

    def __init__(self, maxsize: int) -> None:
        super().__init__(maxsize)
        self.end_taken = threading.Event()
        self.asked_again = threading.Event()

    def put(
        self, item: tuple[bytes, bytes] | None, block: bool = True, timeout: float | None = None
    ) -> None:
        super().put(item, block, timeout)
        if item is None:
            self.asked_again.wait(60)

    def get(self, block: bool = True, timeout: float | None = None) -> tuple[bytes, bytes] | None:
        if self.end_taken.is_set():
            self.asked_again.set()
        item = super().get(block, timeout)
        if item is None:
            self.end_taken.set()
        return item


def test_the_writing_process_ends_when_its_pipe_reader_outlives_the_pipes_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``serve`` (the writing process) returns, and the process can exit, once the thread
    reading its pipe has ended, also when that thread is still running as the pipe's end is
    taken: it waits for the thread's end, not for another frame (there is none: a process
    hanging there is killed by ``stop_writer`` after a minute, the repair's end delayed)."""
    monkeypatch.setattr(
        writer_process, "queue", SimpleNamespace(Queue=_EndSeenLate, Empty=queue.Empty)
    )
    server = threading.Thread(target=serve, args=(io.BytesIO(b""), io.BytesIO()), daemon=True)
    server.start()
    server.join(60)
    assert not server.is_alive()
