"""The output's (``writer``'s) guards of what a bag output replaces, without the command
around them: ``is_rosbag2_bag`` (what ``--force`` may replace), ``BagOutput``'s start (the
refusal, the writing process it was given, a stale partial folder of this process) and the
check at ``finish`` of what took the output's name since (the input bag, or a folder that
holds it, by a rename or a hard link, is never removed; a symlink to it inside a bag is no
reason to keep that bag)."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from bag_maker import recording
from repo_paths import REPO_ROOT

from joint_tf_publisher.cli.bag import writer
from joint_tf_publisher.cli.bag.errors import BagError
from joint_tf_publisher.cli.bag.reader import bag_location, open_bag
from joint_tf_publisher.cli.bag.settings import (
    MAX_METADATA_BYTES,
    METADATA,
    METADATA_KEY,
    WRITE_BATCH_BYTES,
)
from joint_tf_publisher.cli.bag.writer import (
    MAX_PARTIAL_TRIES,
    BagOutput,
    BagTopic,
    checked_output,
    is_rosbag2_bag,
)
from joint_tf_publisher.cli.bag.writer_process import start_writer

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
#: The refusal ``finish`` gives when the output's name took the input since it was checked.
HOLDS_INPUT = "the output is now the input bag or holds it (it changed after it was checked)"


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def a_bag(path: Path, storage: str = "sqlite3") -> Path:
    bag, _ = recording(path, ARM, storage, count=3)
    return bag


def test_an_input_in_a_with_block_is_closed_at_its_end(tmp_path: Path) -> None:
    """``with open_bag(...)``: the bag open inside the block, closed after it, also when
    the block raises."""
    bag = a_bag(tmp_path / "in")
    with open_bag(bag) as opened:
        assert opened.reader.is_open and len(list(opened.messages())) > 0
    assert not opened.reader.is_open
    with pytest.raises(KeyboardInterrupt), open_bag(bag) as opened:
        raise KeyboardInterrupt
    assert not opened.reader.is_open


def metadata_folder(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / METADATA).write_text(text)
    return folder


def test_only_a_folder_with_rosbag2_s_metadata_is_a_bag(tmp_path: Path) -> None:
    """A bag folder is one; a symlink to it, a file, a folder without metadata.yaml, or
    whose metadata.yaml is no YAML, no mapping, lacks rosbag2's key or holds something else
    under it, is too large, or is a FIFO, is not (``--force`` replaces none of them)."""
    bag = a_bag(tmp_path / "bag")
    assert is_rosbag2_bag(bag)
    link = tmp_path / "link"
    link.symlink_to(bag, target_is_directory=True)
    lone_file = tmp_path / "file.db3"
    lone_file.write_bytes(b"")
    empty = tmp_path / "empty"
    empty.mkdir()
    too_large = metadata_folder(tmp_path, "too_large", f"{METADATA_KEY}: {{}}\n")
    with (too_large / METADATA).open("r+b") as metadata:
        metadata.truncate(MAX_METADATA_BYTES + 1)  # sparse: refused by its size, not read
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / METADATA)
    not_bags = [
        link,
        lone_file,
        empty,
        too_large,
        fifo,
        metadata_folder(tmp_path, "not_yaml", "{unclosed: [\n"),
        metadata_folder(tmp_path, "a_list", f"- {METADATA_KEY}\n"),
        metadata_folder(tmp_path, "another_key", "other_information: {version: 5}\n"),
        metadata_folder(tmp_path, "not_a_mapping", f"{METADATA_KEY}: 5\n"),
    ]
    assert [folder.name for folder in not_bags if is_rosbag2_bag(folder)] == []
    assert is_rosbag2_bag(metadata_folder(tmp_path, "minimal", f"{METADATA_KEY}: {{}}\n"))


def test_force_replaces_a_bag_holding_a_symlink_to_the_input(tmp_path: Path) -> None:
    """``--force`` over a bag that holds a symlink to the input (a user's shortcut): the bag
    is replaced, the link with it (not followed), the input intact."""
    source = a_bag(tmp_path / "in")
    output = a_bag(tmp_path / "out")
    (output / "to_input").symlink_to(source, target_is_directory=True)
    input_listing = listing(source)
    out = BagOutput(output, "sqlite3", force=True, source=bag_location(source))
    out.finish()
    assert not (output / "to_input").exists() and not (output / "to_input").is_symlink()
    assert is_rosbag2_bag(output) and listing(source) == input_listing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]


def opened_deep(top: Path, names: list[str]) -> int:
    """A descriptor of the folder ``top/names[0]/names[1]/...`` (made where missing),
    reached one name at a time: its path may be longer than the system's PATH_MAX."""
    folder = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for name in names:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, dir_fd=folder)
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
        os.close(folder)
        folder = inner
    return folder


def deep_listing(top: Path, names: list[str]) -> list[tuple[str, bytes]]:
    """The files of the folder ``top/names...`` and their bytes; [] where it is gone."""
    try:
        folder = opened_deep(top, names[:-1])
    except FileNotFoundError:
        return []
    try:
        inner = os.open(names[-1], os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
    except FileNotFoundError:
        return []
    finally:
        os.close(folder)
    found = []
    for name in sorted(os.listdir(inner)):
        data = os.open(name, os.O_RDONLY, dir_fd=inner)
        with os.fdopen(data, "rb") as stream:
            found.append((name, stream.read()))
    os.close(inner)
    return found


#: Folder names that make a path longer than Linux's PATH_MAX (4096 bytes) below any folder.
TOO_DEEP = ["d" * 250] * 17


@pytest.mark.parametrize(
    "where", ["the input renamed", "the input inside", "the input past PATH_MAX", "a hard link"]
)
def test_the_input_taking_the_outputs_name_after_the_check_is_kept(
    tmp_path: Path, where: str
) -> None:
    """Between ``BagOutput``'s check and ``finish``, the output's name takes the input bag
    (renamed to it), a bag holding the input folder deep inside (also deeper than PATH_MAX,
    where a path can name it no more), or a bag holding a hard link to the bare input file:
    refused at ``finish`` naming the output, put back as it was, the input's bytes intact,
    no partial folder left."""
    if where == "a hard link":
        source = a_bag(tmp_path / "in.mcap", "mcap")  # a bare file: rosbags names it so
        bare = next(source.glob("*.mcap"))
        source = bare.rename(tmp_path / "bare.mcap")
        shutil.rmtree(tmp_path / "in.mcap")
    else:
        source = a_bag(tmp_path / "in")
    output = a_bag(tmp_path / "out")
    out = BagOutput(output, "sqlite3", force=True, source=bag_location(source))
    shutil.rmtree(output)
    if where == "the input renamed":
        source.rename(output)
        kept = output
    elif where == "the input inside":
        a_bag(output)
        (output / "deep").mkdir()
        kept = source.rename(output / "deep" / "in")
    elif where == "the input past PATH_MAX":
        a_bag(output)
        folder = opened_deep(output, TOO_DEEP)
        os.rename(source, "in", dst_dir_fd=folder)
        os.close(folder)
        kept_files = deep_listing(output, [*TOO_DEEP, "in"])
        assert len(kept_files) == 2 and len(str(output)) + 251 * 18 > 4096
    else:
        a_bag(output)
        kept = output / "deep.mcap"
        os.link(source, kept)
    if where == "the input past PATH_MAX":
        with pytest.raises(BagError) as refusal:
            out.finish()
        assert str(refusal.value) == f"{output}: {HOLDS_INPUT}: left as it is"
        out.abort()
        assert deep_listing(output, [*TOO_DEEP, "in"]) == kept_files
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
        return
    kept_listing = listing(kept) if kept.is_dir() else [kept.read_bytes().hex()]
    with pytest.raises(BagError) as refusal:
        out.finish()
    assert str(refusal.value) == f"{output}: {HOLDS_INPUT}: left as it is"
    out.abort()
    assert (listing(kept) if kept.is_dir() else [kept.read_bytes().hex()]) == kept_listing
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_refused_output_stops_the_writing_process_it_was_given(tmp_path: Path) -> None:
    """An existing output without ``force``: BagError naming it, and the writing process
    started early for it has ended (no process left behind); without a process given, the
    same BagError."""
    output = a_bag(tmp_path / "out")
    process = start_writer()
    with pytest.raises(BagError, match="exists: give another output or --force"):
        BagOutput(output, "sqlite3", force=False, process=process)
    assert process.poll() is not None
    with pytest.raises(BagError, match="exists: give another output or --force"):
        BagOutput(output, "sqlite3", force=False)


def test_the_bag_is_written_in_a_hidden_folder_and_a_stale_one_is_left_as_it_is(
    tmp_path: Path,
) -> None:
    """A partial folder of the same name (an earlier repair of a process with this PID, as
    in a container where every run has the same one) may hold what that repair kept and
    named (the old bag it could not put back, what it could not remove): it is left as it
    is, and the bag is written in another hidden folder beside the output until ``finish``
    gives it the output's name. (It was removed, with the old bag the error said was kept
    there.) A symlink or a file of that name is passed over as well."""
    output = tmp_path / "out"
    stale = tmp_path / f".out.partial-{os.getpid()}"
    (stale / "replaced-out").mkdir(parents=True)
    (stale / "replaced-out" / "mark").write_text("kept by an earlier repair")
    (tmp_path / f".out.partial-{os.getpid()}-1").symlink_to(stale)
    (tmp_path / f".out.partial-{os.getpid()}-2").write_text("a file")
    out = BagOutput(output, "sqlite3", force=False)
    assert out.partial.name == f".out.partial-{os.getpid()}-3" and out.partial.is_dir()
    assert stat.S_IMODE(out.partial.stat().st_mode) == 0o700  # the owner's only
    out.finish()
    assert (stale / "replaced-out" / "mark").read_text() == "kept by an earlier repair"
    assert not out.partial.exists() and is_rosbag2_bag(output)
    assert out.left_behind is None  # nothing to say: the repair prints no warning


def test_an_output_with_every_partial_name_taken_is_a_bag_error_saying_so(
    tmp_path: Path,
) -> None:
    """All ``MAX_PARTIAL_TRIES`` hidden names of the output taken (partial folders earlier
    repairs kept): the repair's one line names the output, the count, the names and the
    system's code for "exists", and nothing is written or removed."""
    base = f".out.partial-{os.getpid()}"
    taken = [base, *(f"{base}-{n}" for n in range(1, MAX_PARTIAL_TRIES))]
    for name in taken:
        (tmp_path / name).mkdir()
    with pytest.raises(BagError) as refused:
        BagOutput(tmp_path / "out", "sqlite3", force=False)
    said = str(refused.value)
    assert said.startswith(f"{tmp_path / 'out'}: cannot write the bag: [Errno {errno.EEXIST}] ")
    assert f"{MAX_PARTIAL_TRIES} partial folders {base}[-N] are there already" in said
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(taken)


def test_an_input_gone_before_the_output_opens_still_writes_and_batches_count_bytes(
    tmp_path: Path,
) -> None:
    """``source`` no longer there (nothing to protect): the bag is written. A message of
    ``WRITE_BATCH_BYTES`` - 1 bytes waits for more; one more byte fills the batch: the two
    are sent as one batch of exactly ``WRITE_BATCH_BYTES`` (the bound is inclusive), nothing
    left for ``finish`` to send."""
    out = BagOutput(tmp_path / "out", "sqlite3", force=False, source=tmp_path / "gone")
    topic = out.connection(BagTopic("/a", "std_msgs/msg/String", msgdef="string data\n"))
    out.write(topic, 1, bytes(WRITE_BATCH_BYTES - 1))
    assert out.batches_sent == 0
    out.write(topic, 2, b"x")
    assert out.batches_sent == 1
    out.finish()
    assert out.batches_sent == 1 and is_rosbag2_bag(tmp_path / "out")


def test_an_output_at_the_input_inside_it_or_around_it_is_refused_saying_which(
    tmp_path: Path,
) -> None:
    """``checked_output``: the output the input itself, a folder inside it, or a folder that
    holds it: each refused naming the output, the input and which of the three it is, and
    what to do instead; an output beside the input is taken, resolved. A hard link to a
    bare input file is the input too (another name of it that resolving does not change:
    compared by ``samefile``)."""
    source = bag_location(a_bag(tmp_path / "in"))
    bare = bag_location(
        next(a_bag(tmp_path / "bare", "mcap").glob("*.mcap")).rename(tmp_path / "bare.mcap")
    )
    linked = tmp_path / "linked.mcap"
    os.link(bare, linked)
    for given, output, words in (
        (source, source, f"the output is the input bag {source}; give an output beside it"),
        (source, source / "new", f"the output is inside the input bag {source}; give an output"),
        (source, tmp_path, f"the output holds the input bag {source}: replacing it would remove"),
        (bare, linked, f"the output is the input bag {bare}; give an output beside it"),
    ):
        with pytest.raises(BagError) as refusal:
            checked_output(given, output)
        assert str(refusal.value).startswith(f"{output}: {words}"), refusal.value
        assert str(refusal.value).endswith("; give an output beside it"), refusal.value
    assert checked_output(source, tmp_path / "sub" / ".." / "out") == tmp_path / "out"


@pytest.mark.parametrize("newcomer", ["a folder", "an empty folder"])
def test_what_takes_the_outputs_name_while_the_old_one_goes_back_is_kept_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, newcomer: str
) -> None:
    """``--force``: after ``finish``'s check, the old output is swapped for a folder of the
    user's (moved aside, found no bag, to go back) and something else takes the output's
    name meanwhile: neither is removed, an empty folder neither (a rename would replace
    it). The user's folder stays in the partial folder, which ``abort`` then leaves, and the
    BagError names the output and where it is kept."""
    output = a_bag(tmp_path / "out")
    out = BagOutput(output, "sqlite3", force=True)
    replaced = out.partial / f"replaced-{output.name}"
    real = writer.replacement_refusal

    def racing(path: Path, force: bool) -> str | None:
        refusal = real(path, force)
        if path == output:  # finish's check done: the user's folder swapped in
            shutil.rmtree(output)
            output.mkdir()
            (output / "photo.jpg").write_text("mine")
        else:  # the user's folder moved aside: the name taken meanwhile
            (output / "newcomer").mkdir(parents=True)
            if newcomer == "an empty folder":
                (output / "newcomer").rmdir()
        return refusal

    monkeypatch.setattr(writer, "replacement_refusal", racing)
    with pytest.raises(BagError) as refusal:
        out.finish()
    assert str(refusal.value) == (
        f"{output}: changed while the bag was written; what was there is kept in {replaced}"
    )
    out.abort()
    assert (replaced / "photo.jpg").read_text() == "mine"
    assert listing(output) == ([] if newcomer == "an empty folder" else ["newcomer"])


def as_a_user(run: Callable[[], str]) -> str:
    """``run()``'s text, computed in a fork of this process (the code under test as this
    process has it) without root's capabilities to read and search any folder (1 and 2:
    ``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``), so folder permissions bind it as they
    bind a user; unchanged for a user."""
    import ctypes

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the fork: its text on the pipe, then its end (no pytest teardown in it)
        os.close(read)
        text = "ended before it said anything"
        try:
            header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
            data = (ctypes.c_uint32 * 6)()  # (effective, permitted, inheritable) x 2
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.capget(header, data) != 0:
                raise OSError(ctypes.get_errno(), "capget")
            data[0] &= ~0b110
            if libc.capset(header, data) != 0:
                raise OSError(ctypes.get_errno(), "capset")
            text = run()
        except BaseException as exc:
            text = f"{type(exc).__name__}: {exc}"
        finally:
            with os.fdopen(write, "w") as stream:
                stream.write(text)
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as stream:
        text = stream.read()
    os.waitpid(pid, 0)
    return text


@pytest.mark.parametrize("mode", [0o444, 0o000], ids=["listed, not searched", "not even listed"])
def test_force_over_a_bag_holding_a_folder_the_user_may_not_search_is_one_line(
    tmp_path: Path, mode: int
) -> None:
    """``--force`` over a bag that holds a folder its user may list but not search (mode
    ``r--``), or not even list (``---``: the walk cannot open it): what it holds can neither
    be examined for the input nor removed; the output is a BagError naming it (``bag
    repair``'s one line), never another exception, and the old bag goes back to its name
    whole: the input could be in that folder. (Since the
    old bag's leftovers became a warning it was "written", the old bag and the folder
    moved into the hidden partial folder, searched for the input nowhere.)"""
    source = a_bag(tmp_path / "in")
    output = a_bag(tmp_path / "out")
    locked = output / "locked"
    locked.mkdir()
    (locked / "file").write_text("mine")
    locked.chmod(mode)

    def force() -> str:
        try:
            with BagOutput(output, "sqlite3", force=True, source=bag_location(source)):
                pass
        except BagError as exc:
            return f"BagError: {exc}"
        return "written"

    try:
        said = as_a_user(force)
    finally:
        for folder in tmp_path.rglob("locked"):
            folder.chmod(0o755)
    assert said.startswith(f"BagError: {output}: "), said
    assert "cannot be searched for the input bag" in said and "\n" not in said, said
    assert (output / "locked" / "file").read_text() == "mine" and is_rosbag2_bag(output)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
