"""The node closes a robot's loops over DDS (issue #45): a four-bar's crank turned through
full circles, /tf read back; the health report on /diagnostics when the loop cannot close.

The node runs in-process (``test_node.py``'s way), started from a URDF whose ``<loop_joint>``
closes the four-bar (test/data/loops/crank_rocker.urdf: ``bench.loop_models.four_bar`` as a
file) given as its ``robot_description`` parameter; every wait is on a condition with a
generous timeout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from bench.loop_models import CRANK_DRAWN, FOUR_BAR, four_bar, four_bar_end  # noqa: E402
from joint_tf_publisher.ros.node import JointTfPublisher  # noqa: E402

pytestmark = pytest.mark.ros

#: The four-bar of ``bench.loop_models.four_bar``, written as a URDF with a ``<loop_joint>``.
CRANK_ROCKER = (Path(__file__).parents[1] / "data" / "loops" / "crank_rocker.urdf").read_text()
WAIT_S = 20.0


def _pose(transform: Any) -> np.ndarray:
    pose = np.eye(4)
    rotation = transform.rotation
    pose[:3, :3] = Rotation.from_quat([rotation.x, rotation.y, rotation.z, rotation.w]).as_matrix()
    pose[:3, 3] = [transform.translation.x, transform.translation.y, transform.translation.z]
    return pose


def _end(pose: np.ndarray, length: float) -> np.ndarray:
    return (pose @ np.array([length, 0.0, 0.0, 1.0]))[:2]


@dataclass
class Heard:
    """What the probe hears of the node: the last pose of each child frame on /tf, one entry
    per /tf message holding the crank, loop_joint_states, /diagnostics statuses; and its
    joint_states publisher, matched with the node."""

    tree: dict[str, np.ndarray] = field(default_factory=dict)
    crank_seen: list[int] = field(default_factory=list)
    solved: list[JointState] = field(default_factory=list)
    statuses: list[Any] = field(default_factory=list)
    publisher: Any = None


def _listen(ros: Any) -> Heard:
    """The probe's subscriptions (reliable, deep) and joint_states publisher, once matched."""
    heard = Heard()

    def on_tf(message: TFMessage) -> None:
        for transform in message.transforms:
            heard.tree[transform.child_frame_id] = _pose(transform.transform)
        if "crank" in {t.child_frame_id for t in message.transforms}:
            heard.crank_seen.append(len(heard.crank_seen))

    reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    ros.node.create_subscription(TFMessage, "/tf", on_tf, reliable)
    ros.node.create_subscription(
        DiagnosticArray, "/diagnostics", lambda array: heard.statuses.extend(array.status), reliable
    )
    ros.node.create_subscription(JointState, "loop_joint_states", heard.solved.append, reliable)
    heard.publisher = ros.node.create_publisher(JointState, "joint_states", reliable)
    assert ros.spin_until(lambda: heard.publisher.get_subscription_count() > 0, timeout_s=WAIT_S)
    return heard


def test_a_crank_turns_full_circles_and_an_unclosable_loop_is_reported(ros: Any) -> None:
    parameters = [
        Parameter("robot_description", value=CRANK_ROCKER),
        Parameter("ignore_timestamp", value=True),
        Parameter("diagnostic_period", value=0.2),
        Parameter("joint_state_timeout", value=60.0),
        Parameter("publish_loop_joint_states", value=True),
    ]
    node = JointTfPublisher(context=ros.context, parameter_overrides=parameters)
    ros.executor.add_node(node)
    ros._owned.append(node)
    model = node.pipeline.model
    assert model is not None
    # The file is the hand-built model the expected poses come from, read from its URDF.
    (closing,) = model.robot.loop_joints
    assert closing.same_as(four_bar().loop_joints[0])
    assert closing.where.startswith("robot_description:")

    heard = _listen(ros)
    tree, crank_seen, solved, statuses = heard.tree, heard.crank_seen, heard.solved, heard.statuses
    publisher = heard.publisher

    def send(name: str, value: float) -> None:
        before = len(crank_seen) if name == "crank_joint" else len(tree)
        message = JointState(name=[name], position=[value])
        message.header.stamp = ros.node.get_clock().now().to_msg()
        publisher.publish(message)
        if name == "crank_joint":
            assert ros.spin_until(lambda: len(crank_seen) > before, timeout_s=WAIT_S)

    def crank_angle() -> float:
        return math.atan2(tree["crank"][1, 0], tree["crank"][0, 0])

    previous = None
    for crank in np.linspace(0.0, 3 * math.tau, 3 * 36 + 1):
        send("crank_joint", float(crank))
        assert math.isclose(
            math.remainder(crank_angle() - CRANK_DRAWN - crank, math.tau), 0.0, abs_tol=1e-9
        )
        expected = four_bar_end(CRANK_DRAWN + crank)
        coupler_end = _end(tree["crank"] @ tree["coupler"], FOUR_BAR["b"])
        rocker_end = _end(tree["rocker"], FOUR_BAR["c"])
        # /tf carries float64: closed to what a quaternion round trip keeps.
        assert np.allclose(coupler_end, expected, atol=1e-9)
        assert np.allclose(rocker_end, expected, atol=1e-9)
        if previous is not None:  # 10 degrees of crank: no jump to the other branch
            assert np.linalg.norm(rocker_end - previous) < 0.4
        previous = rocker_end
    # loop_joint_states: the passive joints as the last message solved them, as on /tf.
    assert ros.spin_until(lambda: len(solved) >= 3 * 36 + 1, timeout_s=WAIT_S)
    last = solved[-1]
    assert sorted(last.name) == ["coupler_joint", "rocker_joint"]
    rocker = dict(zip(last.name, last.position, strict=True))["rocker_joint"]
    drawn = math.atan2(*(four_bar_end(CRANK_DRAWN) - [FOUR_BAR["d"], 0.0])[::-1])
    published = math.atan2(tree["rocker"][1, 0], tree["rocker"][0, 0])
    assert math.isclose(math.remainder(drawn + rocker - published, math.tau), 0.0, abs_tol=1e-9)

    # An encoder on the closing pin: its value given with the crank's (#45), consistent with
    # them, is held: the loop closes there, the rocker where the closed form puts it, and
    # loop_joint_states carries the pin's value after the solved joints (not on /tf).
    crank = 0.5
    robot = four_bar()
    poses = robot.link_fk({"crank_joint": crank})
    (closing,) = robot.loop_joints
    pin = np.linalg.inv(poses["coupler"] @ closing.link1_to_joint) @ (
        poses["rocker"] @ closing.link2_to_joint
    )
    pin_value = math.atan2(pin[1, 0], pin[0, 0])
    count = len(solved)
    message = JointState(name=["crank_joint", "closing"], position=[crank, pin_value])
    publisher.publish(message)
    assert ros.spin_until(
        lambda: len(solved) > count and "closing" in solved[-1].name, timeout_s=WAIT_S
    )
    held = dict(zip(solved[-1].name, solved[-1].position, strict=True))
    assert held["closing"] == pin_value
    assert ros.spin_until(
        lambda: np.allclose(
            _end(tree["rocker"], FOUR_BAR["c"]), four_bar_end(CRANK_DRAWN + crank), atol=1e-9
        ),
        timeout_s=WAIT_S,
    )
    assert "closing" not in tree

    # A fresh model (nothing given yet), its rocker given beyond its swing: the crank and
    # coupler are passive and cannot close the loop; the report says so.
    (result,) = node.set_parameters([Parameter("robot_description", value=CRANK_ROCKER)])
    assert result.successful, result.reason
    published = len(crank_seen)
    message = JointState(name=["rocker_joint"], position=[-2.0])
    publisher.publish(message)

    def reported() -> bool:
        return any(
            "loop joint 'closing' not closed" in status.message
            and status.level == b"\x01"
            and dict((v.key, v.value) for v in status.values).get("loops not closed") == "closing"
            for status in statuses
        )

    found = ros.spin_until(reported, timeout_s=WAIT_S)
    assert found, [(s.level, s.message, s.values) for s in statuses[-2:]]
    # The crank and coupler stay at the drawing, where the loop last closed; nothing NaN.
    assert ros.spin_until(lambda: len(crank_seen) > published, timeout_s=WAIT_S)
    assert math.isclose(crank_angle(), CRANK_DRAWN, abs_tol=1e-12)
    assert np.all(np.isfinite(tree["rocker"]))


def test_loop_joint_states_is_no_source_nor_remote_topic_and_stays_in_the_namespace(
    ros: Any,
) -> None:
    """Review of #45: with ``publish_loop_joint_states``, a ``source_list`` naming
    ``loop_joint_states`` read the node's own solved passive joints back as given ones (the
    loops no longer solved): refused naming the parameter. ``remote.topic`` there is refused
    (the middleware refuses the TFMessage publisher; the graph names the JointState). The
    topic is the namespace's."""
    parameters = [
        Parameter("robot_description", value=CRANK_ROCKER),
        Parameter("publish_loop_joint_states", value=True),
    ]
    node = JointTfPublisher(
        context=ros.context, parameter_overrides=parameters, namespace="/r45/arm"
    )
    ros._owned.append(node)
    assert node._inputs.loop_states is not None
    assert node._inputs.loop_states.topic_name == "/r45/arm/loop_joint_states"
    for topic in (
        "loop_joint_states",
        "/r45/arm/loop_joint_states",
        "arm/../arm/loop_joint_states",
    ):
        (result,) = node.set_parameters([Parameter("source_list", value=[topic])])
        if topic.startswith("arm/.."):
            assert not result.successful  # not a valid name at all
            continue
        assert not result.successful, topic
        assert "source_list" in result.reason and "publish_loop_joint_states" in result.reason
    result = node.set_parameters_atomically(
        [
            Parameter("remote.frames", value=["ground"]),
            Parameter("remote.topic", value="loop_joint_states"),
        ]
    )
    assert not result.successful
    assert "remote.topic" in result.reason and "sensor_msgs/msg/JointState" in result.reason
    # Another robot's loop_joint_states (another namespace) is a source like any.
    (result,) = node.set_parameters(
        [Parameter("source_list", value=["/r45/leg/loop_joint_states"])]
    )
    assert result.successful, result.reason


def test_hostile_values_for_the_loop_joint_itself_over_dds(ros: Any) -> None:
    """Review of #45, over DDS: the closing pin given NaN, 1e308 and inf, and named twice
    with one value NaN, is rejected and keeps its last good value (the second spelling's
    value was taken before: rejected yet moved); /tf stays finite and the rocker where the
    good value put it, and /diagnostics names the pin among the rejected values."""
    parameters = [
        Parameter("robot_description", value=CRANK_ROCKER),
        Parameter("ignore_timestamp", value=True),
        Parameter("diagnostic_period", value=0.2),
        Parameter("publish_loop_joint_states", value=True),
    ]
    node = JointTfPublisher(context=ros.context, parameter_overrides=parameters)
    ros.executor.add_node(node)
    ros._owned.append(node)
    heard = _listen(ros)
    tree, solved, statuses, publisher = heard.tree, heard.solved, heard.statuses, heard.publisher
    robot = four_bar()
    (closing,) = robot.loop_joints

    def pin_at(crank: float) -> float:
        poses = robot.link_fk({"crank_joint": crank})
        pin = np.linalg.inv(poses["coupler"] @ closing.link1_to_joint) @ (
            poses["rocker"] @ closing.link2_to_joint
        )
        return math.atan2(pin[1, 0], pin[0, 0])

    def send(names: list[str], values: list[float]) -> dict[str, float]:
        count = len(solved)
        publisher.publish(JointState(name=names, position=values))
        assert ros.spin_until(lambda: len(solved) > count, timeout_s=WAIT_S)
        return dict(zip(solved[-1].name, solved[-1].position, strict=True))

    good = pin_at(0.5)
    assert send(["crank_joint", "closing"], [0.5, good])["closing"] == good
    expected = four_bar_end(CRANK_DRAWN + 0.5)
    for names, values in (
        (["crank_joint", "closing", "closing"], [0.5, math.nan, pin_at(0.9)]),
        (["crank_joint", "closing"], [0.5, 1e308]),
        (["crank_joint", "closing"], [0.5, math.inf]),
    ):
        held = send(names, values)
        assert held["closing"] == good, (names, values)
        assert all(math.isfinite(value) for value in held.values())
        assert all(np.all(np.isfinite(pose)) for pose in tree.values())
        assert np.allclose(_end(tree["rocker"], FOUR_BAR["c"]), expected, atol=1e-9)

    def rejected() -> bool:
        return any(
            "closing" in dict((v.key, v.value) for v in status.values).get("rejected values", "")
            for status in statuses
        )

    assert ros.spin_until(rejected, timeout_s=WAIT_S), [s.values for s in statuses[-1:]]
