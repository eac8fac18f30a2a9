"""The one intake (issue #48): the node and bag repair feed a JointState's bytes through the
same call (``JointStatePipeline.take_joint_state``), so the same messages give the same /tf
bytes through either door.

One node (the console script, over DDS, ``node_harness``) and one repair (a rosbags bag of
the same serialized messages) with the same settings: ``test/sdf/walker_nested.sdf`` (nested
models: scoped names such as ``left::knee`` and the bare names Gazebo sends, ``hip`` for
``pelvis::hip``), ``frame_prefix`` ``r1/``, every message kept (``ignore_timestamp``), no
default positions. Each shape comes three times, so the short way serves where it can.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("rosbags", reason="needs rosbags (run in .venv: make test)")

from bag_maker import JOINT_STATE, T0_NS, Topic, write_bag  # noqa: E402
from node_harness import (  # noqa: E402
    RESEND_S,
    Probe,
    fresh_stamp,
    seconds_to_ns,
    started,
    tf_qos,
    wait_until,
)
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from repo_paths import TEST_DIR  # noqa: E402
from rosbags.rosbag2 import Reader  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher.cli.main import main  # noqa: E402
from joint_tf_publisher.stamps import ns_to_stamp, stamp_to_ns  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

WALKER = TEST_DIR / "sdf" / "walker_nested.sdf"
PARAMS = {"frame_prefix": "r1/", "ignore_timestamp": True, "publish_default_positions": False}
#: Scoped names, bare ones (Gazebo's: ``hip`` is ``pelvis::hip``, ``ankle`` the top-level
#: joint of that name), and both in one message.
SHAPES = (
    ["left::knee", "left::ankle", "right::knee", "ankle"],
    ["ankle", "hip"],
    ["left::knee", "hip", "right::knee"],
)


def joint_states() -> list[JointState]:
    """Each shape three times, every message a stamp of its own."""
    messages = []
    for shape in SHAPES:
        for k in range(3):
            msg = JointState(
                name=shape, position=[0.1 * (k + 1) + 0.05 * i for i in range(len(shape))]
            )
            msg.header.stamp.sec, msg.header.stamp.nanosec = ns_to_stamp(
                seconds_to_ns(fresh_stamp())
            )
            messages.append(msg)
    return messages


def stamp_of(data: bytes) -> int:
    stamp = deserialize_message(data, TFMessage).transforms[0].header.stamp
    return stamp_to_ns(stamp.sec, stamp.nanosec)


def through_the_node(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory, messages: list[JointState]
) -> list[bytes]:
    """The /tf bytes the node sends for each of ``messages`` (the first at its stamp: a
    message is sent again each second until answered, the subscription being best effort)."""
    params = {"robot_description": WALKER.read_text(), **PARAMS}
    node = started(probe, tmp_path_factory, "/intake_doors", params, handshake=("ankle", "toe"))
    received: list[bytes] = []
    subscription = probe.node.create_subscription(
        TFMessage, "/tf", received.append, tf_qos(), raw=True
    )
    try:
        answers: dict[int, bytes] = {}
        for msg in messages:
            stamp_ns = stamp_to_ns(msg.header.stamp.sec, msg.header.stamp.nanosec)
            sent = [-RESEND_S]

            def answered(
                msg: Any = msg, stamp_ns: int = stamp_ns, sent: list[float] = sent
            ) -> bool:
                for data in received:
                    answers.setdefault(stamp_of(data), data)
                if stamp_ns not in answers and time.monotonic() - sent[0] >= RESEND_S:
                    node.joint_states.publish(msg)
                    sent[0] = time.monotonic()
                return stamp_ns in answers

            wait_until(answered, what=f"the node's /tf at {stamp_ns}")
        return [answers[stamp_to_ns(m.header.stamp.sec, m.header.stamp.nanosec)] for m in messages]
    finally:
        probe.node.destroy_subscription(subscription)
        node.stop()


def through_the_repair(tmp_path: Path, messages: list[JointState]) -> list[bytes]:
    """The /tf bytes bag repair writes for ``messages`` recorded on /joint_states."""
    recorded = [
        ("/joint_states", T0_NS + k * 10**7, bytes(serialize_message(msg)))
        for k, msg in enumerate(messages)
    ]
    bag = write_bag(tmp_path / "in", "sqlite3", [Topic("/joint_states", JOINT_STATE)], recorded)
    params = tmp_path / "params.yaml"
    params.write_text(
        "/**:\n  ros__parameters:\n    frame_prefix: r1/\n    ignore_timestamp: true\n"
        "    publish_default_positions: false\n"
    )
    out = tmp_path / "out"
    arguments = ["--description", str(WALKER), "--params", str(params), "-o", str(out)]
    assert main(["bag", "repair", str(bag), *arguments]) == 0
    with Reader(out) as reader:
        return [bytes(data) for c, _, data in reader.messages() if c.topic == "/tf"]


def test_the_node_and_the_repair_send_the_same_bytes_for_the_same_joint_states(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    messages = joint_states()
    from_the_node = through_the_node(probe, tmp_path_factory, messages)
    from_the_repair = through_the_repair(tmp_path, messages)
    assert len(from_the_repair) == len(messages)
    frames = {
        t.child_frame_id
        for data in from_the_repair
        for t in deserialize_message(data, TFMessage).transforms
    }
    assert {"r1/left::shin", "r1/left::foot", "r1/toe", "r1/pelvis::cup"} <= frames
    assert from_the_repair == from_the_node
