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
import shutil
import subprocess
import sys
import tempfile  # noqa: F401
import zipfile
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
    # As ``-m`` runs it: a module of another package starts with this package not imported.
    code = (
        "import sys; print(sys.argv[1:], '' in sys.path, sys.flags.isolated, "
        "'joint_tf_publisher' in sys.modules)"
    )
    (tmp_path / "shows_argv.py").write_text(code)
    shown = subprocess.run(
        python_command("shows_argv", "a b", "--x", path=[str(tmp_path), *sys.path]),
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == "['a b', '--x'] False 1 False"
    assert ran(markers) == []


def test_the_interpreters_site_packages_keep_their_place_after_the_overlays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A site-packages or dist-packages folder under the interpreter's prefix (Debian's
    ``/usr/lib/python3/dist-packages``, where its python3-xacro lives) is not the standard
    library: it stays after the sourced overlays before it, which would otherwise lose to it;
    the standard library comes first also for an interpreter installed at ``/``."""
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    monkeypatch.setattr(sys, "base_exec_prefix", "/usr")
    dist = "/usr/lib/python3/dist-packages"
    site = "/usr/local/lib/python3.11/site-packages"
    standard = "/usr/lib/python3.11"
    path = ["/env/overlay", dist, site, standard]
    assert child_path(path, None) == [standard, "/env/overlay", dist, site, PACKAGE_ROOT]
    monkeypatch.setattr(sys, "base_prefix", "/")
    monkeypatch.setattr(sys, "base_exec_prefix", "/")
    dist, standard = "/lib/python3/dist-packages", "/lib/python3.11"
    assert child_path([dist, standard], None) == [standard, dist, PACKAGE_ROOT]


def test_a_child_runs_the_parents_copy_of_the_package_where_another_comes_first(
    tmp_path: Path,
) -> None:
    """Another copy of the package ahead of the parent's on the path (a colcon install beside
    a checkout, a pip install beside a workspace) is not the child's: the package and its
    modules come from the copy the parent imported, so that both speak one protocol; a module
    that only the other copy has is not found; ``joint_tf_publisher`` itself is the parent's."""
    other = tmp_path / "other" / "joint_tf_publisher"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("raise SystemExit('the other copy ran')\n")
    (other / "child_process.py").write_text("raise SystemExit('the other copy ran')\n")
    (other / "only_there.py").write_text("print('the other copy ran')\n")
    path = [str(other.parent), *sys.path]

    def run(module: str) -> subprocess.CompletedProcess[str]:
        command = python_command(module, path=path)
        return subprocess.run(command, capture_output=True, text=True, check=False)

    own = run("joint_tf_publisher.child_process")
    assert (own.returncode, own.stdout, own.stderr) == (0, "", "")
    missing = run("joint_tf_publisher.only_there")
    assert missing.returncode == 1 and "the other copy ran" not in missing.stdout
    assert "No module named joint_tf_publisher.only_there" in missing.stderr
    # The package itself is the parent's copy too (which has no __main__, as runpy says).
    package = run("joint_tf_publisher")
    assert package.returncode == 1 and "the other copy ran" not in package.stderr
    assert "'joint_tf_publisher' is a package and cannot be directly executed" in package.stderr


#: A parent importing the copy of the package in ``argv[1]`` (first on its path), ``argv[2]``
#: deleted after (or ``-``), then running its child ``joint_tf_publisher.whoami`` with a hostile
#: copy of the package (``argv[3]``) first on the child's path.
_PARENT = """
import shutil, subprocess, sys
sys.path.insert(0, sys.argv[1])
from joint_tf_publisher.child_process import python_command
if sys.argv[2] != "-":
    shutil.rmtree(sys.argv[2])
command = python_command("joint_tf_publisher.whoami", path=[sys.argv[3], *sys.path])
child = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
print(child.returncode, child.stdout.strip(), child.stderr.strip(), sep="|")
"""


def _copy_of_the_package(folder: Path) -> Path:
    """A copy of the package in ``folder`` whose ``whoami`` says where its package is from."""
    shutil.copytree(
        Path(child_process.__file__).parent, folder, ignore=shutil.ignore_patterns("__pycache__")
    )
    (folder / "whoami.py").write_text("import joint_tf_publisher as p\nprint(p.__file__)\n")
    return folder


def _parent_runs_whoami(root: str, tmp_path: Path, delete: str = "-") -> list[str]:
    other = tmp_path / "other" / "joint_tf_publisher"
    other.mkdir(parents=True, exist_ok=True)
    (other / "__init__.py").write_text("raise SystemExit('the other copy ran')\n")
    (other / "whoami.py").write_text("print('the other copy ran')\n")
    command = [sys.executable, "-I", "-c", _PARENT, root, delete, str(other.parent)]
    parent = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return parent.stdout.strip().split("|")


def test_a_child_runs_the_parents_copy_through_a_symlinked_folder_and_from_a_zip(
    tmp_path: Path,
) -> None:
    """The parent's copy imported through a symlink of the package's name to a folder of
    another (colcon's ``--symlink-install`` links sources so), or from a zip file: the child
    runs that copy too, not another first on its path (review of the pin: the package's name
    was taken from the resolved folder, ``jtp_src``, so no module was pinned and the other
    copy ran; a zip's inside was read as a folder, ``NotADirectoryError``, where the child
    ran from the zip before the pin)."""
    source = _copy_of_the_package(tmp_path / "src" / "jtp_src")
    linked = tmp_path / "install"
    linked.mkdir()
    (linked / "joint_tf_publisher").symlink_to(source)
    expected = str(linked / "joint_tf_publisher" / "__init__.py")
    assert _parent_runs_whoami(str(linked), tmp_path) == ["0", expected, ""]

    zipped = tmp_path / "zipped.zip"
    shutil.make_archive(str(zipped.with_suffix("")), "zip", source.parent)
    with zipfile.ZipFile(zipped) as archive:  # the folder's name inside the zip: the package's
        names = {name: archive.read(name) for name in archive.namelist()}
    with zipfile.ZipFile(zipped, "w") as archive:
        for name, data in names.items():
            archive.writestr(name.replace("jtp_src", "joint_tf_publisher", 1), data)
    expected = str(zipped / "joint_tf_publisher" / "__init__.py")
    assert _parent_runs_whoami(str(zipped), tmp_path) == ["0", expected, ""]


def test_a_child_says_the_parents_copy_is_gone_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parent's copy deleted (or moved) since the parent imported it: the child ends
    with one line naming where it was, never another copy (it was a ``FileNotFoundError``
    traceback). Also for a command built in this process (where ``make mutate`` sees it),
    with the folder the package was imported from gone."""

    def gone_line(folder: object) -> str:
        return (
            f"joint_tf_publisher: no package joint_tf_publisher in {folder} (moved or "
            "deleted since the process that starts this one imported it from there)"
        )

    copy = _copy_of_the_package(tmp_path / "gone" / "joint_tf_publisher")
    code, out, err = _parent_runs_whoami(str(copy.parent), tmp_path, delete=str(copy))
    assert (code, out, err) == ("1", "", gone_line(copy.parent))
    monkeypatch.setattr(child_process, "_PACKAGE_LOCATION", str(tmp_path / "moved"))
    command = python_command("joint_tf_publisher.child_process")
    child = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert (child.returncode, child.stdout) == (1, "")
    assert child.stderr.strip() == gone_line(tmp_path / "moved")


def test_the_command_leaves_the_working_folder_off_and_is_buffered_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command as built: ``-I`` alone by default (the xacro runner and the bag writer),
    ``-I -u`` for ``run``'s node (its log read as it comes); the working folder is left off
    the path it gives, whatever the parent's path holds."""
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    path = [str(here), "/env/overlay"]
    command = python_command("some.module", "arg", path=path)
    assert command[:3] == [sys.executable, "-I", "-c"] and command[4:] == ["arg"]
    assert str(here) not in command[3] and "'/env/overlay'" in command[3]
    unbuffered = python_command("some.module", "arg", path=path, unbuffered=True)
    assert unbuffered[:4] == [sys.executable, "-I", "-u", "-c"]
    assert unbuffered[4:] == command[3:]


def test_a_program_is_found_on_paths_absolute_folders_or_os_defpath(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``program`` reads ``PATH`` (split at ``os.pathsep``, its absolute folders only: the
    working folder's copy never), and where ``PATH`` is unset, ``os.defpath``, as
    ``shutil.which`` does."""
    tools = tmp_path / "tools"
    tools.mkdir()
    monkeypatch.chdir(tmp_path)
    for folder in (tools, tmp_path):
        tool = folder / "a_tool"
        tool.write_text("#!/bin/sh\n")
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([".", "", str(tools)]))
    assert child_process.program("a_tool") == str(tools / "a_tool")
    monkeypatch.setenv("PATH", os.pathsep.join([".", ""]))
    assert child_process.program("a_tool") is None
    monkeypatch.delenv("PATH")
    assert child_process.program("sh") == shutil.which("sh", path=os.defpath) is not None


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
