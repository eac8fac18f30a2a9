"""package.xml as rosdep and a ROS 2 distro see it.

Every dependency key must resolve on each supported distro, as recorded in
test/data/rosdep_keys.yaml (facts read from github.com/ros/rosdistro by
tools/rosdep_facts.py), and every module the package, its launch files and its tests import
must be declared under the right key (the Python tf2_ros is tf2_ros_py).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from lxml import etree

ROOT = Path(__file__).resolve().parent.parent
FACTS_FILE = ROOT / "test" / "data" / "rosdep_keys.yaml"
SUPPORTED_DISTROS = ["humble", "jazzy", "kilted", "rolling"]
RUN_TAGS = ("depend", "exec_depend")
TEST_TAGS = ("test_depend",)
#: Where the package's own code lives: its run-time imports must be run dependencies.
RUN_SOURCES = ("joint_tf_publisher", "launch")
TEST_SOURCES = ("test",)

#: Imported top-level module -> the rosdep key that provides it.
MODULE_KEYS = {
    "rclpy": "rclpy",
    "tf2_ros": "tf2_ros_py",
    "tf2_msgs": "tf2_msgs",
    "sensor_msgs": "sensor_msgs",
    "geometry_msgs": "geometry_msgs",
    "std_msgs": "std_msgs",
    "diagnostic_msgs": "diagnostic_msgs",
    "builtin_interfaces": "builtin_interfaces",
    "rcl_interfaces": "rcl_interfaces",
    "rosgraph_msgs": "rosgraph_msgs",
    "ament_index_python": "ament_index_python",
    "launch": "launch",
    "launch_ros": "launch_ros",
    "launch_testing": "launch_testing",
    "launch_testing_ros": "launch_testing_ros",
    "ros2cli": "ros2cli",
    "ros2launch": "ros2launch",
    "ros2node": "ros2node",
    "ros2param": "ros2param",
    "ros2run": "ros2run",
    "tf2_tools": "tf2_tools",
    "numpy": "python3-numpy",
    "lxml": "python3-lxml",
    "xacro": "xacro",
    "matplotlib": "python3-matplotlib",
    "pytest": "python3-pytest",
    "hypothesis": "python3-hypothesis",
    "scipy": "python3-scipy",
    "yaml": "python3-yaml",
    "pinocchio": "pinocchio",
    "catkin_pkg": "python3-catkin-pkg-modules",
    "colcon_core": "python3-colcon-common-extensions",
    "colcon_python_setup_py": "python3-colcon-common-extensions",
}

#: Imported top-level modules with no rosdep key: declared by a setup.py extra (its name here)
#: and named in a package.xml comment, which says how to install them.
PIP_ONLY = {"rosbags": "bag"}


def manifest_dependencies(*tags: str) -> set[str]:
    """The keys package.xml declares under any of ``tags``."""
    root = etree.parse(str(ROOT / "package.xml")).getroot()
    return {(element.text or "").strip() for tag in tags for element in root.iter(tag)}


def all_dependencies() -> set[str]:
    """Every dependency key package.xml names, whatever its tag."""
    tags = ("build_depend", "build_export_depend", "buildtool_depend", "doc_depend")
    return manifest_dependencies(*RUN_TAGS, *TEST_TAGS, *tags)


def rosdistro_facts() -> dict[str, object]:
    """The parsed facts file."""
    with FACTS_FILE.open(encoding="utf-8") as handle:
        facts: dict[str, object] = yaml.safe_load(handle)
    return facts


def python_files(*folders: str) -> Iterator[Path]:
    """The .py files under ``folders`` of the repository."""
    for folder in folders:
        yield from sorted((ROOT / folder).rglob("*.py"))


def imported_modules(path: Path) -> set[str]:
    """Top-level names of the absolute imports in ``path`` (any depth of the syntax tree)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "importorskip"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value.split(".")[0])
    return names


def local_modules() -> set[str]:
    """Modules of this repository (the package, the benchmark harness, test helpers and
    test modules)."""
    local = {"joint_tf_publisher", "bench"}
    local.update(path.stem for path in python_files(*TEST_SOURCES))
    return local


def third_party_imports(*folders: str) -> dict[str, list[str]]:
    """Non-standard, non-local module -> the files importing it."""
    skip = set(sys.stdlib_module_names) | local_modules() | {"__future__"}
    found: dict[str, list[str]] = {}
    for path in python_files(*folders):
        for module in sorted(imported_modules(path) - skip):
            found.setdefault(module, []).append(str(path.relative_to(ROOT)))
    return found


def test_the_facts_name_their_source_and_the_supported_distros() -> None:
    facts = rosdistro_facts()
    source = facts["source"]

    assert isinstance(source, dict)
    assert source["repository"] == "https://github.com/ros/rosdistro"
    assert len(str(source["commit"])) == 40
    assert facts["distros"] == SUPPORTED_DISTROS
    assert "github.com/ros/rosdistro" in FACTS_FILE.read_text(encoding="utf-8").splitlines()[1]


@pytest.mark.parametrize("key", sorted(all_dependencies()))
def test_every_dependency_resolves_on_every_supported_distro(key: str) -> None:
    keys = rosdistro_facts()["keys"]
    assert isinstance(keys, dict)

    assert key in keys, f"{key}: no rosdistro facts; run tools/rosdep_facts.py"
    resolved = keys[key]
    missing = [distro for distro in SUPPORTED_DISTROS if not resolved.get(distro)]
    assert not missing, f"{key} does not resolve on {', '.join(missing)}"
    for distro in SUPPORTED_DISTROS:
        where = resolved[distro]
        assert where.startswith((f"{distro}/distribution.yaml", "rosdep/")), where


def test_the_facts_are_about_package_xml_and_nothing_else() -> None:
    keys = rosdistro_facts()["keys"]
    assert isinstance(keys, dict)

    assert set(keys) == all_dependencies()


def test_the_python_tf2_ros_is_declared_as_tf2_ros_py() -> None:
    run = manifest_dependencies(*RUN_TAGS)

    assert "tf2_ros_py" in run
    assert "tf2_ros" not in all_dependencies()  # the C++ package: not what `import tf2_ros` needs


def test_every_run_time_import_is_a_run_dependency() -> None:
    imports = {
        module: files
        for module, files in third_party_imports(*RUN_SOURCES).items()
        if module not in PIP_ONLY
    }
    run = manifest_dependencies(*RUN_TAGS)

    unknown = {module: files for module, files in imports.items() if module not in MODULE_KEYS}
    assert not unknown, f"map these imports to rosdep keys in MODULE_KEYS: {unknown}"
    undeclared = {
        MODULE_KEYS[module]: files
        for module, files in imports.items()
        if MODULE_KEYS[module] not in run
    }
    assert not undeclared, f"add <exec_depend> for: {undeclared}"


def test_every_test_import_is_a_test_or_run_dependency() -> None:
    imports = {
        module: files
        for module, files in third_party_imports(*TEST_SOURCES).items()
        if module not in PIP_ONLY
    }
    declared = manifest_dependencies(*RUN_TAGS, *TEST_TAGS)

    unknown = {module: files for module, files in imports.items() if module not in MODULE_KEYS}
    assert not unknown, f"map these imports to rosdep keys in MODULE_KEYS: {unknown}"
    undeclared = {
        MODULE_KEYS[module]: files
        for module, files in imports.items()
        if MODULE_KEYS[module] not in declared
    }
    assert not undeclared, f"add <test_depend> for: {undeclared}"


def test_the_import_scan_sees_lazy_and_optional_imports() -> None:
    """The scan is what the two tests above rely on: it must see imports inside functions."""
    run_imports = third_party_imports(*RUN_SOURCES)
    test_imports = third_party_imports(*TEST_SOURCES)

    assert {"rclpy", "numpy", "lxml", "xacro", "matplotlib", "tf2_msgs"} <= set(run_imports)
    assert {"launch", "launch_ros", "ament_index_python"} <= set(run_imports)
    assert {"pytest", "hypothesis", "scipy", "yaml", "pinocchio"} <= set(test_imports)


def test_rviz2_is_installed_only_on_request_and_is_no_binary_dependency() -> None:
    """catkin_pkg evaluates package.xml's conditions as rosdep does (with the environment) and
    as bloom does (with ROS_DISTRO, ROS_VERSION and ROS_PYTHON_VERSION only): rviz2 is a run
    dependency only with JOINT_TF_PUBLISHER_RVIZ=true; every other one has no condition."""
    from catkin_pkg.package import parse_package

    def run_dependencies(environment: dict[str, str]) -> set[str]:
        package = parse_package(str(ROOT / "package.xml"))
        package.evaluate_conditions(environment)
        return {
            dependency.name for dependency in package.exec_depends if dependency.evaluated_condition
        }

    bloom = {"ROS_DISTRO": "jazzy", "ROS_VERSION": "2", "ROS_PYTHON_VERSION": "3"}
    declared = manifest_dependencies("exec_depend")
    assert run_dependencies(bloom) == declared - {"rviz2"}
    assert run_dependencies({**bloom, "JOINT_TF_PUBLISHER_RVIZ": "true"}) == declared
    conditional = {
        (element.text or "").strip()
        for element in etree.parse(str(ROOT / "package.xml")).getroot().iter("exec_depend")
        if element.get("condition") is not None
    }
    assert conditional == {"rviz2"}


def test_pip_only_modules_are_a_setup_extra_and_named_in_package_xml() -> None:
    """rosbags (the bag commands) has no rosdep key: setup.py's extra declares it, package.xml
    says so in a comment, and requirements/dev.txt installs it for the tests."""
    import re

    setup = (ROOT / "setup.py").read_text()
    manifest = (ROOT / "package.xml").read_text()
    dev = (ROOT / "requirements" / "dev.txt").read_text()
    comments = " ".join(re.findall(r"<!--(.*?)-->", manifest, re.S))
    for module, extra in PIP_ONLY.items():
        assert re.search(rf'"{extra}": \[[^]]*"{module}', setup), (module, extra)
        assert module in comments and f"[{extra}]" in comments
        assert re.search(rf"^{module}\b", dev, re.M)
        assert module in third_party_imports(*RUN_SOURCES)
