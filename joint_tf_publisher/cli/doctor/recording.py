"""``joint-tf-publisher doctor --bag IN``: the doctor's findings over a recording.

``scan_bag`` reads the bag once, streaming (nothing kept per message but counts, extremes and
the names and frames seen): its ``/tf_static`` (when, how recorded), every transform of
``/tf`` and ``/tf_static`` (parent, child, newest stamp), its joint states (names, gaps
between log times, header stamps that go back or lie in another clock domain than the log
times) and its descriptions. Its rules are the node's: the description as the repair takes
it (``bag.repair.given_description``, else the recording's, installed by ``prepared_model``),
the joints a recording gives by the engine's name plan (``Kinematics.moved_joints``) and the
frames missing by the health model's (``facts.never_given``). ``diagnose_bag`` turns the
scan into the live doctor's ``Finding``s (``observation``; frames with two parents or two
sources are the live checks themselves, ``tree``), each naming its fix; where the fix is a
repair, the exact ``joint-tf-publisher bag repair`` command (``bag.repair``). ``bag_report``
prints them as the live doctor does (``report``: the same text layout, JSON shape and exit
status). The bag is read through ``bag.reader`` (rosbags, imported when the command runs).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ModelError
from ...health import wording
from ...health.facts import RobotFacts, never_given
from ...health.model import Key
from ...model.elements import RobotModel
from ...node_core.cdr import JointStateReader, read_multi_dof_joint_state
from ...node_core.description_source import DescriptionSource
from ...node_core.parameter_changes import TOPIC_SOURCE, load_description, prepared_model
from ...node_core.parameters import ParameterRejected, Settings
from ...robot import Robot
from ...stamps import NS_PER_S
from ..bag import messages
from ..bag.errors import BagError
from ..bag.qos import is_latched
from ..bag.reader import InputBag, bag_location, open_bag
from ..bag.repair import description_choice, given_description, params_settings
from ..bag.topics import RobotTopics, robot_topics
from .analysis import CLOCK_DOMAIN_GAP_NS, union_findings
from .observation import (
    DiagnosticRecord,
    Finding,
    HeardTransform,
    Kind,
    Observation,
    Severity,
    format_gap,
    format_time,
    is_healthy,
    short_list,
)
from .report import counts, findings_lines
from .tree import parent_findings, publisher_findings

if TYPE_CHECKING:
    from rosbags.interfaces import Qos

#: A recording whose /tf_static is absent for longer than this (log time) loses its statics
#: to playback started in that stretch (``ros2 bag play --start-offset``), s.
STATIC_STRETCH_S = 10.0
#: A gap between two JointStates (log time) longer than this is a gap without ``--params``:
#: the node's ``joint_state_timeout`` default, after which it reports a silent stream, s.
GAP_S = Settings().joint_state_timeout
#: The period the doctor's repair command asks for where statics are missing in stretches, s.
SUGGESTED_PERIOD_S = 1.0
#: The topic of the nodes' health reports (diagnostic_updater's).
DIAGNOSTICS_TOPIC = "/diagnostics"
#: What the findings call the recording where the live doctor names a node.
RECORDING = "the recording"


@dataclass
class BagScan:
    """What one pass over a bag found (times in ns: log times, and header stamps)."""

    path: Path
    storage: str
    #: The robot's topics in the bag (``bag.topics``: its namespace's).
    names: RobotTopics = field(default_factory=lambda: robot_topics(""))
    #: The node's ``joint_state_timeout``: a longer stretch between two JointStates is a gap, s.
    gap_s: float = GAP_S
    start_ns: int = 0
    end_ns: int = 0
    messages: int = 0
    topics: dict[str, str] = field(default_factory=dict)
    tf_static_profiles: list[Qos] = field(default_factory=list)
    static_count: int = 0
    #: The longest stretch of log time without a /tf_static message (from the start, between
    #: two, and to the end).
    static_stretch_ns: int = 0
    last_static_ns: int | None = None
    #: (parent, child, static) -> [count, newest stamp].
    transforms: dict[tuple[str, str, bool], list[int]] = field(default_factory=dict)
    joint_names: set[str] = field(default_factory=set)
    #: The joint names of the recorded MultiDOFJointStates (``Kinematics.multi_dof_plan``).
    multi_dof_names: set[str] = field(default_factory=set)
    joint_states: int = 0
    #: The ``source_list`` topics read (``--params``), and their JointStates that decode.
    source_topics: tuple[str, ...] = ()
    source_states: int = 0
    #: The JointStates that do not decode, of ``joint_states`` and the ``source_list`` topics.
    undecodable: int = 0
    gaps: int = 0
    longest_gap_ns: int = 0
    longest_gap_at_ns: int = 0
    last_state_ns: int | None = None
    jumps_back: int = 0
    first_jump_at_ns: int = 0
    first_jump_by_ns: int = 0
    #: The header stamp of the last JointState (a jump back: one before it).
    last_stamp_ns: int | None = None
    #: The header stamp furthest from its log time: (stamp, log time) and its topic.
    foreign_stamp: tuple[int, int, str] | None = None
    #: The recorded descriptions in their order, consecutive repeats left out (as ``bag
    #: repair``'s ``first_pass``: A, B, A ends on A, as the node does).
    descriptions: list[str] = field(default_factory=list)
    #: The recorded health reports of nodes with the static union on: the newest status of
    #: each name, its conflicts those every report named (one that ended is still said).
    union_statuses: dict[str, DiagnosticRecord] = field(default_factory=dict)
    union_conflicts: dict[str, dict[str, None]] = field(default_factory=dict)

    @property
    def duration_s(self) -> float:
        return (self.end_ns - self.start_ns) / NS_PER_S


def scan_bag(
    bag: InputBag, namespace: str = "", source_list: Sequence[str] = (), gap_s: float = GAP_S
) -> BagScan:
    """One streaming pass over ``bag``, for the robot whose node ran in ``namespace`` and
    read its joint states from the ``source_list`` topics too (their joint names count; gaps
    and stamps are judged on ``joint_states``; a gap is longer than ``gap_s``, the node's
    ``joint_state_timeout``)."""
    names = robot_topics(namespace, {c.topic for c in bag.connections})
    listed = {names.resolved(topic) for topic in source_list} - {names.joint_states}
    listed_readers = {topic: JointStateReader() for topic in listed}
    scan = BagScan(bag.path, bag.storage, names, gap_s, source_topics=tuple(sorted(listed)))
    for connection in bag.connections:
        scan.topics[connection.topic] = connection.msgtype
        if connection.topic == names.tf_static:
            scan.tf_static_profiles += list(connection.ext.offered_qos_profiles)  # type: ignore[union-attr]
    reader = JointStateReader()
    for connection, time_ns, data in bag.messages():
        if not scan.messages:
            scan.start_ns = time_ns
        scan.messages += 1
        scan.end_ns = time_ns
        topic = connection.topic
        if topic == names.joint_states:
            _joint_state(scan, reader, time_ns, data)
        elif topic in listed_readers:
            state = listed_readers[topic].read(data)
            if state is None:
                scan.undecodable += 1
            else:
                scan.source_states += 1
                scan.joint_names.update(state.names)
        elif topic == names.multi_dof_joint_states:
            multi_dof = read_multi_dof_joint_state(bytes(data))
            if multi_dof is not None:
                scan.multi_dof_names.update(multi_dof[1])
        elif topic in (names.tf, names.tf_static):
            static = topic == names.tf_static
            if static:
                since = scan.start_ns if scan.last_static_ns is None else scan.last_static_ns
                scan.static_stretch_ns = max(scan.static_stretch_ns, time_ns - since)
                scan.last_static_ns = time_ns
                scan.static_count += 1
            try:
                transforms = messages.tf_transforms(data)
            except ValueError:
                continue
            for t in transforms:
                stamp_ns = t.header.stamp.sec * NS_PER_S + t.header.stamp.nanosec
                seen = scan.transforms.setdefault(
                    (t.header.frame_id, t.child_frame_id, static), [0, stamp_ns]
                )
                seen[0] += 1
                seen[1] = max(seen[1], stamp_ns)
                if not static:
                    _stamp_against_log_time(scan, stamp_ns, time_ns, topic)
        elif topic == names.robot_description:
            try:
                text = messages.string_value(data)
            except ValueError:
                continue
            if not scan.descriptions or scan.descriptions[-1] != text:
                scan.descriptions.append(text)  # consecutive repeats left out, as the repair
        elif topic == DIAGNOSTICS_TOPIC:
            _union_statuses(scan, data)
    since = scan.start_ns if scan.last_static_ns is None else scan.last_static_ns
    scan.static_stretch_ns = max(scan.static_stretch_ns, scan.end_ns - since)
    return scan


def _joint_state(scan: BagScan, reader: JointStateReader, time_ns: int, data: bytes) -> None:
    state = reader.read(data)
    if state is None:
        scan.undecodable += 1
        return
    scan.joint_states += 1
    scan.joint_names.update(state.names)
    if scan.last_state_ns is not None:
        gap = time_ns - scan.last_state_ns
        if gap > scan.gap_s * NS_PER_S:
            scan.gaps += 1
            if gap > scan.longest_gap_ns:
                scan.longest_gap_ns, scan.longest_gap_at_ns = gap, scan.last_state_ns
    scan.last_state_ns = time_ns
    stamp_ns = state.stamp_ns
    if scan.last_stamp_ns is not None and stamp_ns < scan.last_stamp_ns:
        if not scan.jumps_back:
            scan.first_jump_at_ns = time_ns
            scan.first_jump_by_ns = scan.last_stamp_ns - stamp_ns
        scan.jumps_back += 1
    scan.last_stamp_ns = stamp_ns
    if stamp_ns:
        _stamp_against_log_time(scan, stamp_ns, time_ns, scan.names.joint_states)


def _union_statuses(scan: BagScan, data: bytes) -> None:
    """The statuses of a recorded /diagnostics message that report a static union."""
    try:
        statuses = messages.diagnostic_statuses(data)
    except ValueError:
        return
    for name, level, message, hardware_id, values in statuses:
        by_key = dict(values)
        if not by_key.get(Key.UNION_FRAMES):
            continue
        conflicts = scan.union_conflicts.setdefault(name, {})
        for entry in wording.union_conflict_entries(by_key.get(Key.UNION_CONFLICTS, "")):
            conflicts[wording.union_conflict_entry(*entry)] = None
        scan.union_statuses[name] = DiagnosticRecord(name, level, message, hardware_id, values)


def union_status_findings(scan: BagScan) -> list[Finding]:
    """The live doctor's findings of each recorded static union's last report, with every
    conflict it reported during the recording."""
    findings = []
    for name, status in scan.union_statuses.items():
        values = dict(status.values)
        values[Key.UNION_CONFLICTS] = "; ".join(scan.union_conflicts.get(name, {}))
        findings += union_findings(replace(status, values=tuple(values.items())))
    return findings


def _stamp_against_log_time(scan: BagScan, stamp_ns: int, time_ns: int, topic: str) -> None:
    worst = scan.foreign_stamp
    if worst is None or abs(stamp_ns - time_ns) > abs(worst[0] - worst[1]):
        scan.foreign_stamp = (stamp_ns, time_ns, topic)


# -- findings ------------------------------------------------------------------------------


@dataclass(frozen=True)
class BagContext:
    """What the findings are judged against: the description (given, else the bag's),
    where it came from, the frame prefix, and the repair command to suggest."""

    robot: Robot | None
    description_source: str
    frame_prefix: str
    repair_command: str
    given: RobotModel | None = None
    #: The node's parameters file given (``--params``), which the repair command carries.
    params: Path | None = None
    #: The node's ``exclude_joints`` (``--params``): counted as received, as the node does.
    exclude_joints: tuple[str, ...] = ()
    #: The recording's descriptions that do not load under the node's settings, each as
    #: (its place among those recorded, 1 for the first; why): ``_recorded_robot``.
    refused: tuple[tuple[int, str], ...] = ()


def repair_command(
    path: Path,
    description: str | None,
    period: bool,
    namespace: str = "",
    params: Path | None = None,
) -> str:
    """The ``bag repair`` command for the bag ``path`` names (any spelling: ``.``, its
    metadata.yaml or data file, a symlink) into ``<name>_repaired`` beside the bag, never
    inside it; relative to the working folder where ``path`` is relative."""
    location = bag_location(path)
    output: str = str(location.with_name(location.stem + "_repaired"))
    if not path.is_absolute():
        output = os.path.relpath(output)
    words = ["joint-tf-publisher", "bag", "repair", str(path), "-o", output]
    if params is not None:
        words += ["--params", str(params)]
    if namespace:
        words += ["--namespace", namespace]
    if description is not None:
        words += ["--description", description]
    if period:
        words += ["--static-republish-period", f"{SUGGESTED_PERIOD_S:g}"]
    return shlex.join(words)


def diagnose_bag(scan: BagScan, context: BagContext) -> list[Finding]:
    """Every finding of ``scan``, most serious first."""
    findings: list[Finding] = []
    findings += static_findings(scan, context)
    findings += joint_state_findings(scan, context)
    findings += clock_finding(scan)
    findings += refused_findings(scan, context)
    findings += description_findings(scan, context)
    findings += union_status_findings(scan)
    observation = observation_of(scan, context)
    fix = (
        f"; in this recording, `{context.repair_command}` writes the robot's frames from its "
        "description only"
    )
    for finding in parent_findings(observation) + publisher_findings(observation):
        findings.append(
            Finding(
                finding.severity,
                finding.kind,
                finding.summary,
                finding.cause,
                finding.fix + fix,
                finding.details,
            )
        )
    return sorted(findings, key=lambda finding: finding.severity.rank)


def observation_of(scan: BagScan, context: BagContext) -> Observation:
    """The recording as the live doctor's ``Observation`` (the recorder is its publisher)."""
    return Observation(
        listened_s=round(scan.duration_s, 3),
        now_ns=scan.end_ns,
        transforms=[
            HeardTransform(parent, child, static, newest_ns, RECORDING, count)
            for (parent, child, static), (count, newest_ns) in scan.transforms.items()
        ],
        robot=context.robot,
        description_source=context.description_source,
        frame_prefix=context.frame_prefix,
    )


def static_findings(scan: BagScan, context: BagContext) -> list[Finding]:
    """No /tf_static; one recorded so that playback does not latch it; statics only in
    part of the recording."""
    command = context.repair_command
    if not scan.static_count:
        return [
            Finding(
                Severity.ERROR,
                Kind.NO_TF_STATIC,
                "the recording has no /tf_static: every fixed frame is missing on playback",
                "the recorder started after the latched statics went out (ros2 bag record "
                "--start-paused, a late `ros2 bag record`), /tf_static was not among the "
                "topics recorded, or snapshot mode dropped it",
                f"rebuild the robot's TF from its joint states: `{command}`; for future "
                "recordings record /tf_static from the start (or set the state publisher's "
                "static_republish_period)",
                {"topics": sorted(scan.topics)},
            )
        ]
    findings = []
    if not is_latched(scan.tf_static_profiles):
        durabilities = sorted({p.durability.name.lower() for p in scan.tf_static_profiles})
        recorded = ", ".join(durabilities) if durabilities else "no QoS at all"
        findings.append(
            Finding(
                Severity.ERROR,
                Kind.TF_STATIC_NOT_LATCHED,
                f"/tf_static is recorded with {recorded}, not transient local: `ros2 bag "
                "play` offers it volatile, so RViz and tf2 listeners (which ask for transient "
                "local) do not receive it",
                "the recorder stored the QoS it saw (rosbag2 before Jazzy, or a publisher "
                "that offered volatile), or none (rosbag2#967, rviz#916)",
                f"`{command}` writes /tf_static reliable and transient local; or play with "
                "--qos-profile-overrides-path giving /tf_static durability transient_local",
                {"durability": durabilities},
            )
        )
    stretch_s = scan.static_stretch_ns / NS_PER_S
    if stretch_s > STATIC_STRETCH_S:
        findings.append(
            Finding(
                Severity.WARNING,
                Kind.STATICS_ONLY_AT_START,
                f"/tf_static is absent from the recording for {stretch_s:.1f} s at a stretch "
                f"({scan.static_count} message(s) in {scan.duration_s:.1f} s): playback started "
                "in that stretch has no fixed frames",
                "`ros2 bag play --start-offset` skips the statics before its start "
                "(rosbag2#1482, by design), and a split bag keeps them in its first file only "
                "(rosbag2#1159)",
                f"`{command}` writes the complete static set every {SUGGESTED_PERIOD_S:g} s",
                {"stretch_s": round(stretch_s, 3), "count": scan.static_count},
            )
        )
    return findings


def joint_state_findings(scan: BagScan, context: BagContext) -> list[Finding]:
    """No joint states (on ``joint_states`` nor the ``source_list`` topics); joints of the
    description never in them; gaps; stamps going back."""
    findings = []
    if not scan.joint_states and not scan.source_states:
        topics = " or ".join((scan.names.joint_states, *scan.source_topics))
        return [
            Finding(
                Severity.ERROR if context.robot is not None else Severity.WARNING,
                Kind.NO_JOINT_STATES,
                f"the recording has no {topics} that decode"
                + (f" ({scan.undecodable} that do not)" if scan.undecodable else ""),
                "the joint states were not among the topics recorded, or come under another "
                "name (a source_list topic)",
                f"record {scan.names.joint_states}; without them the robot's moving frames "
                "cannot be rebuilt (give the repair a --params with source_list for another "
                "topic)",
            )
        ]
    robot = context.robot
    if robot is not None:
        names, frames = never_recorded(scan, robot, context)
        if names:
            findings.append(
                Finding(
                    Severity.ERROR,
                    Kind.JOINTS_NOT_RECORDED,
                    f"{scan.names.joint_states} in the recording: "
                    + wording.never_received(names, frames),
                    f"no joint state of the recording names them: joint states usually come "
                    f"from {wording.JOINT_STATE_PUBLISHERS}, and this one was not recorded or "
                    "did not run",
                    "record the joint states of every moving joint (a topic of another name "
                    "goes in the --params file's source_list); to give them a fixed value in "
                    "this recording, repair it with a --params file that sets "
                    "publish_default_positions: true (and zeros.<joint>): "
                    + (
                        f"`{context.repair_command}` with those in {context.params}"
                        if context.params is not None
                        else f"`{context.repair_command} --params params.yaml`"
                    ),
                    {"joints": names, "frames": frames},
                )
            )
    if scan.gaps:
        at_s = (scan.longest_gap_at_ns - scan.start_ns) / NS_PER_S
        findings.append(
            Finding(
                Severity.WARNING,
                Kind.JOINT_STATE_GAPS,
                f"{scan.names.joint_states} stops {scan.gaps} time(s) for more than "
                f"{scan.gap_s:g} s, "
                f"the longest {scan.longest_gap_ns / NS_PER_S:.2f} s at {at_s:.2f} s into the "
                "recording: the robot's moving frames are stale there",
                "the joint-state publisher stalled or the recorder dropped messages (a full "
                "disk, a slow storage, best-effort QoS over a lossy link)",
                "nothing can rebuild frames where no joint state was recorded; check the "
                "recorder's and the driver's logs; record to a faster disk or with "
                "--max-cache-size",
                {"gaps": scan.gaps, "longest_s": scan.longest_gap_ns / NS_PER_S, "at_s": at_s},
            )
        )
    if scan.jumps_back:
        at_s = (scan.first_jump_at_ns - scan.start_ns) / NS_PER_S
        findings.append(
            Finding(
                Severity.WARNING,
                Kind.STAMPS_JUMP_BACK,
                f"{scan.names.joint_states} header stamps go back {scan.jumps_back} time(s), first "
                f"by {scan.first_jump_by_ns / NS_PER_S:.3f} s at {at_s:.2f} s into the recording",
                "a simulation reset, two joint-state publishers with different clocks, or "
                "recordings merged; tf2 listeners drop or mix the older transforms",
                "record one clock; on playback reset the listeners at the jump (RViz: Reset); "
                "the node (and bag repair) restart their rate limit there",
                {"count": scan.jumps_back, "at_s": at_s},
            )
        )
    return findings


def never_recorded(scan: BagScan, robot: Robot, context: BagContext) -> tuple[list[str], list[str]]:
    """The moving joints no recorded joint state gives and the frames missing with them, by
    the node's rules: the engine's name plan (``Kinematics.moved_joints``: variable, bare
    and nested names; a MultiDOFJointState's joints by ``multi_dof_plan``) and the health
    model's missing frames (``facts.never_given``: every frame below each joint, excluded
    joints and mimic followers of given leaders received)."""
    kin = robot.kinematics
    names = tuple(sorted(scan.joint_names))
    names += kin.multi_dof_plan(tuple(sorted(scan.multi_dof_names))).variable_names
    facts = RobotFacts(kin, context.exclude_joints, context.frame_prefix)
    return never_given(facts, kin.moved_joints(names))


def clock_finding(scan: BagScan) -> list[Finding]:
    """Header stamps in another clock domain than the log times (sim time against wall)."""
    if scan.foreign_stamp is None:
        return []
    stamp_ns, time_ns, topic = scan.foreign_stamp
    if abs(stamp_ns - time_ns) <= CLOCK_DOMAIN_GAP_NS:
        return []
    return [
        Finding(
            Severity.ERROR,
            Kind.CLOCK_DOMAIN,
            f"clock: {topic} is stamped {format_time(stamp_ns)}, {format_gap(stamp_ns - time_ns)} "
            f"its log time ({format_time(time_ns)})",
            "the stamps are of another clock than the recorder's: simulation time recorded "
            "with a wall-clock recorder (or the reverse); a listener on the playback's clock "
            "finds no transform at its time",
            "play with `ros2 bag play --clock` and use_sim_time:=true for every node "
            "(the simulation's clock), or record with the recorder's use_sim_time set as the "
            "system's",
            {"topic": topic, "stamp_ns": stamp_ns, "log_time_ns": time_ns},
        )
    ]


def description_findings(scan: BagScan, context: BagContext) -> list[Finding]:
    """No description at all; the bag's description differs from the one given."""
    if context.robot is None and context.refused:
        return []  # recorded, and none loads: ``refused_findings`` says so
    if context.robot is None:
        return [
            Finding(
                Severity.NOTE,
                Kind.NO_DESCRIPTION,
                "no robot description: the recording has no "
                f"{scan.names.robot_description} and none was given, so its frames and joint "
                "states were not checked against one",
                f"{scan.names.robot_description} was not recorded",
                "give the description: doctor --bag IN --description robot.urdf",
            )
        ]
    given = context.given
    if given is None or not scan.descriptions:
        return []
    recorded = _loaded(scan.descriptions[-1], scan.names.robot_description, Settings())
    if recorded is not None and _same(recorded, given):
        return []
    changed = _differences(recorded, given) if recorded is not None else ["it does not load"]
    return [
        Finding(
            Severity.WARNING,
            Kind.DESCRIPTION_DIFFERS,
            f"the recording's {scan.names.robot_description} differs from "
            f"{context.description_source}: " + short_list(changed),
            "the robot was recorded with another (an older) description: its recorded TF "
            "follows that one",
            f"rebuild the recording's TF with the new description: `{context.repair_command}`",
            {"differences": changed},
        )
    ]


def _loaded(text: str, source: str, settings: Settings) -> Robot | None:
    """The recording's description ``text`` as the node installs it from its topic under
    ``settings`` (``prepared_model``: ``model_name``, the attachments of ``--params``);
    None where it does not load."""
    try:
        return prepared_model(load_description, text, source, settings)[0].robot
    except (ModelError, ParameterRejected):
        return None


def _recorded_robot(
    texts: list[str], source: str, settings: Settings
) -> tuple[Robot | None, tuple[tuple[int, str], ...]]:
    """The model the node (and ``bag repair``) runs after the recording's descriptions
    ``texts``, in their order: the newest that loads under ``settings`` (one that does not
    leaves the model before it); and those that do not, each as (its place, 1 for the
    first; why, in the words the node and the repair use: ``source`` names the text)."""
    refused: list[tuple[int, str]] = []
    why: dict[str, str | None] = {}  # each text loaded once (A, B, A, B, ...: two loads)
    kept: str | None = None  # the text of the newest that loads
    last: tuple[str, Robot] | None = None  # the model last loaded: one at a time
    for place, text in enumerate(texts, 1):
        if text not in why:
            try:
                last = text, prepared_model(load_description, text, source, settings)[0].robot
                why[text] = None
            except (ModelError, ParameterRejected) as exc:
                why[text] = str(exc)
        reason = why[text]
        if reason is None:
            kept = text
        else:
            refused.append((place, reason))
    if kept is None:
        return None, tuple(refused)
    if last is None or last[0] != kept:  # loaded before another: loaded again
        last = kept, prepared_model(load_description, kept, source, settings)[0].robot
    return last[1], tuple(refused)


def first_refused(refused: tuple[tuple[int, str], ...]) -> bool:
    """Whether the recording's first description is among ``refused`` (``_recorded_robot``):
    ``bag repair`` then refuses the recording, and needs ``--description``."""
    return bool(refused) and refused[0][0] == 1


def refused_findings(scan: BagScan, context: BagContext) -> list[Finding]:
    """The recording's descriptions that do not load under the node's settings: an error
    where the first is one (``bag repair`` refuses the recording, the node has no model
    until one loads), else a warning (the node kept the one before: so does the repair)."""
    if not context.refused:
        return []
    topic = scan.names.robot_description
    count = len(scan.descriptions)
    first = first_refused(context.refused)
    reasons = [f"description {place} of {count}: {why}" for place, why in context.refused]
    return [
        Finding(
            Severity.ERROR if first else Severity.WARNING,
            Kind.DESCRIPTION_REFUSED,
            f"{len(context.refused)} of the {count} description(s) recorded on {topic} do "
            "not load: " + short_list(reasons),
            "bag repair refuses the recording: its first description does not load"
            if first
            else "the node kept the description before it (so does bag repair): its frames "
            "follow that one",
            "give a description that loads: doctor --bag IN --description robot.urdf, then "
            "bag repair IN -o OUT --description robot.urdf",
            {"refused": [{"place": place, "reason": why} for place, why in context.refused]},
        )
    ]


def _joint_facts(robot: RobotModel) -> dict[str, tuple[Any, ...]]:
    return {
        name: (
            joint.joint_type,
            joint.parent,
            joint.child,
            tuple(round(float(v), 9) for v in joint.origin.ravel()),
            None if joint.axis is None else tuple(round(float(v), 9) for v in joint.axis),
        )
        for name, joint in robot.joints.items()
    }


def _same(a: RobotModel, b: RobotModel) -> bool:
    return set(a.links) == set(b.links) and _joint_facts(a) == _joint_facts(b)


def _differences(recorded: RobotModel, given: RobotModel) -> list[str]:
    """What differs, in words: links and joints added or gone, joints changed."""
    said = [f"link {name!r} added" for name in given.links if name not in recorded.links]
    said += [f"link {name!r} gone" for name in recorded.links if name not in given.links]
    old, new = _joint_facts(recorded), _joint_facts(given)
    said += [f"joint {name!r} added" for name in new if name not in old]
    said += [f"joint {name!r} gone" for name in old if name not in new]
    said += [f"joint {name!r} changed" for name in new if name in old and new[name] != old[name]]
    return said or ["the same links and joints, other details"]


# -- the command ---------------------------------------------------------------------------


def bag_summary(scan: BagScan, context: BagContext) -> dict[str, object]:
    """What the recording holds, in numbers (the ``heard`` of the live doctor's JSON)."""
    return {
        "bag": str(scan.path),
        "storage": scan.storage,
        "duration_s": round(scan.duration_s, 3),
        "messages": scan.messages,
        "topics": sorted(scan.topics),
        "tf_frames": len({child for (_, child, static) in scan.transforms if not static}),
        "tf_static_frames": len({child for (_, child, static) in scan.transforms if static}),
        "tf_static_messages": scan.static_count,
        "joint_states": scan.joint_states + scan.source_states,  # every input the node reads
        "robot": context.robot.name if context.robot is not None else None,
        "description_source": context.description_source or None,
        "repair": context.repair_command,
    }


def bag_report(scan: BagScan, context: BagContext, findings: list[Finding], as_json: bool) -> str:
    """The findings as the live doctor prints them (text or JSON)."""
    if as_json:
        document = {
            "healthy": is_healthy(findings),
            "counts": counts(findings),
            "heard": bag_summary(scan, context),
            "findings": [finding.as_json() for finding in findings],
        }
        return json.dumps(document, indent=2) + "\n"
    summary = bag_summary(scan, context)
    robot = context.robot
    described = f"robot {robot.name!r} from {context.description_source}; " if robot else ""
    lines = [
        f"read {scan.path} ({scan.storage}, {scan.duration_s:.1f} s, {scan.messages} messages): "
        f"{described}{summary['tf_frames']} frames on /tf, {summary['tf_static_frames']} on "
        f"/tf_static ({scan.static_count} message(s)), {summary['joint_states']} joint states",
        "",
    ]
    return "\n".join(lines + findings_lines(findings)) + "\n"


def run_bag_doctor(
    path: Path,
    given: Robot | None,
    given_source: str,
    frame_prefix: str | None,
    as_json: bool,
    namespace: str = "",
    params: Path | None = None,
) -> tuple[int, str]:
    """Read the bag, diagnose, report: (exit status, report). ``params``: the node's
    parameters file (its ``source_list`` and ``frame_prefix`` used, ``frame_prefix`` under
    the one given). BagError for a bag that cannot be read or a parameters file that does
    not load; ValueError for a namespace that is not one."""
    settings, values = params_settings(params, namespace)
    choice = description_choice(settings, values, given is not None, params)
    loaded = given_description(settings, values, params=params) if given is None else None
    if loaded is not None:  # the parameters file's description_file or robot_description
        loader, given_source = loaded
        try:
            given = loader(settings)[0].robot
        except (ModelError, ParameterRejected, OSError) as exc:
            raise BagError(f"the description ({given_source}) does not load: {exc}") from None
    if frame_prefix is None:
        frame_prefix = settings.frame_prefix
    bag = open_bag(path)
    try:
        scan = scan_bag(bag, namespace, settings.source_list, settings.joint_state_timeout)
    finally:
        bag.close()
    robot: Robot | None = given
    source = given_source
    refused: tuple[tuple[int, str], ...] = ()
    if robot is None and scan.descriptions and choice in (None, DescriptionSource.TOPIC):
        robot, refused = _recorded_robot(scan.descriptions, TOPIC_SOURCE, settings)
        source = f"the recording's {scan.names.robot_description}"
    long_bag = scan.static_stretch_ns / NS_PER_S > STATIC_STRETCH_S or (
        scan.duration_s > STATIC_STRETCH_S
    )
    description = given_source if given is not None and loaded is None else None
    needs_one = not scan.descriptions or first_refused(refused)
    if description is None and loaded is None and needs_one:
        description = "robot.urdf"  # none recorded, or the first refused: bag repair needs one
    context = BagContext(
        robot,
        source if robot is not None else "",
        frame_prefix or "",
        repair_command(path, description, long_bag, scan.names.namespace, params),
        given,
        params,
        settings.exclude_joints,
        refused,
    )
    findings = diagnose_bag(scan, context)
    report = bag_report(scan, context, findings, as_json)
    return (0 if is_healthy(findings) else 1), report
