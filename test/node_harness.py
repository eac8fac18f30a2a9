"""The end-to-end harness: the node's console script in a subprocess, talked to over DDS.

Used by ``test_node_e2e.py`` and ``test_node_e2e_sdf.py``. The test process is an ordinary
ROS 2 participant, a ``Probe`` (conftest.py's ``probe`` fixture, one per test module): it
publishes JointState and MultiDOFJointState, records /tf, /tf_static and robot_description,
and calls the node's set_parameters service. ``NodeUnderTest`` starts the real console
script in a namespace with a parameters file; every wait is on a condition with a generous
timeout, never a fixed sleep. All rclpy calls stay on the test's thread: waiting helpers
spin the probe (``pause``). ``EXECUTORS`` and ``executor_variable`` run a module's nodes
under each executor the node can spin with (``runtime.EXECUTOR_VARIABLE``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import rclpy
from geometry_msgs.msg import Transform, TransformStamped
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from scipy.spatial.transform import Rotation
from sensor_msgs.msg import JointState, MultiDOFJointState
from test_user_errors import NODE, params_file
from tf2_msgs.msg import TFMessage

from joint_tf_publisher import Robot
from joint_tf_publisher.ros import runtime
from joint_tf_publisher.stamps import ns_to_stamp, stamp_to_ns

WAIT_S = 20.0
#: A service request with no answer after this long is sent again, seconds.
RESEND_S = 2.0
TOLERANCE = 1e-6
#: The executors the node can spin with under this rclpy, best first (test ids).
EXECUTORS = runtime.available_executors()

# -- environment ----------------------------------------------------------------------------


@pytest.fixture(scope="module", params=EXECUTORS, name="probe")
def probe_per_executor(request: pytest.FixtureRequest, probe: Probe) -> Iterator[Probe]:
    """conftest's probe; every node started while it is in use spins with one executor
    (each in turn: the module's tests run once per executor). A module that imports this
    fixture has its ``probe`` replaced by it."""
    with executor_variable(request.param):
        yield probe


def wait_until(
    condition: Callable[[], Any],
    timeout: float = WAIT_S,
    what: str | Callable[[], str] = "",
) -> Any:
    """Poll ``condition`` until it returns something truthy; fail after ``timeout`` s.

    ``what`` names the condition in the failure (a callable is evaluated at the failure).
    """
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            text = what() if callable(what) else what
            pytest.fail(f"timed out after {timeout:g} s waiting for {text or condition}")
        pause(0.01)


def pause(seconds: float) -> None:
    """Let ``seconds`` pass while the probe (if any) handles what arrives."""
    if _active_probes:
        _active_probes[-1].spin_for(seconds)
    else:
        time.sleep(seconds)


@contextlib.contextmanager
def executor_variable(executor: str) -> Iterator[str]:
    """Inside, ``runtime.EXECUTOR_VARIABLE`` is ``executor``: node processes started then
    (they inherit ``os.environ``) spin with it. The previous value is restored after."""
    previous = os.environ.get(runtime.EXECUTOR_VARIABLE)
    os.environ[runtime.EXECUTOR_VARIABLE] = executor
    try:
        yield executor
    finally:
        if previous is None:
            del os.environ[runtime.EXECUTOR_VARIABLE]
        else:
            os.environ[runtime.EXECUTOR_VARIABLE] = previous


# -- the test's DDS participant ----------------------------------------------------------------


def tf_qos() -> QoSProfile:
    return QoSProfile(
        depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE
    )


def latched_qos() -> QoSProfile:
    return QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
    )


class Recorder:
    """Messages received by one subscription, in arrival order."""

    def __init__(self) -> None:
        self._messages: list[Any] = []

    def __call__(self, msg: Any) -> None:
        self._messages.append(msg)

    def messages(self, start: int = 0) -> list[Any]:
        return self._messages[start:]

    def __len__(self) -> int:
        return len(self._messages)


_active_probes: list[Probe] = []


class Probe:
    """The test's ROS participant: one node, spun on the test's thread while it waits.

    All rclpy calls stay on one thread (no background executor): waiting helpers call
    ``pause``, which spins the executor.
    """

    def __init__(self) -> None:
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("node_e2e_probe", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.tf = Recorder()
        self.node.create_subscription(TFMessage, "/tf", self.tf, tf_qos())

    def spin_for(self, seconds: float) -> None:
        """Handle arriving messages and responses for ``seconds``."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0.0:
            self.executor.spin_once(timeout_sec=min(0.01, remaining))

    def subscribe(self, msg_type: Any, topic: str, qos: QoSProfile) -> Recorder:
        recorder = Recorder()
        self.node.create_subscription(msg_type, topic, recorder, qos)
        return recorder

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


@contextlib.contextmanager
def open_probe() -> Iterator[Probe]:
    """A Probe that waiting helpers (``pause``) spin while it is open; closed afterwards.

    The ``probe`` fixture of conftest.py (one per test module) wraps this."""
    participant = Probe()
    _active_probes.append(participant)
    try:
        yield participant
    finally:
        _active_probes.remove(participant)
        participant.close()


class NodeUnderTest:
    """The console script ``joint_tf_publisher`` running in a namespace, talked to over DDS."""

    def __init__(
        self,
        probe: Probe,
        workdir: Path,
        namespace: str,
        params: dict[str, Any],
        arguments: Sequence[str] = (),
        launcher: Sequence[str] = (),
    ):
        """``params``: the node's parameters file (a ``/**`` section); ``arguments``: ROS
        arguments after it (``-p name:=value``); ``launcher``: a command that runs the node's
        (``READS_AS_A_USER``)."""
        self.probe = probe
        self.namespace = namespace
        self.prefix = str(params.get("frame_prefix", ""))
        workdir.mkdir(parents=True, exist_ok=True)
        params_path = params_file(workdir / "params.yaml", **params)
        self.stdout_path = workdir / "stdout.txt"
        self.stderr_path = workdir / "stderr.txt"
        command = [*launcher, *NODE, "--ros-args", "-r", f"__ns:={namespace}"]
        command += ["--params-file", str(params_path), *arguments]
        with open(self.stdout_path, "w") as out, open(self.stderr_path, "w") as err:
            self.process = subprocess.Popen(command, stdout=out, stderr=err, env=os.environ.copy())
        self.joint_states = probe.node.create_publisher(
            JointState, f"{namespace}/joint_states", 100
        )
        self.multi_dof = probe.node.create_publisher(
            MultiDOFJointState, f"{namespace}/multi_dof_joint_states", 10
        )
        self.description_topic = f"{namespace}/robot_description"
        self._params_client = probe.node.create_client(
            SetParameters, f"{namespace}/joint_tf_publisher/set_parameters"
        )

    def wait_connected(self) -> None:
        """Wait until the node's subscriptions match the probe's publishers."""
        wait_until(
            lambda: (
                self.process.poll() is None
                and self.joint_states.get_subscription_count() > 0
                and self.multi_dof.get_subscription_count() > 0
            ),
            what=lambda: (
                f"node {self.namespace} to subscribe (exit {self.process.poll()}, {self.stderr()})"
            ),
        )
        wait_until(lambda: self.probe.node.count_publishers("/tf") > 0, what="/tf publisher")

    def stderr(self) -> str:
        return self.stderr_path.read_text() if self.stderr_path.exists() else ""

    def stop(self, sig: int = signal.SIGINT) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise

    def set_parameters(self, **values: Any) -> list[Any]:
        """Call set_parameters; returns the SetParametersResult per parameter.

        Sent again every ``RESEND_S`` while unanswered (setting the same values twice
        changes nothing): right after discovery the node's reply can be dropped before its
        response writer has matched the probe's reader (rmw_fastrtps gives up after 100 ms:
        "failed to send response (timeout)"; ros2/rmw_fastrtps#467 and #704).
        """
        assert self._params_client.wait_for_service(timeout_sec=WAIT_S)
        request = SetParameters.Request()
        request.parameters = [
            ParameterMsg(name=name, value=parameter_value(value)) for name, value in values.items()
        ]
        futures = [self._params_client.call_async(request)]
        last_sent = time.monotonic()

        def answered() -> Any:
            nonlocal last_sent
            done = next((future for future in futures if future.done()), None)
            if done is None and time.monotonic() - last_sent > RESEND_S:
                futures.append(self._params_client.call_async(request))
                last_sent = time.monotonic()
            return done

        future = wait_until(answered, what="set_parameters response")
        return list(future.result().results)

    def static_set(self) -> dict[str, TransformStamped]:
        """The latched /tf_static set, read by a NEW (late-joining) subscription."""
        recorder = Recorder()
        subscription = self.probe.node.create_subscription(
            TFMessage, "/tf_static", recorder, latched_qos()
        )
        try:
            messages = wait_until(lambda: recorder.messages(), what="/tf_static")
        finally:
            self.probe.node.destroy_subscription(subscription)
        return {t.child_frame_id: t for t in messages[-1].transforms}

    def publish(self, names: Sequence[str], positions: Sequence[float], stamp_s: float) -> None:
        msg = JointState()
        msg.header.stamp = stamp_msg(stamp_s)
        msg.name = list(names)
        msg.position = [float(p) for p in positions]
        self.joint_states.publish(msg)

    def publish_and_wait(
        self, names: Sequence[str], positions: Sequence[float], stamp_s: float, child: str
    ) -> TFMessage:
        """Publish, then wait for the /tf message carrying ``child`` at that stamp.

        The message is sent again every second until seen: a best-effort subscription that
        has not yet discovered the probe's publisher drops what it sends (the node's rate
        limiter does not publish a repeated stamp twice).
        """
        return self._send_until_seen(
            lambda: self.publish(names, positions, stamp_s), child, stamp_s
        )

    def publish_multi_and_wait(self, msg: MultiDOFJointState, child: str) -> TFMessage:
        """As publish_and_wait, for a MultiDOFJointState."""
        stamp_s = stamp_ns(msg.header.stamp) * 1e-9
        return self._send_until_seen(lambda: self.multi_dof.publish(msg), child, stamp_s)

    def _send_until_seen(self, send: Callable[[], None], child: str, stamp_s: float) -> TFMessage:
        start = len(self.probe.tf)
        deadline = time.monotonic() + WAIT_S
        while True:
            send()
            found = self.find_tf(start, child, stamp_s, timeout=1.0)
            if found is not None:
                return found
            if time.monotonic() > deadline:
                pytest.fail(f"no /tf with {child} at {stamp_s} ({self.stderr()[-500:]})")

    def handshake(self, joint: str, child: str) -> TFMessage:
        """Publish ``joint`` at 0 with stamp 1 s, 2 s, ... once a second until /tf carries
        ``child`` at the stamp just sent (see ``started``)."""
        start = len(self.probe.tf)
        for stamp_s in range(1, int(WAIT_S) + 1):
            self.publish([joint], [0.0], float(stamp_s))
            found = self.find_tf(start, child, float(stamp_s), timeout=1.0)
            if found is not None:
                return found
        pytest.fail(f"no /tf with {child} after the handshake ({self.stderr()[-500:]})")

    def find_tf(
        self, start: int, child: str, stamp_s: float | None, timeout: float
    ) -> TFMessage | None:
        """The first /tf message since index ``start`` carrying ``child`` (at ``stamp_s``)."""
        deadline = time.monotonic() + timeout
        while True:
            for msg in self.probe.tf.messages(start):
                for t in msg.transforms:
                    if t.child_frame_id == self.prefix + child and (
                        stamp_s is None or stamp_ns(t.header.stamp) == seconds_to_ns(stamp_s)
                    ):
                        return msg
            if time.monotonic() > deadline:
                return None
            pause(0.01)

    def wait_tf(self, start: int, child: str, stamp_s: float | None = None) -> TFMessage:
        found = self.find_tf(start, child, stamp_s, timeout=WAIT_S)
        if found is None:
            pytest.fail(f"no /tf with {child} at {stamp_s} ({self.stderr()[-500:]})")
        return found


def parameter_value(value: Any) -> ParameterValue:
    if isinstance(value, bool):
        return ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=value)
    if isinstance(value, int):  # as ros2cli and launch send a whole number, for a double too
        return ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=value)
    if isinstance(value, float):
        return ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value)
    if isinstance(value, str):
        return ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=value)
    if isinstance(value, list) and value and all(isinstance(item, float) for item in value):
        return ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=value)
    if isinstance(value, list):
        return ParameterValue(type=ParameterType.PARAMETER_STRING_ARRAY, string_array_value=value)
    raise TypeError(value)


def seconds_to_ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


def stamp_msg(seconds: float) -> Any:
    ns = seconds_to_ns(seconds)
    msg = JointState().header.stamp
    msg.sec, msg.nanosec = ns_to_stamp(ns)
    return msg


def stamp_ns(stamp: Any) -> int:
    return stamp_to_ns(int(stamp.sec), int(stamp.nanosec))


def matrix_of(transform: Transform) -> np.ndarray:
    """(4, 4) pose from a geometry_msgs/Transform, rotation via scipy (independent)."""
    pose = np.eye(4)
    r = transform.rotation
    quaternion = np.array([r.x, r.y, r.z, r.w])
    assert abs(np.linalg.norm(quaternion) - 1.0) < 1e-9
    pose[:3, :3] = Rotation.from_quat(quaternion).as_matrix()
    pose[:3, 3] = (transform.translation.x, transform.translation.y, transform.translation.z)
    return pose


def tree_of(messages: Sequence[TFMessage]) -> dict[str, tuple[str, np.ndarray]]:
    """child frame -> (parent frame, T_parent_child) from messages, later ones winning."""
    tree: dict[str, tuple[str, np.ndarray]] = {}
    for msg in messages:
        for t in msg.transforms:
            tree[t.child_frame_id] = (t.header.frame_id, matrix_of(t.transform))
    return tree


def compose(tree: dict[str, tuple[str, np.ndarray]], frame: str, root: str) -> np.ndarray:
    """T_root_frame by chaining the received parent->child transforms."""
    pose = np.eye(4)
    while frame != root:
        parent, T_parent_frame = tree[frame]
        pose = T_parent_frame @ pose
        frame = parent
    return pose


def assert_matches_fk(
    tree: dict[str, tuple[str, np.ndarray]], robot: Robot, cfg: dict[str, Any], prefix: str = ""
) -> None:
    expected = robot.link_fk(cfg, clamp="hard")
    for link, T_root_link in expected.items():
        received = compose(tree, prefix + link, prefix + robot.root)
        np.testing.assert_allclose(received, T_root_link, atol=TOLERANCE, err_msg=link)


_stamp_base = [1000.0]


def fresh_stamp(span: float = 100.0) -> float:
    """A message time later than every earlier one in this module (seconds)."""
    _stamp_base[0] += span
    return _stamp_base[0]


#: Runs the command after it (``sys.argv[1:]``) with ``CAP_DAC_OVERRIDE`` (1) and
#: ``CAP_DAC_READ_SEARCH`` (2) dropped from the capability bounding set, which its children
#: inherit: root then reads a file as its owner does, so a ``chmod 000`` stops the process and
#: its xacro runner as it stops a user (root reads any file; tests run as root in CI
#: containers). Docker's default capabilities include ``CAP_SETPCAP``, which the drop needs.
_DROP_ROOTS_READS = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def fail(what):
    sys.exit(f"cannot drop {what}: {os.strerror(ctypes.get_errno())}")
for capability in (1, 2):
    if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
        fail(f"capability {capability} from the bounding set")
# Root's exec gives it inheritable | bounding: a container whose inheritable set holds the two
# (older Docker did) would give them back, so they leave the inheritable set too (capset,
# _LINUX_CAPABILITY_VERSION_3), and the ambient set is cleared (PR_CAP_AMBIENT_CLEAR_ALL).
header = (ctypes.c_uint32 * 2)(0x20080522, 0)
data = (ctypes.c_uint32 * 6)()  # (effective, permitted, inheritable) x 2
if libc.capget(header, data) != 0:
    fail("the capabilities (capget)")
data[2] &= ~0b110
if libc.capset(header, data) != 0:
    fail("the inheritable capabilities (capset)")
if libc.prctl(47, 4, 0, 0, 0) != 0:  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
    fail("the ambient capabilities")
os.execvp(sys.argv[1], sys.argv[1:])
"""

#: The ``launcher`` of a node that reads files as a user does, root or not (``chmod`` binds
#: it): root's capabilities to read any file dropped (``_DROP_ROOTS_READS``); none for a user.
READS_AS_A_USER: tuple[str, ...] = (
    (sys.executable, "-c", _DROP_ROOTS_READS) if os.geteuid() == 0 else ()
)


def started(
    probe: Probe,
    tmp_path_factory: pytest.TempPathFactory,
    namespace: str,
    params: dict[str, Any],
    handshake: tuple[str, str] | None,
    arguments: Sequence[str] = (),
    launcher: Sequence[str] = (),
) -> NodeUnderTest:
    """Start a node; with ``handshake`` (joint, child link), wait until it publishes.

    The handshake publishes the joint at 0 with stamp 1 s, then 2 s, ... once a second until
    /tf carries it, all before every fresh_stamp(). Each try has a stamp of its own: the
    first message can reach the node before the probe's /tf reader has matched the node's
    writer (the probe sees the writer in the graph first), and the rate limiter would drop
    the same stamp sent again.
    """
    workdir = tmp_path_factory.mktemp(namespace.strip("/"))
    node = NodeUnderTest(probe, workdir, namespace, params, arguments, launcher)
    try:
        node.wait_connected()
        if handshake is not None:
            joint, child = handshake
            node.handshake(joint, child)
    except BaseException:
        node.stop()
        raise
    return node
