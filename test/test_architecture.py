"""The package's layering, checked: imports run one way and only ``ros`` needs ROS.

Layers, bottom up: the leaves ``errors``, ``transforms``, ``arrays`` and ``bounded_cache``
-> ``model`` -> ``description`` and ``kinematics`` -> ``robot`` (the facade) -> ``ros`` and
``cli``. A module may import its own subpackage and the layers below it, never a layer above
(at module level or inside a function).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

PACKAGE = REPO_ROOT / "joint_tf_publisher"

#: Modules that import nothing of the package: the array aliases and the bounded cache.
BASE = {"arrays", "bounded_cache"}
#: Leaf modules: they import the base at most, and every layer may import them.
LEAVES = BASE | {"errors", "transforms"}
#: What each part may import from the package (besides itself).
ALLOWED: dict[str, set[str]] = {
    **{base: set() for base in BASE},
    "errors": BASE,
    "transforms": BASE,
    "model": LEAVES,
    "description": LEAVES | {"model"},
    "kinematics": LEAVES | {"model"},
    "robot": LEAVES | {"model", "description", "kinematics"},
    "ros": LEAVES | {"model", "description", "kinematics", "robot"},
    "cli": LEAVES | {"model", "description", "kinematics", "robot", "ros"},
    "entry": {"ros", "cli"},
    "__init__": {"errors", "model", "robot"},
}
MAX_MODULE_LINES = 500


def part_of(module: Path) -> str:
    """The layer a module belongs to: its subpackage, or its own name at the top level."""
    relative = module.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def package_imports(module: Path) -> set[str]:
    """The package parts ``module`` imports (relative or absolute, anywhere in the file)."""
    dotted = module.relative_to(REPO_ROOT).with_suffix("").parts
    found: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(dotted[: len(dotted) - node.level])
                target = [*base, *(node.module or "").split(".")] if node.module else base
                if len(target) == 1:  # "from .. import x" at the package root: x is the part
                    target += [alias.name for alias in node.names][:1]
            else:
                target = (node.module or "").split(".")
            if target[0] == "joint_tf_publisher" and len(target) > 1:
                found.add(target[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "joint_tf_publisher" and len(parts) > 1:
                    found.add(parts[1])
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("module", MODULES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_imports_run_one_way(module: Path) -> None:
    part = part_of(module)
    upward = package_imports(module) - ALLOWED[part] - {part}
    assert not upward, f"{module.relative_to(REPO_ROOT)} ({part}) imports {sorted(upward)}"


def test_every_part_is_placed_in_the_layer_table() -> None:
    assert {part_of(module) for module in MODULES} <= set(ALLOWED)


def test_everything_outside_ros_imports_with_numpy_and_lxml_alone() -> None:
    """Import every non-ros module in a fresh interpreter that has no ROS packages at all."""
    modules = [
        ".".join(module.relative_to(REPO_ROOT).with_suffix("").parts).removesuffix(".__init__")
        for module in MODULES
        if part_of(module) not in ("ros", "entry")
    ]
    blocker = (
        "import sys\n"
        "class NoRos:\n"
        "    ROS = ('rclpy', 'rcl_interfaces', 'sensor_msgs', 'geometry_msgs', 'std_msgs',\n"
        "           'tf2_msgs', 'tf2_ros', 'builtin_interfaces', 'launch', 'launch_ros')\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in self.ROS:\n"
        "            raise ImportError(f'ROS module {name} imported')\n"
        "sys.meta_path.insert(0, NoRos())\n"
        "import importlib\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "loaded = sorted(n for n in sys.modules if n.split('.')[0] in NoRos.ROS)\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", blocker], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_no_module_is_over_the_size_a_reader_can_hold() -> None:
    long = {
        str(module.relative_to(PACKAGE)): lines
        for module in MODULES
        if (lines := len(module.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"
