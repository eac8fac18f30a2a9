"""``doctor``'s analysis without DDS: each finding from an Observation built by hand on the
bundled demo arm (real URDF, real parser), and the text and JSON reports."""

from __future__ import annotations

import json

import pytest
from repo_paths import REPO_ROOT, TEST_DIR
from union_status import union_report

from joint_tf_publisher import Robot
from joint_tf_publisher.cli.doctor.analysis import diagnose
from joint_tf_publisher.cli.doctor.observation import (
    NS_PER_S,
    DiagnosticRecord,
    HeardTransform,
    Kind,
    Observation,
    Severity,
    is_healthy,
)
from joint_tf_publisher.cli.doctor.report import json_report, text_report
from joint_tf_publisher.cli.main import main
from joint_tf_publisher.health import wording
from joint_tf_publisher.health.model import Key

ARM = Robot.load(REPO_ROOT / "urdf" / "demo_arm.urdf")
NOW_NS = 1_795_000_000 * NS_PER_S  # wall time, 2026
#: When the node started, two hours ago: its /tf_static stamps (sent once, latched).
STARTED_NS = NOW_NS - 7200 * NS_PER_S
NODE = "/joint_tf_publisher"


def arm_transforms(
    stamp_ns: int = NOW_NS, skip: tuple[str, ...] = (), publisher: str = NODE, prefix: str = ""
) -> list[HeardTransform]:
    """Every joint of the arm as the node publishes it, but ``skip``: moving joints on /tf
    stamped ``stamp_ns`` (10 messages heard), fixed ones on /tf_static stamped once when the
    node started, two hours earlier (one latched message)."""
    return [
        HeardTransform(
            prefix + joint.parent,
            prefix + joint.child,
            joint.joint_type == "fixed",
            STARTED_NS if joint.joint_type == "fixed" else stamp_ns,
            publisher,
            1 if joint.joint_type == "fixed" else 10,
        )
        for joint in ARM.joints.values()
        if joint.name not in skip
    ]


def healthy(**changes: object) -> Observation:
    observation = Observation(
        listened_s=3.0,
        now_ns=NOW_NS,
        transforms=arm_transforms(),
        robot=ARM,
        description_source="urdf/demo_arm.urdf",
        joint_state_publishers=["/joint_state_publisher"],
    )
    for name, value in changes.items():
        setattr(observation, name, value)
    return observation


def kinds(observation: Observation) -> list[Kind]:
    return [finding.kind for finding in diagnose(observation)]


def only(observation: Observation, kind: Kind) -> object:
    found = [finding for finding in diagnose(observation) if finding.kind is kind]
    assert len(found) == 1, diagnose(observation)
    return found[0]


def test_a_complete_tree_with_one_clock_is_healthy() -> None:
    findings = diagnose(healthy())
    assert findings == []
    assert is_healthy(findings)
    assert text_report(healthy(), findings).endswith("all checks passed\n")


@pytest.mark.parametrize("clock_ns", [None, 10_000 * NS_PER_S])
def test_tf_static_is_exempt_from_the_clock_domain_and_lag_checks(clock_ns: int | None) -> None:
    """Statics are stamped once, when their publisher started (hours ago, or at a wall time
    under a simulation clock that started since): neither another clock domain nor lagging.
    The same stamps on /tf are both."""
    statics = [
        HeardTransform("world", "base_link", True, STARTED_NS, "/mount", 1),
        HeardTransform("tool_flange", "camera", True, 5 * NS_PER_S, "/camera_mount", 1),
    ]
    moving = NOW_NS if clock_ns is None else clock_ns
    transforms = [*arm_transforms(stamp_ns=moving), *statics]
    assert diagnose(healthy(transforms=transforms, clock_ns=clock_ns)) == []
    on_tf = [
        HeardTransform(h.parent, h.child, False, h.newest_stamp_ns, h.publisher) for h in statics
    ]
    found = kinds(healthy(transforms=[*arm_transforms(stamp_ns=moving), *on_tf], clock_ns=clock_ns))
    assert Kind.CLOCK_DOMAIN in found or Kind.LAGGING_FRAMES in found


def test_nothing_heard_says_so_and_what_to_check() -> None:
    finding = only(healthy(transforms=[]), Kind.NO_TF)
    assert finding.severity is Severity.ERROR
    assert "ROS_DOMAIN_ID" in finding.cause


def test_a_joint_never_published_names_the_joint_its_frames_and_the_usual_sources() -> None:
    # wrist_1_joint never arrives: its link and everything below it are missing.
    observation = healthy(transforms=arm_transforms(skip=("wrist_1_joint",)))
    below = {"wrist_1_link", "wrist_2_link", "wrist_3_link", "tool_flange", "gripper_base_link"}
    finding = only(observation, Kind.MISSING_FRAMES)
    assert finding.details["joint"] == "wrist_1_joint"
    assert below <= set(finding.details["frames"])
    assert "joint_state_broadcaster" in finding.fix and "joint_state_publisher" in finding.fix
    assert "/joint_state_publisher publish(es) /joint_states but not this joint" in finding.cause


def test_an_unpublished_leader_and_its_mimic_follower_are_one_error_naming_both() -> None:
    """The Panda's case: both fingers unpublished, the second a mimic of the first. One
    cause (no joint state gives the leader), so one error, naming each finger as what it
    is."""
    observation = healthy(
        transforms=arm_transforms(skip=("left_finger_joint", "right_finger_joint")),
        joint_state_publishers=[],
    )
    findings = diagnose(observation)
    assert [f.kind for f in findings] == [Kind.MISSING_FRAMES]
    (finding,) = findings
    assert finding.details["joint"] == finding.details["leader"] == "left_finger_joint"
    assert finding.details["followers"] == ["right_finger_joint"]
    assert finding.details["frames"] == ["left_finger_link", "right_finger_link"]
    assert finding.cause == (
        "no joint state gives 'left_finger_joint' (followed by its mimic joint(s) "
        "'right_finger_joint'): nothing publishes /joint_states"
    )
    assert finding.summary.endswith(
        "left_finger_link, right_finger_link (below joint 'left_finger_joint', prismatic, "
        "and its mimic joint(s) 'right_finger_joint')"
    )
    assert "state of 'left_finger_joint'" in finding.fix


def test_followers_of_one_unpublished_leader_group_with_it_whatever_the_chain() -> None:
    """The test gripper with its inner right finger hung from the hand: right_inner_finger
    mimics right_knuckle, which mimics finger_joint; none published, three joints explain
    missing frames, and all three are one cause: finger_joint."""
    text = (TEST_DIR / "urdf" / "arm_mimic_gripper.urdf").read_text()
    hung = text.replace(
        '<parent link="right_knuckle"/>\n    <child link="right_inner_finger"/>',
        '<parent link="hand"/>\n    <child link="right_inner_finger"/>',
    )
    assert hung != text
    gripper = Robot.from_xml_string(hung)
    skip = ("finger_joint", "right_knuckle_joint", "left_inner_finger_joint")
    observation = Observation(
        listened_s=3.0,
        now_ns=NOW_NS,
        transforms=[
            HeardTransform(joint.parent, joint.child, joint.joint_type == "fixed", NOW_NS, NODE)
            for joint in gripper.joints.values()
            if joint.name not in (*skip, "right_inner_finger_joint")
        ],
        robot=gripper,
        joint_state_publishers=["/driver"],
    )
    (finding,) = diagnose(observation)
    assert finding.details["joint"] == "finger_joint"
    assert finding.details["followers"] == ["right_knuckle_joint", "right_inner_finger_joint"]
    assert set(finding.details["frames"]) == {
        "left_knuckle",
        "left_inner_finger",
        "right_knuckle",
        "right_inner_finger",
    }
    assert finding.cause == (
        "no joint state gives 'finger_joint' (followed by its mimic joint(s) "
        "'right_knuckle_joint', 'right_inner_finger_joint'): /driver publish(es) /joint_states "
        "but not this joint"
    )


def test_a_follower_left_out_while_its_leader_is_on_tf_says_so() -> None:
    observation = healthy(transforms=arm_transforms(skip=("right_finger_joint",)))
    finding = only(observation, Kind.MISSING_FRAMES)
    assert finding.details["joint"] == "right_finger_joint"
    assert finding.details["leader"] == "left_finger_joint"
    assert finding.cause.startswith(
        "'right_finger_joint' is a mimic of 'left_finger_joint', whose frames are on TF"
    )


def test_an_empty_joint_state_topic_is_said() -> None:
    observation = healthy(
        transforms=arm_transforms(skip=("elbow_joint",)), joint_state_publishers=[]
    )
    finding = only(observation, Kind.MISSING_FRAMES)
    assert finding.cause == "no joint state gives 'elbow_joint': nothing publishes /joint_states"


def test_a_missing_fixed_joint_and_an_excluded_joint_have_their_own_causes() -> None:
    fixed = only(
        healthy(transforms=arm_transforms(skip=("gripper_mount_joint",))), Kind.MISSING_FRAMES
    )
    assert "/tf_static" in fixed.cause
    excluded = healthy(
        transforms=arm_transforms(skip=("elbow_joint",)), excluded_joints=("elbow_joint",)
    )
    assert "exclude_joints" in only(excluded, Kind.MISSING_FRAMES).cause


def test_a_robot_under_another_prefix_is_one_finding_naming_the_prefix() -> None:
    observation = healthy(transforms=arm_transforms(prefix="r1/"))
    finding = only(observation, Kind.ROBOT_ABSENT)
    assert "r1/base_link" in finding.cause
    assert diagnose(healthy(transforms=arm_transforms(prefix="r1/"), frame_prefix="r1/")) == []


def test_a_frame_from_two_publishers_names_both() -> None:
    second = HeardTransform("base_link", "shoulder_link", False, NOW_NS, "/rogue", 5)
    finding = only(healthy(transforms=[*arm_transforms(), second]), Kind.TWO_PUBLISHERS)
    assert finding.details["frames"] == ["shoulder_link"]
    assert any("/rogue" in source for source in finding.details["sources"])
    assert any(NODE in source for source in finding.details["sources"])


def test_a_frame_on_tf_and_tf_static_is_two_sources_even_unnamed() -> None:
    static = HeardTransform("base_link", "shoulder_link", True, 0, "", 1)
    assert Kind.TWO_PUBLISHERS in kinds(healthy(transforms=[*arm_transforms(), static]))


def test_a_frame_with_two_parents_names_them() -> None:
    other = HeardTransform("world", "shoulder_link", False, NOW_NS, NODE, 5)
    finding = only(healthy(transforms=[*arm_transforms(), other]), Kind.TWO_PARENTS)
    assert finding.details["parents"] == ["base_link", "world"]


def test_a_split_tree_names_the_roots_and_the_odometry_gap() -> None:
    odom = HeardTransform("map", "odom", False, NOW_NS, "/amcl", 5)
    finding = only(healthy(transforms=[*arm_transforms(), odom]), Kind.SPLIT_TREE)
    assert finding.details["roots"] == ["base_link", "map"]
    assert "odom -> base_link" in finding.cause


def test_frames_lagging_beyond_the_threshold_are_named() -> None:
    late = arm_transforms(stamp_ns=NOW_NS - 3 * NS_PER_S, publisher="/slow")
    late_moving = [heard for heard in late if not heard.static][:1]
    others = [heard for heard in arm_transforms() if heard.child != late_moving[0].child]
    observation = healthy(transforms=[*others, *late_moving])
    finding = only(observation, Kind.LAGGING_FRAMES)
    assert finding.details["frames"] == [late_moving[0].child]
    assert finding.details["lag_s"] == pytest.approx(3.0)
    assert Kind.LAGGING_FRAMES not in [f.kind for f in diagnose(observation, lag_s=5.0)]


def test_wall_stamps_under_a_simulation_clock_are_another_clock_domain() -> None:
    observation = healthy(clock_ns=120 * NS_PER_S, clock_publishers=["/gz_bridge"])
    finding = only(observation, Kind.CLOCK_DOMAIN)
    assert finding.summary.startswith("clock: ")
    assert "simulation time" in finding.summary and "years ahead of" in finding.summary
    assert Kind.LAGGING_FRAMES not in kinds(observation)


def test_sim_time_without_clock_is_an_error_and_a_silent_clock_a_warning() -> None:
    finding = only(healthy(sim_time_nodes=[NODE]), Kind.SIM_TIME_WITHOUT_CLOCK)
    assert finding.severity is Severity.ERROR and NODE in finding.summary
    silent = healthy(sim_time_nodes=[NODE], clock_publishers=["/gz_bridge"])
    assert only(silent, Kind.CLOCK_SILENT).severity is Severity.WARNING


def test_non_ok_diagnostics_are_reported_whatever_their_keys() -> None:
    statuses = [
        DiagnosticRecord("joint_tf_publisher: joint states", 0, "all good", "demo_arm"),
        DiagnosticRecord(
            "joint_tf_publisher: joint states",
            1,
            "1 joint never received",
            "demo_arm",
            (("never received", "wrist_1_joint"),),
        ),
        DiagnosticRecord("battery", 3, "no update", ""),
    ]
    findings = [f for f in diagnose(healthy(statuses=statuses)) if f.kind is Kind.DIAGNOSTICS]
    assert [f.details["level"] for f in findings] == ["WARN", "STALE"]
    assert "wrist_1_joint" in findings[0].cause
    assert DiagnosticRecord("x", 2, "bad").level_name == "ERROR"


def test_a_loop_not_closed_is_explained() -> None:
    message = wording.loop_not_closed("closing", 0.929, 0.0, 2.5)
    status = DiagnosticRecord(
        "joint_tf_publisher: joint states",
        1,
        message,
        "four_bar",
        ((Key.LOOPS, "closing: 0.929, 0"), (Key.LOOPS_NOT_CLOSED, "closing")),
    )
    findings = diagnose(healthy(statuses=[status]))
    (finding,) = [f for f in findings if f.kind is Kind.LOOP_NOT_CLOSED]
    assert finding.severity is Severity.WARNING
    assert "closing" in finding.summary and "out of its reach" in finding.cause
    assert "loop_tolerance" in finding.fix
    assert finding.details["residuals"] == "closing: 0.929, 0"
    assert not [f for f in findings if f.kind is Kind.DIAGNOSTICS]


def never_received_status(joints: list[str], frames: list[str]) -> DiagnosticRecord:
    """The node's /diagnostics status while ``joints`` are never received (its WARN, in the
    health report's words and keys)."""
    return DiagnosticRecord(
        "joint_tf_publisher: joint states",
        1,
        wording.never_received(joints, frames),
        "demo_arm",
        (
            ("robot", "demo_arm"),
            (Key.NEVER_RECEIVED, ", ".join(joints)),
            (Key.MISSING_FRAMES, ", ".join(frames)),
        ),
    )


WRIST_1_FRAMES = ["gripper_base_link", "tool_flange", "wrist_1_link", "wrist_2_link"]


def test_the_node_s_never_received_warning_is_evidence_of_the_missing_frames_finding() -> None:
    """One cause, one finding: the joint never received explains the missing frames, and the
    node's own /diagnostics WARN about it is folded into that finding, not a second one."""
    status = never_received_status(["wrist_1_joint"], WRIST_1_FRAMES)
    observation = healthy(
        transforms=arm_transforms(skip=("wrist_1_joint",)),
        statuses=[status, DiagnosticRecord("battery", 3, "no update", "")],
    )
    findings = diagnose(observation)
    assert [f.kind for f in findings] == [Kind.MISSING_FRAMES, Kind.DIAGNOSTICS]
    missing, battery = findings
    assert missing.details["joint"] == "wrist_1_joint"
    assert missing.details["diagnostics"]["message"] == status.message
    assert missing.details["diagnostics"]["level"] == "WARN"
    assert "/diagnostics says so too (WARN from 'joint_tf_publisher: joint states')" in (
        missing.cause
    )
    assert battery.details["name"] == "battery"  # every other status stays a finding
    text = text_report(observation, findings)
    assert text.count("ERROR:") == 1 and text.count("WARNING:") == 1
    assert "1 error(s), 1 warning(s)" in text


def test_a_never_received_warning_the_frames_heard_do_not_explain_stays_a_finding() -> None:
    """Only the diagnostics fact (every frame heard: another node publishes the joint), or
    a status naming more joints than the missing frames explain: reported as it is."""
    alone = never_received_status(["wrist_1_joint"], WRIST_1_FRAMES)
    (finding,) = diagnose(healthy(statuses=[alone]))
    assert finding.kind is Kind.DIAGNOSTICS and finding.details["message"] == alone.message
    more = never_received_status(["elbow_joint", "wrist_1_joint"], WRIST_1_FRAMES)
    observation = healthy(transforms=arm_transforms(skip=("wrist_1_joint",)), statuses=[more])
    findings = diagnose(observation)
    assert [f.kind for f in findings] == [Kind.MISSING_FRAMES, Kind.DIAGNOSTICS]
    assert "diagnostics" not in findings[0].details


def test_findings_come_most_serious_first_and_json_carries_them() -> None:
    statuses = [DiagnosticRecord("n: joint states", 1, "warn", "demo_arm")]
    observation = healthy(statuses=statuses, transforms=arm_transforms(skip=("elbow_joint",)))
    findings = diagnose(observation)
    assert [f.severity for f in findings] == [Severity.ERROR, Severity.WARNING]
    document = json.loads(json_report(observation, findings))
    assert document["healthy"] is False
    assert document["counts"] == {"error": 1, "warning": 1, "note": 0}
    assert document["findings"][0]["kind"] == "missing_frames"
    text = text_report(observation, findings)
    assert text.index("ERROR:") < text.index("WARNING:") and "  fix:" in text


def test_a_named_node_that_does_not_answer_is_an_error() -> None:
    finding = only(healthy(silent_node="/robot_state_publisher"), Kind.NODE_SILENT)
    assert finding.severity is Severity.ERROR and "/robot_state_publisher" in finding.summary


def test_a_node_not_asked_for_want_of_a_parameter_service_is_said_and_no_problem() -> None:
    """The node's global-tree publisher (publishers only) is not asked for its use_sim_time:
    the report says so, and a healthy system stays healthy."""
    observation = healthy(unasked_nodes=[NODE + "_global_tf"])
    findings = diagnose(observation)
    assert findings == []
    text = text_report(observation, findings)
    assert "not asked (no parameter service): /joint_tf_publisher_global_tf\n" in text
    assert text.endswith("all checks passed\n")
    heard = json.loads(json_report(observation, findings))["heard"]
    assert heard["not_asked"] == ["/joint_tf_publisher_global_tf"]
    assert "not asked" not in text_report(healthy(), [])


def test_a_named_node_without_a_parameter_service_was_not_asked() -> None:
    name = NODE + "_global_tf"
    finding = only(healthy(silent_node=name, unasked_nodes=[name]), Kind.NODE_SILENT)
    assert finding.severity is Severity.ERROR
    assert finding.summary == f"node {name} was not asked (it has no parameter service)"
    assert "_global_tf" in finding.cause and "--node" in finding.fix
    answered_not = only(healthy(silent_node=name), Kind.NODE_SILENT)
    assert answered_not.summary == f"node {name} did not answer (its parameter service)"


def test_no_description_is_a_note_only() -> None:
    findings = diagnose(healthy(robot=None))
    assert [f.kind for f in findings] == [Kind.NO_DESCRIPTION]
    assert is_healthy(findings)


@pytest.mark.parametrize("arguments", [["--seconds", "0"], ["--lag", "-1"], ["--node", "a//b"]])
def test_a_bad_command_line_exits_2(
    arguments: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["doctor", *arguments])
    assert exit_info.value.code == 2
    assert "doctor: error:" in capsys.readouterr().err


# -- frames the description no longer has -----------------------------------------------------


def test_a_frame_the_description_no_longer_has_from_its_publisher_is_named() -> None:
    # robot_state_publisher after a description change: its merged /tf_static keeps old_tool.
    old = HeardTransform("tool_flange", "old_tool", True, NOW_NS, NODE, 1)
    finding = only(healthy(transforms=[*arm_transforms(), old]), Kind.REMOVED_FRAMES)
    assert finding.severity is Severity.WARNING
    assert finding.details["frames"] == ["old_tool"]
    assert finding.details["sources"] == [f"{NODE} on /tf_static"]
    assert finding.summary.startswith(
        "1 frame(s) heard that robot 'demo_arm''s description no longer has: old_tool"
    )
    assert "keep them, static ones at their last pose, until they restart" in finding.cause


def test_a_frame_named_removed_by_the_node_s_health_report_is_named_from_any_publisher() -> None:
    replayed = HeardTransform("tool_flange", "old_tool", True, NOW_NS, "/bridge", 1)
    status = DiagnosticRecord(
        "joint_tf_publisher: joint states",
        0,
        "joint states OK",
        "demo_arm",
        (("removed frames", "old_camera, old_tool"),),
    )
    observation = healthy(transforms=[*arm_transforms(), replayed], statuses=[status])
    assert only(observation, Kind.REMOVED_FRAMES).details["frames"] == ["old_tool"]
    without_report = healthy(transforms=[*arm_transforms(), replayed])
    assert Kind.REMOVED_FRAMES not in kinds(without_report)


def test_frames_of_other_publishers_and_prefixed_copies_are_no_removed_frames() -> None:
    driver = HeardTransform("tool_flange", "camera_optical", True, NOW_NS, "/camera_driver", 1)
    copies = arm_transforms(prefix="global/")  # the same node's global copy of the robot
    observation = healthy(transforms=[*arm_transforms(), *copies, driver])
    assert Kind.REMOVED_FRAMES not in kinds(observation)


def union_status() -> DiagnosticRecord:
    """The /diagnostics status of a node whose static union holds ``camera`` from
    /calibration against /sensors and refused a NaN from /sensors (``union_status``)."""
    report = union_report(NOW_NS)
    return DiagnosticRecord(
        "joint_tf_publisher: joint states", int(report.level), report.message, "demo_arm",
        report.values,
    )  # fmt: skip


def test_a_static_union_conflict_and_its_refusals_are_explained() -> None:
    """The node's union status: the conflict as its own finding (the frame, both publishers,
    which is kept and why, what to do) and the refusals by reason, not a bare /diagnostics
    WARN."""
    findings = diagnose(healthy(statuses=[union_status()]))
    (conflict,) = [f for f in findings if f.kind is Kind.STATIC_UNION_CONFLICT]
    assert conflict.severity is Severity.WARNING
    assert conflict.details == {
        "status": "joint_tf_publisher: joint states",
        "frame": "camera",
        "kept": "/calibration",
        "refused": "/sensors",
    }
    assert "'camera' is given differently by /calibration and /sensors" in conflict.summary
    assert "keeps the first that gave it, /calibration" in conflict.cause
    assert "until /calibration leaves the graph" in conflict.cause
    assert "stop one of them" in conflict.fix
    (refused,) = [f for f in findings if f.kind is Kind.STATIC_UNION_REFUSED]
    assert refused.severity is Severity.WARNING  # new refusals in the node's last period
    assert refused.details["refused"] == {
        "value not finite": 1,
        "frame held by another publisher": 1,
    }
    assert "NaN or infinite values" in refused.cause
    assert not [f for f in findings if f.kind is Kind.DIAGNOSTICS]


def test_a_union_nodes_copies_are_no_second_publisher() -> None:
    """A node with static_union on republishes another publisher's static frame: that is
    no second owner of it (with the union off, the same graph is)."""
    copies = [
        HeardTransform("base_link", "lidar", True, STARTED_NS, "/lidar_mount"),
        HeardTransform("base_link", "lidar", True, STARTED_NS, NODE),
    ]
    graph = arm_transforms() + copies
    assert Kind.TWO_PUBLISHERS in kinds(healthy(transforms=graph))
    assert Kind.TWO_PUBLISHERS not in kinds(healthy(transforms=graph, union_nodes=[NODE]))
    robot2 = [  # two union nodes carrying each other's robots: one source
        HeardTransform("r2/base", "r2/tool", True, STARTED_NS, "/r2/joint_tf_publisher"),
        HeardTransform("r2/base", "r2/tool", True, STARTED_NS, NODE),
    ]
    unions = [NODE, "/r2/joint_tf_publisher"]
    assert Kind.TWO_PUBLISHERS not in kinds(healthy(transforms=graph + robot2, union_nodes=unions))
    tf_too = [HeardTransform("base_link", "lidar", False, NOW_NS, "/lidar_driver")]
    assert Kind.TWO_PUBLISHERS in kinds(  # on /tf too: a second source all the same
        healthy(transforms=graph + tf_too, union_nodes=[NODE])
    )


def test_a_hostile_union_status_costs_linear_time_and_bounded_findings() -> None:
    """Anyone may publish a status with the union's keys: 30 conflicts give 20 findings, the
    last counting the rest; a megabyte of junk in both values gives none (read in one pass:
    no backtracking pattern over a value anyone may send)."""
    entries = "; ".join(wording.union_conflict_entry(f"frame_{k}", "/a", "/b") for k in range(30))
    status = DiagnosticRecord("n: joint states", 1, "w", "", ((Key.UNION_CONFLICTS, entries),))
    conflicts = [
        f for f in diagnose(healthy(statuses=[status])) if f.kind is Kind.STATIC_UNION_CONFLICT
    ]
    assert len(conflicts) == 20 and conflicts[-1].summary.endswith(
        "(and 10 more conflict(s) in its status)"
    )
    junk = "( (kept x, refused " * 50_000
    status = DiagnosticRecord(
        "n: joint states", 1, "w", "", ((Key.UNION_CONFLICTS, junk), (Key.UNION_REFUSED, junk))
    )
    kinds_found = kinds(healthy(statuses=[status]))
    assert Kind.STATIC_UNION_CONFLICT not in kinds_found
    assert Kind.STATIC_UNION_REFUSED not in kinds_found


def test_every_reason_the_union_refuses_has_its_cause_in_words() -> None:
    from joint_tf_publisher.cli.doctor.analysis import REFUSAL_CAUSES
    from joint_tf_publisher.node_core.static_union import Refusal

    assert set(REFUSAL_CAUSES) == set(Refusal)
