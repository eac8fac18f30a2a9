"""Helpers for the tests that run the package under the real ROS 2 tools (a distro or the kit).

``ros2 launch`` of the package's launch files in their own process group (``Launch``), ros2
CLI commands (``ros2``), and JointState / TF exchanges over the test's DDS participant
(``node_harness.Probe``). Every wait is on a condition with a generous timeout (the test machine is
loaded), never a fixed sleep; every process started here is ended by its test.

Importing it skips the importing test module where ROS 2's launch tools are missing (the pip
world without the kit; conftest.py fails such a skip anywhere else). The launch_testing
modules share their preamble here too: ``node_launch`` includes the package's launch file,
``ready_to_test`` adds ``ReadyToTest``, ``ProbeTestCase`` opens a ``node_harness.Probe``
for a test class, ``ExitCodes`` is the post-shutdown check. Such a module first puts this
folder and test/ on ``sys.path`` (one line), because ``launch_test FILE`` runs it outside
pytest, which otherwise does that.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import unittest
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

#: Why a module that imports this one is skipped (only allowed in the pip world, conftest.py).
REASON = "needs ROS 2's launch tools: a sourced distro or the kit (make test)"
pytest.importorskip("launch_testing", reason=REASON)
pytest.importorskip("launch_ros", reason=REASON)

import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
import numpy as np  # noqa: E402
from launch import Action, LaunchDescription  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from node_harness import Probe, open_probe, pause, stamp_msg, stamp_ns, wait_until  # noqa: E402
from rcl_interfaces.srv import GetParameters  # noqa: E402
from rclpy.parameter import parameter_value_to_python  # noqa: E402
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from repo_paths import REPO_ROOT  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402

PACKAGE = "joint_tf_publisher"
REPO = REPO_ROOT
#: Longest wait for a launch to bring its node up (python imports, DDS discovery), seconds.
START_S = 90.0
#: Longest wait for a launch to end after SIGINT, seconds.
STOP_S = 30.0
#: Longest a ros2 CLI command may take, seconds.
CLI_S = 60.0
#: Characters of a launch's output that a failure shows (``Launch.describe``).
OUTPUT_TAIL = 6000

#: The package's node launch file, and the arm with a mimic gripper the launch tests start.
NODE_LAUNCH_FILE = REPO / "launch" / "joint_tf_publisher.launch.py"
MIMIC_ARM = REPO / "test" / "urdf" / "arm_mimic_gripper.urdf"

_PID_LINE = re.compile(r"\[INFO\] \[([\w.-]+)\]: process started with pid \[(\d+)\]")


def package_share() -> Path:
    """The installed share folder of the package; fails the test with what to do if absent."""
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        return Path(get_package_share_directory(PACKAGE))
    except PackageNotFoundError:
        pytest.fail(
            f"package {PACKAGE} is not installed in the sourced ROS 2 environment: "
            "colcon build it and source its install/setup.bash (make test does)"
        )


class Launch:
    """``ros2 launch joint_tf_publisher FILE name:=value ...`` in a process group of its own
    (FILE one of the package's launch files, or the path of another launch file).

    Output (the launch's and, with output="screen", its nodes') goes to ``log_path``.
    ``stop`` ends whatever is left of the group; use the ``launched`` context manager.
    """

    def __init__(
        self,
        launch_file: str,
        arguments: Mapping[str, str],
        log_path: Path,
        env: Mapping[str, str] | None = None,
    ) -> None:
        package_share()
        self.launch_file = launch_file
        self.log_path = log_path
        where = [launch_file] if os.path.isabs(launch_file) else [PACKAGE, launch_file]
        command = ["ros2", "launch", *where]
        command += [f"{name}:={value}" for name, value in arguments.items()]
        environment = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
        with open(log_path, "w") as log:
            self.process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
                start_new_session=True,
            )
        self.pgid = self.process.pid  # start_new_session: the launch leads its group

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_output(self, pattern: str, timeout: float = START_S) -> re.Match[str]:
        """The first match of the regular expression ``pattern`` in the output."""
        found: list[re.Match[str]] = []

        def seen() -> bool:
            match = re.search(pattern, self.output())
            if match is not None:
                found.append(match)
            elif self.process.poll() is not None:
                pytest.fail(f"launch ended ({self.process.returncode}):\n{self.output()[-3000:]}")
            return match is not None

        wait_until(seen, timeout, what=lambda: f"{pattern!r} in:\n{self.output()[-3000:]}")
        return found[0]

    @contextmanager
    def explained(self) -> Iterator[None]:
        """A failure inside the block (``pytest.fail``, an assertion) fails again with
        ``describe()`` appended: which of the launch's processes still run, and its output
        and its nodes' (output="screen"), so that the failure explains itself."""
        try:
            yield
        except (AssertionError, pytest.fail.Exception) as err:
            pytest.fail(f"{err}\n{self.describe()}")

    def describe(self) -> str:
        """The launch's state for a failure message: the launch process, each process it
        started (running or ended) and the tail of the output."""
        status = self.process.poll()
        launch = "running" if status is None else f"ended with exit code {status}"
        processes = ", ".join(
            f"{name} (pid {pid}, {'running' if _running(pid) else 'ended'})"
            for name, pid in self.process_pids().items()
        )
        return (
            f"ros2 launch {self.launch_file}: {launch}; started: {processes or 'nothing'}\n"
            f"--- its output and its nodes' ({self.log_path}), last {OUTPUT_TAIL} characters:\n"
            f"{self.output()[-OUTPUT_TAIL:]}"
        )

    def process_pids(self) -> dict[str, int]:
        """The processes launch started so far: launch's process name -> pid."""
        return {name: int(pid) for name, pid in _PID_LINE.findall(self.output())}

    def group_alive(self) -> bool:
        """True while any process of the launch's process group exists."""
        try:
            os.killpg(self.pgid, 0)
        except ProcessLookupError:
            return False
        return True

    def interrupt(self, whole_group: bool = False) -> int:
        """SIGINT to the launch process (or, as Ctrl-C in a terminal, to its whole process
        group); its exit code once it ended."""
        if whole_group:
            os.killpg(self.pgid, signal.SIGINT)
        else:
            self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=STOP_S)

    def stop(self) -> None:
        """End every process of the group still running: SIGINT, SIGTERM, then SIGKILL."""
        for sig, wait_s in ((signal.SIGINT, 15.0), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            if not self.group_alive():
                break
            with _ignore_missing():
                os.killpg(self.pgid, sig)
            deadline = time.monotonic() + wait_s
            while self.group_alive() and time.monotonic() < deadline:
                self.process.poll()  # reap the leader so the group can empty
                time.sleep(0.05)
        with _ignore_missing():
            self.process.wait(timeout=5.0)

    def assert_clean_stop(self, exit_code: int) -> None:
        """The launch ended with ``exit_code`` 0, its processes finished cleanly, none left,
        and no traceback in the output (the nodes' output included)."""
        deadline = time.monotonic() + STOP_S
        while self.group_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        output = self.output()
        assert not self.group_alive(), f"processes left in the launch's group:\n{output[-3000:]}"
        assert exit_code == 0, f"ros2 launch exit code {exit_code}:\n{output[-3000:]}"
        assert "Traceback" not in output, output[-4000:]
        assert "process has died" not in output, output[-4000:]
        finished = output.count("process has finished cleanly")
        assert finished == len(self.process_pids()), output[-4000:]


def _running(pid: int) -> bool:
    """True while process ``pid`` exists and is no zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@contextmanager
def _ignore_missing() -> Iterator[None]:
    try:
        yield
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass


@contextmanager
def launched(
    launch_file: str,
    arguments: Mapping[str, str],
    log_path: Path,
    env: Mapping[str, str] | None = None,
) -> Iterator[Launch]:
    """A ``Launch`` (``env``: extra environment variables) whose whole process group is
    ended when the block ends."""
    launch = Launch(launch_file, arguments, log_path, env)
    try:
        yield launch
    finally:
        launch.stop()


def ros2(*arguments: str, check: bool = True) -> str:
    """Run ``ros2 ARGUMENTS`` and return its standard output; fail with its output if it
    exits non-zero and ``check``. Node lookups go through the session's ros2 daemon."""
    result = subprocess.run(
        ["ros2", *arguments], capture_output=True, text=True, timeout=CLI_S, env=dict(os.environ)
    )
    if check and result.returncode != 0:
        pytest.fail(f"ros2 {' '.join(arguments)}: exit {result.returncode}\n{result.stderr}")
    return result.stdout


def ros2_on_node(node: str, *arguments: str) -> str:
    """Standard output and error of ``ros2 ARGUMENTS``, a command about ``node``, retried
    while the daemon has not discovered the node yet ("Node not found"), up to ``START_S``;
    fails the test if the command exits non-zero."""
    deadline = time.monotonic() + START_S
    while True:
        result = subprocess.run(["ros2", *arguments], capture_output=True, text=True, timeout=CLI_S)
        output = result.stdout + result.stderr
        if "Node not found" not in output:
            if result.returncode != 0:
                command = " ".join(arguments)
                pytest.fail(f"ros2 {command}: exit {result.returncode}\n{output}")
            return output
        if time.monotonic() > deadline:
            pytest.fail(f"ros2 {' '.join(arguments)}: {node} not found")
        time.sleep(0.5)


@contextmanager
def ros2_daemon() -> Iterator[None]:
    """The ros2 CLI daemon of this session's DDS domain, stopped afterwards."""
    ros2("daemon", "start")
    try:
        yield
    finally:
        ros2("daemon", "stop", check=False)


# -- DDS exchanges -----------------------------------------------------------------------------


#: Depth of the test's /tf_static readers: tf2_ros's TransformListener's, room for the latched
#: set of every node at once.
STATIC_DEPTH = 100
#: How long a /tf_static read listens past its first message for the latched sets of the
#: other live publishers (a new reader's matches with them do not all come at once), seconds.
STATIC_SETTLE_S = 0.5


def static_listener_qos() -> QoSProfile:
    """QoS of the test's /tf_static readers: reliable, transient local, keep last
    ``STATIC_DEPTH``, as tf2_ros's TransformListener reads /tf_static.

    Not keep last 1 (``node_harness.latched_qos``), which is right for one publisher only:
    /tf_static has no key, so such a reader holds one sample for all its writers. When the
    latched sets of several nodes reach it before it takes one (a new reader matching nodes
    that all published already, or nodes starting together), it keeps one of them (Fast DDS:
    the most recently published, by source timestamp) and drops the others for good; a new
    reader meets the same race again, so the node that published first was never seen."""
    return QoSProfile(
        depth=STATIC_DEPTH,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )


def wait_static_children(
    probe: Probe, children: set[str], timeout: float = START_S
) -> dict[str, Any]:
    """child frame -> TransformStamped of the latched /tf_static sets of the live publishers,
    read by one new (late-joining) subscription once it holds every frame of ``children``
    and has listened ``STATIC_SETTLE_S`` past its first message (``children`` empty: the
    sets heard in that time).

    One subscription for the whole wait, never a new one per try: a node that starts late is
    matched by it and delivers its set then. On a timeout the failure names the missing
    frames, the frames heard and the nodes publishing /tf_static."""
    received: list[TFMessage] = []
    first_at: list[float] = []  # monotonic time of the first message

    def on_message(msg: TFMessage) -> None:
        first_at[:] = first_at or [time.monotonic()]
        received.append(msg)

    def heard() -> dict[str, Any]:
        return {t.child_frame_id: t for msg in received for t in msg.transforms}

    def complete() -> bool:
        settled = bool(first_at) and time.monotonic() >= first_at[0] + STATIC_SETTLE_S
        return settled and children <= set(heard())

    def missing() -> str:
        frames = heard()
        return (
            f"{sorted(children - set(frames))} on /tf_static; heard {len(received)} "
            f"message(s) with {sorted(frames)}; {static_publishers(probe)}"
        )

    subscription = probe.node.create_subscription(
        TFMessage, "/tf_static", on_message, static_listener_qos()
    )
    try:
        wait_until(complete, timeout, what=missing)
    finally:
        probe.node.destroy_subscription(subscription)
    return heard()


def static_publishers(probe: Probe) -> str:
    """The nodes the probe sees publishing /tf_static, for failure messages."""
    infos = probe.node.get_publishers_info_by_topic("/tf_static")
    nodes = sorted(f"{info.node_namespace.rstrip('/')}/{info.node_name}" for info in infos)
    return f"{len(nodes)} /tf_static publisher(s): {nodes}"


def joint_state(names: Sequence[str], positions: Sequence[float], stamp_s: float) -> Any:
    msg = JointState()
    msg.header.stamp = stamp_msg(stamp_s)
    msg.name = list(names)
    msg.position = [float(p) for p in positions]
    return msg


def send_until_tf(
    probe: Probe,
    topic: str,
    msg: Any,
    child: str,
    accept: Callable[[Any], bool] | None = None,
    timeout: float = START_S,
    time_offset_s: float = 0.0,
) -> dict[str, Any]:
    """Publish ``msg`` on ``topic`` every 0.5 s until /tf carries ``child`` at its stamp plus
    ``time_offset_s`` (the node's ``time_offset``, seconds) (and, with ``accept``, a
    transform for which ``accept(transform)`` holds); return that /tf message's transforms
    by child frame.

    Repeated because the node's best-effort subscription drops what is sent before it has
    discovered this publisher."""
    publisher = probe.node.create_publisher(type(msg), topic, 10)
    stamp = stamp_ns(msg.header.stamp) + round(time_offset_s * 1e9)
    start = len(probe.tf)
    found: list[dict[str, Any]] = []

    def seen() -> bool:
        for message in probe.tf.messages(start):
            by_child = {t.child_frame_id: t for t in message.transforms}
            transform = by_child.get(child)
            if transform is None or stamp_ns(transform.header.stamp) != stamp:
                continue
            if accept is None or accept(transform.transform):
                found.append(by_child)
                return True
        return False

    try:
        deadline = time.monotonic() + timeout
        while not seen():
            if time.monotonic() > deadline:
                pytest.fail(f"no /tf for {child} at stamp {stamp} ns on {topic}")
            publisher.publish(msg)
            wait_until_or_timeout(seen, 0.5)
    finally:
        probe.node.destroy_publisher(publisher)
    return found[0]


def get_parameters(probe: Probe, node: str, names: Sequence[str]) -> dict[str, Any]:
    """``names`` -> value of the parameters of ``node`` (its fully qualified name), by the
    GetParameters service, as parameter clients (gz_ros2_control, ros2 param) read them."""
    client = probe.node.create_client(GetParameters, f"{node}/get_parameters")
    try:
        wait_until(client.service_is_ready, START_S, what=f"{node}/get_parameters")
        future = client.call_async(GetParameters.Request(names=list(names)))
        wait_until(future.done, START_S, what=f"{node}/get_parameters response")
        values = future.result().values
    finally:
        probe.node.destroy_client(client)
    assert len(values) == len(names), f"{node} answered {len(values)} of {len(names)} values"
    pairs = zip(names, values, strict=True)
    return {name: parameter_value_to_python(value) for name, value in pairs}


def transform_matrix(transform: Any) -> np.ndarray:
    """(4, 4) pose of a geometry_msgs/Transform, the rotation by scipy (independent code)."""
    pose = np.eye(4)
    r, t = transform.rotation, transform.translation
    pose[:3, :3] = Rotation.from_quat([r.x, r.y, r.z, r.w]).as_matrix()
    pose[:3, 3] = (t.x, t.y, t.z)
    return pose


def wait_until_or_timeout(condition: Any, timeout: float) -> bool:
    """Spin the probe until ``condition()`` holds or ``timeout`` s pass; its last value."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        pause(0.01)
    return True


# -- robots and joint values -------------------------------------------------------------------


def leader_values(robot: Robot) -> dict[str, Any]:
    """A configuration of every moving joint that is no mimic follower, inside its limits and
    away from zero: joint name -> cfg value (``Joint`` documents the shapes)."""
    rng = np.random.default_rng(20261123)
    cfg: dict[str, Any] = {}
    for joint in robot.joints.values():
        if joint.joint_type == "fixed" or joint.mimic is not None:
            continue
        if joint.joint_type == "floating":
            quaternion = rng.normal(size=4)
            cfg[joint.name] = np.concatenate(
                [rng.uniform(-1.0, 1.0, 3), quaternion / np.linalg.norm(quaternion)]
            )
        elif joint.joint_type == "ball":
            quaternion = rng.normal(size=4)
            cfg[joint.name] = quaternion / np.linalg.norm(quaternion)
        elif joint.joint_type == "planar":
            cfg[joint.name] = rng.uniform(-1.0, 1.0, 3)
        elif joint.joint_type in ("revolute2", "universal"):
            cfg[joint.name] = np.array(
                [inside(joint.limit, rng), inside(joint.limit2, rng)], dtype=np.float64
            )
        else:
            cfg[joint.name] = inside(joint.limit, rng)
    return cfg


def inside(limit: Any, rng: np.random.Generator) -> float:
    """A value strictly inside ``limit`` (a Limit or None), in (-1, 1) where unlimited."""
    lower, upper = -1.0, 1.0
    if limit is not None and np.isfinite(limit.lower) and np.isfinite(limit.upper):
        if limit.upper > limit.lower:
            lower, upper = float(limit.lower), float(limit.upper)
    span = upper - lower
    return float(rng.uniform(lower + 0.1 * span, upper - 0.1 * span))


def joint_state_of(robot: Robot, cfg: Mapping[str, Any], stamp_s: float) -> Any:
    """A JointState of ``cfg`` by ``Joint.variable_names`` (MoveIt's names for multi-DOF)."""
    names: list[str] = []
    positions: list[float] = []
    for name, value in cfg.items():
        names.extend(robot.joints[name].variable_names)
        positions.extend(float(v) for v in np.atleast_1d(value))
    return joint_state(names, positions, stamp_s)


def kit_python() -> str:
    """The interpreter of this test session (the distro's or the kit's, with tf2_ros)."""
    return sys.executable


# -- launch_testing modules ---------------------------------------------------------------------


def node_launch(**arguments: str) -> IncludeLaunchDescription:
    """The package's ``joint_tf_publisher.launch.py`` included with ``arguments``."""
    return IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(NODE_LAUNCH_FILE)),
        launch_arguments=arguments.items(),
    )


def ready_to_test(*actions: Action) -> LaunchDescription:
    """A launch_testing ``generate_test_description``'s result: ``actions``, then ReadyToTest."""
    return LaunchDescription([*actions, launch_testing.actions.ReadyToTest()])


class ProbeTestCase(unittest.TestCase):
    """A test class with ``self.probe``, a ``node_harness.Probe`` open while its tests run."""

    probe: Probe
    _opened: Any

    @classmethod
    def setUpClass(cls) -> None:
        cls._opened = open_probe()
        cls.probe = cls._opened.__enter__()

    @classmethod
    def tearDownClass(cls) -> None:
        cls._opened.__exit__(None, None, None)


class ExitCodes:
    """Mixin of a module's ``@launch_testing.post_shutdown_test()`` class (a mixin, not a
    TestCase, so that launch_testing does not run it before shutdown as well): every process
    of the launch exited with code 0."""

    def test_exit_codes(self, proc_info: Any) -> None:
        launch_testing.asserts.assertExitCodes(proc_info)
