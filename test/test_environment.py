"""The environment itself: ROS 2 imports, DDS between real processes, and tools/env.py.

These tests fail (never skip) when rclpy, the RMW or tf2_msgs is missing or broken, so a
broken environment fails ``make test`` and CI. The DDS tests start a second Python process
(the same interpreter, so the same ROS 2) and exchange messages with it over the loopback
on this session's private domain (see conftest.py).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

import pytest
from conftest import RosHarness, allowed_skip, private_domain_id, sigint_for_children

ROOT = Path(__file__).resolve().parent.parent
WAIT_S = 20.0

pytestmark = pytest.mark.ros


def load_env_tool() -> ModuleType:
    """tools/env.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("jtp_env_tool", ROOT / "tools" / "env.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def unique_topic(stem: str) -> str:
    """A topic name no other test or session uses."""
    return f"/jtp_env_test/{stem}_{os.getpid()}_{time.monotonic_ns()}"


@pytest.fixture
def child_process(ros_subprocess_env: dict[str, str]) -> Iterator[list[subprocess.Popen[str]]]:
    """Processes started by a test; terminated (then killed) at teardown."""
    children: list[subprocess.Popen[str]] = []
    yield children
    for child in children:
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def start_child(
    children: list[subprocess.Popen[str]], env: dict[str, str], code: str, *args: str
) -> subprocess.Popen[str]:
    """Run ``code`` in a new interpreter (this one) with ``args``; output captured."""
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    children.append(child)
    return child


def child_output(child: subprocess.Popen[str]) -> str:
    """What a (terminated) child printed, for failure messages."""
    if child.poll() is None:
        child.terminate()
    try:
        out, err = child.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
    return f"exit {child.returncode}\nstdout:\n{out}\nstderr:\n{err}"


JOINT_STATE_PUBLISHER = """
import sys, time
import rclpy
from sensor_msgs.msg import JointState
topic, token = sys.argv[1], float(sys.argv[2])
rclpy.init()
node = rclpy.create_node("jtp_env_joint_state_publisher")
publisher = node.create_publisher(JointState, topic, 10)
deadline = time.monotonic() + 60.0
count = 0
try:
    while time.monotonic() < deadline and rclpy.ok():
        message = JointState()
        message.header.stamp = node.get_clock().now().to_msg()
        message.name = ["probe_joint", "counter"]
        message.position = [token, float(count)]
        publisher.publish(message)
        count += 1
        time.sleep(0.02)
except KeyboardInterrupt:
    pass
"""

TF_ECHO = """
import sys
import rclpy
from rclpy.executors import ExternalShutdownException
from tf2_msgs.msg import TFMessage
topic_in, topic_out = sys.argv[1], sys.argv[2]
rclpy.init()
node = rclpy.create_node("jtp_env_tf_echo")
publisher = node.create_publisher(TFMessage, topic_out, 10)
node.create_subscription(TFMessage, topic_in, publisher.publish, 10)
print("echo ready", flush=True)
try:
    rclpy.spin(node)
except (KeyboardInterrupt, ExternalShutdownException):
    pass
"""

LATCHED_TF_PUBLISHER = """
import sys, time
import rclpy
from geometry_msgs.msg import TransformStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage
topic = sys.argv[1]
rclpy.init()
node = rclpy.create_node("jtp_env_latched_publisher")
qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                 reliability=ReliabilityPolicy.RELIABLE)
publisher = node.create_publisher(TFMessage, topic, qos)
transform = TransformStamped()
transform.header.frame_id = "base_link"
transform.child_frame_id = "camera_link"
transform.transform.translation.x = 0.25
transform.transform.rotation.z = 1.0
transform.transform.rotation.w = 0.0
publisher.publish(TFMessage(transforms=[transform]))
print("published", flush=True)
deadline = time.monotonic() + 60.0
try:
    while rclpy.ok() and time.monotonic() < deadline:  # SIGTERM shuts the context down
        time.sleep(0.05)
except KeyboardInterrupt:
    pass
"""


def sample_tf_message() -> object:
    """A TFMessage with two distinct transforms (frames, translations, unit quaternions)."""
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    transforms = []
    for index, (parent, child) in enumerate((("world", "base_link"), ("base_link", "tool0"))):
        transform = TransformStamped()
        transform.header.frame_id = parent
        transform.header.stamp.sec = 1700000000 + index
        transform.header.stamp.nanosec = 123456789
        transform.child_frame_id = child
        transform.transform.translation.x = 0.5 + index
        transform.transform.translation.y = -0.25
        transform.transform.translation.z = 1e-3 * (index + 1)
        half_angle_sin, half_angle_cos = 0.6, 0.8  # a unit quaternion about z
        transform.transform.rotation.z = half_angle_sin
        transform.transform.rotation.w = half_angle_cos
        transforms.append(transform)
    return TFMessage(transforms=transforms)


def test_ros_message_packages_import_and_rclpy_initialises() -> None:
    import geometry_msgs.msg
    import rclpy
    import sensor_msgs.msg
    import std_msgs.msg
    import tf2_msgs.msg

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("jtp_env_import_check", context=context)
        assert node.get_name() == "jtp_env_import_check"
        node.destroy_node()
    finally:
        context.try_shutdown()
    for module in (geometry_msgs.msg, sensor_msgs.msg, std_msgs.msg, tf2_msgs.msg):
        assert module.__name__.endswith(".msg")


def test_tf_message_has_the_upstream_definition() -> None:
    from tf2_msgs.msg import TFMessage

    assert TFMessage.get_fields_and_field_types() == {
        "transforms": "sequence<geometry_msgs/TransformStamped>"
    }


def test_joint_state_from_another_process_arrives_over_dds(
    ros: RosHarness, child_process: list[subprocess.Popen[str]], ros_subprocess_env: dict[str, str]
) -> None:
    from sensor_msgs.msg import JointState

    topic = unique_topic("joint_states")
    token = 0.125 + (os.getpid() % 1000) / 1000.0
    received: list[JointState] = []
    ros.node.create_subscription(JointState, topic, received.append, 10)
    child = start_child(child_process, ros_subprocess_env, JOINT_STATE_PUBLISHER, topic, str(token))

    arrived = ros.spin_until(lambda: len(received) >= 3, timeout_s=WAIT_S)

    assert arrived, f"no JointState from the publisher process\n{child_output(child)}"
    first = received[0]
    assert list(first.name) == ["probe_joint", "counter"]
    assert first.position[0] == token
    counters = [message.position[1] for message in received[:3]]
    assert counters == sorted(counters) and len(set(counters)) == 3


def test_tf_message_round_trips_through_another_process(
    ros: RosHarness, child_process: list[subprocess.Popen[str]], ros_subprocess_env: dict[str, str]
) -> None:
    from tf2_msgs.msg import TFMessage

    topic_out, topic_back = unique_topic("tf_out"), unique_topic("tf_back")
    echoed: list[TFMessage] = []
    ros.node.create_subscription(TFMessage, topic_back, echoed.append, 10)
    publisher = ros.node.create_publisher(TFMessage, topic_out, 10)
    child = start_child(child_process, ros_subprocess_env, TF_ECHO, topic_out, topic_back)
    sent = sample_tf_message()

    deadline = time.monotonic() + WAIT_S
    while not echoed and time.monotonic() < deadline and child.poll() is None:
        publisher.publish(sent)
        ros.spin_for(0.1)

    assert echoed, f"the echo process sent nothing back\n{child_output(child)}"
    assert echoed[0] == sent


def test_transient_local_tf_message_reaches_a_late_subscriber(
    ros: RosHarness, child_process: list[subprocess.Popen[str]], ros_subprocess_env: dict[str, str]
) -> None:
    """The /tf_static pattern: published once, before the subscriber exists."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage

    topic = unique_topic("tf_static")
    child = start_child(child_process, ros_subprocess_env, LATCHED_TF_PUBLISHER, topic)
    assert child.stdout is not None
    first_line = child.stdout.readline()
    assert first_line.strip() == "published", child_output(child)
    qos = QoSProfile(
        depth=1,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
        reliability=ReliabilityPolicy.RELIABLE,
    )
    received: list[TFMessage] = []
    ros.node.create_subscription(TFMessage, topic, received.append, qos)

    arrived = ros.spin_until(lambda: bool(received), timeout_s=WAIT_S)

    assert arrived, f"the latched TFMessage never arrived\n{child_output(child)}"
    (transform,) = received[0].transforms
    assert (transform.header.frame_id, transform.child_frame_id) == ("base_link", "camera_link")
    assert transform.transform.translation.x == 0.25
    assert (transform.transform.rotation.z, transform.transform.rotation.w) == (1.0, 0.0)


def test_conftest_gives_each_session_a_private_localhost_domain() -> None:
    domains = {private_domain_id(pid) for pid in range(1, 5000)}

    assert domains == set(range(1, 101))  # valid ids, away from the default domain 0
    assert os.environ["ROS_DOMAIN_ID"].isdigit()
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"]


def test_children_get_sigints_default_action_when_the_session_came_with_it_ignored() -> None:
    """A background command of a shell without job control comes with SIGINT ignored, and
    its children would inherit that: a ``ros2 launch`` a launch test interrupts must stop."""
    probe = "import signal; print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)"

    def child_ignores_sigint() -> bool:
        run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
        return run.stdout.strip() == "True"

    before = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        assert child_ignores_sigint()  # what a child inherits, unless the session acts
        sigint_for_children()
        assert not child_ignores_sigint()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)


#: The session's domain, as the first test below finds it.
SESSION_DOMAIN: list[str] = []


def test_a_domain_a_test_sets_in_process_is_the_tests_only_1() -> None:
    """The bench's sections set their own domain in the process (``use_bench_domain``); run
    from a test, that must not outlive the test (the next one checks)."""
    from bench import dds

    SESSION_DOMAIN.append(os.environ["ROS_DOMAIN_ID"])
    dds.use_bench_domain()
    assert 100 <= int(os.environ["ROS_DOMAIN_ID"]) < 200


def test_a_domain_a_test_sets_in_process_is_the_tests_only_2() -> None:
    assert SESSION_DOMAIN and os.environ["ROS_DOMAIN_ID"] == SESSION_DOMAIN[0]


def test_a_venv_is_kept_while_current_else_built_anew(tmp_path: Path) -> None:
    """tools/env.py's ensure_venv (every venv of the project): a venv is kept while its marker
    holds the stamp of its inputs and its check passes; else it is removed and built from
    nothing, never updated in place, so nothing an earlier build installed stays in it."""
    env_tool = load_env_tool()
    venv = tmp_path / "venv"

    def ready(path: Path) -> bool:
        return any(path.glob("built-from-*"))

    def ensure(stamp: str, rebuild: bool = False) -> str | None:
        def build(path: Path) -> None:
            path.mkdir()
            (path / f"built-from-{stamp}").touch()

        return env_tool.ensure_venv(venv, stamp, build, ready, rebuild=rebuild)

    assert ensure("a") == "no ready marker (half-built or never built)"
    assert ensure("a") is None
    assert ensure("b") == "its inputs changed"
    assert sorted(path.name for path in venv.iterdir()) == [".jtp-env-ok", "built-from-b"]
    (venv / "built-from-b").unlink()
    assert ensure("b") == "its check failed"
    assert ensure("b", rebuild=True) == "asked to"
    assert ensure("b") is None
    with pytest.raises(env_tool.EnvError, match="check still fails"):
        env_tool.ensure_venv(venv, "c", lambda path: path.mkdir(), ready)
    assert not (venv / env_tool.MARKER_NAME).exists()  # a failed build is never current


def test_env_inputs_stamp_follows_requirements_and_mode(tmp_path: Path) -> None:
    env_tool = load_env_tool()
    for name in ("setup.py", "setup.cfg", "package.xml"):
        (tmp_path / name).write_text(name, encoding="utf-8")
    (tmp_path / "requirements").mkdir()
    requirements = tmp_path / "requirements" / "dev.txt"
    requirements.write_text("pytest>=7\n", encoding="utf-8")
    env_tool.ROOT = tmp_path
    env_tool.TF2_MSGS_SOURCE = tmp_path / "interfaces" / "tf2_msgs"
    tool_copy = tmp_path / "env.py"
    tool_copy.write_text("# tool\n", encoding="utf-8")
    env_tool.__file__ = str(tool_copy)

    before = env_tool.inputs_stamp(env_tool.MODE_PIP)
    requirements.write_text("pytest>=7\nnew-dependency\n", encoding="utf-8")
    after = env_tool.inputs_stamp(env_tool.MODE_PIP)

    assert before != after
    assert env_tool.inputs_stamp(env_tool.MODE_ROS) != after
    assert env_tool.inputs_stamp(env_tool.MODE_PIP) == after


def venv_in_use() -> Path | None:
    """The project venv this test session runs in, if it is one made by tools/env.py."""
    prefix = Path(sys.prefix)
    return prefix if (prefix / ".jtp-env-ok").is_file() else None


def env_tool_python() -> str:
    """The interpreter ``make`` runs tools/env.py with (JTP_PYTHON, from tools/ros_env.sh)."""
    return os.environ.get("JTP_PYTHON") or getattr(sys, "_base_executable", sys.executable)


@pytest.mark.skipif(venv_in_use() is None, reason="not running in a venv made by tools/env.py")
def test_second_env_run_only_checks() -> None:
    """A current venv is only checked: nothing in it changes (how long it takes is no test's
    business; on an idle machine about a second)."""
    venv = venv_in_use()
    assert venv is not None
    marker = venv / ".jtp-env-ok"
    before = (marker.stat().st_mtime_ns, sorted(p.name for p in venv.iterdir()))
    command: Sequence[str] = [
        env_tool_python(),
        str(ROOT / "tools" / "env.py"),
        "--check",
        "--venv",
        str(venv),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)

    assert result.returncode == 0, result.stderr
    assert "is ready" in result.stderr
    assert (marker.stat().st_mtime_ns, sorted(p.name for p in venv.iterdir())) == before


def sys_path_of(python: Path | str) -> list[str]:
    """``sys.path`` of a fresh ``python`` (this session's environment, so a sourced ROS)."""
    code = "import json, sys; print(json.dumps(sys.path))"
    result = subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return list(json.loads(result.stdout.splitlines()[-1]))


@pytest.mark.slow
def test_a_venv_over_a_ros_venv_sees_its_site_packages_after_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kit's layout: the ROS Python is a venv; the project venv is layered on it."""
    env_tool = load_env_tool()
    base = getattr(sys, "_base_executable", sys.executable)
    ros_venv = tmp_path / "ros_venv"
    subprocess.run([base, "-m", "venv", "--without-pip", str(ros_venv)], check=True, timeout=300)
    ros_site = env_tool.venv_site_packages(ros_venv)
    (ros_site / "jtp_layer_probe.py").write_text("WHERE = 'ros venv'\n", encoding="utf-8")
    monkeypatch.setattr(env_tool, "ros_python_candidate", lambda: str(ros_venv / "bin" / "python"))

    project_venv = tmp_path / "project_venv"
    env_tool.create_venv(project_venv, env_tool.MODE_ROS)
    path = sys_path_of(project_venv / "bin" / "python")
    own_site = str(env_tool.venv_site_packages(project_venv))

    assert str(ros_site) in path and own_site in path
    assert path.index(own_site) < path.index(str(ros_site))
    assert env_tool.ros_base(env_tool.MODE_ROS) == str(ros_venv)
    assert env_tool.ros_base(env_tool.MODE_PIP) == ""


def test_the_project_venv_matches_the_ros_world() -> None:
    """pip world: ROS 2 wheels inside .venv. Kit or distro: rclpy from the ROS Python."""
    import rclpy

    world = os.environ.get("JTP_ROS_WORLD", "pip")
    rclpy_home = Path(rclpy.__file__).resolve()
    inside_venv = Path(sys.prefix).resolve() in rclpy_home.parents

    assert inside_venv == (world == "pip"), f"{world} world, rclpy from {rclpy_home}"
    if world != "pip":
        import launch_testing
        import tf2_ros

        assert int(pytest.__version__.split(".")[0]) < 9  # what launch_testing's plugin supports
        for module in (launch_testing, tf2_ros):
            assert Path(sys.prefix).resolve() not in Path(module.__file__).resolve().parents


def module_file(python: str, module: str) -> Path:
    """Where ``python`` (run in this session's environment, so over the sourced ROS) imports
    ``module`` from."""
    code = f"import {module}; print({module}.__file__)"
    result = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return Path(result.stdout.splitlines()[-1]).resolve()


@pytest.mark.parametrize("module", ["numpy", "scipy"])
def test_over_a_sourced_ros_the_venv_uses_its_numpy_and_scipy(module: str) -> None:
    """Kit or distro: .venv imports numpy and scipy from the ROS Python (whose message
    packages are built against that numpy), never a copy of its own. pip world: .venv's own."""
    imported = module_file(sys.executable, module)
    inside_venv = Path(sys.prefix).resolve() in imported.parents
    world = os.environ.get("JTP_ROS_WORLD", "pip")

    assert inside_venv == (world == "pip"), f"{world} world, {module} from {imported}"
    if world != "pip":
        assert imported == module_file(env_tool_python(), module)


def test_pip_is_held_to_the_ros_pythons_numpy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over a sourced ROS, the constraints pin numpy and scipy to the versions the ROS Python
    has (by their installed metadata) and nothing else; without one there are none."""
    env_tool = load_env_tool()
    ros_python = tmp_path / "ros" / "bin" / "python"
    site = tmp_path / "ros" / "site"
    for name, version in (("numpy", "1.21.5"), ("scipy", "1.8.0"), ("pyyaml", "5.4.1")):
        info = site / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Name: {name}\nVersion: {version}\n", encoding="utf-8")
    ros_python.parent.mkdir(parents=True)
    ros_python.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} "$@"\n')
    ros_python.chmod(0o755)
    monkeypatch.setattr(env_tool, "ros_python_candidate", lambda: str(ros_python))

    assert env_tool.ros_constraints(env_tool.MODE_ROS) == "numpy==1.21.5\nscipy==1.8.0\n"
    assert env_tool.ros_constraints(env_tool.MODE_PIP) == ""
    assert env_tool.ros_constraints(env_tool.MODE_JAZZY) == ""


def write_wheel(folder: Path, name: str, version: str) -> None:
    """A minimal pure-Python wheel ``name`` at ``version`` in ``folder`` (a local index)."""
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": f"VERSION = {version!r}\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{path},,\n" for path in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)


def test_extra_requirements_are_held_to_the_ros_pythons_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tools/env.py --extra FILE`` (``make bench``: requirements/bench.txt) installs FILE
    under the constraints of ``ros_constraints``: a package of the ROS Python stays at its
    version there, though a newer one is on the index (a local one, offline: versions 1.0 and
    2.0 of a package standing for numpy)."""
    env_tool = load_env_tool()
    index = tmp_path / "index"
    index.mkdir()
    for version in ("1.0", "2.0"):
        write_wheel(index, "jtp_abi_demo", version)
    ros_site = tmp_path / "ros-site" / "jtp_abi_demo-1.0.dist-info"
    ros_site.mkdir(parents=True)
    (ros_site / "METADATA").write_text("Name: jtp_abi_demo\nVersion: 1.0\n", encoding="utf-8")
    ros_python = tmp_path / "ros-python"
    ros_python.write_text(f'#!/bin/sh\nPYTHONPATH={ros_site.parent} exec {sys.executable} "$@"\n')
    ros_python.chmod(0o755)
    monkeypatch.setattr(env_tool, "ros_python_candidate", lambda: str(ros_python))
    monkeypatch.setattr(env_tool, "NUMPY_ABI_PACKAGES", ("jtp_abi_demo",))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    requirements = tmp_path / "extra.txt"
    requirements.write_text("jtp_abi_demo\n", encoding="utf-8")
    installed = {}
    for mode in (env_tool.MODE_ROS, env_tool.MODE_PIP):
        venv = tmp_path / mode
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        env_tool.install_requirements(venv, mode, [requirements])
        installed[mode] = module_version(venv / "bin" / "python", "jtp_abi_demo")

    expected = {env_tool.MODE_ROS: "1.0", env_tool.MODE_PIP: "2.0"}
    assert installed == expected, env_tool.LOG_FILE.read_text()


def module_version(python: Path, module: str) -> str:
    """``module.VERSION`` as ``python`` imports it."""
    code = f"import {module}; print({module}.VERSION)"
    result = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return result.stdout.strip()


def test_the_jazzy_world_sees_no_sourced_ros(monkeypatch: pytest.MonkeyPatch) -> None:
    """unsourced_env: no variable a sourced ROS or tools/ros_env.sh sets, no PATH entry inside
    a sourced prefix or venv; the rest (the DDS domain, other PATH entries) kept."""
    env_tool = load_env_tool()
    monkeypatch.setenv("AMENT_PREFIX_PATH", "/opt/ros/kilted:/ws/install/pkg")
    monkeypatch.setenv("VIRTUAL_ENV", "/kit/venv")
    monkeypatch.setenv("PATH", "/kit/venv/bin:/opt/ros/kilted/bin:/usr/local/bin:/usr/bin")
    for name in ("PYTHONPATH", "LD_LIBRARY_PATH", "JTP_ROS_WORLD", "ROS_DISTRO"):
        monkeypatch.setenv(name, "set")
    monkeypatch.setenv("ROS_DOMAIN_ID", "112")

    env = env_tool.unsourced_env()

    assert env["PATH"] == "/usr/local/bin:/usr/bin"
    assert env["ROS_DOMAIN_ID"] == "112"
    sourced = ("PYTHONPATH", "LD_LIBRARY_PATH", "JTP_ROS_WORLD", "ROS_DISTRO", "VIRTUAL_ENV")
    assert not set(sourced) & set(env)
    assert "AMENT_PREFIX_PATH" not in env


def test_other_environments_may_skip_only_off_the_project_machines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A strict run lets test/test_worlds.py skip (an interpreter missing) except in the kit
    world, where every environment must run; other modules never."""
    worlds = str(ROOT / "test" / "test_worlds.py")
    for world, allowed in (("kit", False), ("distro", True), ("pip", True)):
        monkeypatch.setenv("JTP_ROS_WORLD", world)
        assert allowed_skip(worlds) == allowed, world
        assert not allowed_skip(str(ROOT / "test" / "test_environment.py"))


ROS_ENV_SCRIPT = ROOT / "tools" / "ros_env.sh"
STUB_KIT_ENV = """
export JTP_STUB_KIT_SOURCED=$ROS2KIT
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-77}
"""


def plain_environment(**extra: str) -> dict[str, str]:
    """A shell environment without any sourced ROS (PATH and HOME only), plus ``extra``."""
    return {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), **extra}


def sourced_world(env: dict[str, str], cwd: Path = ROOT) -> dict[str, str]:
    """Variables after ``source tools/ros_env.sh`` in ``env``: the world and what it set."""
    script = (
        f"source {ROS_ENV_SCRIPT} || exit 1; "
        'echo "world=$JTP_ROS_WORLD"; echo "domain=${ROS_DOMAIN_ID-unset}"; '
        'echo "kit=${JTP_STUB_KIT_SOURCED-}"'
    )
    result = subprocess.run(
        ["bash", "-c", script], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)


@pytest.fixture
def stub_kit_scripts(tmp_path: Path) -> Path:
    """A folder shaped like ../shared/ros2kit whose env.sh only records that it was sourced."""
    scripts = tmp_path / "ros2kit"
    scripts.mkdir()
    (scripts / "build.sh").write_text("echo stub build $1\n", encoding="utf-8")
    (scripts / "env.sh").write_text(STUB_KIT_ENV, encoding="utf-8")
    return scripts


def test_ros_env_uses_a_sourced_distro_first(stub_kit_scripts: Path) -> None:
    env = plain_environment(
        ROS_DISTRO="jazzy",
        AMENT_PREFIX_PATH="/opt/ros/jazzy",
        JTP_KIT_SCRIPTS=str(stub_kit_scripts),
    )

    assert sourced_world(env)["world"] == "distro"


def test_ros_env_sourced_again_stays_in_the_kit(stub_kit_scripts: Path, tmp_path: Path) -> None:
    """A shell that sourced tools/ros_env.sh in the kit world has ROS_DISTRO and the kit's
    prefixes set: its `make test` sources it again and must stay in the kit world (taken
    for a distro, it skipped the Jazzy world's 425 tests); a distro's prefix among them is a
    distro."""
    kit = tmp_path / "kit"
    kit_prefixes = f"{kit}/install:{kit}/venv:{ROOT}/.colcon/install/joint_tf_publisher"
    env = plain_environment(
        JTP_KIT_SCRIPTS=str(stub_kit_scripts),
        ROS2KIT=str(kit),
        ROS_DISTRO="kilted",
        AMENT_PREFIX_PATH=kit_prefixes,
        JTP_ROS_WORLD="kit",
    )

    assert sourced_world(env)["world"] == "kit"
    with_distro = {**env, "AMENT_PREFIX_PATH": f"/opt/ros/jazzy:{kit_prefixes}"}
    assert sourced_world(with_distro)["world"] == "distro"


def test_ros_env_enters_the_kit_without_a_distro(stub_kit_scripts: Path, tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    env = plain_environment(JTP_KIT_SCRIPTS=str(stub_kit_scripts), ROS2KIT=str(kit))

    entered = sourced_world(env)
    default_kit = sourced_world(plain_environment(JTP_KIT_SCRIPTS=str(stub_kit_scripts)))
    chosen_domain = sourced_world({**env, "ROS_DOMAIN_ID": "150"})

    assert entered == {"world": "kit", "domain": "unset", "kit": str(kit)}
    assert default_kit["kit"] == str(ROOT / ".ros2kit")  # the git-ignored cache
    assert chosen_domain["domain"] == "150"


def test_ros_env_falls_back_to_pip_wheels_and_says_launch_tests_skip(tmp_path: Path) -> None:
    env = plain_environment(JTP_KIT_SCRIPTS=str(tmp_path / "absent"))

    prepared = subprocess.run(
        ["bash", str(ROS_ENV_SCRIPT), "prepare"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert sourced_world(env)["world"] == "pip"
    assert "launch tests SKIP" in prepared.stdout
    assert len(prepared.stdout.splitlines()) == 1


SKIPPING_MODULE = "import pytest\npytest.skip('needs launch_testing', allow_module_level=True)\n"
SKIPPING_TEST = "import pytest\n\ndef test_it():\n    pytest.skip('no tool')\n"


def strict_run(tmp_path: Path, world: str) -> str:
    """pytest's closing line for two skipping modules under conftest's strict rules: one in
    a ``launch`` folder (as test/launch/), one elsewhere."""
    (tmp_path / "launch").mkdir(exist_ok=True)
    (tmp_path / "launch" / "test_launch_node.py").write_text(SKIPPING_MODULE, encoding="utf-8")
    (tmp_path / "test_other.py").write_text(SKIPPING_TEST, encoding="utf-8")
    env = plain_environment(
        JTP_STRICT_SKIPS="1", JTP_ROS_WORLD=world, PYTHONPATH=str(ROOT / "test")
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider"]
        + ["--continue-on-collection-errors", "."],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return result.stdout.strip().splitlines()[-1]


def test_strict_run_lets_launch_tests_skip_only_in_the_pip_world(tmp_path: Path) -> None:
    pip_world = strict_run(tmp_path, "pip")
    kit_world = strict_run(tmp_path, "kit")

    assert pip_world.startswith("1 failed, 1 skipped"), pip_world
    assert kit_world.startswith("1 failed, 1 error"), kit_world
