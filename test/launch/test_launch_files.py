"""Static checks of the launch files, run everywhere (no ROS needed).

The launch files themselves run under the real launch system in the other modules of this
folder (with a sourced distro or the kit); these checks keep them consistent with each other,
with the package (installed, its executables) and with their documentation: the Python and
XML launch files offer the same arguments, the demo offers the node's arguments and starts
only this package's executables, every launch file is installed, and docs/ros.md documents
every argument.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

from lxml import etree
from repo_paths import REPO_ROOT

from joint_tf_publisher.node_core.parameters import PARAMETERS_BY_NAME

ROOT = REPO_ROOT
LAUNCH_DIR = ROOT / "launch"
NODE_LAUNCH = LAUNCH_DIR / "joint_tf_publisher.launch.py"
XML_LAUNCH = LAUNCH_DIR / "joint_tf_publisher.launch.xml"
DEMO_LAUNCH = LAUNCH_DIR / "demo.launch.py"
MULTI_ROBOT_LAUNCH = LAUNCH_DIR / "multi_robot.launch.py"
FLEET_LAUNCH = LAUNCH_DIR / "fleet.launch.py"
#: The fleet's launch arguments (``fleet.launch.py``) and ``multi_robot.launch.py``'s way to it.
FLEET_ARGUMENTS = {"robots", "params_file", "retry_period", "namespace"}
#: The arguments robot_state_publisher users expect of a drop-in launch file.
DROP_IN_ARGUMENTS = {
    "model",
    "xacro_args",
    "robot_description",
    "node_name",
    "namespace",
    "params_file",
    "publish_frequency",
    "ignore_timestamp",
    "use_sim_time",
    "frame_prefix",
    "model_name",
}
#: Beyond robot_state_publisher's, the parameters of several robots (``multi_robot.launch.py``).
MULTI_ROBOT_ARGUMENTS = {"global_frame_prefix"}
#: Beyond robot_state_publisher's, parameters of this node: joint states that arrive late
#: (``time_offset``) and statics through bridges and recorders (``static_republish_period``,
#: ``static_union``).
#: Their description and default come from the node's parameter table (``table_argument``).
TABLE_ARGUMENTS = {"time_offset", "static_republish_period", "static_union"}
#: Beyond the drop-in arguments, the Python launch files start RViz on request (the XML one
#: cannot tell the root link for RViz's fixed frame without Python) and hand the node a file
#: to read and reload (the XML one always sets robot_description: it cannot leave it unset),
#: and the links of the remote output (a list, which an XML argument cannot leave unset).
PYTHON_ONLY_ARGUMENTS = {"rviz", "description_file", "remote_frames"}
#: The one executable of another package they may start: RViz, an optional dependency.
VIEWER = ("rviz2", "rviz2")


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


def module_constants(tree: ast.Module) -> dict[str, object]:
    """Module-level ``NAME = <literal>`` assignments."""
    constants: dict[str, object] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    constants[target.id] = statement.value.value
    return constants


def value_of(node: ast.expr, constants: dict[str, object]) -> object:
    """A literal, or a module constant's value."""
    if isinstance(node, ast.Constant):
        return node.value
    assert isinstance(node, ast.Name) and node.id in constants, ast.dump(node)
    return constants[node.id]


def declared_arguments(path: Path) -> set[str]:
    """The names of the ``DeclareLaunchArgument(name, ...)`` and ``table_argument(name)``
    calls of a Python launch file (but for ``table_argument``'s own, of its parameter)."""
    tree = ast.parse(path.read_text())
    constants = module_constants(tree)
    helpers = {
        node.args.args[0].arg
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "table_argument"
    }
    calls = calls_named(tree, "DeclareLaunchArgument") + calls_named(tree, "table_argument")
    return {
        str(value_of(call.args[0], constants))
        for call in calls
        if not (isinstance(call.args[0], ast.Name) and call.args[0].id in helpers)
    }


def started_executables(path: Path) -> set[tuple[str, str]]:
    """(package, executable) of every ``Node(...)`` of a Python launch file."""
    tree = ast.parse(path.read_text())
    constants = module_constants(tree)
    started = set()
    for call in calls_named(tree, "Node"):
        keywords = {
            k.arg: value_of(k.value, constants)
            for k in call.keywords
            if k.arg
            in (
                "package",
                "executable",
            )
        }
        started.add((str(keywords["package"]), str(keywords["executable"])))
    return started


def xml_arguments() -> set[str]:
    return {arg.get("name") for arg in etree.parse(str(XML_LAUNCH)).getroot().iter("arg")}


def console_scripts() -> set[str]:
    setup = (ROOT / "setup.py").read_text()
    return {
        name.replace("{PACKAGE_NAME}", "joint_tf_publisher")
        for name in re.findall(r'f?"([\w{}-]+) = \{PACKAGE_NAME\}\.', setup)
    }


def installed_launch_patterns() -> list[str]:
    """The glob patterns setup.py installs into share/<package>/launch."""
    setup = (ROOT / "setup.py").read_text()
    entry = re.search(r'\(f"\{SHARE_DIR\}/launch", files_matching\(([^)]*)\)\)', setup)
    assert entry is not None, "setup.py installs no launch folder"
    return re.findall(r'"([^"]+)"', entry.group(1))


def test_the_node_launch_file_offers_the_drop_in_arguments_and_rviz() -> None:
    assert declared_arguments(NODE_LAUNCH) == (
        DROP_IN_ARGUMENTS | MULTI_ROBOT_ARGUMENTS | TABLE_ARGUMENTS | PYTHON_ONLY_ARGUMENTS
    )


def test_the_xml_launch_file_offers_the_same_arguments() -> None:
    assert xml_arguments() == DROP_IN_ARGUMENTS | MULTI_ROBOT_ARGUMENTS | TABLE_ARGUMENTS


def test_the_xml_launch_file_s_parameter_defaults_and_descriptions_are_the_node_s() -> None:
    """The XML file always sets its parameters: at the node's defaults unless given. Those
    of ``TABLE_ARGUMENTS`` also say what the parameter table says."""
    for arg in etree.parse(str(XML_LAUNCH)).getroot().iter("arg"):
        spec = PARAMETERS_BY_NAME.get(arg.get("name"))
        if spec is None or spec.name == "robot_description":  # that one: xacro's output
            continue
        default = arg.get("default")
        if isinstance(spec.default, bool):
            assert default == str(spec.default).lower(), spec.name
        elif isinstance(spec.default, float):
            assert float(default) == spec.default, spec.name
        else:
            assert default == spec.default, spec.name
        if spec.name in TABLE_ARGUMENTS:
            assert arg.get("description") == spec.description, spec.name


def test_multi_robot_passes_the_node_s_table_arguments_on_to_every_robot() -> None:
    constants = ast.parse(MULTI_ROBOT_LAUNCH.read_text())
    (passed_on,) = (
        ast.literal_eval(statement.value)
        for statement in constants.body
        if isinstance(statement, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "PASSED_ON" for t in statement.targets)
    )
    assert TABLE_ARGUMENTS <= set(passed_on) <= declared_arguments(NODE_LAUNCH)
    assert set(passed_on) <= declared_arguments(MULTI_ROBOT_LAUNCH)


def test_the_demo_offers_the_node_s_arguments_and_its_rate() -> None:
    text = DEMO_LAUNCH.read_text()
    assert declared_arguments(DEMO_LAUNCH) == {"rate"}
    # The node's arguments and node come from the node's launch file itself.
    assert "NODE_LAUNCH.declare_arguments()" in text
    assert "NODE_LAUNCH.node_actions(context)" in text
    assert 'with_name("joint_tf_publisher.launch.py")' in text


def test_the_demo_source_shares_the_node_s_namespace() -> None:
    tree = ast.parse(DEMO_LAUNCH.read_text())
    (source,) = calls_named(tree, "Node")
    namespace = next(k.value for k in source.keywords if k.arg == "namespace")
    assert "LaunchConfiguration" in ast.dump(namespace) and "'namespace'" in ast.dump(namespace)


def test_launch_files_start_only_this_package_s_executables_and_rviz() -> None:
    started = set().union(
        *(started_executables(path) for path in (NODE_LAUNCH, DEMO_LAUNCH, FLEET_LAUNCH))
    )
    started |= started_executables(MULTI_ROBOT_LAUNCH)
    assert VIEWER in started
    started.remove(VIEWER)
    (node,) = etree.parse(str(XML_LAUNCH)).getroot().iter("node")
    started.add((node.get("pkg"), node.get("exec")))
    assert {package for package, _ in started} == {"joint_tf_publisher"}
    assert {executable for _, executable in started} == console_scripts()


def test_the_fleet_launch_files_start_one_fleet() -> None:
    """One ``joint_tf_fleet`` each (its ``namespace``, launch_ros's ``-r __ns:=``, places the
    fleet's node; its robots nest under it: test/ros/test_fleet_namespaced.py)."""
    for path in (FLEET_LAUNCH, MULTI_ROBOT_LAUNCH):
        tree = ast.parse(path.read_text())
        constants = module_constants(tree)
        fleets = [
            call
            for call in calls_named(tree, "Node")
            if any(
                k.arg == "executable" and value_of(k.value, constants) == "joint_tf_fleet"
                for k in call.keywords
            )
        ]
        assert len(fleets) == 1, path


def test_the_fleet_launch_file_offers_robots_params_file_retry_period_and_namespace() -> None:
    assert declared_arguments(FLEET_LAUNCH) == FLEET_ARGUMENTS
    assert "one_process" in declared_arguments(MULTI_ROBOT_LAUNCH)


def test_every_launch_file_is_installed() -> None:
    patterns = installed_launch_patterns()
    for path in LAUNCH_DIR.iterdir():
        if path.name == "__pycache__":  # written where a test imports a launch file
            continue
        relative = f"launch/{path.name}"
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), relative


def test_docs_describe_every_launch_argument() -> None:
    docs = (ROOT / "docs" / "ros.md").read_text()
    for name in (
        DROP_IN_ARGUMENTS
        | MULTI_ROBOT_ARGUMENTS
        | TABLE_ARGUMENTS
        | PYTHON_ONLY_ARGUMENTS
        | FLEET_ARGUMENTS
        | {"rate", "one_process"}
    ):
        assert f"`{name}" in docs, name
