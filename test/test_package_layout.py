"""The package as ROS sees it: package.xml, what colcon installs, and where.

``colcon build`` (colcon-core + colcon-ros from PyPI, installed by ``make env``) builds a copy
of this repository in a scratch workspace; the test then checks the install tree that
``ros2 launch`` / ``ros2 run`` / ``ros2 pkg`` read: ``share/joint_tf_publisher/...``, the ament
index marker and ``lib/joint_tf_publisher/<executable>``.
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
    "launch": ("*.launch.py",),
    "config": ("*.yaml",),
    "urdf": ("*.urdf", "*.xacro", "*.sdf"),
}
NOT_SOURCE = {".venv", ".git", "build", "install", "log", "__pycache__", ".hypothesis"}
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


def test_package_xml_is_format_3_with_the_declared_dependencies() -> None:
    manifest = package_manifest()
    depends = {element.tag: {e.text for e in manifest.iter(element.tag)} for element in manifest}

    assert manifest.get("format") == "3"
    assert manifest.findtext("name") == PACKAGE
    assert manifest.findtext("export/build_type") == "ament_python"
    build_and_run = depends.get("depend", set()) | depends.get("exec_depend", set())
    for needed in (
        "rclpy",
        "tf2_ros",
        "sensor_msgs",
        "geometry_msgs",
        "std_msgs",
        "python3-numpy",
        "python3-lxml",
    ):
        assert needed in build_and_run, needed
    assert {"launch_testing", "launch_testing_ros", "python3-pytest"} <= depends["test_depend"]


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


@pytest.fixture(scope="module")
def colcon_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``colcon build`` of a copy of this repository; returns the package's install prefix."""
    colcon = Path(sys.executable).parent / "colcon"
    if not colcon.exists():
        found = shutil.which("colcon")
        assert found is not None, "colcon is missing: `make env` installs it"
        colcon = Path(found)
    workspace = tmp_path_factory.mktemp("colcon_ws")
    shutil.copytree(
        ROOT,
        workspace / "src" / PACKAGE,
        ignore=shutil.ignore_patterns(*NOT_SOURCE, "*.egg-info", "*_cache"),
    )
    env = dict(os.environ, COLCON_HOME=str(workspace / ".colcon"))
    result = subprocess.run(
        [str(colcon), "--log-base", "log", "build", "--base-paths", "src"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"colcon build failed:\n{result.stdout}\n{result.stderr}"
    assert not (workspace / "install" / "tf2_msgs").exists(), "built the tf2_msgs stand-in"
    return workspace / "install" / PACKAGE


@pytest.mark.slow
def test_colcon_installs_the_package_where_ros2_looks(colcon_install: Path) -> None:
    share = colcon_install / "share" / PACKAGE
    executable = colcon_install / "lib" / PACKAGE / PACKAGE
    site_packages = colcon_install / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"

    assert (share / "package.xml").read_bytes() == (ROOT / "package.xml").read_bytes()
    # What the README tells users to `ros2 launch`, and the node's parameter file.
    assert (share / "launch" / "joint_tf_publisher.launch.py").is_file()
    assert (share / "launch" / "demo.launch.py").is_file()
    assert list((share / "config").glob("*.yaml"))
    assert (colcon_install / "share/ament_index/resource_index/packages" / PACKAGE).is_file()
    assert executable.is_file() and os.access(executable, os.X_OK)
    assert (site_packages / "site-packages" / PACKAGE / "__init__.py").is_file()
    (entry_points,) = (site_packages / "site-packages").glob("*.egg-info/entry_points.txt")
    assert f"{PACKAGE} = {PACKAGE}.entry:node_main" in entry_points.read_text().splitlines()


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
