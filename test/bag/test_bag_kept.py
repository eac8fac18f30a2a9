"""``bag repair`` keeps every recorded transform it does not write itself, and says so: a
floating base's child published by an estimator, a moving joint no JointState carries. The
summary counts them by frame, and the JointStates the node's pipeline drops (names and
values of different lengths, a stamp out of range)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bag_maker import (
    JOINT_STATE,
    STRING,
    T0_NS,
    TF_MESSAGE,
    Topic,
    joint_state,
    string,
    tf_message,
    transform,
    write_bag,
)
from rosbags.rosbag2 import Reader

from joint_tf_publisher.cli.bag import messages
from joint_tf_publisher.cli.main import main

LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
ROVER = f"""<robot name="rover">
  <link name="odom"/><link name="base_link"/><link name="arm"/><link name="hand"/>
  <link name="tool"/>
  <joint name="base_joint" type="floating"><parent link="odom"/><child link="base_link"/></joint>
  <joint name="arm_joint" type="revolute"><parent link="base_link"/><child link="arm"/>
    <axis xyz="0 0 1"/>{LIMIT}</joint>
  <joint name="hand_joint" type="revolute"><parent link="arm"/><child link="hand"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 1 0"/>{LIMIT}</joint>
  <joint name="tool_joint" type="fixed"><parent link="hand"/><child link="tool"/>
    <origin xyz="0 0 0.1"/></joint>
</robot>"""
MS = 10**6


def rover_recording(path: Path) -> Path:
    """10 JointStates of arm_joint alone (hand_joint never carried), each followed by the
    recorded /tf: an estimator's odom -> base_link, an old state publisher's base_link -> arm
    (at a wrong value) and arm -> hand; two JointStates whose names and positions differ in
    length, one stamped where the time offset takes it out of range."""
    recorded: list[tuple[str, int, bytes]] = [("/robot_description", T0_NS, string(ROVER))]
    for k in range(10):
        t = T0_NS + k * 10 * MS
        recorded.append(("/joint_states", t, joint_state(t, ["arm_joint"], [0.05 * k])))
        estimator = transform(t, "odom", "base_link", (0.1 * k, 0.0, 0.0))
        stale = transform(t, "base_link", "arm", (9.0, 9.0, 9.0))
        hand = transform(t, "arm", "hand", (0.0, 0.0, 0.5))
        recorded.append(("/tf", t + 1, tf_message([estimator, stale, hand])))
    for t in (T0_NS + 25 * MS, T0_NS + 35 * MS):
        recorded.append(("/joint_states", t, joint_state(t, ["arm_joint", "hand_joint"], [0.1])))
    last_stamp_ns = (2**31 - 1) * 10**9
    recorded.append(
        ("/joint_states", T0_NS + 55 * MS, joint_state(last_stamp_ns, ["arm_joint"], [0.2]))
    )
    recorded.sort(key=lambda item: item[1])
    topics = [
        Topic("/robot_description", STRING),
        Topic("/joint_states", JOINT_STATE),
        Topic("/tf", TF_MESSAGE),
    ]
    return write_bag(path, "sqlite3", topics, recorded)


def test_recorded_frames_the_repair_does_not_write_are_kept_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bag = rover_recording(tmp_path / "in")
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n    time_offset: 1.0\n")
    out = tmp_path / "out"
    assert main(["bag", "repair", str(bag), "-o", str(out), "--params", str(params)]) == 0
    summary = capsys.readouterr().out
    assert "13 joint states (0 undecodable, 2 of mismatched lengths, 1 stamped out of " in summary
    assert (
        "10 recorded robot transform(s) replaced, 20 kept that the repair does not write "
        "(base_link, hand)" in summary
    )
    by_child: dict[str, list[tuple[str, float]]] = {}
    with Reader(out) as reader:
        for connection, _, data in reader.messages():
            if connection.topic == "/tf":
                for t in messages.tf_transforms(data):
                    by_child.setdefault(t.child_frame_id, []).append(
                        (t.header.frame_id, t.transform.translation.x)
                    )
    assert by_child["base_link"] == [("odom", 0.1 * k) for k in range(10)]  # the estimator's
    assert by_child["hand"] == [("arm", 0.0)] * 10  # no JointState carries hand_joint
    assert len(by_child["arm"]) == 10 and all(x == 0.0 for _, x in by_child["arm"])  # rebuilt
    assert "tool" not in by_child  # static: on /tf_static
