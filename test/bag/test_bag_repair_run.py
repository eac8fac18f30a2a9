"""``bag repair``'s run (``Repair``'s own decisions, in this process): the ``source_list``
topics numbered as the node numbers them (their ``source_time_offsets``), undecodable
messages said, refused descriptions named and said once, default positions at
``publish_frequency`` in log time, other publishers' statics at a set's very log time, every
description's fixed frames the robot's from the start, ``--description`` recorded latched,
the progress line on a terminal and the summary's counts. Make mutate's survivors of
``Repair`` (issue #44's rule): each test was seen to fail with the mutants it answers."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest
from bag_maker import (
    JOINT_STATE,
    STRING,
    T0_NS,
    TF_MESSAGE,
    Topic,
    joint_state,
    recording,
    string,
    sweep,
    tf_message,
    transform,
    write_bag,
)
from repo_paths import REPO_ROOT
from test_bag_repair import read_bag

from joint_tf_publisher import Robot
from joint_tf_publisher.cli.bag import messages
from joint_tf_publisher.cli.bag.qos import is_latched
from joint_tf_publisher.cli.bag.repair import Repair, RepairOptions
from joint_tf_publisher.cli.main import main

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
MS = 10**6


def states_bag(
    path: Path,
    topic: str,
    states: list[tuple[int, dict[str, float]]],
    description: str,
    description_ns: int = T0_NS,
) -> Path:
    """A recording of ``states`` (stamp = log time, values by joint name) on ``topic`` and
    ``description`` on /robot_description at ``description_ns``."""
    return write_bag(
        path,
        "sqlite3",
        [Topic(topic, JOINT_STATE), Topic("/robot_description", STRING)],
        [("/robot_description", description_ns, string(description))]
        + [(topic, t, joint_state(t, list(v), list(v.values()))) for t, v in states],
    )


def repaired_with(tmp_path: Path, bag: Path, parameters: str) -> Path:
    """``bag`` repaired with a parameters file of the ``/**`` section's lines
    ``parameters``; the output."""
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n" + parameters)
    out = tmp_path / "out"
    assert main(["bag", "repair", str(bag), "-o", str(out), "--params", str(params)]) == 0
    return out


def test_a_source_list_topic_takes_its_own_time_offset(tmp_path: Path) -> None:
    """A ``source_list`` topic's JointStates are stamped with its ``source_time_offsets``
    value on top of ``time_offset``, as the node stamps them: the repair numbers the listed
    topics as the node does (from ``FIRST_LISTED_SOURCE``), so each finds its offset."""
    robot = Robot.load(ARM)
    states = sweep(robot, 5, 100.0)
    bag = states_bag(tmp_path / "in", "/arm_states", states, ARM.read_text())
    parameters = "    source_list: [arm_states]\n    source_time_offsets: [0.25]\n"
    out = repaired_with(tmp_path, bag, parameters + "    time_offset: 0.5\n")
    tf_stamps = [
        {t.header.stamp.sec * 10**9 + t.header.stamp.nanosec for t in messages.tf_transforms(d)}
        for topic, _, d in read_bag(out)[1]
        if topic == "/tf"
    ]
    assert tf_stamps == [{t + 750 * MS} for t, _ in states]


def test_undecodable_recorded_statics_are_said_with_their_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Recorded ``/tf_static`` and ``/robot_description`` messages that do not decode are
    skipped and said in one warning with their count (a description, at its log time too);
    the rest is repaired. A recorded
    ``/tf`` message that does not decode is not the repair's to judge: kept as it was, at
    its log time."""
    broken = b"\x00\x01\x00\x00\xff\xff\xff\xff"
    good = tf_message([transform(T0_NS, "world", "camera", (1.0, 0.0, 0.0))])
    bag, _ = recording(
        tmp_path / "in",
        ARM,
        count=5,
        extra_topics=[Topic("/tf_static", TF_MESSAGE), Topic("/tf", TF_MESSAGE)],
        extra=[("/tf_static", T0_NS, broken), ("/tf_static", T0_NS + MS, broken)]
        + [("/tf_static", T0_NS + 2 * MS, good), ("/tf", T0_NS + 3 * MS, broken)]
        + [("/robot_description", T0_NS + 4 * MS, broken)],
    )
    assert main(["bag", "repair", str(bag), "-o", str(tmp_path / "out")]) == 0
    said = capsys.readouterr().err.splitlines()
    assert (
        "warning: 3 recorded /robot_description or /tf_static message(s) do not decode: ignored"
    ) in said
    assert "warning: a /robot_description message does not decode: ignored" in said
    recorded = read_bag(tmp_path / "out")[1]
    statics = [d for topic, _, d in recorded if topic == "/tf_static"]
    assert "camera" in {t.child_frame_id for t in messages.tf_transforms(statics[0])}
    assert ("/tf", T0_NS + 3 * MS, broken) in recorded


def test_the_progress_line_says_how_far_and_is_cleared_at_the_end(tmp_path: Path) -> None:
    """On a terminal, every 1024 messages (at most every ``PROGRESS_PERIOD_S``) the progress
    line says the share and count of messages read and the joint states among them,
    rewritten in place (``\\r``), and is blanked at the end; without a terminal nothing is
    written, and the summary counts every message in, copied and joint state."""
    bag, _ = recording(tmp_path / "in", ARM, count=2100, rate_hz=1000.0)  # + its description
    options = RepairOptions(source=bag, output=tmp_path / "quiet", static_republish_period=0.5)
    quiet = Repair(options).run()
    stream = io.StringIO()
    summary = Repair(replace(options, output=tmp_path / "shown"), stream).run()
    for done in (quiet, summary):
        assert (done.messages_in, done.copied, done.joint_states) == (2101, 2101, 2100)
    written = read_bag(tmp_path / "quiet")[1]
    tf = [messages.tf_transforms(d) for topic, _, d in written if topic == "/tf"]
    statics = [d for topic, _, d in written if topic == "/tf_static"]
    assert (quiet.tf_out, quiet.transforms_out) == (len(tf), sum(map(len, tf))) == (2100, 16800)
    assert (quiet.statics_written, quiet.descriptions) == (len(statics), 1) == (5, 1)
    shown = stream.getvalue()
    assert shown.startswith("\r 48.7% 1024/2101 messages, 1023 joint states")
    assert shown.endswith("joint states\r" + " " * 70 + "\r")


def test_two_description_sources_are_refused_naming_where_each_was_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--description`` beside a parameters file's ``robot_description``: refused in the
    node's words, naming both the option and the parameters file that gave them."""
    bag, _ = recording(tmp_path / "in", ARM, count=3)
    inline = "".join(f"      {line}\n" for line in ARM.read_text().splitlines())
    params = tmp_path / "params.yaml"
    params.write_text(f"/**:\n  ros__parameters:\n    robot_description: |\n{inline}")
    command = ["bag", "repair", str(bag), "-o", str(tmp_path / "out"), "--params", str(params)]
    assert main([*command, "--description", str(ARM)]) == 1
    err = capsys.readouterr().err
    assert f"--description and --params {params}: " in err and "both give" in err, err
    assert not (tmp_path / "out").exists()


def test_a_refused_recorded_description_is_named_by_its_topic_and_log_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The recording's own description refused (no ``--description``): one line naming the
    topic and the log time it was recorded at, and the element it stumbled on; no output."""
    bad = '<robot name="r">\n  <link name="a"/>\n  <joint name="j" type="fixed">\n'
    bad += '    <parent link="a"/><child link="nowhere"/>\n  </joint>\n</robot>\n'
    states = sweep(Robot.load(ARM), 3, 100.0)
    bag = states_bag(tmp_path / "in", "/joint_states", states, bad, T0_NS + 1500 * MS)
    assert main(["bag", "repair", str(bag), "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "the description (/robot_description at 1767225601.500 s) does not load" in err, err
    assert "nowhere" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_default_positions_are_written_at_publish_frequency_in_log_time(tmp_path: Path) -> None:
    """``publish_default_positions``: the joints never received go out at their start
    values every 1 / ``publish_frequency`` of log time, from the first message on, stamped
    with that log time, as the node's timer publishes them on its clock."""
    joint = "shoulder_pan_joint"
    stamps = [T0_NS + k * 10 * MS for k in range(20)]  # 100 Hz over 0.19 s
    states = [(t, {joint: 0.1}) for t in stamps]
    bag = states_bag(tmp_path / "in", "/joint_states", states, ARM.read_text())
    parameters = "    publish_default_positions: true\n    publish_frequency: 20.0\n"
    out = repaired_with(tmp_path, bag, parameters + "    ignore_timestamp: true\n")
    defaults = []  # (log time, stamps) of the /tf messages of the joints never received
    for topic, time_ns, data in read_bag(out)[1]:
        transforms = messages.tf_transforms(data) if topic == "/tf" else []
        if transforms and "forearm_link" in {t.child_frame_id for t in transforms}:
            stamped = {t.header.stamp.sec * 10**9 + t.header.stamp.nanosec for t in transforms}
            defaults.append((time_ns, stamped))
    assert defaults == [(T0_NS + k * 50 * MS, {T0_NS + k * 50 * MS}) for k in range(4)]


def test_a_refused_description_recorded_again_is_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recorded description that does not load, recorded again (a latched publisher's
    republish): refused once, as the node refuses a text once; the model stays."""
    broken = ARM.read_text().replace('<child link="shoulder_link"/>', '<child link="nowhere"/>', 1)
    again = [("/robot_description", T0_NS + k * 50 * MS, string(broken)) for k in (1, 2)]
    bag, _ = recording(tmp_path / "in", ARM, count=20, extra=again)
    assert main(["bag", "repair", str(bag), "-o", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert err.count("robot description from topic rejected") == 1, err


def test_a_recorded_static_change_at_a_sets_log_time_is_in_that_set(tmp_path: Path) -> None:
    """Another publisher's static frame changed at the very log time a static set is due:
    that set holds the new value (its value at or before the set's time)."""
    mount = [
        ("/tf_static", T0_NS + k * 100 * MS, tf_message([transform(T0_NS, "base_link", "cam", x)]))
        for k, x in ((0, (0.1, 0.0, 0.0)), (1, (0.3, 0.0, 0.0)))
    ]
    bag, _ = recording(
        tmp_path / "in", ARM, count=20, extra_topics=[Topic("/tf_static", TF_MESSAGE)], extra=mount
    )
    out = tmp_path / "out"
    assert (
        main(["bag", "repair", str(bag), "-o", str(out), "--static-republish-period", "0.1"]) == 0
    )
    cam = [
        (time_ns, next(t for t in messages.tf_transforms(d) if t.child_frame_id == "cam"))
        for topic, time_ns, d in read_bag(out)[1]
        if topic == "/tf_static"
    ]
    assert [(time_ns, t.transform.translation.x) for time_ns, t in cam] == [
        (T0_NS, 0.1),
        (T0_NS + 100 * MS, 0.3),
    ]


def test_a_later_descriptions_static_frame_recorded_on_tf_early_is_the_robots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every frame the robot ever has (each recorded description's) is its own from the
    start: a fixed frame only a later description adds, recorded on ``/tf`` before that
    description came (and gone again after it), is replaced, not kept as another
    publisher's."""
    arm = ARM.read_text()
    mounted = arm.replace(
        "</robot>",
        '<link name="camera_mount"/><joint name="camera_mount_joint" type="fixed">'
        '<parent link="base_link"/><child link="camera_mount"/></joint></robot>',
    )
    early = tf_message([transform(T0_NS + 10 * MS, "base_link", "camera_mount", (0.2, 0, 0))])
    bag, _ = recording(
        tmp_path / "in",
        ARM,
        count=30,
        extra_topics=[Topic("/tf", TF_MESSAGE)],
        extra=[("/tf", T0_NS + 10 * MS, early)]
        + [("/robot_description", T0_NS + 100 * MS, string(mounted))]
        + [("/robot_description", T0_NS + 200 * MS, string(arm))],
    )
    out = tmp_path / "out"
    assert main(["bag", "repair", str(bag), "-o", str(out)]) == 0
    assert ("/tf", T0_NS + 10 * MS, early) not in read_bag(out)[1]
    assert "1 recorded robot transform(s) replaced, 0 kept" in capsys.readouterr().out


def test_the_description_given_is_recorded_latched_at_the_start(tmp_path: Path) -> None:
    """``--description``: the output's ``/robot_description`` carries it once, at the
    first log time, recorded transient local, so that ``ros2 bag play`` latches it as the
    node's topic is."""
    bag, _ = recording(tmp_path / "in", ARM, count=3, description=False)
    out = tmp_path / "out"
    assert main(["bag", "repair", str(bag), "-o", str(out), "--description", str(ARM)]) == 0
    connections, recorded = read_bag(out)
    assert is_latched(connections["/robot_description"].ext.offered_qos_profiles)
    descriptions = [(t, d) for topic, t, d in recorded if topic == "/robot_description"]
    assert descriptions == [(T0_NS, string(ARM.read_text()))]
