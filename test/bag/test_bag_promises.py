"""Promises of docs/recordings.md that the happy path does not reach (issue #44): bag
repair's ``--params`` where it sets ``ignore_timestamp: false`` or ``exclude_joints``, and
``doctor --bag`` on zero-stamped joint states and on statics that first appear late."""

from __future__ import annotations

from pathlib import Path

import pytest
from bag_maker import TF_MESSAGE, Topic, recording, tf_message, transform
from rosbags.rosbag2 import Reader
from test_bag_doctor import ARM, S, doctor, every, finding, kinds, states_bag

from joint_tf_publisher.cli.bag import messages
from joint_tf_publisher.cli.bag.qos import tf_qos, tf_static_qos
from joint_tf_publisher.cli.main import main

pytest.importorskip("rosbags", reason="bag repair needs rosbags (requirements/dev.txt)")


def tf_children(bag: Path) -> list[list[str]]:
    """The child frames of each /tf message of ``bag``, in log-time order."""
    with Reader(bag) as reader:
        return [
            [t.child_frame_id for t in messages.tf_transforms(bytes(data))]
            for connection, _, data in reader.messages()
            if connection.topic == "/tf"
        ]


def test_params_that_set_ignore_timestamp_false_keep_the_rate_cap(tmp_path: Path) -> None:
    """``ignore_timestamp: false`` without ``publish_frequency``: the node's 20 Hz default
    cap applies (100 Hz recorded for 0.5 s: 10 of 50 states), as ``publish_frequency`` alone
    does; without either every state is kept."""
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n    ignore_timestamp: false\n")
    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=50, rate_hz=100.0)
    assert (
        main(["bag", "repair", str(bag), "-o", str(tmp_path / "capped"), "--params", str(params)])
        == 0
    )
    assert len(tf_children(tmp_path / "capped")) == 10
    params.write_text("/**:\n  ros__parameters:\n    ignore_timestamp: true\n")
    assert (
        main(["bag", "repair", str(bag), "-o", str(tmp_path / "all"), "--params", str(params)]) == 0
    )
    assert len(tf_children(tmp_path / "all")) == 50


def test_excluded_joints_frames_are_another_publishers_and_kept(tmp_path: Path) -> None:
    """``exclude_joints: [wrist_3_joint]``: the repair writes no wrist_3_link, and the
    recorded transforms of it (its other publisher's) stay, as other publishers' frames do."""
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n    exclude_joints: [wrist_3_joint]\n")
    other = [
        ("/tf", 1_000 + t, tf_message([transform(t, "wrist_2_link", "wrist_3_link", (0, 0, 0.1))]))
        for t in every(5)
    ]
    bag, states = recording(
        tmp_path / "in",
        ARM,
        "sqlite3",
        count=20,
        extra_topics=[Topic("/tf", TF_MESSAGE, [tf_qos()])],
        extra=other,
    )
    out = tmp_path / "out"
    assert main(["bag", "repair", str(bag), "-o", str(out), "--params", str(params)]) == 0
    children = tf_children(out)
    assert children.count(["wrist_3_link"]) == 5  # the other publisher's, kept
    robot_messages = [c for c in children if c != ["wrist_3_link"]]
    assert len(robot_messages) == len(states)
    assert not any("wrist_3_link" in c for c in robot_messages)
    assert all("wrist_2_link" in c for c in robot_messages)


def test_zero_stamped_joint_states_are_judged_as_the_node_stamps_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A driver that leaves the stamp 0: the node stamps with its clock (the log time
    offline), so no clock-domain error, no stamps going back."""
    times = every(20)
    code, document = doctor(capsys, states_bag(tmp_path / "in", times, [0] * len(times)))
    assert (code, document["findings"]) == (0, [])


def test_statics_that_first_appear_late_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """12 s of joint states, /tf_static first at 11 s (then every 0.5 s): playback started
    in the first 11 s has no fixed frames."""
    times = every(25, S // 2)
    fixed = tf_message([transform(times[0], "wrist_3_link", "tool0", (0.0, 0.0, 0.1))])
    late = [("/tf_static", t, fixed) for t in times[22:]]
    static_topic = Topic("/tf_static", TF_MESSAGE, [tf_static_qos()])
    bag = states_bag(tmp_path / "in", times, extra_topics=[static_topic], extra=late, statics=False)
    code, document = doctor(capsys, bag)
    assert code == 1 and kinds(document) == ["statics_only_at_start"]
    assert finding(document, "statics_only_at_start")["details"]["stretch_s"] == 11.0
