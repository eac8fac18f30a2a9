"""The remote output over real DDS: a real tf2 Buffer on remote/tf* gives the chosen frames
the poses the full /tf gives.

One node (the console script, namespace ``/remote_arm``, frame prefix ``r/``) publishes the
arm's full tree on /tf and /tf_static and five chosen links on ``/remote_arm/remote/tf`` and
``/remote_arm/remote/tf_static``. ``test/launch/tf2_lookup.py`` (a process of its own with
``tf2_ros.Buffer`` + ``TransformListener``, as a viewer) looks each chosen link up in the root
frame at one stamp, once on the full tree and once with /tf and /tf_static remapped to the
remote topics, while the test keeps sending that joint state (``ignore_timestamp``: the node
publishes it each time). Both must equal the package's FK. The remote statics are republished
with ``static_republish_period``; a runtime change naming a frame the robot has not is refused
with the close matches, one naming others moves the output (the last test).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_ros", reason="needs tf2_ros (the kit or a distro)")

from node_harness import (  # noqa: E402
    WAIT_S,
    NodeUnderTest,
    Probe,
    Recorder,
    fresh_stamp,
    latched_qos,
    pause,
    seconds_to_ns,
    started,
    wait_until,
)
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from repo_paths import TEST_DIR  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402

pytestmark = [pytest.mark.ros]

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
LOOKUP = TEST_DIR / "launch" / "tf2_lookup.py"
NAMESPACE = "/remote_arm"
PREFIX = "r/"
CHOSEN = ["pedestal", "link_3", "ee_link", "camera_optical_frame", "right_inner_finger"]
JOINTS = [f"joint_{i}" for i in range(1, 8)] + ["finger_joint"]
VALUES = [0.3, -0.7, 2.5, -1.2, 0.4, 1.1, -2.0, 0.5]


@pytest.fixture(scope="module")
def node(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    params = {
        "robot_description": ARM_URDF.read_text(),
        "frame_prefix": PREFIX,
        "ignore_timestamp": True,
        "remote.frames": CHOSEN,
        "remote.rate": 20.0,
        "static_republish_period": 0.5,
    }
    node = started(probe, tmp_path_factory, NAMESPACE, params, ("joint_1", "link_1"))
    yield node
    assert node.stop() == 0, node.stderr()


def look_up(node: NodeUnderTest, stamp_s: float, remote: bool) -> dict[str, list[float]]:
    """Each chosen link in the root frame at ``stamp_s``, by a real tf2 Buffer in a process
    of its own (on the remote topics where ``remote``), while the joint state is sent."""
    pairs = [f"{PREFIX}world,{PREFIX}{link}" for link in CHOSEN]
    command = [sys.executable, str(LOOKUP), str(seconds_to_ns(stamp_s)), "15.0", *pairs]
    if remote:
        topic = f"{NAMESPACE}/remote/tf"
        command += ["--ros-args", "-r", f"/tf:={topic}", "-r", f"/tf_static:={topic}_static"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 3 * WAIT_S
    while process.poll() is None and time.monotonic() < deadline:
        node.publish(JOINTS, VALUES, stamp_s)
        pause(0.1)
    if process.poll() is None:
        process.kill()
    out, err = process.communicate()
    assert process.returncode == 0, err
    poses: dict[str, list[float]] = json.loads(out)
    return poses


def matrix(values: list[float]) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = Rotation.from_quat(values[3:]).as_matrix()
    pose[:3, 3] = values[:3]
    return pose


def test_a_tf2_buffer_on_the_remote_topics_gives_the_poses_of_the_full_tree(
    node: NodeUnderTest,
) -> None:
    stamp_s = fresh_stamp()
    remote = look_up(node, stamp_s, remote=True)
    full = look_up(node, stamp_s, remote=False)
    robot = Robot.load(ARM_URDF)
    fk = robot.link_fk(dict(zip(JOINTS, VALUES, strict=True)), clamp="hard")
    for link in CHOSEN:
        pair = f"{PREFIX}world,{PREFIX}{link}"
        np.testing.assert_allclose(matrix(remote[pair]), fk[link], atol=1e-9, err_msg=link)
        np.testing.assert_allclose(matrix(remote[pair]), matrix(full[pair]), atol=1e-9)


def test_the_remote_topics_carry_only_the_chosen_frames(node: NodeUnderTest, probe: Probe) -> None:
    recorder = Recorder()
    subscription = probe.node.create_subscription(
        TFMessage, f"{NAMESPACE}/remote/tf_static", recorder, latched_qos()
    )
    try:
        static = wait_until(lambda: recorder.messages(), what="remote statics")[-1]
    finally:
        probe.node.destroy_subscription(subscription)
    assert {(t.header.frame_id, t.child_frame_id) for t in static.transforms} == {
        ("r/world", "r/pedestal"),
        ("r/ee_link", "r/camera_optical_frame"),
    }
    dynamic = Recorder()
    subscription = probe.node.create_subscription(TFMessage, f"{NAMESPACE}/remote/tf", dynamic, 10)
    try:
        stamp_s = fresh_stamp()
        wait_until(
            lambda: (node.publish(JOINTS, VALUES, stamp_s), pause(0.05), dynamic.messages())[2],
            what="remote/tf",
        )
    finally:
        probe.node.destroy_subscription(subscription)
    assert {(t.header.frame_id, t.child_frame_id) for t in dynamic.messages()[-1].transforms} == {
        ("r/pedestal", "r/link_3"),
        ("r/link_3", "r/ee_link"),
        ("r/ee_link", "r/right_inner_finger"),
    }


def test_an_unknown_frame_is_refused_with_the_close_matches(node: NodeUnderTest) -> None:
    (result,) = node.set_parameters(**{"remote.frames": ["link_33"]})
    assert not result.successful
    assert "did you mean link_3" in result.reason
    (result,) = node.set_parameters(**{"remote.topic": "/tf"})
    assert not result.successful and "topic of its own" in result.reason
    (result,) = node.set_parameters(**{"remote.rate": 5.0})
    assert result.successful


def test_a_topic_of_another_type_is_refused_and_the_output_stays(
    node: NodeUnderTest, probe: Probe
) -> None:
    """``remote.topic:=joint_states`` (the node's own JointState topic: the middleware refuses
    a TFMessage publisher there): refused in words, no C source line; the remote output goes
    on on its old topic."""
    (result,) = node.set_parameters(**{"remote.topic": "joint_states"})
    assert not result.successful
    assert result.reason == (
        f"remote.topic: 'joint_states' is {NAMESPACE}/joint_states, a topic of type "
        "sensor_msgs/msg/JointState in this process; the remote output publishes "
        "tf2_msgs/msg/TFMessage: give it a topic of its own"
    ), result.reason
    publish_until_remote(
        node, probe, lambda dynamic: len(dynamic) >= 3, "remote/tf after the refusal"
    )


def volatile_qos() -> QoSProfile:
    return QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


def publish_until_remote(
    node: NodeUnderTest, probe: Probe, done: Callable[[Recorder], bool], what: str
) -> None:
    """Send the joint state (a fresh stamp each time) until ``done`` holds for what a new
    subscription to the remote topic received."""
    dynamic = Recorder()
    subscription = probe.node.create_subscription(
        TFMessage, f"{NAMESPACE}/remote/tf", dynamic, volatile_qos()
    )

    def sent_and_done() -> bool:
        node.publish(JOINTS, VALUES, fresh_stamp())
        pause(0.05)
        return done(dynamic)

    try:
        wait_until(sent_and_done, what=lambda: f"{what} ({node.stderr()[-800:]})")
    finally:
        probe.node.destroy_subscription(subscription)


def test_the_remote_statics_are_republished_for_volatile_readers(
    node: NodeUnderTest, probe: Probe
) -> None:
    recorder = Recorder()
    subscription = probe.node.create_subscription(
        TFMessage, f"{NAMESPACE}/remote/tf_static", recorder, volatile_qos()
    )
    try:
        wait_until(lambda: len(recorder) >= 2, what="two remote statics republished")
    finally:
        probe.node.destroy_subscription(subscription)
    assert {t.child_frame_id for t in recorder.messages()[-1].transforms} == {
        "r/pedestal",
        "r/camera_optical_frame",
    }


def test_a_runtime_change_of_the_frames_moves_the_output(node: NodeUnderTest, probe: Probe) -> None:
    (result,) = node.set_parameters(**{"remote.frames": ["link_7"]})
    assert result.successful, result.reason

    def only_link_7(dynamic: Recorder) -> bool:
        return any(
            [(t.header.frame_id, t.child_frame_id) for t in msg.transforms]
            == [("r/world", "r/link_7")]
            for msg in dynamic.messages()
        )

    publish_until_remote(node, probe, only_link_7, "remote/tf with r/link_7 alone")
