"""``joint-tf-publisher doctor --bag``: one recording per finding (made here with rosbags'
writer), each finding naming its fix, a repaired bag healthy, the live doctor's JSON shape
and exit status."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from bag_maker import (
    JOINT_STATE,
    STORE,
    STRING,
    T0_NS,
    TF_MESSAGE,
    Topic,
    joint_state,
    recording,
    stamp,
    string,
    tf_message,
    transform,
    write_bag,
)
from repo_paths import REPO_ROOT
from union_status import union_report

from joint_tf_publisher import Robot
from joint_tf_publisher.cli.bag.qos import tf_static_qos
from joint_tf_publisher.cli.bag.types import DIAGNOSTIC_ARRAY
from joint_tf_publisher.cli.doctor.analysis import diagnose
from joint_tf_publisher.cli.doctor.observation import Observation
from joint_tf_publisher.cli.doctor.report import json_report
from joint_tf_publisher.cli.main import main
from joint_tf_publisher.health.model import HealthReport

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
ARM_JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
              "wrist_2_joint", "wrist_3_joint", "left_finger_joint"]  # fmt: skip
S = 10**9


def doctor(
    capsys: pytest.CaptureFixture[str], bag: Path, *extra: str
) -> tuple[int, dict[str, Any]]:
    """Exit status and JSON document of ``doctor --bag``."""
    code = main(["doctor", "--bag", str(bag), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def kinds(document: dict[str, Any]) -> list[str]:
    return [finding["kind"] for finding in document["findings"]]


def finding(document: dict[str, Any], kind: str) -> dict[str, Any]:
    (found,) = [f for f in document["findings"] if f["kind"] == kind]
    return found


def states_bag(
    path: Path,
    times_ns: list[int],
    stamps_ns: list[int] | None = None,
    names: list[str] = ARM_JOINTS,
    extra_topics: list[Topic] | None = None,
    extra: list[tuple[str, int, bytes]] | None = None,
    statics: bool = True,
) -> Path:
    """A recording of the arm: joint states at ``times_ns`` (log times; header stamps
    ``stamps_ns``, else the same), its description, its statics latched at the start."""
    stamps_ns = stamps_ns or times_ns
    topics = [
        Topic("/joint_states", JOINT_STATE),
        Topic("/robot_description", STRING, [tf_static_qos()]),
    ]
    messages = [
        ("/joint_states", t, joint_state(s, names, [0.1] * len(names)))
        for t, s in zip(times_ns, stamps_ns, strict=True)
    ]
    messages.append(("/robot_description", times_ns[0], string(ARM.read_text())))
    if statics:
        topics.append(Topic("/tf_static", TF_MESSAGE, [tf_static_qos()]))
        fixed = [j for j in Robot.load(ARM).joints.values() if j.joint_type == "fixed"]
        message = tf_message(
            transform(times_ns[0], j.parent, j.child, (0.0, 0.0, 0.1)) for j in fixed
        )
        messages.append(("/tf_static", times_ns[0], message))
    topics += extra_topics or []
    messages += extra or []
    messages.sort(key=lambda item: item[1])
    return write_bag(path, "sqlite3", topics, messages)


def every(count: int, step_ns: int = 10**7) -> list[int]:
    return [T0_NS + k * step_ns for k in range(count)]


def test_a_healthy_recording_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, document = doctor(capsys, states_bag(tmp_path / "in", every(20)))
    assert (code, document["findings"], document["healthy"]) == (0, [], True)


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_no_tf_static_and_its_repair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], storage: str
) -> None:
    bag, _ = recording(tmp_path / "in", ARM, storage, count=20)
    code, document = doctor(capsys, bag)
    assert code == 1 and kinds(document) == ["no_tf_static"]
    repair = f"joint-tf-publisher bag repair {bag} -o {tmp_path / 'in_repaired'}"
    assert f"`{repair}`" in finding(document, "no_tf_static")["fix"]
    assert main(repair.split()[1:]) == 0  # the command it names, as it is
    capsys.readouterr()
    code, document = doctor(capsys, tmp_path / "in_repaired")
    assert (code, document["findings"]) == (0, [])


def test_the_json_shape_is_the_live_doctors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, document = doctor(capsys, states_bag(tmp_path / "in", every(5)))
    live = json.loads(json_report(Observation(1.0, T0_NS), diagnose(Observation(1.0, T0_NS))))
    assert document.keys() == live.keys()
    assert document["counts"].keys() == live["counts"].keys()


@pytest.mark.parametrize("profiles", [[], "volatile"])
def test_tf_static_recorded_volatile_or_without_qos(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], profiles: Any
) -> None:
    from rosbags.interfaces import QosDurability

    qos = [] if profiles == [] else [tf_static_qos()._replace(durability=QosDurability.VOLATILE)]
    fixed = transform(T0_NS, "tool_flange", "gripper_base", (0.0, 0.0, 0.1))
    bag = states_bag(
        tmp_path / "in", every(10), statics=False,
        extra_topics=[Topic("/tf_static", TF_MESSAGE, qos)],
        extra=[("/tf_static", T0_NS, tf_message([fixed]))],
    )  # fmt: skip
    code, document = doctor(capsys, bag)
    assert code == 1 and "tf_static_not_latched" in kinds(document)
    assert "bag repair" in finding(document, "tf_static_not_latched")["fix"]


def test_statics_only_at_the_start_of_a_long_recording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bag = states_bag(tmp_path / "in", every(25, S // 2))  # 12 s, statics at the start only
    code, document = doctor(capsys, bag)
    assert code == 1 and kinds(document) == ["statics_only_at_start"]
    fix = finding(document, "statics_only_at_start")["fix"]
    assert "--static-republish-period 1" in fix
    command = fix.split("`")[1].split()
    assert main(command[1:]) == 0
    capsys.readouterr()
    code, document = doctor(capsys, tmp_path / "in_repaired")
    assert (code, document["findings"]) == (0, [])
    assert document["heard"]["tf_static_messages"] == 12 + 1


def test_joints_of_the_description_never_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bag = states_bag(tmp_path / "in", every(10), names=ARM_JOINTS[:5])
    code, document = doctor(capsys, bag)
    assert code == 1 and kinds(document) == ["joints_not_recorded"]
    found = finding(document, "joints_not_recorded")
    # the node's health rule: the mimic follower of a joint never received is never received,
    # and every frame below each joint is missing (#48)
    assert found["details"]["joints"] == [
        "wrist_3_joint",
        "left_finger_joint",
        "right_finger_joint",
    ]
    assert found["details"]["frames"] == [
        "gripper_base_link", "left_finger_link", "right_finger_link", "tool_flange", "wrist_3_link"
    ]  # fmt: skip
    assert "3 joint(s) never received: wrist_3_joint, left_finger_joint" in found["summary"]
    assert "publish_default_positions" in found["fix"]


def test_the_frames_named_carry_the_prefix_given_the_option_over_the_params_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: ``--params``'s ``frame_prefix`` is the robot's, under
    ``--frame-prefix``: the frames of the joints never recorded are named with it."""
    bag = states_bag(tmp_path / "in", every(10), names=ARM_JOINTS[:5])
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n    frame_prefix: right/\n")
    for extra, prefix in (
        ((), ""),
        (("--params", str(params)), "right/"),
        (("--params", str(params), "--frame-prefix", "left/"), "left/"),
    ):
        code, document = doctor(capsys, bag, *extra)
        assert code == 1
        summary = finding(document, "joints_not_recorded")["summary"]
        frames = summary.partition("frames missing from /tf: ")[2].split(", ")
        assert f"{prefix}wrist_3_link" in frames, summary
        assert all(frame.startswith(prefix) for frame in frames), summary


def test_no_joint_states(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = write_bag(
        tmp_path / "in", "sqlite3", [Topic("/robot_description", STRING, [tf_static_qos()])],
        [("/robot_description", T0_NS, string(ARM.read_text()))],
    )  # fmt: skip
    code, document = doctor(capsys, bag)
    assert code == 1 and "no_joint_states" in kinds(document)


def test_a_frame_with_two_parents_and_one_from_two_sources(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    camera = [
        transform(T0_NS + k, parent, "camera", (0.0, 0.0, 0.0))
        for k, parent in enumerate(["base_link", "tool_flange"])
    ]
    stand = transform(T0_NS, "world", "base_link", (0.0, 0.0, 0.0))
    gripper = transform(T0_NS, "tool_flange", "gripper_base_link", (0, 0, 0))  # a fixed joint
    recorded = [
        ("/tf", T0_NS + 1, tf_message([camera[0], stand])),
        ("/tf", T0_NS + 2, tf_message([camera[1]])),
        ("/tf", T0_NS + 3, tf_message([gripper])),
    ]
    bag = states_bag(
        tmp_path / "in", every(10), extra_topics=[Topic("/tf", TF_MESSAGE)], extra=recorded
    )
    code, document = doctor(capsys, bag)
    assert code == 1
    assert finding(document, "two_parents")["details"]["parents"] == ["base_link", "tool_flange"]
    two_sources = finding(document, "two_publishers")
    assert two_sources["details"]["frames"] == ["gripper_base_link"]
    assert "bag repair" in two_sources["fix"]


def test_joint_state_gaps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    times = every(10) + [T0_NS + 3 * S + k * 10**7 for k in range(10)]
    code, document = doctor(capsys, states_bag(tmp_path / "in", times))
    assert code == 1 and kinds(document) == ["joint_state_gaps"]
    assert finding(document, "joint_state_gaps")["details"]["gaps"] == 1
    # the node's joint_state_timeout from --params is the gap, as the node reports it (#48)
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n    joint_state_timeout: 5.0\n")
    code, document = doctor(capsys, tmp_path / "in", "--params", str(params))
    assert code == 0 and kinds(document) == []


def test_stamps_that_jump_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    times = every(20)
    stamps = times[:10] + [t - S // 2 for t in times[10:]]
    code, document = doctor(capsys, states_bag(tmp_path / "in", times, stamps))
    assert code == 1 and kinds(document) == ["stamps_jump_back"]
    assert finding(document, "stamps_jump_back")["details"]["count"] == 1


def test_stamps_in_another_clock_domain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    times = every(10)
    sim = [100 * S + k * 10**7 for k in range(10)]  # sim time recorded by a wall-clock recorder
    code, document = doctor(capsys, states_bag(tmp_path / "in", times, sim))
    assert code == 1 and kinds(document) == ["clock_domain"]
    assert "--clock" in finding(document, "clock_domain")["fix"]


def test_the_bags_description_differs_from_the_one_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = tmp_path / "arm_v2.urdf"
    new.write_text(ARM.read_text().replace('<origin xyz="0 0 0.1"', '<origin xyz="0 0 0.2"', 1))
    assert new.read_text() != ARM.read_text()
    bag = states_bag(tmp_path / "in", every(10))
    code, document = doctor(capsys, bag, "--description", str(new))
    assert code == 1 and kinds(document) == ["description_differs"]
    found = finding(document, "description_differs")
    assert "changed" in found["summary"]
    assert f"--description {new}" in found["fix"]
    code, document = doctor(capsys, bag, "--description", str(ARM))
    assert code == 0


def test_every_difference_is_listed_and_an_axis_turned_by_a_tenth_is_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """description_differs names each link and joint added or gone and each joint changed
    (an axis tilted 0.1 rad, which whole numbers would round away), and no other."""
    text = ARM.read_text().replace('<axis xyz="0 0 1"/>', '<axis xyz="0.0998 0 0.995"/>', 1)
    text = re.sub(r'  <link name="right_finger_link">.*?</link>\n', "", text, flags=re.S)
    text = re.sub(r'  <joint name="right_finger_joint".*?</joint>\n', "", text, flags=re.S)
    text = text.replace(
        "</robot>",
        '<link name="camera_link"/><joint name="camera_joint" type="fixed">'
        '<parent link="base_link"/><child link="camera_link"/></joint></robot>',
    )
    new = tmp_path / "arm_v2.urdf"
    new.write_text(text)
    code, document = doctor(
        capsys, states_bag(tmp_path / "in", every(10)), "--description", str(new)
    )
    assert code == 1
    assert finding(document, "description_differs")["details"]["differences"] == [
        "link 'camera_link' added",
        "link 'right_finger_link' gone",
        "joint 'camera_joint' added",
        "joint 'right_finger_joint' gone",
        "joint 'shoulder_pan_joint' changed",
    ]


def test_the_counts_gaps_and_worst_stamp_are_the_recordings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """heard counts every joint state; a stop of exactly 1 s is no gap (more than 1 s is),
    two gaps count two, the longest (the first of equals) is named; the clock finding names
    the stamp farthest from its log time (the first of equals)."""
    hour = 3600 * S
    times = every(5) + [T0_NS + 4 * 10**7 + S] + [T0_NS + 3 * S, T0_NS + 4_960_000_000]
    stamps = [t + 2 * hour for t in times[:2]] + [t + 3 * hour for t in times[2:6]]
    stamps += [t + 2 * hour for t in times[6:]]
    code, document = doctor(capsys, states_bag(tmp_path / "in", times, stamps))
    assert code == 1 and document["heard"]["joint_states"] == 8
    gaps = finding(document, "joint_state_gaps")["details"]
    assert gaps == {"gaps": 2, "longest_s": pytest.approx(1.96), "at_s": pytest.approx(1.04)}
    clock = finding(document, "clock_domain")["details"]
    assert (clock["stamp_ns"], clock["log_time_ns"]) == (times[2] + 3 * hour, times[2])


def test_joint_states_that_do_not_decode_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bag = write_bag(
        tmp_path / "in", "sqlite3",
        [Topic("/joint_states", JOINT_STATE),
         Topic("/robot_description", STRING, [tf_static_qos()])],
        [("/robot_description", T0_NS, string(ARM.read_text()))]
        + [("/joint_states", T0_NS + k, b"\x00\x01\x00\x00junk") for k in range(1, 4)],
    )  # fmt: skip
    code, document = doctor(capsys, bag)
    assert code == 1
    summary = finding(document, "no_joint_states")["summary"]
    assert summary == "the recording has no /joint_states that decode (3 that do not)"


def test_an_unreadable_bag_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--bag", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such bag" in err


def test_the_text_report_says_each_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=5)
    assert main(["doctor", "--bag", str(bag)]) == 1
    text = capsys.readouterr().out
    assert "ERROR: the recording has no /tf_static" in text and "  fix:   " in text
    assert text.rstrip().endswith("1 error(s), 0 warning(s), 0 note(s)")


def diagnostics(report: HealthReport, stamp_ns: int) -> bytes:
    """A recorded /diagnostics message holding ``report`` as the node publishes it."""
    types = STORE.types
    status = types["diagnostic_msgs/msg/DiagnosticStatus"](
        level=int(report.level),
        name="joint_tf_publisher: joint states",
        message=report.message,
        hardware_id="demo_arm",
        values=[types["diagnostic_msgs/msg/KeyValue"](key=k, value=v) for k, v in report.values],
    )
    header = types["std_msgs/msg/Header"](stamp=stamp(stamp_ns), frame_id="")
    array = types[DIAGNOSTIC_ARRAY](header=header, status=[status])
    return bytes(STORE.serialize_cdr(array, DIAGNOSTIC_ARRAY))


def test_a_recorded_static_union_conflict_and_refusals_are_explained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A node run with static_union while recording reported a conflict, which ended before
    the recording did, and a refused NaN: the doctor explains both from its recorded
    /diagnostics, as the live doctor does."""
    times = every(20)
    reports = [
        ("/diagnostics", t, diagnostics(union_report(t, conflict=c), t))
        for t, c in ((times[5], True), (times[15], False))
    ]
    bag = states_bag(
        tmp_path / "in",
        times,
        extra_topics=[Topic("/diagnostics", DIAGNOSTIC_ARRAY)],
        extra=reports,
    )
    code, document = doctor(capsys, bag)
    assert code == 1
    conflict = finding(document, "static_union_conflict")
    assert (conflict["details"]["kept"], conflict["details"]["refused"]) == (
        "/calibration",
        "/sensors",
    )
    assert "keeps the first that gave it, /calibration" in conflict["cause"]
    refused = finding(document, "static_union_refused")
    assert refused["details"]["refused"] == {"value not finite": 1}
    assert "diagnostics" not in kinds(document)
