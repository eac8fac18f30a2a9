"""Static checks of the launch files, which need ROS's ``launch`` to run (not installable here).

test_launch_node.py runs them with launch_testing where ROS 2 is installed; these checks run
everywhere: the arguments the README promises are declared, and every executable a launch
file starts is a console script of this package.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAUNCH_DIR = ROOT / "launch"


def calls_named(tree: ast.AST, name: str) -> list[ast.Call]:
    """Every call of ``name(...)`` (plain or attribute) in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if called == name:
                found.append(node)
    return found


def declared_arguments(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for call in calls_named(tree, "DeclareLaunchArgument"):
        first = call.args[0]
        assert isinstance(first, ast.Constant), ast.dump(first)
        names.add(first.value)
    return names


def started_executables(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    executables = set()
    for call in calls_named(tree, "Node"):
        for keyword in call.keywords:
            if keyword.arg == "executable":
                assert isinstance(keyword.value, ast.Constant)
                executables.add(keyword.value.value)
    return executables


def console_scripts() -> set[str]:
    setup = (ROOT / "setup.py").read_text()
    return {
        name.replace("{PACKAGE_NAME}", "joint_tf_publisher")
        for name in re.findall(r'f?"([\w{}-]+) = \{PACKAGE_NAME\}\.', setup)
    }


def test_main_launch_file_arguments() -> None:
    arguments = declared_arguments(LAUNCH_DIR / "joint_tf_publisher.launch.py")
    assert {"model", "frame_prefix", "use_sim_time", "params_file"} <= arguments


def test_demo_launch_file_arguments() -> None:
    assert {"model", "rate"} <= declared_arguments(LAUNCH_DIR / "demo.launch.py")


@pytest.mark.parametrize("name", ["joint_tf_publisher.launch.py", "demo.launch.py"])
def test_launch_files_start_this_package_s_executables(name: str) -> None:
    executables = started_executables(LAUNCH_DIR / name)
    assert executables
    assert executables <= console_scripts(), (executables, console_scripts())


def test_demo_starts_the_node_and_the_demo_source() -> None:
    text = (LAUNCH_DIR / "demo.launch.py").read_text()
    assert "joint_tf_publisher.launch.py" in text  # the node, through the main launch file
    assert started_executables(LAUNCH_DIR / "demo.launch.py") == {"joint-tf-publisher"}
    assert '"demo"' in text
