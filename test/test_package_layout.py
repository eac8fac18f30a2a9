"""The package as ROS sees it: package.xml, what colcon installs, and where, and colcon test.

``colcon build`` (the ROS world's colcon: the kit's or a distro's, or colcon-core + colcon-ros
from PyPI in the pip world) builds a copy of this repository in a scratch workspace; the
tests then check the install tree that ``ros2 launch`` / ``ros2 run`` / ``ros2 pkg`` read:
``share/joint_tf_publisher/...``, the ament index marker and
``lib/joint_tf_publisher/<executable>``. ``colcon test`` then runs part of the pytest suite
there and ``colcon test-result`` reports it (without the setup.py "test" extra colcon would
run unittest, which finds none of these pytest tests). package.xml's dependency keys are
checked against rosdistro in test_rosdep_keys.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "joint_tf_publisher"
# Folders of the repository whose files setup.py installs under share/<package>/<folder>.
SHARED_DATA_PATTERNS = {
    "launch": ("*.launch.py", "*.launch.xml"),
    "config": ("*.yaml",),
    "urdf": ("*.urdf", "*.xacro", "*.sdf"),
}
#: Not sources: environments (.venv, .venv-jazzy, .compat, the ROS 2 kit .ros2kit), VCS data,
#: build output (colcon's, setuptools', .colcon) and caches.
NOT_SOURCE = {
    ".venv",
    ".venv-jazzy",
    ".compat",
    ".ros2kit",
    ".colcon",
    ".rsp",  # make bench's robot_state_publisher build (its sources hold interfaces)
    ".mutate",  # make mutate's copies of the tree (mutmut's mutants/ holds the interfaces too)
    ".git",
    "build",
    "install",
    "log",
    "dist",
    "__pycache__",
    ".hypothesis",
}
#: A quick part of the suite for `colcon test` (plain pytest functions: unittest finds none).
COLCON_TEST_SUBSET = "test/test_transforms.py"
INTERFACE_SUFFIXES = (".msg", ".srv", ".action", ".idl")


def repository_files() -> list[Path]:
    """Files of the work tree, without the venv, VCS data, caches and build output."""
    found: list[Path] = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [
            name
            for name in subfolders
            if name not in NOT_SOURCE and not name.endswith((".egg-info", "_cache"))
        ]
        found.extend(Path(folder, name) for name in files)
    return found


def declared_data_files() -> dict[str, list[str]]:
    """share/<package>/<folder> -> repository files in that folder that setup.py installs."""
    declared: dict[str, list[str]] = {}
    for folder, patterns in SHARED_DATA_PATTERNS.items():
        matches = sorted({p.name for pattern in patterns for p in (ROOT / folder).glob(pattern)})
        declared[folder] = matches
    return declared


def package_manifest() -> etree._Element:
    """The parsed package.xml root element."""
    return etree.parse(str(ROOT / "package.xml")).getroot()


def test_package_xml_is_format_3_for_an_ament_python_package() -> None:
    manifest = package_manifest()

    assert manifest.get("format") == "3"
    assert manifest.findtext("name") == PACKAGE
    assert manifest.findtext("export/build_type") == "ament_python"
    assert manifest.findtext("license") == "Apache-2.0"


def test_setup_py_version_matches_package_xml() -> None:
    result = subprocess.run(
        [sys.executable, "setup.py", "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )

    assert result.stdout.strip().splitlines()[-1] == package_manifest().findtext("version")


def test_the_only_interface_definition_is_the_tf2_msgs_stand_in() -> None:
    files = repository_files()
    interfaces = sorted(p.relative_to(ROOT) for p in files if p.suffix in INTERFACE_SUFFIXES)
    manifests = sorted(p.relative_to(ROOT) for p in files if p.name == "package.xml")

    assert interfaces == [Path("interfaces/tf2_msgs/msg/TFMessage.msg")]
    assert manifests == [Path("interfaces/tf2_msgs/package.xml"), Path("package.xml")]
    # colcon (and a ROS user's workspace) must never build the stand-in over the real tf2_msgs.
    assert (ROOT / "interfaces" / "COLCON_IGNORE").is_file()


def colcon_executable() -> Path:
    """The ROS world's colcon (on PATH with a distro or the kit), else the venv's."""
    found = shutil.which("colcon")
    colcon = Path(found) if found else Path(sys.executable).parent / "colcon"
    assert colcon.exists(), "colcon is missing: `make env` installs it"
    return colcon


def run_colcon(workspace: Path, *args: str, timeout_s: float = 300) -> str:
    """Run ``colcon <args>`` in ``workspace``; its output (stdout and stderr), failing on error."""
    env = dict(os.environ, COLCON_HOME=str(workspace / ".colcon"))
    result = subprocess.run(
        [str(colcon_executable()), "--log-base", "log", *args],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    output = f"{result.stdout}\n{result.stderr}"
    assert result.returncode == 0, f"colcon {' '.join(args)} failed:\n{output}"
    return output


@pytest.fixture(scope="module")
def colcon_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with a copy of this repository in src/, built by ``colcon build``."""
    workspace = tmp_path_factory.mktemp("colcon_ws")
    shutil.copytree(
        ROOT,
        workspace / "src" / PACKAGE,
        ignore=shutil.ignore_patterns(*NOT_SOURCE, "*.egg-info", "*_cache"),
    )
    run_colcon(workspace, "build", "--base-paths", "src")
    assert not (workspace / "install" / "tf2_msgs").exists(), "built the tf2_msgs stand-in"
    return workspace


@pytest.fixture(scope="module")
def colcon_install(colcon_workspace: Path) -> Path:
    """The package's install prefix in the colcon workspace."""
    return colcon_workspace / "install" / PACKAGE


@pytest.mark.slow
def test_colcon_installs_the_package_where_ros2_looks(colcon_install: Path) -> None:
    share = colcon_install / "share" / PACKAGE
    executable = colcon_install / "lib" / PACKAGE / PACKAGE
    site_packages = colcon_install / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"

    assert (share / "package.xml").read_bytes() == (ROOT / "package.xml").read_bytes()
    # What the README tells users to `ros2 launch`, and the node's parameter file.
    assert (share / "launch" / "joint_tf_publisher.launch.py").is_file()
    assert (share / "launch" / "demo.launch.py").is_file()
    assert (share / "launch" / "joint_tf_publisher.launch.xml").is_file()
    assert list((share / "config").glob("*.yaml"))
    assert (colcon_install / "share/ament_index/resource_index/packages" / PACKAGE).is_file()
    assert executable.is_file() and os.access(executable, os.X_OK)
    assert (site_packages / "site-packages" / PACKAGE / "__init__.py").is_file()
    (entry_points,) = (site_packages / "site-packages").glob("*.egg-info/entry_points.txt")
    assert f"{PACKAGE} = {PACKAGE}.entry:node_main" in entry_points.read_text().splitlines()
    # The fleet: `ros2 run joint_tf_publisher joint_tf_fleet`.
    fleet = colcon_install / "lib" / PACKAGE / "joint_tf_fleet"
    assert fleet.is_file() and os.access(fleet, os.X_OK)
    assert "joint_tf_fleet = joint_tf_publisher.entry:fleet_main" in entry_points.read_text()


@pytest.mark.slow
@pytest.mark.parametrize("folder", sorted(SHARED_DATA_PATTERNS))
def test_colcon_installs_every_data_file_of(folder: str, colcon_install: Path) -> None:
    share = colcon_install / "share" / PACKAGE / folder

    for name in declared_data_files()[folder]:
        installed = share / name
        assert installed.is_file(), f"{folder}/{name} is not installed at {installed}"
        assert installed.read_bytes() == (ROOT / folder / name).read_bytes()


def test_the_sample_robot_is_bundled() -> None:
    assert "demo_arm.urdf" in declared_data_files()["urdf"]


def collected_count(test_file: str) -> int:
    """How many tests pytest collects from ``test_file`` (relative to the repository)."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        + [test_file],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return sum(1 for line in result.stdout.splitlines() if "::" in line)


@pytest.mark.slow
def test_colcon_test_runs_the_pytest_suite_and_test_result_reports_it(
    colcon_workspace: Path,
) -> None:
    run_colcon(
        colcon_workspace,
        "test",
        "--base-paths",
        "src",
        "--packages-select",
        PACKAGE,
        "--pytest-args",
        COLCON_TEST_SUBSET,
    )
    report = run_colcon(colcon_workspace, "test-result", "--all", "--verbose")
    junit = colcon_workspace / "build" / PACKAGE / "pytest.xml"
    suite = etree.parse(str(junit)).getroot()
    if suite.tag == "testsuites":
        (suite,) = suite
    expected = collected_count(COLCON_TEST_SUBSET)

    assert suite.get("name") == "pytest"  # pytest's own report, not colcon's placeholder
    assert int(suite.get("tests", "0")) == expected > 0
    assert suite.get("failures") == suite.get("errors") == "0"
    assert f"Summary: {expected} tests, 0 errors, 0 failures" in report


def test_colcon_chooses_pytest_from_the_setup_metadata() -> None:
    """What colcon's Python test task decides from setup.py: pytest, never unittest."""
    from colcon_core.task.python.test import has_test_dependency
    from colcon_python_setup_py.package_identification.python_setup_py import (
        get_setup_information,
    )

    setup_data = get_setup_information(ROOT / "setup.py")

    assert has_test_dependency(setup_data, "pytest")
    assert "pytest" in " ".join(setup_data["extras_require"]["test"])
