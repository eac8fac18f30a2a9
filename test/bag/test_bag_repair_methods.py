"""``bag repair``'s ``Repair`` methods against make mutate's survivors (issue #44's rule over
cli/bag/repair.py), in this process: the summary's exact counts of MultiDOFJointStates
(read and undecodable) and of recorded robot transforms replaced, the frames the repair
writes with ``publish_default_positions``, after a description change and as joints arrive
in turn, the numbers of the warnings that lengthen the static republish period and the
union's interval, a description that cannot be read named, another topic's recorded
definition kept and the progress line's period. Each test was seen to fail with the
mutants it answers."""

from __future__ import annotations

import io
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from bag_maker import (
    JOINT_STATE,
    MULTI_DOF_JOINT_STATE,
    STORE,
    STRING,
    T0_NS,
    TF_MESSAGE,
    Topic,
    joint_state,
    multi_dof_joint_state,
    recording,
    string,
    tf_message,
    transform,
    write_bag,
)
from repo_paths import REPO_ROOT
from rosbags.rosbag2 import Reader, Writer
from test_bag_kept import ROVER
from test_bag_repair import read_bag

from joint_tf_publisher.cli.bag import messages
from joint_tf_publisher.cli.bag import repair as repair_module
from joint_tf_publisher.cli.bag.errors import BagError
from joint_tf_publisher.cli.bag.reader import open_bag
from joint_tf_publisher.cli.bag.repair import (
    Repair,
    RepairOptions,
    RepairSummary,
    given_description,
)

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
MS = 10**6
S = 10**9
#: A serialized message that does not decode: a CDR header, then a length past its end.
BROKEN = b"\x00\x01\x00\x00\xff\xff\xff\xff"


def rover_bag(path: Path, recorded: list[tuple[str, int, bytes]]) -> Path:
    """A recording of the rover (a floating base, two revolute joints, a fixed tool) with
    its description at the first log time and ``recorded`` (topic, log time, bytes)."""
    topics = [
        Topic("/robot_description", STRING),
        Topic("/joint_states", JOINT_STATE),
        Topic("/multi_dof_joint_states", MULTI_DOF_JOINT_STATE),
        Topic("/tf", TF_MESSAGE),
    ]
    described = [("/robot_description", T0_NS, string(ROVER)), *recorded]
    return write_bag(path, "sqlite3", topics, sorted(described, key=lambda item: item[1]))


def repaired(bag: Path, output: Path, params: Path | None = None) -> RepairSummary:
    """``bag`` repaired into ``output`` in this process (its parameters file ``params``)."""
    return Repair(RepairOptions(source=bag, output=output, params=params)).run()


def params_file(path: Path, lines: str) -> Path:
    path.write_text("/**:\n  ros__parameters:\n" + lines)
    return path


def recorded_children(out: Path) -> list[tuple[int, str, float]]:
    """Every transform on the output's ``/tf``: (log time, child frame, translation x)."""
    return [
        (time_ns, t.child_frame_id, t.transform.translation.x)
        for topic, time_ns, data in read_bag(out)[1]
        if topic == "/tf"
        for t in messages.tf_transforms(data)
    ]


def arm_then_hand() -> list[tuple[str, int, bytes]]:
    """10 JointStates 10 ms apart, of ``arm_joint`` alone (the first five) then of
    ``hand_joint`` alone, each followed by an old state publisher's /tf of both frames at
    recognisable values (``arm`` at x 8, ``hand`` at x 9)."""
    recorded = []
    for k in range(10):
        t = T0_NS + k * 10 * MS + 1
        joint = "arm_joint" if k < 5 else "hand_joint"
        recorded.append(("/joint_states", t, joint_state(t, [joint], [0.1])))
        old = [
            transform(t, "base_link", "arm", (8.0, 0, 0)),
            transform(t, "arm", "hand", (9.0, 0, 0)),
        ]
        recorded.append(("/tf", t + 1, tf_message(old)))
    return recorded


def recorded_kept(out: Path) -> list[tuple[int, str]]:
    """The old state publisher's transforms of ``arm_then_hand`` the output kept: (log
    time, child frame)."""
    return [(t, child) for t, child, x in recorded_children(out) if x in (8.0, 9.0)]


def test_the_summary_counts_multi_dof_states_and_replaced_transforms_exactly(
    tmp_path: Path,
) -> None:
    """Each MultiDOFJointState read is one joint state of the summary, each that does not
    decode one undecodable too (beside the JointStates'); each recorded /tf transform of a
    frame the repair writes is one replaced."""
    pose = [0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    recorded = [
        (
            "/multi_dof_joint_states",
            T0_NS + k * 10 * MS,
            multi_dof_joint_state(T0_NS + k * 10 * MS, ["base_joint"], [pose]),
        )
        for k in range(3)
    ]
    recorded += [("/multi_dof_joint_states", T0_NS + k * 10 * MS + 1, BROKEN) for k in (1, 2)]
    recorded += [
        (
            "/joint_states",
            T0_NS + k * 10 * MS + 2,
            joint_state(T0_NS + k * 10 * MS, ["arm_joint"], [0.1]),
        )
        for k in range(4)
    ]
    stale = [transform(T0_NS, "base_link", "arm", (9.0, 0.0, 0.0))]
    recorded += [("/tf", T0_NS + k * 10 * MS + 3, tf_message(stale)) for k in range(3)]
    summary = repaired(rover_bag(tmp_path / "in", recorded), tmp_path / "out")
    assert (summary.joint_states, summary.undecodable) == (3 + 2 + 4, 2)
    assert (summary.frames_replaced, summary.frames_kept) == (3, {})
    assert ("arm", 9.0) not in {(child, x) for _, child, x in recorded_children(tmp_path / "out")}


def test_the_robots_recorded_statics_count_among_the_frames_replaced(tmp_path: Path) -> None:
    """An old state publisher's /tf_static recorded twice with the rover's fixed ``tool``
    frame and another publisher's ``camera``: the robot's two are replaced by the repair's
    static set and counted, the camera's kept (its frame is no robot's). The summary's
    seconds are the repair's own."""
    statics = tf_message(
        [
            transform(T0_NS, "hand", "tool", (5.0, 0.0, 0.0)),
            transform(T0_NS, "base_link", "camera", (0.0, 0.0, 1.0)),
        ]
    )
    recorded = [
        ("/robot_description", T0_NS, string(ROVER)),
        ("/tf_static", T0_NS + 1, statics),
        ("/joint_states", T0_NS + 2, joint_state(T0_NS, ["arm_joint"], [0.1])),
        ("/tf_static", T0_NS + 3, statics),
    ]
    topics = [
        Topic("/robot_description", STRING),
        Topic("/joint_states", JOINT_STATE),
        Topic("/tf_static", TF_MESSAGE),
    ]
    bag = write_bag(tmp_path / "in", "sqlite3", topics, recorded)
    started = time.monotonic()
    summary = repaired(bag, tmp_path / "out")
    assert 0 < summary.seconds <= time.monotonic() - started  # the repair's own duration
    assert (summary.frames_replaced, summary.frames_kept) == (2, {})
    written = [
        (t.child_frame_id, t.transform.translation.x)
        for topic, _, data in read_bag(tmp_path / "out")[1]
        if topic == "/tf_static"
        for t in messages.tf_transforms(data)
    ]
    assert ("tool", 5.0) not in written and ("camera", 0.0) in written


def test_with_default_positions_every_moving_frame_recorded_is_replaced(tmp_path: Path) -> None:
    """``publish_default_positions``: the repair writes every moving joint's frame from the
    start (a joint never received at its start value), so the recorded /tf transforms of
    all of them are replaced, none kept, though no JointState carries ``hand_joint`` and no
    MultiDOFJointState the floating base."""
    recorded = []
    for k in range(5):
        t = T0_NS + k * 10 * MS
        recorded.append(("/joint_states", t, joint_state(t, ["arm_joint"], [0.1])))
        old = [
            transform(t, "odom", "base_link", (7.0, 0.0, 0.0)),
            transform(t, "base_link", "arm", (8.0, 0.0, 0.0)),
            transform(t, "arm", "hand", (9.0, 0.0, 0.0)),
        ]
        recorded.append(("/tf", t + 1, tf_message(old)))
    params = params_file(tmp_path / "p.yaml", "    publish_default_positions: true\n")
    summary = repaired(rover_bag(tmp_path / "in", recorded), tmp_path / "out", params)
    assert (summary.frames_replaced, summary.frames_kept) == (3 * 5, {})
    written = {(child, x) for _, child, x in recorded_children(tmp_path / "out")}
    assert written.isdisjoint({("base_link", 7.0), ("arm", 8.0), ("hand", 9.0)})
    assert {"base_link", "arm", "hand"} <= {child for child, _ in written}


def test_after_a_description_change_the_frames_replaced_follow_its_joints_received(
    tmp_path: Path,
) -> None:
    """A recorded description change starts the new model with no joint received: the
    recorded transforms replaced from then on are those of its joints received since (here
    ``hand_joint``'s frame, as many joints received as before the change: ``arm_joint``)."""
    changed = ROVER.replace("</robot>", "<!-- recalibrated -->\n</robot>")
    recorded = [("/robot_description", T0_NS + 50 * MS, string(changed)), *arm_then_hand()]
    summary = repaired(rover_bag(tmp_path / "in", recorded), tmp_path / "out")
    # before the change: arm replaced, hand kept; after it: hand replaced, arm kept
    assert summary.descriptions == 2
    assert (summary.frames_replaced, summary.frames_kept) == (10, {"hand": 5, "arm": 5})
    tf_times = [t for topic, t, _ in recorded if topic == "/tf"]
    change_ns = T0_NS + 50 * MS
    expected = [(t, "hand") for t in tf_times if t < change_ns]
    expected += [(t, "arm") for t in tf_times if t > change_ns]
    kept = recorded_kept(tmp_path / "out")
    assert kept == expected


def lengthening_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Repair, Path, int, int]:
    """A repair of a 2.5 s recording whose byte budget is its input's size (the floor set to
    0), the recording and that size, and a set's bytes of a fifth of it: sets every 0.1 s
    (25 of them) would add five times the budget."""
    monkeypatch.setattr(repair_module, "STATIC_REPUBLISH_FLOOR_BYTES", 0)
    bag, _ = recording(tmp_path / "in", ARM, count=251, rate_hz=100.0)  # log times 0 to 2.5 s
    size = sum(file.stat().st_size for file in bag.iterdir())
    return Repair(RepairOptions(source=bag, output=tmp_path / "out")), bag, size, size // 5


def test_a_lengthened_static_period_is_said_with_the_numbers_that_lengthened_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Static sets every ``static_republish_period`` over the recording that would add more
    than the budget: the period is lengthened to the least at which they fit, in the
    summary (seconds) and in a warning that says the new period, the set's bytes, the
    period asked, the recording's length, the bytes they would have added (whole sets)
    and the budget."""
    repair, bag, size, set_bytes = lengthening_case(tmp_path, monkeypatch)
    longer_ns = -(-(25 * S // 10) * set_bytes // size)  # 2.5 s of sets in the budget
    with open_bag(bag) as opened:
        assert repair._bounded_period(opened, S // 10, set_bytes) == longer_ns
    assert repair.summary.static_period == pytest.approx(longer_ns / S)
    assert 0.49 < longer_ns / S <= 0.5  # 5 sets of a little under a fifth in 2.5 s
    warning = capsys.readouterr().err
    assert warning.startswith(
        f"warning: static_republish_period 0.1 s lengthened to {longer_ns / S:.3f} s: the "
        f"static set is {set_bytes} bytes"
    ), warning
    assert (
        f"every 0.1 s over the recording's 2.5 s it would add {25 * set_bytes} bytes, more "
        f"than the {size} allowed"
    ) in warning


def test_a_lengthened_union_interval_is_said_with_the_numbers_that_lengthened_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--static-union`` sets written for its changes at the node's 0.1 s over the
    recording that would add more than the budget: the interval is lengthened to fit, in
    the summary and in a warning that says it, the node's 0.1 s, the set's bytes, the
    recording's length and the budget."""
    repair, bag, size, set_bytes = lengthening_case(tmp_path, monkeypatch)
    longer_ns = -(-(25 * S // 10) * set_bytes // size)
    with open_bag(bag) as opened:
        assert repair._union_interval(opened, set_bytes) == longer_ns
    assert repair.summary.union_interval == pytest.approx(longer_ns / S)
    warning = capsys.readouterr().err
    assert (
        f"at most every {longer_ns / S:.4g} s of log time (not 0.1 s): sets of up to "
        f"{set_bytes} bytes that often over the recording's 2.5 s would add more than the "
        f"{size} allowed"
    ) in warning, warning


def test_a_description_that_cannot_be_read_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``--description`` that cannot be read for a reason of the system (here xacro's
    expansion finds no temporary folder to write into): refused naming the file and the
    reason."""
    xacro = tmp_path / "robot.urdf.xacro"
    xacro.write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r"><link name="a"/></robot>'
    )
    options = RepairOptions(source=tmp_path / "in", output=tmp_path / "out", description=xacro)
    repair = Repair(options)
    given = given_description(repair.settings, repair.values, xacro)
    assert given is not None
    loader, where = given
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "gone"))
    with pytest.raises(BagError) as refused:
        repair._load(loader, where)
    said = str(refused.value)
    assert said.startswith(f"the description ({xacro}) cannot be read: "), said
    assert str(tmp_path / "gone") in said


def test_a_joint_first_received_later_has_its_recorded_frame_replaced_from_then_on(
    tmp_path: Path,
) -> None:
    """Joints that arrive in turn under one description (``arm_joint`` alone at first, then
    ``hand_joint`` in a JointState of its own): a recorded /tf transform of a moving joint's
    child is replaced from the first JointState that carried that joint on, and kept
    before it (docs/recordings.md), so ``hand`` is kept before ``hand_joint`` first arrives
    and replaced after it, ``arm`` replaced throughout."""
    recorded = arm_then_hand()
    summary = repaired(rover_bag(tmp_path / "in", recorded), tmp_path / "out")
    assert summary.descriptions == 1
    hand_first_ns = T0_NS + 50 * MS + 1
    tf_times = [t for topic, t, _ in recorded if topic == "/tf"]
    expected = [(t, "hand") for t in tf_times if t < hand_first_ns]
    assert (summary.frames_replaced, summary.frames_kept) == (
        2 * len(tf_times) - len(expected),
        {"hand": len(expected)},
    )
    kept = recorded_kept(tmp_path / "out")
    assert kept == expected


def test_a_topic_of_a_type_rosbags_does_not_know_keeps_its_recorded_definition(
    tmp_path: Path,
) -> None:
    """Another topic of a type rosbags does not know (a driver's own message), recorded
    with its definition and type hash: the repaired bag's connection holds both as recorded
    (docs/recordings.md: other topics copied with their definition), and its messages byte
    for byte."""
    reading = "float64 value\nstring unit\n"
    digest = "RIHS01_" + "5a" * 32
    sent = [(T0_NS + k * 10 * MS, bytes(range(k, k + 9))) for k in range(3)]
    bag = tmp_path / "in"
    with Writer(bag, version=9) as writer:
        description = writer.add_connection("/robot_description", STRING, typestore=STORE)
        writer.write(description, T0_NS, string(ROVER))
        states = writer.add_connection("/joint_states", JOINT_STATE, typestore=STORE)
        writer.write(states, T0_NS, joint_state(T0_NS, ["arm_joint"], [0.1]))
        own = writer.add_connection(
            "/reading",
            "my_msgs/msg/Reading",
            msgdef=reading,
            rihs01=digest,
        )
        for time_ns, data in sent:
            writer.write(own, time_ns, data)
    repaired(bag, tmp_path / "out")
    with Reader(tmp_path / "out") as reader:
        (copied,) = [c for c in reader.connections if c.topic == "/reading"]
        assert [(t, bytes(d)) for c, t, d in reader.messages([copied])] == sent
    assert (copied.msgtype, copied.msgdef.data, copied.digest) == (
        "my_msgs/msg/Reading",
        reading,
        digest,
    )


def test_the_progress_line_is_written_at_the_first_check_then_once_per_period(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal a progress line shows while the repair runs (docs/recordings.md): the
    first at the first check (after 1024 messages), the next only once ``PROGRESS_PERIOD_S``
    has passed, so with the clock standing still one line for 2048+ messages, saying the
    messages read of the recording's, then cleared."""
    bag, _ = recording(tmp_path / "in", ARM, count=2100)
    total = 2100 + 1  # the joint states and the description (the first message)
    frozen = SimpleNamespace(monotonic=lambda: 100.0)
    monkeypatch.setattr(repair_module, "time", frozen)
    progress = io.StringIO()
    Repair(RepairOptions(source=bag, output=tmp_path / "out"), progress).run()
    lines = [line for line in progress.getvalue().split("\r") if line.strip()]
    assert lines == [f"{100 * 1024 / total:5.1f}% 1024/{total} messages, 1023 joint states"]
    assert progress.getvalue().endswith("\r" + " " * 70 + "\r")


def test_every_description_that_loads_gives_the_robot_its_frames_past_one_that_does_not(
    tmp_path: Path,
) -> None:
    """The robot's frames are those of every recorded description that loads, also of one
    after a description that does not (refused, the one before kept): a frame only the last
    one has (a camera mount added) is the robot's from the start, so its recorded transforms
    are replaced, never kept as another publisher's."""
    mounted = ROVER.replace(
        "</robot>",
        '<link name="camera_mount"/><joint name="mount_joint" type="fixed">'
        '<parent link="base_link"/><child link="camera_mount"/></joint>\n</robot>',
    )
    old_mount = tf_message([transform(T0_NS + 10 * MS, "base_link", "camera_mount", (7.0, 0, 0))])
    recorded = [
        ("/tf", T0_NS + 10 * MS, old_mount),  # an old publisher's, before the mount's description
        ("/robot_description", T0_NS + 20 * MS, string("<robot name='rover'><link")),  # refused
        ("/robot_description", T0_NS + 30 * MS, string(mounted)),
        *arm_then_hand(),
    ]
    repaired(rover_bag(tmp_path / "in", recorded), tmp_path / "out")
    assert [c for _, c, x in recorded_children(tmp_path / "out") if x == 7.0] == []
