"""Every Python process the package starts runs isolated from the caller (#43.2).

Each child (the xacro runner, the bag writer, the node ``run`` starts) is started from a
working folder full of hostile modules (``queue.py``, ``json.py``, ``xacro.py``, ``rclpy.py``
...: each leaves a marker file when imported), with ``PYTHONPATH`` naming another such folder,
and with a folder of modules named as the standard library's first on the parent's own path,
where ``PYTHONPATH`` puts it: the child does its work and no hostile module ran. Real
children, real xacro, rosbags and rclpy.
"""

from __future__ import annotations

import os
import pickle  # noqa: F401  (imported here before the hostile folder is on this path)
import queue  # noqa: F401
import resource  # noqa: F401
import runpy  # noqa: F401
import subprocess
import sys
import tempfile  # noqa: F401
from pathlib import Path

import pytest

from joint_tf_publisher import child_process
from joint_tf_publisher.child_process import PACKAGE_ROOT, child_path, python_command

#: Modules of the standard library the children import.
HOSTILE_STANDARD = ("json", "queue", "pickle", "runpy", "tempfile", "resource")
#: Packages the children import (a folder on the path before them would win).
HOSTILE_PACKAGES = ("xacro", "yaml", "rosbags", "rclpy", "numpy", "lxml", "joint_tf_publisher")


def hostile_folder(folder: Path, markers: Path, names: tuple[str, ...]) -> Path:
    """``folder`` holding a module of each of ``names`` that touches ``markers/NAME``."""
    folder.mkdir()
    markers.mkdir(exist_ok=True)
    for name in names:
        (folder / f"{name}.py").write_text(f"open({str(markers / name)!r}, 'w').close()\n")
    return folder


@pytest.fixture
def markers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder of markers; the test runs in a hostile working folder, with a hostile
    ``PYTHONPATH`` for its children."""
    found = tmp_path / "markers"
    every = HOSTILE_STANDARD + HOSTILE_PACKAGES
    monkeypatch.chdir(hostile_folder(tmp_path / "cwd", found, every))
    monkeypatch.setenv("PYTHONPATH", str(hostile_folder(tmp_path / "env_path", found, every)))
    return found


@pytest.fixture
def hostile_on_the_path(tmp_path: Path, markers: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder first on this process's path too, where PYTHONPATH puts it, holding modules
    named as the standard library's (imported here already, so they do not run here): the
    child takes this folder (an overlay's packages come so) but after the standard library."""
    folder = hostile_folder(tmp_path / "parent_path", markers, HOSTILE_STANDARD)
    monkeypatch.setattr(sys, "path", [str(folder), *sys.path])


def ran(markers: Path) -> list[str]:
    return sorted(path.name for path in markers.iterdir())


# -- the path ----------------------------------------------------------------------------------


def test_the_childs_path_has_no_working_folder_and_the_standard_library_first(
    tmp_path: Path,
) -> None:
    site = str(Path(pytest.__file__).parent.parent)  # a site-packages folder: not the stdlib
    standard = str(Path(runpy.__file__).parent)
    here = tmp_path / "here"
    here.mkdir()
    (tmp_path / "link").symlink_to(here)
    spellings = [str(here), f"{here}/", str(tmp_path / "link"), f"{here}/../here"]
    path = ["", ".", "rel/dir", *spellings, "/env/overlay", standard, site, "/env/overlay"]
    assert child_path(path, str(here)) == [standard, "/env/overlay", site, PACKAGE_ROOT]


def test_the_folder_python_m_started_in_stays_off_once_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python -m`` puts the working folder first on the parent's path, as an absolute
    folder; once that folder is deleted (the working folder no longer known), a folder made
    again at its name (anyone may, in ``/tmp``) is still not on a child's path."""
    started = tmp_path / "started"
    started.mkdir()
    monkeypatch.setattr(child_process, "STARTED_IN", str(started))
    assert child_path([str(started), "/env/overlay"], None) == ["/env/overlay", PACKAGE_ROOT]


def test_the_command_is_isolated_and_runs_the_module_as_minus_m(
    tmp_path: Path, markers: Path
) -> None:
    command = python_command("joint_tf_publisher.child_process", "a b", "--x")
    assert command[:2] == [sys.executable, "-I"]
    code = "import sys; print(sys.argv[1:], '' in sys.path, sys.flags.isolated)"
    (tmp_path / "shows_argv.py").write_text(code)
    shown = subprocess.run(
        python_command("shows_argv", "a b", "--x", path=[str(tmp_path), *sys.path]),
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == "['a b', '--x'] False 1"
    assert ran(markers) == []


# -- each child ----------------------------------------------------------------------------------


def test_the_xacro_runner_imports_nothing_from_the_caller(
    tmp_path: Path, markers: Path, hostile_on_the_path: None
) -> None:
    pytest.importorskip("xacro")
    from joint_tf_publisher.description.loader import expand_xacro_file

    robot = tmp_path / "robot.urdf.xacro"
    robot.write_text(
        '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:arg name="n" default="a"/><link name="$(arg n)"/></robot>'
    )
    assert '<link name="b"/>' in str(expand_xacro_file(robot, {"n": "b"}).data)
    assert ran(markers) == []


def test_the_bag_writer_imports_nothing_from_the_caller(
    tmp_path: Path, markers: Path, hostile_on_the_path: None
) -> None:
    pytest.importorskip("rosbags")
    from joint_tf_publisher.cli.bag.storage import BagOutput

    out = BagOutput(tmp_path / "out", "sqlite3", force=False)
    connection = out.connection("/a", "std_msgs/msg/String", "string data\n", "", [])
    out.write(connection, 1, b"\x00\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00")
    out.finish()
    assert out.process.returncode == 0
    assert ran(markers) == []


@pytest.mark.ros
def test_the_node_run_starts_imports_nothing_from_the_caller(
    tmp_path: Path, markers: Path, hostile_on_the_path: None
) -> None:
    """``run``'s node (exits 1 at once on a description that does not parse, after its
    imports: rclpy, numpy, lxml, and the package from its own folder)."""
    pytest.importorskip("rclpy")
    from joint_tf_publisher.cli.demo import node_command, write_params_file

    params = write_params_file("<robot name='r'><link name='a'></robot>", tmp_path)
    result = subprocess.run(
        node_command(params, ["publish_frequency:=10.0"]),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr[-2000:]
    assert "joint_tf_publisher: " in result.stderr and "malformed XML" in result.stderr
    assert "Traceback" not in result.stderr
    assert ran(markers) == []


def test_graphs_dot_is_never_the_working_folders(
    tmp_path: Path, markers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``graph``'s Graphviz ``dot``, with ``PATH`` naming the working folder first (``.``,
    or an empty entry): the one on an absolute folder of ``PATH`` runs, or none."""
    from joint_tf_publisher.cli.graph import render_dot

    fake = Path("dot")
    fake.write_text(f"#!/bin/sh\ntouch {markers / 'dot'}\n")
    fake.chmod(0o755)
    for first in (".", ""):
        monkeypatch.setenv("PATH", os.pathsep.join([first, os.environ["PATH"]]))
        try:
            render_dot('digraph "r" { "a" -> "b" }\n', tmp_path / "r.svg")
        except RuntimeError as err:  # no Graphviz on the absolute folders
            assert "Graphviz's 'dot' program is not installed" in str(err)
        else:
            assert (tmp_path / "r.svg").read_text().lstrip().startswith("<?xml")
    assert ran(markers) == []


def test_a_child_starts_when_the_working_folder_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller whose working folder was deleted (a launch from a folder removed since):
    ``os.getcwd`` fails there; the bag writer still starts, isolated, and writes its bag
    (was a FileNotFoundError before the child started)."""
    pytest.importorskip("rosbags")
    from joint_tf_publisher.cli.bag.storage import BagOutput

    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert "-I" in python_command("joint_tf_publisher.child_process")
    out = BagOutput(tmp_path / "out", "sqlite3", force=False)
    connection = out.connection("/a", "std_msgs/msg/String", "string data\n", "", [])
    out.write(connection, 1, b"\x00\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00")
    out.finish()
    assert out.process.returncode == 0
