"""The bag writer, a child process of ``bag repair``, runs isolated from the caller (#43.2):
from a working folder and a ``PYTHONPATH`` of hostile modules it imports none, and it starts
when the caller's working folder is gone (test/hostile_modules.py). Needs rosbags."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_modules import ran

from joint_tf_publisher.child_process import python_command

pytest.importorskip("rosbags", reason="needs rosbags (run in .venv: make test)")


def test_the_bag_writer_imports_nothing_from_the_caller(
    tmp_path: Path, markers: Path, hostile_on_the_path: None
) -> None:
    pytest.importorskip("rosbags")
    from joint_tf_publisher.cli.bag.writer import BagOutput, BagTopic

    out = BagOutput(tmp_path / "out", "sqlite3", force=False)
    connection = out.connection(BagTopic("/a", "std_msgs/msg/String", msgdef="string data\n"))
    out.write(connection, 1, b"\x00\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00")
    out.finish()
    assert out.process.returncode == 0
    assert ran(markers) == []


def test_a_child_starts_when_the_working_folder_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller whose working folder was deleted (a launch from a folder removed since):
    ``os.getcwd`` fails there; the bag writer still starts, isolated, and writes its bag
    (was a FileNotFoundError before the child started)."""
    pytest.importorskip("rosbags")
    from joint_tf_publisher.cli.bag.writer import BagOutput, BagTopic

    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert "-I" in python_command("joint_tf_publisher.child_process")
    out = BagOutput(tmp_path / "out", "sqlite3", force=False)
    connection = out.connection(BagTopic("/a", "std_msgs/msg/String", msgdef="string data\n"))
    out.write(connection, 1, b"\x00\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00")
    out.finish()
    assert out.process.returncode == 0
