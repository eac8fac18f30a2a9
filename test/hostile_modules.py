"""Hostile modules for the tests of the package's child processes (#43.2): a working folder,
a ``PYTHONPATH`` folder and a folder first on this process's own path, each holding modules
named as those the children import, each of which leaves a marker file when imported. Its
fixtures reach every test through test/conftest.py: test/test_child_process.py (rclpy-free
children), test/bag/test_bag_child_process.py (the bag writer, rosbags) and
test/ros/test_node_child_process.py (``run``'s node, rclpy)."""

from __future__ import annotations

import json  # noqa: F401  (the standard modules the children import, imported here before
import pickle  # noqa: F401  a hostile folder is first on this process's path: a later import
import queue  # noqa: F401  of one in this process would take the hostile one)
import resource  # noqa: F401
import runpy  # noqa: F401
import sys
import tempfile  # noqa: F401
from pathlib import Path

import pytest

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
    """The hostile modules that ran (their markers)."""
    return sorted(path.name for path in markers.iterdir())
