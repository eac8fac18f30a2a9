"""The package's layering, checked: imports run one way, without cycles, and only ``ros``
(and the doctor's listener in the command line) needs ROS, at most one module of it through
rclpy's private API; no folder but the command line mixes rclpy modules with rclpy-free ones.

Layers, bottom up: the leaves ``errors``, ``transforms``, ``stamps``, ``arrays`` and
``bounded_cache`` -> ``model`` -> ``description`` and ``kinematics`` -> ``robot`` (the facade)
-> ``health`` -> ``node_core`` (the node's policy, no rclpy) -> ``ros`` (the rclpy adapter)
and ``cli``. A module may import its own subpackage and the layers below it, never a layer above
(at module level or inside a function).

Module length is a figure, not a rule: ``python test/test_architecture.py`` prints the
modules by length (split a module where its concept splits, never to meet a count).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import load_tool
from repo_paths import REPO_ROOT

PACKAGE = REPO_ROOT / "joint_tf_publisher"
COMPAT_TOOL = load_tool("compat")

#: Modules that import nothing of the package: the array aliases, the bounded cache and the
#: way to start a Python child.
BASE = {"arrays", "bounded_cache", "child_process"}
#: Leaf modules: they import the base at most, and every layer may import them.
LEAVES = BASE | {"errors", "transforms", "stamps"}
#: What each part may import from the package (besides itself).
ALLOWED: dict[str, set[str]] = {
    **{base: set() for base in BASE},
    "errors": BASE,
    "transforms": BASE,
    "stamps": BASE,
    "model": LEAVES,
    "description": LEAVES | {"model"},
    "kinematics": LEAVES | {"model"},
    "robot": LEAVES | {"model", "description", "kinematics"},
    "health": LEAVES | {"model", "description", "kinematics", "robot"},
    "node_core": LEAVES | {"model", "description", "kinematics", "robot", "health"},
    "ros": LEAVES | {"model", "description", "kinematics", "robot", "health", "node_core"},
    "cli": LEAVES | {"model", "description", "kinematics", "robot", "health", "node_core", "ros"},
    "entry": {"node_core", "ros", "cli"},
    "__init__": {"errors", "model", "robot"},
}
#: The command line's one module that imports rclpy itself (loaded only when the doctor runs).
CLI_ROS_MODULES = {"cli/doctor/listener.py"}
#: Top-level names of ROS 2 packages (a module that imports one "needs ROS").
ROS_PACKAGES = (
    "rclpy",
    "rcl_interfaces",
    "sensor_msgs",
    "geometry_msgs",
    "std_msgs",
    "tf2_msgs",
    "tf2_ros",
    "builtin_interfaces",
    "diagnostic_msgs",
    "rosgraph_msgs",
    "launch",
    "launch_ros",
)
#: rclpy modules whose import is private API (the C binding rclpy wraps).
PRIVATE_RCLPY_MODULES = ("rclpy.impl.implementation_singleton", "rclpy._rclpy_pybind11")


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


def imports_ros_package(module: Path) -> bool:
    """True when ``module`` imports a ROS 2 package (anywhere in the file)."""
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        if any(name.split(".")[0] in ROS_PACKAGES for name in names):
            return True
    return False


def needs_ros(module: Path) -> bool:
    """Where a module may import ROS: ``ros``, ``entry`` and the doctor's listener."""
    relative = str(module.relative_to(PACKAGE))
    return part_of(module) in ("ros", "entry") or relative in CLI_ROS_MODULES


def test_only_the_adapter_and_the_doctor_listener_import_ros() -> None:
    importing = {str(m.relative_to(PACKAGE)) for m in MODULES if imports_ros_package(m)}
    allowed = {str(m.relative_to(PACKAGE)) for m in MODULES if needs_ros(m)}
    assert importing <= allowed, f"ROS imported outside the adapter: {importing - allowed}"


def on_the_ros_side(module: Path) -> bool:
    """True when ``module`` imports a ROS 2 package, itself or through the package's modules
    it imports at its top (an adapter module composing others: ``from .remote_tf import``),
    as tools/compat.py follows them to keep such tests out of the worlds without ROS."""
    dotted = ".".join(module.relative_to(REPO_ROOT).with_suffix("").parts)
    return imports_ros_package(module) or COMPAT_TOOL.package_imports_ros(dotted)


def test_no_folder_but_the_command_line_mixes_ros_and_ros_free_modules() -> None:
    """A folder holds rclpy modules or rclpy-free ones (package ``__init__`` files aside), so
    its name says which; ``cli`` is the exception, its ROS side one named module."""
    folders: dict[Path, set[bool]] = {}
    for module in MODULES:
        if module.name != "__init__.py" and module.parent != PACKAGE:
            folders.setdefault(module.parent, set()).add(on_the_ros_side(module))
    mixed = {
        str(folder.relative_to(PACKAGE))
        for folder, kinds in folders.items()
        if len(kinds) > 1 and folder.relative_to(PACKAGE).parts[0] != "cli"
    }
    assert not mixed, f"folders mixing rclpy and rclpy-free modules: {sorted(mixed)}"


def test_the_doctor_is_one_folder() -> None:
    doctor = {m for m in MODULES if "doctor" in m.stem or "doctor" in m.parent.name}
    assert {m.parent for m in doctor} == {PACKAGE / "cli" / "doctor"}, sorted(map(str, doctor))


def test_everything_outside_ros_imports_with_numpy_and_lxml_alone() -> None:
    """Import every module but the ROS ones in a fresh interpreter that has no ROS packages."""
    modules = [
        ".".join(module.relative_to(REPO_ROOT).with_suffix("").parts).removesuffix(".__init__")
        for module in MODULES
        if not needs_ros(module)
    ]
    blocker = (
        "import sys\n"
        "class NoRos:\n"
        f"    ROS = {ROS_PACKAGES!r}\n"
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


def module_of(path: Path) -> str:
    """The dotted module name of a file of the package (a package's ``__init__`` by its own)."""
    return ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts).removesuffix(".__init__")


def module_imports(module: Path) -> set[str]:
    """The package modules ``module`` imports (relative or absolute, anywhere in the file):
    ``from .x import y`` counts as ``...x.y`` where that is a module, else ``...x``."""
    dotted = module_of(module).split(".")
    if module.name != "__init__.py":
        dotted = dotted[:-1]  # relative imports start from the module's package
    known = {module_of(path) for path in MODULES}
    found: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = dotted[: len(dotted) - node.level + 1] if node.level else []
            target = ".".join([*base, *filter(None, (node.module or "").split("."))])
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found & known


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of an import graph, each once, as module lists (depth-first search)."""
    cycles: list[list[str]] = []
    finished: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        for target in sorted(graph.get(name, ())):
            if target in path:
                cycle = path[path.index(target) :]
                start = cycle.index(min(cycle))  # each cycle once, from its smallest name
                if (cycle := cycle[start:] + cycle[:start]) not in cycles:
                    cycles.append(cycle)
            elif target not in finished:
                visit(target, [*path, target])
        finished.add(name)

    for name in sorted(graph):
        if name not in finished:
            visit(name, [name])
    return cycles


def test_no_import_cycle() -> None:
    """No module imports (directly or through others) a module that imports it: the package
    ``__init__`` files are left out, their re-exports are not a dependency of their parts."""
    graph = {
        module_of(path): {target for target in module_imports(path) if target != module_of(path)}
        for path in MODULES
        if path.name != "__init__.py"
    }
    packages = {module_of(path) for path in MODULES if path.name == "__init__.py"}
    graph = {name: targets - packages for name, targets in graph.items()}
    assert import_cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def uses_private_rclpy(source: str) -> list[str]:
    """Where a module's text reaches rclpy's private API: an import of its C binding
    (``PRIVATE_RCLPY_MODULES``, ``rclpy._rclpy*``), a name with a leading underscore imported
    from rclpy, or an attribute with one on a name bound to rclpy (``rclpy._x``)."""
    found: list[str] = []
    rclpy_names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] != "rclpy":
                    continue
                if alias.name.startswith(PRIVATE_RCLPY_MODULES) or any(
                    p.startswith("_") for p in parts
                ):
                    found.append(f"line {node.lineno}: import {alias.name}")
                rclpy_names.add(alias.asname or parts[0])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "rclpy":
            module = node.module or ""
            private = module.startswith(PRIVATE_RCLPY_MODULES) or any(
                p.startswith("_") for p in module.split(".")
            )
            for alias in node.names:
                if private or alias.name.startswith("_"):
                    found.append(f"line {node.lineno}: from {module} import {alias.name}")
                else:
                    rclpy_names.add(alias.asname or alias.name)
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and isinstance(node.value, ast.Name)
            and node.value.id in rclpy_names
        ):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_at_most_one_module_uses_private_rclpy_api() -> None:
    """rclpy's private API (its C binding, underscored names) may change in any release: one
    opt-in module at most may use it, the rest of ``ros/`` runs on public rclpy."""
    private = {
        str(path.relative_to(PACKAGE)): where
        for path in MODULES
        if (where := uses_private_rclpy(path.read_text()))
    }
    assert len(private) <= 1, f"modules on private rclpy API: {private}"


@pytest.mark.parametrize(
    "source",
    [
        "from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy",
        "import rclpy._rclpy_pybind11",
        "from rclpy import _rclpy_pybind11",
        "import rclpy\nrclpy._private_helper()",
        "from rclpy import executors\nexecutors._private",
        "from rclpy.executors import _private_thing",
    ],
)
def test_private_rclpy_api_is_recognised(source: str) -> None:
    assert uses_private_rclpy(source)


def test_public_rclpy_api_is_not_counted() -> None:
    source = "import rclpy\nfrom rclpy.executors import SingleThreadedExecutor\nrclpy.init()\n"
    assert uses_private_rclpy(source) == []


def module_lengths() -> list[tuple[int, str]]:
    """Every module's length in lines, longest first: a figure to read, not a cap."""
    lengths = [(len(p.read_text().splitlines()), str(p.relative_to(PACKAGE))) for p in MODULES]
    return sorted(lengths, reverse=True)


if __name__ == "__main__":
    for lines, name in module_lengths():
        print(f"{lines:5d}  {name}")
