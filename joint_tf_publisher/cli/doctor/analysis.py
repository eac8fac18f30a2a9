"""``joint-tf-publisher doctor``'s analysis: what a few seconds of /tf, /tf_static, /clock,
/diagnostics and the ROS graph say is wrong, each finding with its likely cause and its fix.

Plain Python (no rclpy): the data is in ``observation``, the checks of the tree's
shape in ``tree``, the clock, lag and /diagnostics checks here; ``diagnose`` runs them
all and returns the findings, one per cause (a node's never-received warning goes with the
missing frames it explains), most serious first; ``report`` prints them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace

from ...health import wording
from ...health.model import Key, Level, never_received_joints
from ...health.wording import CLOCK_DOMAIN_GAP_S
from ...node_core.parameters import Settings
from ...node_core.static_union import Refusal
from ...stamps import NS_PER_S
from .observation import (
    DiagnosticRecord,
    Finding,
    HeardTransform,
    Kind,
    Observation,
    Severity,
    format_gap,
    format_time,
    short_list,
)
from .tree import (
    frame_findings,
    parent_findings,
    publisher_findings,
    removed_frames_findings,
    split_tree_findings,
)

#: Stamps further than this from the reference clock are of another clock domain, ns (the
#: node's health report uses the same gap).
CLOCK_DOMAIN_GAP_NS = round(CLOCK_DOMAIN_GAP_S * NS_PER_S)
#: Default of ``--lag``: a frame whose newest stamp is this much older than the newest of
#: all /tf frames is lagging, s (the node's ``joint_state_timeout`` default).
DEFAULT_LAG_S = Settings().joint_state_timeout


def diagnose(observation: Observation, lag_s: float = DEFAULT_LAG_S) -> list[Finding]:
    """Every finding of ``observation``, most serious first (stable within a severity)."""
    findings: list[Finding] = []
    findings += node_findings(observation)
    findings += clock_findings(observation)
    if not observation.transforms:
        findings.append(no_tf_finding(observation))
    else:
        findings += frame_findings(observation)
        findings += removed_frames_findings(observation)
        findings += publisher_findings(observation)
        findings += parent_findings(observation)
        findings += split_tree_findings(observation)
        findings += lag_findings(observation, lag_s)
    findings = fold_never_received(findings, diagnostics_findings(observation), observation)
    return sorted(findings, key=lambda finding: finding.severity.rank)


# -- nothing heard -------------------------------------------------------------------------


def no_tf_finding(observation: Observation) -> Finding:
    return Finding(
        Severity.ERROR,
        Kind.NO_TF,
        f"nothing was heard on /tf or /tf_static in {observation.listened_s:.1f} s",
        "no node publishes transforms on this ROS graph: the robot's nodes are not running, "
        "or run with another ROS_DOMAIN_ID, RMW_IMPLEMENTATION or ROS_AUTOMATIC_DISCOVERY_RANGE",
        "start the robot's bringup (e.g. ros2 launch joint_tf_publisher "
        "joint_tf_publisher.launch.py model:=robot.urdf); `ros2 node list` shows what runs "
        "here; give this command the same environment as the robot",
    )


def node_findings(observation: Observation) -> list[Finding]:
    """The state publisher named on the command line did not answer, or was not asked: the
    graph shows it without a parameter service."""
    if observation.silent_node is None:
        return []
    if observation.silent_node in observation.unasked_nodes:
        return [
            Finding(
                Severity.ERROR,
                Kind.NODE_SILENT,
                f"node {observation.silent_node} was not asked (it has no parameter service)",
                "it is no state publisher: a node made without parameter services, such as "
                "joint_tf_publisher's <name>_global_tf, which only publishes the global tree",
                "`ros2 node list` shows the nodes that run here; give doctor the state "
                "publisher's full name (--node /namespace/name)",
                {"node": observation.silent_node},
            )
        ]
    return [
        Finding(
            Severity.ERROR,
            Kind.NODE_SILENT,
            f"node {observation.silent_node} did not answer (its parameter service)",
            "it is not running, has another name or namespace, or runs with another ROS_DOMAIN_ID",
            "`ros2 node list` shows the nodes that run here; give doctor the state "
            "publisher's full name (--node /namespace/name)",
            {"node": observation.silent_node},
        )
    ]


# -- clocks --------------------------------------------------------------------------------


def clock_findings(observation: Observation) -> list[Finding]:
    """use_sim_time without /clock; a silent /clock; stamps in another clock domain."""
    findings = []
    if observation.sim_time_nodes and observation.clock_ns is None:
        nodes = ", ".join(observation.sim_time_nodes)
        if observation.clock_publishers:
            findings.append(
                Finding(
                    Severity.WARNING,
                    Kind.CLOCK_SILENT,
                    f"clock: {nodes} use simulation time and /clock is published by "
                    f"{', '.join(observation.clock_publishers)}, but no /clock message "
                    f"arrived in {observation.listened_s:g} s",
                    "the simulation is paused or stalled, so simulation time stands still",
                    "unpause the simulation (Gazebo's play button, or its /world/<name>/"
                    "control service)",
                    {"nodes": observation.sim_time_nodes},
                )
            )
        else:
            findings.append(
                Finding(
                    Severity.ERROR,
                    Kind.SIM_TIME_WITHOUT_CLOCK,
                    f"clock: {nodes} use simulation time (use_sim_time: true) but nothing "
                    "publishes /clock",
                    "their clock stands at 0 until /clock arrives: timers do not fire, "
                    "node-clock stamps are 0, and tf2 lookups at 'now' fail",
                    "start the simulator and its clock bridge (ros_gz_bridge "
                    "/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock), or play a bag with "
                    "`ros2 bag play --clock`; without a simulation set use_sim_time:=false",
                    {"nodes": observation.sim_time_nodes},
                )
            )
    findings += clock_domain_findings(observation)
    return findings


def reference_clock(observation: Observation) -> tuple[int, str]:
    """The time stamps are compared with (ns) and its name: /clock's where it runs, else
    the wall clock."""
    if observation.clock_ns is not None:
        return observation.clock_ns, "simulation time (/clock)"
    return observation.now_ns, "wall time"


def foreign_clock_transforms(observation: Observation) -> list[HeardTransform]:
    """/tf transforms stamped more than ``CLOCK_DOMAIN_GAP_NS`` from the reference clock."""
    reference_ns, _ = reference_clock(observation)
    return [
        heard
        for heard in observation.transforms
        if not heard.static and abs(heard.newest_stamp_ns - reference_ns) > CLOCK_DOMAIN_GAP_NS
    ]


def clock_domain_findings(observation: Observation) -> list[Finding]:
    reference_ns, reference_name = reference_clock(observation)
    by_publisher: dict[str, list[HeardTransform]] = defaultdict(list)
    for heard in foreign_clock_transforms(observation):
        by_publisher[heard.publisher].append(heard)
    findings = []
    for publisher, heard_list in by_publisher.items():
        frames = sorted({heard.child for heard in heard_list})
        stamp_ns = max(heard.newest_stamp_ns for heard in heard_list)
        source = publisher or "a publisher the graph does not name"
        findings.append(
            Finding(
                Severity.ERROR,
                Kind.CLOCK_DOMAIN,
                f"clock: {len(frames)} /tf frame(s) from {source} are stamped "
                f"{format_time(stamp_ns)}, {format_gap(stamp_ns - reference_ns)} the "
                f"{reference_name} ({format_time(reference_ns)}): {short_list(frames)}",
                "two clock domains are mixed: a node with use_sim_time set differently from "
                "the others (wall-time stamps under a simulation clock, or the reverse), or "
                "a driver that stamps with its own clock; tf2 cannot interpolate across them",
                "give every node of the system the same use_sim_time (launch argument "
                "use_sim_time:=true for all of a simulation, false for all of a real robot)",
                {
                    "publisher": publisher,
                    "frames": frames,
                    "stamp_ns": stamp_ns,
                    "reference_ns": reference_ns,
                    "reference": reference_name,
                },
            )
        )
    return findings


# -- time ----------------------------------------------------------------------------------


def lag_findings(observation: Observation, lag_s: float) -> list[Finding]:
    """/tf frames whose newest stamp is more than ``lag_s`` older than the newest /tf stamp
    (frames of another clock domain are left to ``clock_domain_findings``)."""
    foreign = set(foreign_clock_transforms(observation))
    newest: dict[str, HeardTransform] = {}
    for heard in observation.transforms:
        if heard.static or heard in foreign:
            continue
        if heard.child not in newest or heard.newest_stamp_ns > newest[heard.child].newest_stamp_ns:
            newest[heard.child] = heard
    if not newest:
        return []
    latest_ns = max(heard.newest_stamp_ns for heard in newest.values())
    lag_ns = round(lag_s * NS_PER_S)
    by_publisher: dict[str, list[HeardTransform]] = defaultdict(list)
    for heard in newest.values():
        if latest_ns - heard.newest_stamp_ns > lag_ns:
            by_publisher[heard.publisher].append(heard)
    findings = []
    for publisher, lagging in sorted(by_publisher.items()):
        frames = sorted(heard.child for heard in lagging)
        worst_s = max(latest_ns - heard.newest_stamp_ns for heard in lagging) / NS_PER_S
        source = publisher or "a publisher the graph does not name"
        findings.append(
            Finding(
                Severity.WARNING,
                Kind.LAGGING_FRAMES,
                f"{len(frames)} /tf frame(s) from {source} lag the newest /tf stamp by up "
                f"to {worst_s:.2f} s (threshold {lag_s:g} s): {short_list(frames)}",
                "their source stopped or slowed (a driver or controller that died, a joint "
                "state publisher of a subset of the joints that stopped), or it stamps late; "
                "lookups at the latest common time then return old poses or fail",
                "check the node that gives these joints' states (its log, `ros2 topic hz`); "
                "restart it; the state publisher's /diagnostics names the joints that stopped",
                {"publisher": publisher, "frames": frames, "lag_s": worst_s},
            )
        )
    return findings


# -- what the nodes report -----------------------------------------------------------------


def diagnostics_findings(observation: Observation) -> list[Finding]:
    """Every /diagnostics status that is not OK, whatever its keys; what a static union
    reports, from any status (``union_findings``)."""
    findings = []
    for status in observation.statuses:
        if status.level == Level.OK:
            findings += union_findings(status)
            continue
        severity = Severity.ERROR if status.level == Level.ERROR else Severity.WARNING
        values = {key: value for key, value in status.values}
        if values.get(Key.LOOPS_NOT_CLOSED):
            findings.append(loop_finding(status.name, status.message, values))
            continue
        union = union_findings(status)
        findings += union
        if union and is_union_message(status.message):
            continue  # the union's own words: its findings say it
        shown = "; ".join(f"{key}: {value}" for key, value in status.values)
        findings.append(
            Finding(
                severity,
                Kind.DIAGNOSTICS,
                f"/diagnostics {status.level_name} from {status.name!r}"
                + (f" ({status.hardware_id})" if status.hardware_id else "")
                + f": {status.message or '(no message)'}",
                f"reported by the node itself{': ' + shown if shown else ''}"
                + (
                    "; STALE: what it watches stopped updating"
                    if status.level == Level.STALE
                    else ""
                ),
                "act on the message; rqt_robot_monitor shows the report live",
                {
                    "name": status.name,
                    "level": status.level_name,
                    "hardware_id": status.hardware_id,
                    "message": status.message,
                    "values": values,
                },
            )
        )
    return findings


def loop_finding(name: str, message: str, values: dict[str, str]) -> Finding:
    """A state publisher's closed loop that does not close (its health report's WARN)."""
    joints = values[Key.LOOPS_NOT_CLOSED]
    return Finding(
        Severity.WARNING,
        Kind.LOOP_NOT_CLOSED,
        f"closed loop(s) not closed on {name!r}: {joints} ({message})",
        "the joint values given put the linkage out of its reach or through a singularity, "
        "or the given joints over-determine the loop and disagree with the description "
        "(encoder offsets, units, calibration, a description that does not match the robot): "
        "the node keeps the loop's passive joints at their last closed values (or the "
        "least-squares fit), so those links stop following the given ones",
        "compare the loop's given joint states with the description (`joint-tf-publisher "
        "check` lists each loop's joints and which are passive); give fewer of a loop's "
        "joints and let the node solve the rest; where the description's own rounding is the "
        "gap, raise the node's loop_tolerance (docs/loops.md, 'Solving')",
        {"name": name, "loop_joints": joints, "residuals": values.get(Key.LOOPS, "")},
    )


#: Conflicts of one status given a finding each; the rest are counted in the last.
CONFLICTS_SHOWN = 20
#: Why the union refuses a foreign static transform, and what to do, by reason.
REFUSAL_CAUSES = {
    Refusal.BAD_NAME: "a frame id empty, longer than 256 characters, not printable or starting "
    "with // (tf2 strips one leading /, so /camera is camera)",
    Refusal.BAD_STAMP: "a stamp builtin_interfaces/Time cannot hold (nanosec over 1e9 at the "
    "end of 2038: a publisher's bug)",
    Refusal.OWN_PARENT: "a frame given as its own parent",
    Refusal.NOT_FINITE: "NaN or infinite values (a driver publishing before it is calibrated)",
    Refusal.NOT_UNIT: "a rotation whose quaternion is far from unit length (tf2 ignores it too)",
    Refusal.OWN_FRAME: "a frame of the robot's own description (a second state publisher, or a "
    "static_transform_publisher repeating a fixed joint): the node's own values stay",
    Refusal.CYCLE: "a frame whose parents lead back to it through the union or the robot's tree",
    Refusal.TOO_DEEP: "a chain of parents deeper than tf2 looks up (1000)",
    Refusal.WALKS: "one message of so many frames hung below deep chains that checking them "
    "for cycles went over the union's budget (its leaves are still taken)",
    Refusal.OVER_CAP: "more foreign frames than static_union_max_frames (the publisher holding "
    "the most yields its newest)",
    Refusal.CONFLICT: "a frame another publisher holds, given with another parent or value "
    "(the conflicts)",
}


def refused_counts(text: str) -> dict[Refusal, int]:
    """The report's ``static union refused`` value (``reason (Nx), ...``) by reason."""
    counts = {}
    for reason in Refusal:
        match = re.search(re.escape(reason.value) + r" \((\d+)x\)", text)
        if match:
            counts[reason] = int(match[1])
    return counts


def is_union_message(message: str) -> bool:
    """Whether a status's message is one of the static union's (a conflict, refusals)."""
    return wording.UNION_FIRST_KEEPS in message or "refused by the static union" in message


def union_findings(status: DiagnosticRecord) -> list[Finding]:
    """What the static union of the node of ``status`` reports: each conflict (which frame,
    which publishers, which one is kept and why, what to do) and the foreign static
    transforms it refused, by reason (a warning while the node warns, else a note: refused
    since it started, none lately); none when it is off or has nothing to say."""
    name, values = status.name, dict(status.values)
    conflicts = wording.union_conflict_entries(values.get(Key.UNION_CONFLICTS, ""))
    findings = [
        Finding(
            Severity.WARNING,
            Kind.STATIC_UNION_CONFLICT,
            f"static frame {frame!r} is given differently by {kept} and {refused}: the static "
            f"union of {name!r} publishes {kept}'s",
            f"two publishers give this frame another parent or value (two "
            "static_transform_publishers for one sensor, a calibration node beside a launch "
            "file's fixed mount, two robots' descriptions naming one frame); the union keeps "
            f"the first that gave it, {kept}, and never flips between them (tf2 alone would "
            f"take whichever came last, so the frame would jump), until {kept} leaves the "
            f"graph: then {refused}'s value takes over",
            "stop one of them, or give them one value (`ros2 topic echo /tf_static` shows "
            f"both); to recalibrate, change the value {kept} publishes: the union follows its "
            "holder at once",
            {"status": name, "frame": frame, "kept": kept, "refused": refused},
        )
        for frame, kept, refused in conflicts[:CONFLICTS_SHOWN]
    ]
    if len(conflicts) > CONFLICTS_SHOWN:
        last = findings[-1]
        more = len(conflicts) - CONFLICTS_SHOWN
        findings[-1] = replace(
            last, summary=f"{last.summary} (and {more} more conflict(s) in its status)"
        )
    counts = refused_counts(values.get(Key.UNION_REFUSED, ""))
    if counts:
        total = sum(counts.values())
        said = [f"{reason.value} ({count}x)" for reason, count in counts.items()]
        findings.append(
            Finding(
                Severity.NOTE if status.level == Level.OK else Severity.WARNING,
                Kind.STATIC_UNION_REFUSED,
                f"the static union of {name!r} refused {total} foreign static transform(s) "
                f"since it started: {', '.join(said)}",
                "a publisher on /tf_static sends "
                + "; ".join(REFUSAL_CAUSES.get(r, r.value) for r in counts)
                + ": the union leaves those transforms out (and the rest of their messages in)",
                "find the publisher (`ros2 topic info -v /tf_static`, `ros2 topic echo "
                "/tf_static`) and fix what it sends"
                + (
                    "; raise static_union_max_frames if the graph has that many frames"
                    if Refusal.OVER_CAP in counts
                    else ""
                ),
                {"status": name, "refused": {r.value: n for r, n in counts.items()}},
            )
        )
    return findings


def fold_never_received(
    findings: list[Finding], diagnostics: list[Finding], observation: Observation
) -> list[Finding]:
    """``findings`` and the ``diagnostics`` findings, grouped by cause: a node's status
    whose message is its never-received warning (``health.wording.never_received``) for
    joints that ``missing_frames`` findings already explain as never received (no joint
    state gives them) is no finding of its own but their supporting evidence: a word in
    their cause and the status in ``details["diagnostics"]``. Every other status stays a
    finding of its own."""
    findings = list(findings)
    kept = []
    for status in diagnostics:
        frames = never_received_frames(status, observation)
        explaining = [
            index
            for index, finding in enumerate(findings)
            if finding.kind is Kind.MISSING_FRAMES
            and "joint_state_topic" in finding.details  # the cause: no joint state gives it
            and frames & finding_frames(finding)
        ]
        if not frames or not frames <= set().union(
            *(finding_frames(findings[i]) for i in explaining)
        ):
            kept.append(status)
            continue
        for index in explaining:
            finding = findings[index]
            findings[index] = replace(
                finding,
                cause=f"{finding.cause}; the node's own /diagnostics says so too "
                f"({status.details['level']} from {status.details['name']!r})",
                details={**finding.details, "diagnostics": dict(status.details)},
            )
    return findings + kept


def never_received_frames(status: Finding, observation: Observation) -> set[str]:
    """The child frames (with the observation's prefix) of the joints a ``diagnostics``
    finding's status names as never received; empty when it says something else, or names
    a joint the description does not have."""
    values = status.details.get("values")
    pairs = values.items() if isinstance(values, dict) else ()
    joints = never_received_joints(str(status.details.get("message", "")), pairs)
    robot = observation.robot
    if robot is None or not all(name in robot.joints for name in joints):
        return set()
    return {observation.frame_prefix + robot.joints[name].child for name in joints}


def finding_frames(finding: Finding) -> set[str]:
    """The frames a finding names in ``details["frames"]``."""
    frames = finding.details.get("frames")
    return {str(frame) for frame in frames} if isinstance(frames, list) else set()
