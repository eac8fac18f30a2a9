"""The input (``reader``) in-process, without the commands around it: the storage a bag is
read as (folder or bare file; ``doctor --bag`` reports it, ``bag repair`` writes it), what is
checked before rosbags opens a file (a FIFO or a device is refused naming the file, never
handed to rosbags, which would block on it or read it for ever; a listed file that is not
there is rosbags' to name missing), and a bag that breaks while read: one ``BagError`` naming
the bag and the reason."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from bag_maker import recording
from repo_paths import REPO_ROOT

from joint_tf_publisher.cli.bag.errors import BagError
from joint_tf_publisher.cli.bag.reader import open_bag
from joint_tf_publisher.cli.bag.settings import METADATA

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"


def a_bag(path: Path, storage: str, count: int = 3) -> tuple[Path, Path]:
    """A recording at ``path`` and its one data file."""
    bag, _ = recording(path, ARM, storage, count=count)
    (data,) = [file for file in bag.iterdir() if file.name != METADATA]
    return bag, data


def test_a_bag_is_read_as_the_storage_its_files_are_of(tmp_path: Path) -> None:
    """A bag folder and a bare data file alike: ``.db3`` is ``sqlite3``, ``.mcap`` is
    ``mcap``, as rosbag2 names them (``--storage``'s values, ``doctor --bag``'s
    ``storage``)."""
    for storage in ("sqlite3", "mcap"):
        bag, data = a_bag(tmp_path / storage, storage)
        bare = data.rename(tmp_path / f"bare{data.suffix}")
        shutil.rmtree(bag)
        with open_bag(bare) as opened:
            assert (opened.path, opened.storage) == (bare, storage)
        bag, _ = a_bag(tmp_path / storage, storage)
        with open_bag(bag) as opened:
            assert (opened.path, opened.storage) == (bag, storage)


def test_a_metadata_yaml_or_a_listed_file_that_is_no_regular_file_is_refused_naming_it(
    tmp_path: Path,
) -> None:
    """A FIFO as ``metadata.yaml`` (read without blocking) and a device in place of the data
    file ``metadata.yaml`` lists: refused before rosbags opens anything, the text naming the
    file and why."""
    fifo_meta = tmp_path / "fifo_meta"
    fifo_meta.mkdir()
    os.mkfifo(fifo_meta / METADATA)
    with pytest.raises(BagError) as refusal:
        open_bag(fifo_meta)
    assert str(refusal.value).startswith(f"cannot read the bag: {fifo_meta / METADATA}: ")
    assert "not a regular file" in str(refusal.value)
    bag, data = a_bag(tmp_path / "device_data", "sqlite3")
    data.unlink()
    data.symlink_to("/dev/null")
    with pytest.raises(BagError) as refusal:
        open_bag(bag)
    assert str(refusal.value) == f"{data}: cannot read the bag: not a regular file"


def test_a_bag_that_breaks_while_read_is_one_bag_error_naming_it(tmp_path: Path) -> None:
    """The data file cut in half after the bag was opened: reading its messages ends in a
    ``BagError`` naming the bag and the reader's reason (for sqlite3 the error's kind too),
    not the storage library's exception."""
    for storage in ("sqlite3", "mcap"):
        bag, data = a_bag(tmp_path / storage, storage, count=2000)
        with open_bag(bag) as opened, pytest.raises(BagError) as refusal:
            os.truncate(data, data.stat().st_size // 2)
            for _ in opened.messages():
                pass
        text = str(refusal.value)
        if storage == "sqlite3":
            reason = r"[A-Za-z]+Error: database disk image is malformed"
        else:
            reason = r"Truncated record at offset \d+: expected \d+ bytes, got \d+\."
        assert re.fullmatch(rf"{re.escape(str(bag))}: cannot read the bag: {reason}", text), text


def test_a_file_the_metadata_lists_that_is_not_there_is_named_missing(tmp_path: Path) -> None:
    """A bag whose data file was removed (a split bag missing a part): refused as rosbags
    refuses it, naming the file missing, not as a file that is no regular file."""
    bag, data = a_bag(tmp_path / "bag", "sqlite3")
    data.unlink()
    with pytest.raises(BagError) as refusal:
        open_bag(bag)
    text = str(refusal.value)
    assert text.startswith(f"{bag}: cannot read the bag: ") and "not a regular file" not in text
    assert "missing" in text and str(data) in text, text


def test_what_is_no_bag_is_refused_saying_why(tmp_path: Path) -> None:
    """Nothing at the path, and a folder without ``metadata.yaml``: each refused naming the
    path and what a bag is."""
    for path, why in (
        (tmp_path / "none", "no such bag (a folder with metadata.yaml, or a .db3 or .mcap file)"),
        (tmp_path, "not a rosbag2 bag (no metadata.yaml in the folder)"),
    ):
        with pytest.raises(BagError) as refusal:
            open_bag(path)
        assert str(refusal.value) == f"{path}: {why}"


def test_a_metadata_yaml_nested_too_deep_is_refused_naming_the_bag_and_the_error(
    tmp_path: Path,
) -> None:
    """A ``metadata.yaml`` of lists nested 600 deep (a hostile file): rosbags' parse ends
    in a RecursionError, not a reader error of its own; refused in one line naming the bag,
    the error's kind and text."""
    bag = tmp_path / "deep"
    bag.mkdir()
    (bag / METADATA).write_text("[" * 600 + "]" * 600)
    with pytest.raises(BagError) as refusal:
        open_bag(bag)
    assert str(refusal.value) == (
        f"{bag}: cannot read the bag: RecursionError: maximum recursion depth exceeded"
    )
