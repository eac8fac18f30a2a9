"""``joint-tf-publisher doctor --bag``: one recording per finding (made here with rosbags'
writer), each finding naming its fix, a repaired bag healthy, the live doctor's JSON shape
and exit status."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

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
from joint_tf_publisher.cli.bag.topics import robot_topics
from joint_tf_publisher.cli.bag.types import DIAGNOSTIC_ARRAY
from joint_tf_publisher.cli.doctor import recording as doctor_recording
from joint_tf_publisher.cli.doctor.analysis import diagnose
from joint_tf_publisher.cli.doctor.observation import HeardTransform, Kind, Observation, Severity
from joint_tf_publisher.cli.doctor.recording import (
    BagContext,
    BagScan,
    clock_finding,
    description_findings,
    joint_state_findings,
    static_findings,
)
from joint_tf_publisher.cli.doctor.report import json_report
from joint_tf_publisher.cli.doctor.tree import parent_findings, publisher_findings
from joint_tf_publisher.cli.main import main
from joint_tf_publisher.health.model import GraphFacts, HealthReport, JointStateHealth, Key, Level

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
        messages.append(("/tf_static", times_ns[0], arm_statics(times_ns[0])))
    topics += extra_topics or []
    messages += extra or []
    messages.sort(key=lambda item: item[1])
    return write_bag(path, "sqlite3", topics, messages)


def arm_fixed_joints() -> list[Any]:
    return [j for j in Robot.load(ARM).joints.values() if j.joint_type == "fixed"]


def arm_statics(stamp_ns: int) -> bytes:
    """A /tf_static message of the arm's fixed joints (not at their description's origins)."""
    return tf_message(
        transform(stamp_ns, j.parent, j.child, (0.0, 0.0, 0.1)) for j in arm_fixed_joints()
    )


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
    assert finding(document, "no_tf_static")["details"] == {"topics": document["heard"]["topics"]}
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
    found = finding(document, "tf_static_not_latched")
    assert "bag repair" in found["fix"]
    recorded = "no QoS at all" if profiles == [] else "volatile"
    assert found["summary"].startswith(f"/tf_static is recorded with {recorded}, not "), found
    assert found["details"] == {"durability": [] if profiles == [] else ["volatile"]}


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
        # the repair that gives the joints default positions: with the --params file given,
        # in that file; else with one to write
        fix = finding(document, "joints_not_recorded")["fix"]
        repair = f"joint-tf-publisher bag repair {bag} -o {tmp_path / 'in_repaired'}"
        if extra:
            assert f"`{repair} --params {params}` with those in {params}" in fix, fix
        else:
            assert f"`{repair} --params params.yaml`" in fix, fix


def test_no_joint_states(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = write_bag(
        tmp_path / "in", "sqlite3", [Topic("/robot_description", STRING, [tf_static_qos()])],
        [("/robot_description", T0_NS, string(ARM.read_text()))],
    )  # fmt: skip
    code, document = doctor(capsys, bag)
    assert code == 1 and "no_joint_states" in kinds(document)
    found = finding(document, "no_joint_states")
    assert found["summary"] == "the recording has no /joint_states that decode"
    assert found["severity"] == "error"  # a description to check them against: an error


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
    """Each jump back counted; the first said: when, and by how much."""
    times = every(20)
    stamps = times[:10] + [t - S // 2 for t in times[10:15]] + [t - S for t in times[15:]]
    code, document = doctor(capsys, states_bag(tmp_path / "in", times, stamps))
    assert code == 1 and kinds(document) == ["stamps_jump_back"]
    jump = finding(document, "stamps_jump_back")
    assert jump["details"] == {"count": 2, "at_s": pytest.approx(0.1)}
    assert "go back 2 time(s), first by 0.490 s at 0.10 s into the recording" in jump["summary"]


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
    assert found["cause"].startswith("the robot was recorded with another (an older) description")
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


def test_the_recordings_last_description_is_compared_and_one_that_does_not_load_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: --description is compared with the recording's last
    /robot_description (two older ones before it are not); a last one that does not load
    differs, in those words."""
    older = [
        ARM.read_text().replace('<origin xyz="0 0 0.1"', f'<origin xyz="0 0 0.{k}"', 1)
        for k in (2, 3)
    ]
    assert ARM.read_text() not in older
    before = [("/robot_description", T0_NS - 2 + k, string(text)) for k, text in enumerate(older)]
    bag = states_bag(tmp_path / "in", every(10), extra=before)
    code, document = doctor(capsys, bag, "--description", str(ARM))
    assert (code, document["findings"]) == (0, [])
    broken = [("/robot_description", T0_NS + 1, string("<robot name='arm'><link/></robot>"))]
    bag = states_bag(tmp_path / "broken", every(10), extra=broken)
    code, document = doctor(capsys, bag, "--description", str(ARM))
    assert code == 1 and kinds(document) == ["description_differs"]
    found = finding(document, "description_differs")
    assert found["details"]["differences"] == ["it does not load"]
    assert found["summary"].endswith(f"differs from {ARM}: it does not load"), found


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
    gaps = finding(document, "joint_state_gaps")
    assert gaps["details"] == {
        "gaps": 2, "longest_s": pytest.approx(1.96), "at_s": pytest.approx(1.04)
    }  # fmt: skip
    assert "stops 2 time(s) for more than 1 s, the longest 1.96 s at 1.04 s" in gaps["summary"]
    clock = finding(document, "clock_domain")["details"]
    assert (clock["stamp_ns"], clock["log_time_ns"]) == (times[2] + 3 * hour, times[2])
    assert clock["topic"] == "/joint_states"


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


def diagnostics(
    report: HealthReport,
    stamp_ns: int,
    name: str = "joint_tf_publisher: joint states",
    before: Sequence[tuple[str, HealthReport]] = (),
) -> bytes:
    """A recorded /diagnostics message holding ``report`` as the node ``name`` publishes it,
    after the statuses ``before`` (name, report)."""
    types = STORE.types
    statuses = [
        types["diagnostic_msgs/msg/DiagnosticStatus"](
            level=int(each.level),
            name=each_name,
            message=each.message,
            hardware_id="demo_arm",
            values=[types["diagnostic_msgs/msg/KeyValue"](key=k, value=v) for k, v in each.values],
        )
        for each_name, each in [*before, (name, report)]
    ]
    header = types["std_msgs/msg/Header"](stamp=stamp(stamp_ns), frame_id="")
    array = types[DIAGNOSTIC_ARRAY](header=header, status=statuses)
    return bytes(STORE.serialize_cdr(array, DIAGNOSTIC_ARRAY))


def diagnostics_bag(path: Path, times: list[int], reports: list[tuple[str, int, bytes]]) -> Path:
    """The arm's recording at ``times`` with the recorded /diagnostics ``reports``."""
    return states_bag(
        path, times, extra_topics=[Topic("/diagnostics", DIAGNOSTIC_ARRAY)], extra=reports
    )


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
    bag = diagnostics_bag(tmp_path / "in", times, reports)
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
    assert refused["severity"] == "warning"  # the node's last report warned
    assert "diagnostics" not in kinds(document)
    # a last report that is OK (refused since it started, none lately): a note
    ok = replace(union_report(times[15], conflict=False), level=Level.OK)
    reports[1] = ("/diagnostics", times[15], diagnostics(ok, times[15]))
    bag = diagnostics_bag(tmp_path / "ok", times, reports)
    _, document = doctor(capsys, bag)
    assert finding(document, "static_union_refused")["severity"] == "note"


def test_every_conflict_of_every_recorded_static_union_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: each node run with static_union while recording, each conflict it
    reported during the recording: left's union reported camera, then lidar only (camera
    had ended); right's reported camera."""
    times = every(20)
    left, right = "left: joint states", "right: joint states"
    reports = [
        ("/diagnostics", times[5], diagnostics(union_report(times[5]), times[5], left)),
        ("/diagnostics", times[8], diagnostics(union_report(times[8]), times[8], right)),
        (
            "/diagnostics",
            times[15],
            diagnostics(union_report(times[15], frames=("lidar",)), times[15], left),
        ),
    ]
    bag = diagnostics_bag(tmp_path / "in", times, reports)
    code, document = doctor(capsys, bag)
    assert code == 1
    conflicts = [
        (f["details"]["status"], f["details"]["frame"], f["details"]["kept"])
        for f in document["findings"]
        if f["kind"] == "static_union_conflict"
    ]
    assert sorted(conflicts) == [
        (left, "camera", "/calibration"),
        (left, "lidar", "/calibration"),
        (right, "camera", "/calibration"),
    ]


def a_scan(**facts: Any) -> BagScan:
    """What a pass over a recording of 20 s found: ``facts``, the rest healthy."""
    return BagScan(Path("run42"), "sqlite3", start_ns=T0_NS, end_ns=T0_NS + 20 * S, **facts)


def a_context(robot: Robot | None = None) -> BagContext:
    return BagContext(robot, "robot.urdf" if robot else "", "", "joint-tf-publisher bag repair")


def test_the_clock_finding_is_for_stamps_more_than_an_hour_from_their_log_times() -> None:
    """recordings.md: clock_domain when header stamps are more than an hour from their log
    times (an hour exactly is not), saying by how much, on which side and on which topic."""
    hour = 3600 * S
    at_an_hour = a_scan(foreign_stamp=(T0_NS + hour, T0_NS, "/joint_states"))
    assert clock_finding(at_an_hour) == []
    (ahead,) = clock_finding(a_scan(foreign_stamp=(T0_NS + hour + 1, T0_NS, "/tf")))
    assert (ahead.severity, ahead.kind) == (Severity.ERROR, Kind.CLOCK_DOMAIN)
    assert ahead.summary.startswith("clock: /tf is stamped "), ahead.summary
    assert "1.0 h ahead of its log time (1767225600.000 s (2026-01-01" in ahead.summary
    assert dict(ahead.details) == {
        "topic": "/tf", "stamp_ns": T0_NS + hour + 1, "log_time_ns": T0_NS
    }  # fmt: skip
    # why (docs: simulation time under a wall-clock recorder, or the reverse), what it
    # breaks, and both remedies
    assert "simulation time recorded with a wall-clock recorder (or the reverse)" in ahead.cause
    assert "a listener on the playback's clock finds no transform at its time" in ahead.cause
    assert "`ros2 bag play --clock` and use_sim_time:=true for every node" in ahead.fix
    assert "record with the recorder's use_sim_time set as the system's" in ahead.fix
    (behind,) = clock_finding(a_scan(foreign_stamp=(100 * S, T0_NS, "/joint_states")))
    assert "/joint_states is stamped 100.000 s, 56.0 years behind its log time" in behind.summary


def test_statics_absent_for_more_than_10_s_are_reported_and_10_s_are_not() -> None:
    """recordings.md: statics_only_at_start for more than 10 s of log time without
    /tf_static; the stretch and the count of /tf_static messages said."""
    latched = [tf_static_qos()]
    at_10_s = a_scan(static_count=2, static_stretch_ns=10 * S, tf_static_profiles=latched)
    assert static_findings(at_10_s, a_context()) == []
    longer = a_scan(static_count=2, static_stretch_ns=10 * S + 10**6, tf_static_profiles=latched)
    (found,) = static_findings(longer, a_context())
    assert found.kind is Kind.STATICS_ONLY_AT_START
    assert dict(found.details) == {"stretch_s": 10.001, "count": 2}
    assert "for 10.0 s at a stretch (2 message(s) in 20.0 s)" in found.summary


def test_no_description_is_a_note_naming_the_topic_it_would_come_from() -> None:
    """recordings.md: no_description is a note (frames and joint states not checked
    against one), naming the robot's description topic; none where one is given."""
    (note,) = description_findings(a_scan(names=robot_topics("/robot1")), a_context())
    assert (note.kind, note.severity) == (Kind.NO_DESCRIPTION, Severity.NOTE)
    assert "the recording has no /robot1/robot_description and none was given" in note.summary
    assert description_findings(a_scan(), a_context(Robot.load(ARM))) == []


def test_no_joint_states_is_a_warning_without_a_description() -> None:
    """recordings.md: no_joint_states is an error against a description, a warning
    without one (nothing to rebuild the frames of)."""
    scan = a_scan(undecodable=0)
    (without,) = joint_state_findings(scan, a_context())
    (against,) = joint_state_findings(scan, a_context(Robot.load(ARM)))
    assert (without.kind, without.severity) == (Kind.NO_JOINT_STATES, Severity.WARNING)
    assert (against.kind, against.severity) == (Kind.NO_JOINT_STATES, Severity.ERROR)


def test_every_problem_of_one_recording_is_reported_errors_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recording with a problem of each kind of check (its statics, its joint states, its
    clock, its description, its nodes' static unions, its tree): each reported, errors
    first; the union's status found after another status of the same /diagnostics
    message."""
    times = every(10, S // 2) + [T0_NS + 8 * S + k * S // 2 for k in range(10)]  # 12.5 s
    sim = [t - T0_NS + 100 * S for t in times]
    other = JointStateHealth(1.0).report(GraphFacts({}, times[3]))
    status = diagnostics(union_report(times[3]), times[3], before=[("description", other)])
    camera = [
        transform(T0_NS + k, parent, "camera", (0.0, 0.0, 0.0))
        for k, parent in enumerate(["base_link", "tool_flange"])
    ]
    recorded = [("/diagnostics", times[3], status), ("/tf", times[4], tf_message(camera))]
    topics = [Topic("/diagnostics", DIAGNOSTIC_ARRAY), Topic("/tf", TF_MESSAGE)]
    bag = states_bag(tmp_path / "in", times, sim, extra_topics=topics, extra=recorded)
    new = tmp_path / "arm_v2.urdf"
    new.write_text(ARM.read_text().replace('<origin xyz="0 0 0.1"', '<origin xyz="0 0 0.2"', 1))
    code, document = doctor(capsys, bag, "--description", str(new))
    assert code == 1
    assert kinds(document) == [
        "clock_domain",
        "two_parents",
        "statics_only_at_start",
        "joint_state_gaps",
        "description_differs",
        "static_union_conflict",
        "static_union_refused",
    ]


# -- make mutate's survivors in scan_bag and _union_statuses (#44 rule) --------------------


def test_the_report_names_the_recordings_storage_and_counts_every_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: ``heard`` (and the text report's first line) names the bag's storage
    and counts its messages, every one of every topic."""
    for storage in ("sqlite3", "mcap"):
        bag, states = recording(tmp_path / storage, ARM, storage, count=7)
        written = len(states) + 1  # the joint states and the description
        _, document = doctor(capsys, bag)
        assert (document["heard"]["storage"], document["heard"]["messages"]) == (storage, written)
        assert main(["doctor", "--bag", str(bag)]) == 1  # no /tf_static
        first = capsys.readouterr().out.splitlines()[0]
        assert first.startswith(f"read {bag} ({storage}, "), first
        assert f", {written} messages): " in first, first


def test_a_merged_recording_with_one_tf_static_recorded_volatile_is_not_latched_naming_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bag merged from two recordings has a /tf_static connection of each: ``ros2 bag
    play`` offers the topic transient local only when every recorded profile is, so one
    recorded volatile is tf_static_not_latched, naming both durabilities (in its summary
    too: static_findings' survivor 40)."""
    from rosbags.interfaces import QosDurability

    volatile = tf_static_qos()._replace(durability=QosDurability.VOLATILE)
    fixed = tf_message([transform(T0_NS, "tool_flange", "gripper_base", (0.0, 0.0, 0.1))])
    bag = states_bag(
        tmp_path / "in", every(10), statics=False,
        extra_topics=[Topic("/tf_static", TF_MESSAGE, [volatile], key="first"),
                      Topic("/tf_static", TF_MESSAGE, [tf_static_qos()], key="second")],
        extra=[("first", T0_NS, fixed), ("second", T0_NS + 1, fixed)],
    )  # fmt: skip
    code, document = doctor(capsys, bag)
    assert code == 1 and "tf_static_not_latched" in kinds(document)
    found = finding(document, "tf_static_not_latched")
    assert found["details"] == {"durability": ["transient_local", "volatile"]}
    said = "/tf_static is recorded with transient_local, volatile, not transient local: "
    assert found["summary"].startswith(said), found["summary"]


def test_a_recorded_union_status_without_a_conflicts_value_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """robustness.md: a recorded /diagnostics status is anyone's: one that reports a static
    union (its frames) and its refusals but no ``static union conflicts`` value is read as
    a union without conflicts, its refusals reported (no traceback)."""
    times = every(10)
    report = union_report(times[5])
    values = tuple((key, value) for key, value in report.values if key != Key.UNION_CONFLICTS)
    assert len(values) == len(report.values) - 1
    status = diagnostics(replace(report, values=values), times[5])
    bag = diagnostics_bag(tmp_path / "in", times, [("/diagnostics", times[5], status)])
    code, document = doctor(capsys, bag)
    assert code == 1 and kinds(document) == ["static_union_refused"]


def test_a_conflict_reported_in_several_reports_is_one_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: every conflict a node's union reported during the recording, each
    once: camera and lidar in one report, then lidar alone (camera's ended), are a finding
    each."""
    times = every(20)
    reports = [
        ("/diagnostics", t, diagnostics(union_report(t, frames=frames), t))
        for t, frames in ((times[5], ("camera", "lidar")), (times[15], ("lidar",)))
    ]
    code, document = doctor(capsys, diagnostics_bag(tmp_path / "in", times, reports))
    assert code == 1
    conflicts = [f for f in document["findings"] if f["kind"] == "static_union_conflict"]
    assert sorted(f["details"]["frame"] for f in conflicts) == ["camera", "lidar"]


def test_the_last_conflict_a_report_names_before_its_count_of_more_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: every conflict a union reported during the recording. A report of 12
    conflicts names the oldest 10 and counts the 2 others (node.md: ``... and 2 more``); a
    later report names f11 alone: the 10 and f11 are findings. The 10th, written before the
    count, was lost once a later report named another (#44 rule, found reading a survivor
    of ``_union_statuses``)."""
    times = every(20)
    frames = [f"f{k:02d}" for k in range(12)]
    reports = [
        ("/diagnostics", t, diagnostics(union_report(t, frames=named), t))
        for t, named in ((times[5], frames), (times[15], frames[11:]))
    ]
    code, document = doctor(capsys, diagnostics_bag(tmp_path / "in", times, reports))
    assert code == 1
    conflicts = [f for f in document["findings"] if f["kind"] == "static_union_conflict"]
    assert sorted(f["details"]["frame"] for f in conflicts) == frames[:10] + frames[11:]


def test_heard_and_the_first_line_say_what_the_recording_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: ``heard`` is the bag, its storage, duration, messages, topics, frames
    (each child once: on /tf, on /tf_static), /tf_static messages, joint states, the robot
    and the suggested repair; the text report's first line says them (its example)."""
    times = every(11, S // 10)  # 1.0 s of joint states
    fixed = arm_fixed_joints()
    moving = [(times[k], child) for k, child in enumerate(["marker", "marker", "camera", "lidar"])]
    recorded = [
        ("/tf", t, tf_message([transform(t, "base_link", child, (0.0, 0.0, 0.0))]))
        for t, child in moving
    ]
    recorded.append(("/tf_static", times[5], arm_statics(times[5])))
    bag = states_bag(
        tmp_path / "in", times, extra_topics=[Topic("/tf", TF_MESSAGE)], extra=recorded
    )
    code, document = doctor(capsys, bag)
    written = len(times) + 1 + len(moving) + 2  # states, description, /tf, both /tf_static
    source = "the recording's /robot_description"
    assert document["heard"] == {
        "bag": str(bag),
        "storage": "sqlite3",
        "duration_s": 1.0,
        "messages": written,
        "topics": ["/joint_states", "/robot_description", "/tf", "/tf_static"],
        "tf_frames": 3,  # marker, camera, lidar
        "tf_static_frames": len(fixed),
        "tf_static_messages": 2,
        "joint_states": len(times),
        "robot": "demo_arm",
        "description_source": source,
        "repair": f"joint-tf-publisher bag repair {bag} -o {tmp_path / 'in_repaired'}",
    }
    assert main(["doctor", "--bag", str(bag)]) == code
    assert capsys.readouterr().out.splitlines()[0] == (
        f"read {bag} (sqlite3, 1.0 s, {written} messages): robot 'demo_arm' from {source}; "
        f"3 frames on /tf, {len(fixed)} on /tf_static (2 message(s)), {len(times)} joint states"
    )


def test_the_suggested_repair_republishes_statics_for_a_recording_over_10_s(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: the doctor suggests ``--static-republish-period 1`` for a recording
    longer than 10 s (its statics recorded every second: no stretch without them), not for
    one of 10 s, even one without statics for all its 10 s (the stretch is not over 10 s)."""
    for seconds, period, with_statics in ((10, False, True), (10, False, False), (12, True, True)):
        times = every(10 * seconds + 1, S // 10)
        statics = [("/tf_static", t, arm_statics(t)) for t in times[10::10] if with_statics]
        bag = states_bag(tmp_path / f"{seconds}s-{with_statics}", times, extra=statics)
        code, document = doctor(capsys, bag)
        assert document["heard"]["duration_s"] == seconds
        assert code == 0 or not with_statics
        assert document["heard"]["repair"].endswith(" --static-republish-period 1") is period


def test_the_suggested_repair_of_a_recording_without_a_description_asks_for_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: the repair of a recording without /robot_description needs
    --description (else it refuses): the doctor's suggested command carries it."""
    bag = write_bag(
        tmp_path / "in", "sqlite3", [Topic("/joint_states", JOINT_STATE)],
        [("/joint_states", t, joint_state(t, ARM_JOINTS, [0.0] * 7)) for t in every(5)],
    )  # fmt: skip
    code, document = doctor(capsys, bag)
    assert code == 1 and "no_description" in kinds(document)
    assert (document["heard"]["robot"], document["heard"]["description_source"]) == (None, None)
    assert finding(document, "no_description")["cause"] == "/robot_description was not recorded"
    assert finding(document, "no_description")["fix"].endswith(
        "doctor --bag IN --description robot.urdf"  # the command to run, as recordings.md
    )
    words = shlex.split(document["heard"]["repair"])
    assert words[:-1] == [
        *f"joint-tf-publisher bag repair {bag} -o {tmp_path / 'in_repaired'}".split(),
        "--description",
    ]


def test_no_tf_static_gives_the_causes_and_fix_recordings_md_shows() -> None:
    """recordings.md's first case shows no_tf_static's cause: each way a recording loses
    its statics (a recorder started late, /tf_static not recorded, snapshot mode), with the
    recorder's option and the topic named as the user types them), and its fix: the
    repair, and for future recordings /tf_static from the start or the state publisher's
    parameter by its name (static_findings' survivors 17-26, #44 rule)."""
    text = (REPO_ROOT / "docs" / "recordings.md").read_text()
    cause, fix = text.split("\n  cause: ", 1)[1].split("\n\n", 1)[0].split("\n  fix:", 1)
    context = a_context()
    (found,) = static_findings(a_scan(), context)
    assert found.kind is Kind.NO_TF_STATIC
    assert found.cause == " ".join(cause.split()), cause
    shown_fix = re.sub("`[^`]*`", f"`{context.repair_command}`", " ".join(fix.split()))
    assert found.fix == shown_fix, fix


def test_statics_not_latched_or_absent_in_stretches_say_why_and_the_remedies() -> None:
    """recordings.md's cases 1 and 3: tf_static_not_latched says what playback does with the
    recording (offers it volatile; RViz and tf2 listeners ask for transient local), why
    (the recorder stored what it saw: rosbag2 before Jazzy, rosbag2#967, rviz#916) and both
    remedies (the repair; a QoS override giving transient_local); statics_only_at_start,
    why (``--start-offset``, rosbag2#1482; a split bag, rosbag2#1159) and the repair's
    period (static_findings' survivors 48 and on, #44 rule)."""
    from rosbags.interfaces import QosDurability

    volatile = [tf_static_qos()._replace(durability=QosDurability.VOLATILE)]
    scan = a_scan(static_count=2, static_stretch_ns=12 * S, tf_static_profiles=volatile)
    context = a_context()
    command = f"`{context.repair_command}`"
    latched, stretch = static_findings(scan, context)
    assert (latched.kind, stretch.kind) == (Kind.TF_STATIC_NOT_LATCHED, Kind.STATICS_ONLY_AT_START)
    assert latched.summary.endswith(
        "volatile, not transient local: `ros2 bag play` offers it volatile, so RViz and tf2 "
        "listeners (which ask for transient local) do not receive it"
    ), latched.summary
    assert latched.cause == (
        "the recorder stored the QoS it saw (rosbag2 before Jazzy, or a publisher that offered "
        "volatile), or none (rosbag2#967, rviz#916)"
    )
    assert latched.fix == (
        f"{command} writes /tf_static reliable and transient local; or play with "
        "--qos-profile-overrides-path giving /tf_static durability transient_local"
    )
    assert stretch.summary.endswith(
        "(2 message(s) in 20.0 s): playback started in that stretch has no fixed frames"
    ), stretch.summary
    assert stretch.cause == (
        "`ros2 bag play --start-offset` skips the statics before its start (rosbag2#1482, by "
        "design), and a split bag keeps them in its first file only (rosbag2#1159)"
    )
    assert stretch.fix == f"{command} writes the complete static set every 1 s"


def test_the_joint_state_findings_say_why_and_what_to_do() -> None:
    """recordings.md's rows no_joint_states, joints_not_recorded, joint_state_gaps and
    stamps_jump_back: each finding's cause and its fix, the options and parameters named as
    the user types them (--params, source_list, publish_default_positions, zeros.<joint>,
    --max-cache-size) and the repair command (joint_state_findings' text mutants, #44
    rule)."""
    arm = Robot.load(ARM)
    context = a_context(arm)
    command = context.repair_command
    (none,) = joint_state_findings(a_scan(), context)
    assert none.cause == (
        "the joint states were not among the topics recorded, or come under another name (a "
        "source_list topic)"
    )
    assert none.fix == (
        "record /joint_states; without them the robot's moving frames cannot be rebuilt (give "
        "the repair a --params with source_list for another topic)"
    )
    scan = a_scan(
        joint_states=5, joint_names=set(ARM_JOINTS[:5]), gaps=2, longest_gap_ns=3 * S,
        longest_gap_at_ns=T0_NS + S, jumps_back=1, first_jump_at_ns=T0_NS + 2 * S,
        first_jump_by_ns=S // 2,
    )  # fmt: skip
    never, gaps, jumps = joint_state_findings(scan, context)
    assert never.cause.startswith(
        "no joint state of the recording names them: joint states usually come from "
    ), never.cause
    assert never.cause.endswith(", and this one was not recorded or did not run"), never.cause
    assert never.fix == (
        "record the joint states of every moving joint (a topic of another name goes in the "
        "--params file's source_list); to give them a fixed value in this recording, repair "
        "it with a --params file that sets publish_default_positions: true (and "
        f"zeros.<joint>): `{command} --params params.yaml`"
    )
    assert never.summary.startswith("/joint_states in the recording: "), never.summary
    given = replace(context, params=Path("arm_params.yaml"))
    (named,) = [f for f in joint_state_findings(scan, given) if f.kind is never.kind]
    assert named.fix.endswith(f"`{command}` with those in arm_params.yaml"), named.fix
    stale = "into the recording: the robot's moving frames are stale there"
    assert gaps.summary.endswith(stale), gaps.summary
    assert gaps.cause == (
        "the joint-state publisher stalled or the recorder dropped messages (a full disk, a "
        "slow storage, best-effort QoS over a lossy link)"
    )
    assert gaps.fix == (
        "nothing can rebuild frames where no joint state was recorded; check the recorder's "
        "and the driver's logs; record to a faster disk or with --max-cache-size"
    )
    assert jumps.cause == (
        "a simulation reset, two joint-state publishers with different clocks, or recordings "
        "merged; tf2 listeners drop or mix the older transforms"
    )
    assert jumps.fix == (
        "record one clock; on playback reset the listeners at the jump (RViz: Reset); the "
        "node (and bag repair) restart their rate limit there"
    )


def test_a_recording_without_a_description_is_reported_without_a_robot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: the text report's first line says what the recording holds, naming
    the robot only where there is a description; a blank line, then the findings, as the
    live doctor prints them; ``heard`` says no robot and the duration to the millisecond
    (bag_report's survivors 31, 32, 38 and bag_summary's 9, 11, #44 rule)."""
    times = every(5)
    bag = write_bag(
        tmp_path / "in", "sqlite3", [Topic("/joint_states", JOINT_STATE)],
        [("/joint_states", t, joint_state(t, ARM_JOINTS, [0.0] * 7)) for t in times],
    )  # fmt: skip
    assert main(["doctor", "--bag", str(bag)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        f"read {bag} (sqlite3, 0.0 s, {len(times)} messages): 0 frames on /tf, 0 on /tf_static "
        f"(0 message(s)), {len(times)} joint states",
        "",
        "ERROR: the recording has no /tf_static: every fixed frame is missing on playback",
    ]
    _, document = doctor(capsys, bag)
    heard = document["heard"]
    assert (heard["robot"], heard["duration_s"]) == (None, (times[-1] - times[0]) / S)


def source_list_bag(path: Path, recorded: list[tuple[str, bytes]]) -> Path:
    """The arm's description and statics, and ``recorded`` (topic, JointState bytes) every
    10 ms on /joint_states and /arm_states."""
    topics = [
        Topic("/joint_states", JOINT_STATE),
        Topic("/arm_states", JOINT_STATE),
        Topic("/robot_description", STRING, [tf_static_qos()]),
        Topic("/tf_static", TF_MESSAGE, [tf_static_qos()]),
    ]
    messages = [("/robot_description", T0_NS, string(ARM.read_text()))]
    messages.append(("/tf_static", T0_NS, arm_statics(T0_NS)))
    messages += [(topic, T0_NS + 1 + k * 10**7, data) for k, (topic, data) in enumerate(recorded)]
    return write_bag(path, "sqlite3", topics, messages)


def test_joint_states_on_a_source_list_topic_alone_are_the_recordings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: the node reads its --params' source_list topics beside /joint_states:
    a recording whose joint states are all on /arm_states is healthy with ``source_list:
    [arm_states]`` (its repair rebuilds it), and has no_joint_states without; where none of
    either topic decodes, the finding names both and counts every one that does not. Was
    no_joint_states with source_list too, its fix asking for the source_list given."""
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n    source_list: [arm_states]\n")
    states = [("/arm_states", joint_state(t, ARM_JOINTS, [0.1] * 7)) for t in every(10)]
    bag = source_list_bag(tmp_path / "in", states)
    code, document = doctor(capsys, bag, "--params", str(params))
    assert (code, document["findings"]) == (0, [])
    assert document["heard"]["joint_states"] == len(states)  # the node's inputs, all of them
    assert main(["doctor", "--bag", str(bag), "--params", str(params)]) == 0
    assert f", {len(states)} joint states\n" in capsys.readouterr().out  # was "0 joint states"
    code, document = doctor(capsys, bag)
    assert code == 1 and kinds(document) == ["no_joint_states"]
    assert document["heard"]["joint_states"] == 0  # /arm_states is no input without source_list
    junk = b"\x00\x01\x00\x00junk"
    bag = source_list_bag(
        tmp_path / "junk", [("/joint_states", junk), ("/joint_states", junk), ("/arm_states", junk)]
    )
    code, document = doctor(capsys, bag, "--params", str(params))
    assert code == 1 and kinds(document) == ["no_joint_states"]
    summary = finding(document, "no_joint_states")["summary"]
    assert (
        summary == "the recording has no /joint_states or /arm_states that decode (3 that do not)"
    )


def test_a_planar_base_given_by_multi_dof_joint_states_is_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: a joint given by /multi_dof_joint_states is no joint never recorded (a
    mobile base's planar joint, its wheels on /joint_states); a MultiDOFJointState that does
    not decode is skipped; without one that does, the base is named."""
    planar = REPO_ROOT / "test" / "urdf" / "mobile_base_planar.urdf"
    topics = [Topic("/multi_dof_joint_states", MULTI_DOF_JOINT_STATE)]
    pose = [1.5, -0.5, 0.0, 0.0, 0.0, 0.0, 1.0]
    base = multi_dof_joint_state(T0_NS + 5 * 10**6, ["base_planar_joint"], [pose])
    for name, given in (("given", [b"junk", base]), ("junk", [b"junk"])):
        extra = [("/multi_dof_joint_states", T0_NS + 1 + k, data) for k, data in enumerate(given)]
        bag, _ = recording(tmp_path / name, planar, count=10, extra_topics=topics, extra=extra)
        _, document = doctor(capsys, bag)
        never = [
            f["details"]["joints"]
            for f in document["findings"]
            if f["kind"] == "joints_not_recorded"
        ]
        assert never == ([] if name == "given" else [["base_planar_joint"]]), never


def test_a_message_that_does_not_decode_is_skipped_and_the_rest_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """robustness.md: a recorded message that does not decode is skipped: a broken /tf,
    /tf_static and /robot_description message early in the recording, and every message
    after them is read (counted, the joint states judged)."""
    times = every(10)
    junk = [(topic, times[1], b"\x00\x01\x00\x00junk") for topic in ("/tf", "/tf_static")]
    junk.append(("/robot_description", times[1], b"\x00\x01"))
    bag = states_bag(tmp_path / "in", times, extra_topics=[Topic("/tf", TF_MESSAGE)], extra=junk)
    code, document = doctor(capsys, bag)
    assert (code, document["findings"]) == (0, [])
    heard = document["heard"]
    assert (heard["messages"], heard["joint_states"]) == (len(times) + 2 + len(junk), len(times))


def test_tf_stamps_in_another_clock_domain_are_said_with_their_topic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: clock_domain for /tf header stamps more than an hour from their log
    times, naming /tf and the stamp to the nanosecond (the statics' stamps are not judged:
    a latched static keeps the stamp it was sent with: one sent 3 h before is recorded)."""
    times = every(10)
    ahead = times[2] + 2 * 3600 * S + 500_000_001
    recorded = [
        ("/tf", times[2], tf_message([transform(ahead, "world", "base_link", (0, 0, 0))])),
        ("/tf_static", times[3], arm_statics(times[3] - 3 * 3600 * S)),
    ]
    bag = states_bag(
        tmp_path / "in", times, extra_topics=[Topic("/tf", TF_MESSAGE)], extra=recorded
    )
    code, document = doctor(capsys, bag)
    assert code == 1 and kinds(document) == ["clock_domain"]
    details = finding(document, "clock_domain")["details"]
    assert details == {"topic": "/tf", "stamp_ns": ahead, "log_time_ns": times[2]}


def test_description_from_topic_in_the_parameters_file_judges_by_the_recordings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: with ``description_from_topic: true`` in --params the description is
    the recording's /robot_description, as without one: its joints never recorded named."""
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n    description_from_topic: true\n")
    bag = states_bag(tmp_path / "in", every(10), names=ARM_JOINTS[:5])
    code, document = doctor(capsys, bag, "--params", str(params))
    assert code == 1 and kinds(document) == ["joints_not_recorded"]
    heard = document["heard"]
    assert (heard["robot"], heard["description_source"]) == (
        "demo_arm",
        "the recording's /robot_description",
    )


def test_a_description_file_of_the_parameters_file_that_does_not_load_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: a description that does not load is one line naming its file, exit 1
    (the --params file's description_file, as the repair says it), never judged without."""
    broken = tmp_path / "broken.urdf"
    broken.write_text(ARM.read_text().replace('<child link="shoulder_link"/>', "<child/>", 1))
    params = tmp_path / "params.yaml"
    params.write_text(f"/**:\n  ros__parameters:\n    description_file: {broken}\n")
    bag = states_bag(tmp_path / "in", every(10))
    assert main(["doctor", "--bag", str(bag), "--params", str(params)]) == 1
    printed = capsys.readouterr()
    assert printed.out == "" and printed.err.count("\n") == 1, printed
    assert f"the description ({broken}) does not load: " in printed.err, printed.err


def test_the_suggested_repair_takes_the_description_from_the_parameters_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: the suggested repair is the exact command: with the description in
    --params (robot_description there), it carries the file and no --description, and runs."""
    inline = "".join(f"      {line}\n" for line in ARM.read_text().splitlines())
    params = tmp_path / "params.yaml"
    params.write_text(f"/**:\n  ros__parameters:\n    robot_description: |\n{inline}")
    bag = states_bag(tmp_path / "in", every(10))
    code, document = doctor(capsys, bag, "--params", str(params))
    assert (code, document["heard"]["description_source"]) == (0, "robot_description parameter")
    words = shlex.split(document["heard"]["repair"])
    assert words[-2:] == ["--params", str(params)] and "--description" not in words, words
    assert main(words[1:]) == 0, capsys.readouterr().err


def two_sources_bag(path: Path) -> Path:
    """The arm's recording with /tf giving camera under base_link, then under tool_flange
    (two parents), and gripper_base_link, which its /tf_static gives too (two sources)."""
    camera = [
        ("/tf", T0_NS + k, tf_message([transform(T0_NS + k, parent, "camera", (0, 0, 0))]))
        for k, parent in enumerate(["base_link", "tool_flange"], 1)
    ]
    gripper = transform(T0_NS + 3, "tool_flange", "gripper_base_link", (0, 0, 0))  # also static
    recorded = [*camera, ("/tf", T0_NS + 3, tf_message([gripper]))]
    return states_bag(path, every(10), extra_topics=[Topic("/tf", TF_MESSAGE)], extra=recorded)


def test_the_tree_findings_are_the_live_checks_words_and_the_repair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: two_parents and two_publishers over a recording are the live checks
    themselves (the same wording): the summary naming the frame, the live cause, the live
    fix, then the repair that writes the robot's frames."""
    _, document = doctor(capsys, two_sources_bag(tmp_path / "in"))
    live = Observation(1.0, T0_NS, transforms=[
        HeardTransform("base_link", "camera", False, T0_NS),
        HeardTransform("tool_flange", "camera", False, T0_NS),
        HeardTransform("tool_flange", "gripper_base_link", False, T0_NS),
        HeardTransform("tool_flange", "gripper_base_link", True, T0_NS),
    ])  # fmt: skip
    for kind, check, frame in (
        ("two_parents", parent_findings, "camera"),
        ("two_publishers", publisher_findings, "gripper_base_link"),
    ):
        (expected,) = check(live)
        found = finding(document, kind)
        assert frame in found["summary"] and found["cause"] == expected.cause, found
        repair = f"; in this recording, `{document['heard']['repair']}` writes the robot's frames"
        assert found["fix"].startswith(expected.fix + repair), found["fix"]


def test_the_tree_findings_name_the_recording_as_each_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where the live doctor names the node that publishes a frame, the doctor over a bag
    names the recording, on each topic: each parent of a frame given two is from the
    recording, and a frame on /tf and /tf_static is from the recording on both (it said "a
    publisher the graph does not name" and "unnamed publisher" had the recording not been
    named: observation_of's survivor 22, #44 rule)."""
    _, document = doctor(capsys, two_sources_bag(tmp_path / "in"))
    parents = finding(document, "two_parents")
    said = "'base_link' (from the recording), 'tool_flange' (from the recording)"
    assert parents["summary"] == f"frame 'camera' has 2 parents: {said}", parents["summary"]
    sources = finding(document, "two_publishers")
    assert sources["details"] == {
        "frames": ["gripper_base_link"],
        "sources": ["the recording on /tf", "the recording on /tf_static"],
    }
    assert "(the recording on /tf; the recording on /tf_static)" in sources["summary"]


def first_refused_bag(path: Path, broken: str) -> Path:
    """A recording of one arm joint state whose only description, ``broken``, does not load."""
    return write_bag(
        path,
        "sqlite3",
        [Topic("/joint_states", JOINT_STATE), Topic("/robot_description", STRING)],
        [
            ("/robot_description", T0_NS, string(broken)),
            ("/joint_states", T0_NS, joint_state(T0_NS, ARM_JOINTS, [0.1] * len(ARM_JOINTS))),
        ],
    )


def test_a_refused_description_says_its_topic_why_by_severity_and_a_fix_that_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings.md: description_refused names how many of the descriptions recorded on the
    robot's /robot_description do not load, each by its place; its cause is the severity's
    (the first refused: bag repair refuses the recording; a later one: the node and the
    repair keep the one before it), and its fix's two commands, given the bag, an output
    and a description that loads, run: the doctor then judges by that description and the
    repair writes the bag (refused_findings' survivors 2, 10, 11, 22-38, #44 rule)."""
    broken = "<robot name='arm'><link/></robot>"
    later = [("/robot_description", T0_NS + 1, string(broken))]
    _, document = doctor(capsys, states_bag(tmp_path / "later", every(10), extra=later))
    kept = finding(document, "description_refused")
    said = "1 of the 2 description(s) recorded on /robot_description do not load: "
    assert kept["summary"].startswith(said + "description 2 of 2: "), kept["summary"]
    assert kept["cause"] == (
        "the node kept the description before it (so does bag repair): its frames follow that one"
    )
    only = first_refused_bag(tmp_path / "only", broken)
    _, document = doctor(capsys, only)
    refused = finding(document, "description_refused")
    assert refused["cause"] == (
        "bag repair refuses the recording: its first description does not load"
    )
    assert refused["fix"] == kept["fix"]
    wanted, commands = refused["fix"].split(": ", 1)
    assert wanted == "give a description that loads", refused["fix"]
    given = {"IN": str(only), "OUT": str(tmp_path / "out"), "robot.urdf": str(ARM)}
    doctor_words, repair_words = (
        [given.get(word, word) for word in shlex.split(command)]
        for command in commands.split(", then ")
    )
    assert doctor_words[:2] == ["doctor", "--bag"] and repair_words[:2] == ["bag", "repair"]
    assert main([*doctor_words, "--json"]) == 1  # no /tf_static: the description is judged
    heard = json.loads(capsys.readouterr().out)["heard"]
    assert (heard["robot"], heard["description_source"]) == ("demo_arm", str(ARM)), heard
    assert main(repair_words) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert (tmp_path / "out").is_dir()


def test_a_recorded_description_that_does_not_load_is_said_as_the_repair_takes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recorded /robot_description that does not load under the node's settings is named
    with why, never read as "not recorded": the first one refused is an error (bag repair
    refuses the recording; the suggested repair gives a description), a later one a warning
    (the node and the repair keep the one before, and the checks use it); with every joint
    state recorded and the arm's description loaded first, nothing else is found."""
    broken = "<robot name='arm'><link/></robot>"
    later = [("/robot_description", T0_NS + 1, string(broken))]
    bag = states_bag(tmp_path / "later", every(10), extra=later)
    code, document = doctor(capsys, bag)
    assert code == 1 and kinds(document) == ["description_refused"]
    found = finding(document, "description_refused")
    assert found["severity"] == "warning" and "description 2 of 2:" in found["summary"]
    assert [entry["place"] for entry in found["details"]["refused"]] == [1 + 1]
    assert main(["bag", "repair", str(bag), "-o", str(tmp_path / "later_out")]) == 0
    capsys.readouterr()

    only = first_refused_bag(tmp_path / "only", broken)
    code, document = doctor(capsys, only)
    found = finding(document, "description_refused")
    assert code == 1 and found["severity"] == "error"
    assert "description 1 of 1:" in found["summary"] and "no_description" not in kinds(document)
    (reason,) = [entry["reason"] for entry in found["details"]["refused"]]
    assert reason and reason in found["summary"]
    assert "--description robot.urdf" in document["heard"]["repair"]
    heard = document["heard"]  # no robot: no description is its source
    assert (heard["robot"], heard["description_source"]) == (None, None), heard
    assert main(["bag", "repair", str(only), "-o", str(tmp_path / "only_out")]) != 0
    assert reason in capsys.readouterr().err


def test_the_description_the_recording_ends_with_is_checked_also_where_it_came_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The arm's description, the arm with one more joint, then the arm's again: the node
    (and bag repair) ends on the arm's, so the doctor checks the arm's joint states against
    it and finds nothing (it kept each text once, where first seen, and checked the second:
    its extra joint read as never received)."""
    arm = ARM.read_text()
    other = arm.replace(
        "</robot>",
        "<link name='extra_link'/><joint name='extra_joint' type='revolute'>"
        "<parent link='base_link'/><child link='extra_link'/><axis xyz='0 0 1'/>"
        "<limit lower='-1' upper='1' effort='1' velocity='1'/></joint></robot>",
    )
    again = [
        ("/robot_description", T0_NS + 1, string(other)),
        ("/robot_description", T0_NS + 2, string(arm)),
    ]
    bag = states_bag(tmp_path / "again", every(10), extra=again)
    code, document = doctor(capsys, bag)
    assert (code, kinds(document)) == (0, [])


def test_descriptions_that_come_back_are_each_loaded_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recording switching between two descriptions (and a broken third) a thousand times
    loads each text once, not once a message (the model kept loaded again at the end, where
    another was loaded after it; a thousand distinct ones still load each, as bag repair
    does), and the model kept is the newest that loads: the arm's, where the broken one
    comes last; the places counted are those of the recording's changes (its first-seen
    texts were counted: "3 of 3")."""
    arm = ARM.read_text()
    other = arm.replace("<robot name=", "<robot name='other' old=", 1)
    broken = "<robot name='arm'><link/></robot>"
    loads: list[str] = []
    real = doctor_recording.prepared_model

    def counted(*args: Any) -> Any:
        loads.append(args[1])
        return real(*args)

    monkeypatch.setattr(doctor_recording, "prepared_model", counted)
    switching = [
        ("/robot_description", T0_NS + n, string([other, arm][n % 2])) for n in range(1, 1000)
    ]
    switching.append(("/robot_description", T0_NS + 1000, string(broken)))
    bag = states_bag(tmp_path / "switching", every(10), extra=switching)
    code, document = doctor(capsys, bag)
    assert set(loads) == {arm, other, broken} and len(loads) <= 3 + 1  # the kept one again
    found = finding(document, "description_refused")
    assert code == 1 and kinds(document) == ["description_refused"], document
    assert "description 1000 of 1000:" in found["summary"]  # the arm at 0 and 1 ns: one
