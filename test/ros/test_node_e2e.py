"""End-to-end tests of the node: the real console script in a subprocess, over real DDS.

What needs DDS and a process: QoS and its overrides, latched statics reaching late
subscribers, the serialized JointState read and the serialized /tf written by the node, the
parameter services, timers and the spin loop under load, the clock jump callback, the
description topic, startup errors. The policy itself (rate limiting, stamps, clamping,
mimic, bad values) is tested without DDS in test_pipeline.py; stopping by signals in
test_node_shutdown.py; the parameter services in test_node_parameters.py.

The test process is an ordinary ROS 2 participant (the "probe", see ``node_harness.py``): it
publishes JointState and MultiDOFJointState, reads /tf, /tf_static and robot_description, and
calls the node's set_parameters service. Expected poses come from ``Robot.link_fk``
(kinematics has its own independent tests) and, where cheap, from explicit formulas with
scipy's Rotation.

One node process per test class (the classes run one after another), each in its own
namespace; every wait is on a condition with a generous timeout, never a fixed sleep. The
module runs once per executor the node can spin with (``probe`` below).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from geometry_msgs.msg import Transform  # noqa: E402
from node_harness import (  # noqa: E402
    TOLERANCE,
    WAIT_S,
    NodeUnderTest,
    Probe,
    assert_matches_fk,
    fresh_stamp,
    latched_qos,
    matrix_of,
    parameter_value,
    pause,
    probe_per_executor,  # noqa: F401 (the module's probe: each executor in turn)
    seconds_to_ns,
    stamp_msg,
    stamp_ns,
    started,
    tree_of,
    wait_until,
)
from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.qos import (  # noqa: E402
    ReliabilityPolicy,
)
from repo_paths import TEST_DIR  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402
from sensor_msgs.msg import MultiDOFJointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from test_user_errors import NODE, params_file  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402
from joint_tf_publisher.ros import runtime  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
PLANAR_URDF = TEST_DIR / "urdf" / "mobile_base_planar.urdf"

FLOATING_URDF = """<?xml version="1.0"?>
<robot name="floating_base">
  <link name="world"/>
  <link name="torso"/>
  <link name="head"/>
  <link name="sensor"/>
  <joint name="base_joint" type="floating">
    <parent link="world"/>
    <child link="torso"/>
    <origin xyz="0 0 0.5"/>
  </joint>
  <joint name="neck" type="revolute">
    <parent link="torso"/>
    <child link="head"/>
    <origin xyz="0 0 0.3" rpy="0 0.1 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="sensor_mount" type="fixed">
    <parent link="head"/>
    <child link="sensor"/>
    <origin xyz="0.1 0 0" rpy="0 0 0.5"/>
  </joint>
</robot>
"""


# -- the arm with a mimic gripper, default parameters ---------------------------------------------


ARM_JOINTS = [
    "joint_1",
    "joint_2",
    "joint_3",
    "joint_4",
    "joint_5",
    "joint_6",
    "joint_7",
    "finger_joint",
]


def reliable_input(namespace: str) -> dict[str, Any]:
    """QoS overrides making the node's joint_states subscription reliable, depth 100.

    The default (best effort, depth 100) may still drop a long burst on a loaded machine;
    tests that count publications use this, and so exercise the QoS overrides too.
    """
    prefix = f"qos_overrides.{namespace}/joint_states.subscription"
    return {f"{prefix}.reliability": "reliable", f"{prefix}.depth": 100}


@pytest.fixture(scope="class")
def arm(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    """The arm with default parameters but lossless input (exact message counts)."""
    node = started(
        probe,
        tmp_path_factory,
        "/arm",
        {"robot_description": ARM_URDF.read_text(), **reliable_input("/arm")},
        handshake=("joint_1", "link_1"),
    )
    yield node
    node.stop()


@pytest.fixture(scope="module")
def robot() -> Robot:
    return Robot.load(ARM_URDF)


class TestArm:
    def test_spins_with_the_executor_asked_for(self, arm: NodeUnderTest) -> None:
        executor = os.environ[runtime.EXECUTOR_VARIABLE]
        wait_until(lambda: "spinning with" in arm.stderr(), what="the node's executor line")
        assert f"spinning with {runtime.SPINNING_WITH[executor]}" in arm.stderr()

    def test_qos_overrides_apply(self, arm: NodeUnderTest, probe: Probe) -> None:
        (reliable,) = probe.node.get_subscriptions_info_by_topic("/arm/joint_states")
        assert reliable.qos_profile.reliability == ReliabilityPolicy.RELIABLE
        (default,) = probe.node.get_subscriptions_info_by_topic("/arm/multi_dof_joint_states")
        assert default.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT

    def test_statics_reach_a_late_subscriber(self, arm: NodeUnderTest, robot: Robot) -> None:
        pause(0.5)  # the node has been up a while: this subscriber joins late
        statics = arm.static_set()
        fixed = {j.child: j for j in robot.joints.values() if j.joint_type == "fixed"}
        assert set(statics) == set(fixed)
        for child, joint in fixed.items():
            assert statics[child].header.frame_id == joint.parent
            np.testing.assert_allclose(
                matrix_of(statics[child].transform), joint.origin, atol=TOLERANCE
            )

    def test_one_message_composes_to_link_fk_with_mimic_chain(
        self, arm: NodeUnderTest, robot: Robot
    ) -> None:
        values = [0.3, -0.4, 1.1, 0.5, -2.0, 0.7, 2.5, 0.6]
        stamp = fresh_stamp()
        msg = arm.publish_and_wait(ARM_JOINTS, values, stamp, "link_1")
        # Every joint of the message plus the three mimic followers, in ONE message.
        children = {t.child_frame_id for t in msg.transforms}
        assert children == {robot.joints[name].child for name in ARM_JOINTS} | {
            "right_knuckle",
            "left_inner_finger",
            "right_inner_finger",
        }
        assert {stamp_ns(t.header.stamp) for t in msg.transforms} == {seconds_to_ns(stamp)}
        tree = tree_of([TFMessage(transforms=list(arm.static_set().values())), msg])
        assert_matches_fk(tree, robot, dict(zip(ARM_JOINTS, values, strict=True)))
        # The chain right_inner_finger -> right_knuckle -> finger_joint (x -1, then x 1),
        # rotation about x: explicit formula, independent of the kinematics module.
        T = tree["right_inner_finger"][1]
        expected = Rotation.from_rotvec([-0.6, 0.0, 0.0]).as_matrix()
        np.testing.assert_allclose(T[:3, :3], expected, atol=TOLERANCE)

    def test_a_mimic_value_in_the_message_wins(self, arm: NodeUnderTest, robot: Robot) -> None:
        """As robot_state_publisher: -0.1 as given for right_knuckle_joint, not the -0.5 its
        leader finger_joint implies (multiplier -1); its own follower takes it up."""
        msg = arm.publish_and_wait(
            ["right_knuckle_joint", "finger_joint"], [-0.1, 0.5], fresh_stamp(), "right_knuckle"
        )
        received = {t.child_frame_id: matrix_of(t.transform) for t in msg.transforms}
        for joint in ("right_knuckle_joint", "right_inner_finger_joint"):
            expected = robot.joints[joint].child_pose(-0.1)
            np.testing.assert_allclose(
                received[robot.joints[joint].child], expected, atol=TOLERANCE
            )

    def test_robot_description_topic_is_latched(self, arm: NodeUnderTest) -> None:
        recorder = arm.probe.subscribe(String, arm.description_topic, latched_qos())
        messages = wait_until(recorder.messages, what="robot_description")
        assert messages[-1].data == ARM_URDF.read_text()

    def test_sigint_exits_cleanly(self, arm: NodeUnderTest) -> None:
        assert arm.stop(signal.SIGINT) == 0
        assert "Traceback" not in arm.stderr()


# -- planar and floating bases ----------------------------------------------------------------


@pytest.fixture(scope="class")
def planar_base(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    node = started(
        probe,
        tmp_path_factory,
        "/planar",
        {"robot_description": PLANAR_URDF.read_text()},
        handshake=("left_wheel_joint", "left_wheel"),
    )
    yield node
    node.stop()


class TestPlanarBase:
    def test_multi_dof_joint_states(self, planar_base: NodeUnderTest) -> None:
        stamp = fresh_stamp()
        multi = MultiDOFJointState()
        multi.header.stamp = stamp_msg(stamp)
        multi.joint_names = ["base_planar_joint"]
        transform = Transform()
        transform.translation.x, transform.translation.y = -2.0, 0.75
        qx, qy, qz, qw = Rotation.from_euler("z", -1.2).as_quat()
        transform.rotation.x, transform.rotation.y = qx, qy
        transform.rotation.z, transform.rotation.w = qz, qw
        multi.transforms = [transform]
        msg = planar_base.publish_multi_and_wait(multi, "base_footprint")
        (t,) = msg.transforms
        T = matrix_of(t.transform)
        np.testing.assert_allclose(T[:3, 3], [-2.0, 0.75, 0.0], atol=TOLERANCE)
        np.testing.assert_allclose(
            T[:3, :3], Rotation.from_euler("z", -1.2).as_matrix(), atol=TOLERANCE
        )


@pytest.fixture(scope="class")
def floating_base(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[NodeUnderTest]:
    node = started(
        probe,
        tmp_path_factory,
        "/floating",
        {"robot_description": FLOATING_URDF},
        handshake=("neck", "head"),
    )
    yield node
    node.stop()


class TestFloatingBase:
    def test_multi_dof_joint_states(self, floating_base: NodeUnderTest) -> None:
        stamp = fresh_stamp()
        rotation = Rotation.from_rotvec([0.1, 0.9, -0.4])
        multi = MultiDOFJointState()
        multi.header.stamp = stamp_msg(stamp)
        multi.joint_names = ["base_joint"]
        transform = Transform()
        transform.translation.x, transform.translation.y, transform.translation.z = 1.0, 2.0, 3.0
        (transform.rotation.x, transform.rotation.y, transform.rotation.z, transform.rotation.w) = (
            rotation.as_quat()
        )
        multi.transforms = [transform]
        (t,) = floating_base.publish_multi_and_wait(multi, "torso").transforms
        T = matrix_of(t.transform)
        np.testing.assert_allclose(T[:3, 3], [1.0, 2.0, 3.5], atol=TOLERANCE)
        np.testing.assert_allclose(T[:3, :3], rotation.as_matrix(), atol=TOLERANCE)


# -- prefix, exclusions, default positions and runtime changes --------------------------------


@pytest.fixture(scope="class")
def configured_arm(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[NodeUnderTest]:
    """The arm with a frame prefix, exclusions and default positions at 50 Hz."""
    node = started(
        probe,
        tmp_path_factory,
        "/configured",
        {
            "robot_description": ARM_URDF.read_text(),
            "frame_prefix": "r1/",
            "exclude_joints": ["camera_mount", "joint_7"],
            "publish_default_positions": True,
            "publish_frequency": 50.0,
        },
        handshake=("joint_6", "link_6"),
    )
    yield node
    node.stop()


class TestRuntimeChanges:
    def test_prefix_and_exclusions_in_statics(self, configured_arm: NodeUnderTest) -> None:
        robot = Robot.load(ARM_URDF)
        statics = configured_arm.static_set()
        expected = {
            "r1/" + j.child
            for j in robot.joints.values()
            if j.joint_type == "fixed" and j.name != "camera_mount"
        }
        assert set(statics) == expected
        assert all(t.header.frame_id.startswith("r1/") for t in statics.values())

    def test_default_positions_for_joints_never_received(
        self, configured_arm: NodeUnderTest
    ) -> None:
        robot = Robot.load(ARM_URDF)
        start = len(configured_arm.probe.tf)
        msg = configured_arm.wait_tf(start, "link_1")  # nothing was sent: a default publication
        children = {t.child_frame_id for t in msg.transforms}
        assert "r1/link_7" not in children  # excluded
        fk = robot.link_fk({}, clamp="hard")
        for t in msg.transforms:
            joint = next(j for j in robot.joints.values() if "r1/" + j.child == t.child_frame_id)
            expected = np.linalg.inv(fk[joint.parent]) @ fk[joint.child]
            np.testing.assert_allclose(matrix_of(t.transform), expected, atol=TOLERANCE)
        # Once received, a joint leaves the default set.
        configured_arm.publish_and_wait(["joint_1"], [0.2], fresh_stamp(), "link_1")
        start = len(configured_arm.probe.tf)
        later = configured_arm.wait_tf(start, "link_2")
        assert "r1/link_1" not in {t.child_frame_id for t in later.transforms}

    def test_rejected_description_keeps_the_old_model(self, configured_arm: NodeUnderTest) -> None:
        bad = ARM_URDF.read_text().replace('<child link="link_3"/>', '<child link="nowhere"/>')
        (result,) = configured_arm.set_parameters(robot_description=bad)
        assert not result.successful
        assert re.search(r"robot_description:\d+", result.reason), result.reason
        assert "nowhere" in result.reason
        robot = Robot.load(ARM_URDF)
        expected = {
            "r1/" + j.child
            for j in robot.joints.values()
            if j.joint_type == "fixed" and j.name != "camera_mount"
        }
        assert set(configured_arm.static_set()) == expected  # still the arm's statics
        configured_arm.publish_and_wait(["joint_2"], [0.1], fresh_stamp(), "link_2")

    def test_invalid_frequency_is_rejected(self, configured_arm: NodeUnderTest) -> None:
        (result,) = configured_arm.set_parameters(publish_frequency=0.0)
        assert not result.successful
        assert "publish_frequency" in result.reason

    def test_frame_prefix_change_republishes_statics(self, configured_arm: NodeUnderTest) -> None:
        (result,) = configured_arm.set_parameters(frame_prefix="r2/")
        assert result.successful
        statics = wait_until(
            lambda: (s := configured_arm.static_set()) and "r2/ee_link" in s and s,
            what="statics with the new prefix",
        )
        assert not any(name.startswith("r1/") for name in statics)
        configured_arm.prefix = "r2/"
        configured_arm.publish_and_wait(["joint_3"], [0.1], fresh_stamp(), "link_3")

    def test_accepted_description_replaces_the_static_set(
        self, configured_arm: NodeUnderTest
    ) -> None:
        description = configured_arm.probe.subscribe(
            String, configured_arm.description_topic, latched_qos()
        )
        wait_until(description.messages, what="robot_description")
        new_text = PLANAR_URDF.read_text()
        (result,) = configured_arm.set_parameters(robot_description=new_text)
        assert result.successful, result.reason
        planar = Robot.load(PLANAR_URDF)
        expected = {"r2/" + j.child for j in planar.joints.values() if j.joint_type == "fixed"}
        statics = wait_until(
            lambda: (s := configured_arm.static_set()) and set(s) == expected and s,
            what="the new static set",
        )
        assert "r2/ee_link" not in statics
        wait_until(
            lambda: description.messages()[-1].data == new_text, what="the new robot_description"
        )
        msg = configured_arm.publish_and_wait(["lift_joint"], [0.2], fresh_stamp(), "lift_link")
        (t,) = [t for t in msg.transforms if t.child_frame_id == "r2/lift_link"]
        np.testing.assert_allclose(
            matrix_of(t.transform), planar.joints["lift_joint"].child_pose(0.2), atol=TOLERANCE
        )


# -- busy input: a paused node, streaming at a high rate -------------------------------------------


@pytest.fixture(scope="class")
def busy_arm(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    """The arm with the DEFAULT input QoS, ignore_timestamp, default positions at 50 Hz."""
    node = started(
        probe,
        tmp_path_factory,
        "/arm_busy",
        {
            "robot_description": ARM_URDF.read_text(),
            "ignore_timestamp": True,
            "publish_default_positions": True,
            "publish_frequency": 50.0,
        },
        handshake=("joint_1", "link_1"),
    )
    yield node
    assert node.stop(signal.SIGTERM) == 0
    assert "Traceback" not in node.stderr()


def stamps_of(messages: Sequence[TFMessage], child: str) -> list[int]:
    """The stamp (ns) of each message carrying ``child``, in arrival order."""
    return [
        stamp_ns(t.header.stamp)
        for msg in messages
        for t in msg.transforms
        if t.child_frame_id == child
    ]


class TestBusyInput:
    def test_a_burst_queued_while_paused_is_published_whole(self, busy_arm: NodeUnderTest) -> None:
        """60 JointStates sent while the node is stopped (SIGSTOP) all wait in its queue
        (best effort, depth JOINT_STATES_DEPTH; sensor data QoS's depth 5 would keep 5) and
        each is published, in order, as its own TFMessage once it runs again."""
        base = fresh_stamp()
        burst = [seconds_to_ns(base + 0.001 * k) for k in range(60)]
        start = len(busy_arm.probe.tf)
        busy_arm.process.send_signal(signal.SIGSTOP)
        try:
            pause(0.2)
            for k in range(60):
                busy_arm.publish(["joint_2"], [0.01 * k], base + 0.001 * k)
            pause(0.2)
        finally:
            busy_arm.process.send_signal(signal.SIGCONT)
        wait_until(
            lambda: set(burst) <= set(stamps_of(busy_arm.probe.tf.messages(start), "link_2")),
            what=lambda: (
                f"all 60 stamps (got "
                f"{len(set(burst) & set(stamps_of(busy_arm.probe.tf.messages(start), 'link_2')))})"
            ),
        )
        received = [s for s in stamps_of(busy_arm.probe.tf.messages(start), "link_2") if s in burst]
        assert received == burst  # each once, in order

    def test_parameters_and_timers_are_served_while_joint_states_stream(
        self, busy_arm: NodeUnderTest
    ) -> None:
        """At about 500 Hz of JointState the node still answers set_parameters, applies the
        change to the next messages, and publishes default positions on its timer."""
        probe = busy_arm.probe
        assert busy_arm._params_client.wait_for_service(timeout_sec=WAIT_S)
        request = SetParameters.Request()
        request.parameters = [ParameterMsg(name="frame_prefix", value=parameter_value("busy/"))]
        base = fresh_stamp()
        start = len(probe.tf)
        future = None
        sent_after_answer = 0
        deadline = time.monotonic() + WAIT_S
        k = 0
        while sent_after_answer < 200 and time.monotonic() < deadline:
            busy_arm.publish(["joint_1"], [0.001 * (k % 100)], base + 0.001 * k)
            k += 1
            if k == 300:
                future = busy_arm._params_client.call_async(request)
            if future is not None and future.done():
                sent_after_answer += 1
            probe.spin_for(0.002)
        assert future is not None and future.done(), "no set_parameters answer while streaming"
        assert future.result().results[0].successful
        wait_until(
            lambda: stamps_of(probe.tf.messages(start), "busy/link_1"),
            what="joint states published with the new prefix",
        )
        # Default positions (joint_3 ... never received) keep coming on the 50 Hz timer.
        defaults = [
            msg
            for msg in probe.tf.messages(start)
            if any(t.child_frame_id.endswith("link_3") for t in msg.transforms)
        ]
        assert len(defaults) >= 10, f"{len(defaults)} default-position messages in {k} sends"


# -- simulated time -------------------------------------------------------------------------


class TestSimulationReset:
    def test_clock_jumping_back_resets_the_limiter(
        self, probe: Probe, tmp_path_factory: pytest.TempPathFactory
    ) -> None:
        """use_sim_time, zero stamps: a /clock reset must not silence the node."""
        from rosgraph_msgs.msg import Clock

        clock = probe.node.create_publisher(Clock, "/clock", 10)

        def at_clock(seconds: float, value: float) -> Callable[[], None]:
            """Set /clock, then send a zero-stamped joint state (repeated until seen)."""

            def send() -> None:
                clock.publish(Clock(clock=stamp_msg(seconds)))
                pause(0.1)  # let the node's time source take it
                node.publish(["neck"], [value], 0.0)

            return send

        node = started(
            probe,
            tmp_path_factory,
            "/sim",
            {"robot_description": FLOATING_URDF, "use_sim_time": True},
            handshake=None,
        )
        try:
            # Zero stamps are stamped with the node clock, here /clock time.
            node._send_until_seen(at_clock(100.0, 0.1), "head", 100.0)
            # Simulation reset: robot_state_publisher would stay silent until t = 100 s.
            node._send_until_seen(at_clock(5.0, 0.2), "head", 5.0)
            log = node.stderr() + node.stdout_path.read_text()
            assert "the node clock jumped backwards" in log
        finally:
            assert node.stop() == 0


# -- description from the topic -----------------------------------------------------------------


class TestDescriptionFromTopic:
    def test_model_arrives_on_the_topic(
        self, probe: Probe, tmp_path_factory: pytest.TempPathFactory
    ) -> None:
        node = started(
            probe,
            tmp_path_factory,
            "/from_topic",
            {"description_from_topic": True},
            handshake=None,
        )
        try:
            publisher = probe.node.create_publisher(String, node.description_topic, latched_qos())
            publisher.publish(String(data="<robot name='broken'><link name='a'/>"))
            publisher.publish(String(data=FLOATING_URDF))
            wait_until(lambda: "sensor" in node.static_set(), what="statics of the topic model")
            node.publish_and_wait(["neck"], [0.3], fresh_stamp(), "head")
            assert node.process.poll() is None
        finally:
            assert node.stop() == 0


# -- the description on the command line ----------------------------------------------------


def test_description_given_with_dash_p(probe: Probe, tmp_path: Path) -> None:
    """``--ros-args -p robot_description:=...``: YAML, so single-quoted (README)."""
    text = ARM_URDF.read_text()
    assert "'" not in text
    command = [
        *NODE,
        "--ros-args",
        "-r",
        "__ns:=/dash_p",
        "-p",
        f"robot_description:='{text}'",
        "-p",
        "frame_prefix:=cli/",
    ]
    stderr_path = tmp_path / "stderr.txt"
    with open(stderr_path, "w") as err:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
    try:
        recorder = probe.subscribe(TFMessage, "/tf_static", latched_qos())
        wait_until(
            lambda: any(
                t.child_frame_id == "cli/camera_optical_frame"
                for msg in recorder.messages()
                for t in msg.transforms
            ),
            what=lambda: f"statics of the -p node ({stderr_path.read_text()})",
        )
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=WAIT_S) == 0
    assert "Traceback" not in stderr_path.read_text()


# -- startup errors ---------------------------------------------------------------------------


def run_node(tmp_path: Path, params: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    arguments = ["--ros-args"]
    if params:
        arguments += ["--params-file", str(params_file(tmp_path / "params.yaml", **params))]
    return subprocess.run(
        [*NODE, *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
    )


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({}, r"robot_description is empty"),
        (
            {
                "robot_description": "<robot name='r'><link name='a'/><joint name='j' type='fixed'>"
                "<parent link='a'/><child link='b'/></joint></robot>"
            },
            r"robot_description:1: .*'b'",
        ),
        ({"robot_description": "not xml at all"}, r"robot_description:\d+"),
        (
            {"robot_description": FLOATING_URDF, "description_file": "robot.urdf"},
            r"^joint_tf_publisher: robot_description and description_file both give the robot "
            r"description: set exactly one of robot_description, description_file and "
            r"description_from_topic",
        ),
        (
            {"description_file": "robot.urdf", "description_from_topic": True},
            r"description_file and description_from_topic both give the robot description",
        ),
        ({"description_file": "/nowhere/robot.urdf"}, r"/nowhere/robot.urdf: cannot read file"),
        ({"robot_description": FLOATING_URDF, "publish_frequency": 0.0}, r"publish_frequency"),
        ({"robot_description": FLOATING_URDF, "clamp": "tight"}, r"clamp must be one of"),
    ],
)
def test_startup_errors_exit_1_with_one_line(
    tmp_path: Path, params: dict[str, Any], reason: str
) -> None:
    result = run_node(tmp_path, params)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("joint_tf_publisher: ")
    assert re.search(reason, lines[0]), lines[0]


def test_blank_description_on_the_command_line_is_empty() -> None:
    """``-p robot_description:= `` leaves the parameter without a value: same one line."""
    result = subprocess.run(
        [*NODE, "--ros-args", "-p", "robot_description:= "],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().splitlines() == [
        "joint_tf_publisher: parameter robot_description is empty: give the URDF or SDFormat "
        "text, a file in description_file, or set description_from_topic:=true"
    ]
