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
from hostile_modules import ran

from joint_tf_publisher import child_process
from joint_tf_publisher.child_process import PACKAGE_ROOT, child_path, python_command

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
