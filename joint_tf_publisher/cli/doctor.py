"""``joint-tf-publisher doctor``'s analysis: what a few seconds of /tf, /tf_static, /clock,
/diagnostics and the ROS graph say is wrong, each finding with its likely cause and its fix.

Plain Python (no rclpy): ``ros.doctor_listener`` fills an ``Observation`` from a running
system, tests build one by hand. ``diagnose`` returns the findings, most serious first;
``doctor_report`` prints them. Times are nanoseconds (stamps in the clock of their publisher);
durations in the options are seconds.
"""

from __future__ import annotations

import datetime
import enum
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..model.elements import Joint, RobotModel

NS_PER_S = 1_000_000_000
#: Stamps further than this from the reference clock are of another clock domain (wall time
#: against simulation time are decades apart; a slow simulation is not an hour off), ns.
CLOCK_DOMAIN_GAP_NS = 3600 * NS_PER_S
#: Default of ``--lag``: a frame whose newest stamp is this much older than the newest of
#: all /tf frames is lagging, s (the node's ``joint_state_timeout`` default).
DEFAULT_LAG_S = 1.0
#: What usually publishes joint states, for the advice on a missing frame.
JOINT_STATE_SOURCES = (
    "joint_state_publisher (fixed or GUI positions), ros2_control's joint_state_broadcaster "
    "(a real or simulated robot), or the Gazebo bridge (ros_gz_bridge's joint_states)"
)
#: Frame names that are usually the roots of the world side of a robot's TF tree.
WORLD_FRAMES = ("map", "odom", "world", "earth")
#: Levels of diagnostic_msgs/DiagnosticStatus, by value.
DIAGNOSTIC_LEVEL_NAMES = {0: "OK", 1: "WARN", 2: "ERROR", 3: "STALE"}


class Severity(enum.Enum):
    """How serious a finding is; ERROR and WARNING make the exit status 1, NOTE does not."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        """0 for the most serious."""
        return list(Severity).index(self)


class Kind(enum.Enum):
    """What a finding is about (the ``kind`` field of ``--json``)."""

    NO_TF = "no_tf"
    SIM_TIME_WITHOUT_CLOCK = "sim_time_without_clock"
    CLOCK_SILENT = "clock_silent"
    CLOCK_DOMAIN = "clock_domain"
    ROBOT_ABSENT = "robot_absent"
    MISSING_FRAMES = "missing_frames"
    TWO_PUBLISHERS = "two_publishers"
    TWO_PARENTS = "two_parents"
    SPLIT_TREE = "split_tree"
    LAGGING_FRAMES = "lagging_frames"
    DIAGNOSTICS = "diagnostics"
    NO_DESCRIPTION = "no_description"


@dataclass(frozen=True)
class HeardTransform:
    """A transform heard while listening: one per (parent, child, topic, publisher), with
    the newest stamp of the messages that carried it.

    ``publisher`` is the publishing node's fully qualified name where the graph tells it,
    else "" (unknown).
    """

    parent: str
    child: str
    static: bool
    newest_stamp_ns: int
    publisher: str = ""
    count: int = 1


@dataclass(frozen=True)
class DiagnosticRecord:
    """The newest ``diagnostic_msgs/DiagnosticStatus`` heard under one name."""

    name: str
    level: int
    message: str
    hardware_id: str = ""
    values: tuple[tuple[str, str], ...] = ()

    @property
    def level_name(self) -> str:
        return DIAGNOSTIC_LEVEL_NAMES.get(self.level, f"level {self.level}")


@dataclass
class Observation:
    """What the doctor heard in ``listened_s`` seconds, and what it knows of the setup.

    ``now_ns``: the doctor's wall clock when listening ended. ``clock_ns``: the newest /clock
    time heard (None: none). ``robot``: the description to check the frames against (None:
    none available), with the ``frame_prefix`` and ``excluded_joints`` of the node that
    publishes it. ``sim_time_nodes``: nodes whose ``use_sim_time`` is true.
    """

    listened_s: float
    now_ns: int
    transforms: list[HeardTransform] = field(default_factory=list)
    statuses: list[DiagnosticRecord] = field(default_factory=list)
    clock_ns: int | None = None
    clock_publishers: list[str] = field(default_factory=list)
    robot: RobotModel | None = None
    description_source: str = ""
    frame_prefix: str = ""
    excluded_joints: tuple[str, ...] = ()
    joint_state_topic: str = "/joint_states"
    joint_state_publishers: list[str] = field(default_factory=list)
    sim_time_nodes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Finding:
    """One problem in plain words: what is wrong, its likely cause, what to do."""

    severity: Severity
    kind: Kind
    summary: str
    cause: str
    fix: str
    details: Mapping[str, object] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        return {
            "severity": self.severity.value,
            "kind": self.kind.value,
            "summary": self.summary,
            "cause": self.cause,
            "fix": self.fix,
            "details": dict(self.details),
        }


def diagnose(observation: Observation, lag_s: float = DEFAULT_LAG_S) -> list[Finding]:
    """Every finding of ``observation``, most serious first (stable within a severity)."""
    findings: list[Finding] = []
    findings += clock_findings(observation)
    if not observation.transforms:
        findings.append(no_tf_finding(observation))
    else:
        findings += frame_findings(observation)
        findings += publisher_findings(observation)
        findings += parent_findings(observation)
        findings += split_tree_findings(observation)
        findings += lag_findings(observation, lag_s)
    findings += diagnostics_findings(observation)
    return sorted(findings, key=lambda finding: finding.severity.rank)


def is_healthy(findings: Iterable[Finding]) -> bool:
    """True when no finding is a problem (notes only)."""
    return all(finding.severity is Severity.NOTE for finding in findings)


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


# -- frames of the description -------------------------------------------------------------


def heard_frames(observation: Observation) -> set[str]:
    """Every frame named on /tf or /tf_static, as parent or child."""
    return {heard.child for heard in observation.transforms} | {
        heard.parent for heard in observation.transforms
    }


def frame_findings(observation: Observation) -> list[Finding]:
    """The description's frames absent from TF, one finding per joint that explains them."""
    robot = observation.robot
    if robot is None:
        return [
            Finding(
                Severity.NOTE,
                Kind.NO_DESCRIPTION,
                "no robot description was available: the frames heard were not checked against one",
                "no description file was given, no node was named with --node, and nothing "
                "was heard on the robot_description topic",
                "give the description file (doctor robot.urdf) or the node that has it "
                "(doctor --node /joint_tf_publisher)",
            )
        ]
    heard = heard_frames(observation)
    frame_of = {link: observation.frame_prefix + link for link in robot.links}
    if not any(frame in heard for frame in frame_of.values()):
        return [robot_absent_finding(observation, robot, heard)]
    return [
        missing_frames_finding(observation, robot, robot.joints[name], frames)
        for name, frames in unreachable_frames(observation, robot).items()
    ]


def unreachable_frames(observation: Observation, robot: RobotModel) -> dict[str, list[str]]:
    """joint -> the description frames that TF cannot reach from the robot's root because
    that joint (the topmost one above them whose child is not published) is missing."""
    published = {heard.child for heard in observation.transforms}
    frame_of = {link: observation.frame_prefix + link for link in robot.links}
    parent_joint = {joint.child: joint for joint in robot.joints.values()}
    missing_below: dict[str, list[str]] = defaultdict(list)
    for link in robot.links:
        cause: Joint | None = None
        step = link
        while step in parent_joint:
            if frame_of[step] not in published:
                cause = parent_joint[step]
            step = parent_joint[step].parent
        if cause is not None:
            missing_below[cause.name].append(frame_of[link])
    return dict(missing_below)


def explained_roots(observation: Observation) -> set[str]:
    """Frames of the description whose parent transform is missing (``frame_findings``
    explains them; they are no separate trees to report)."""
    robot = observation.robot
    if robot is None:
        return set()
    return {
        observation.frame_prefix + robot.joints[name].child
        for name in unreachable_frames(observation, robot)
    }


def robot_absent_finding(observation: Observation, robot: RobotModel, heard: set[str]) -> Finding:
    root = observation.frame_prefix + robot.root
    prefixed = sorted(frame for frame in heard if frame.endswith("/" + robot.root))
    if prefixed:
        cause = (
            f"frames are heard under another prefix ({short_list(prefixed)}): the "
            f"frame_prefix is not {observation.frame_prefix!r}"
        )
        fix = "give doctor the node's frame prefix (--frame-prefix) or check the node's"
    else:
        cause = (
            "the node that publishes this description is not running, has not loaded it, or "
            "publishes another robot"
        )
        fix = (
            "start the robot's state publisher with this description; `ros2 node list` and "
            "`ros2 param get <node> robot_description` show what runs"
        )
    return Finding(
        Severity.ERROR,
        Kind.ROBOT_ABSENT,
        f"none of robot {robot.name!r}'s {len(robot.links)} frames (root {root!r}) is on TF",
        cause,
        fix,
        {"robot": robot.name, "root": root},
    )


def missing_frames_finding(
    observation: Observation, robot: RobotModel, joint: Joint, frames: Sequence[str]
) -> Finding:
    """Frames ``frames`` missing because ``joint`` (the topmost joint above them whose child
    is missing) is never published."""
    details: dict[str, object] = {"joint": joint.name, "joint_type": joint.joint_type}
    details["frames"] = list(frames)
    summary = (
        f"{len(frames)} frame(s) of robot {robot.name!r} missing from TF: "
        f"{short_list(frames)} (below joint {joint.name!r}, {joint.joint_type})"
    )
    if joint.name in observation.excluded_joints:
        cause = (
            f"joint {joint.name!r} is in the node's exclude_joints and no other node publishes it"
        )
        fix = "start the node that owns this joint, or remove it from exclude_joints"
    elif joint.joint_type == "fixed":
        cause = (
            f"fixed joint {joint.name!r} is not on /tf_static: the node publishing the "
            "description did not publish its static transforms (not running, or still "
            "waiting for a description)"
        )
        fix = "check the state publisher's log for a description error; restart it"
    else:
        leader = joint.mimic.joint if joint.mimic is not None else joint.name
        follower = f" (a mimic of {leader!r})" if leader != joint.name else ""
        details["leader"] = leader
        details["joint_state_topic"] = observation.joint_state_topic
        details["joint_state_publishers"] = list(observation.joint_state_publishers)
        if observation.joint_state_publishers:
            publishers = ", ".join(observation.joint_state_publishers)
            cause = (
                f"no joint state gives {leader!r}{follower}: {publishers} publish(es) "
                f"{observation.joint_state_topic} but not this joint"
            )
        else:
            cause = (
                f"no joint state gives {leader!r}{follower}: nothing publishes "
                f"{observation.joint_state_topic}"
            )
        fix = (
            f"start what publishes {leader!r}'s state: {JOINT_STATE_SOURCES}; check its "
            f"joint names against the description; or set publish_default_positions:=true "
            "to publish never-received joints at zero"
        )
    return Finding(Severity.ERROR, Kind.MISSING_FRAMES, summary, cause, fix, details)


# -- who publishes what --------------------------------------------------------------------


def publisher_findings(observation: Observation) -> list[Finding]:
    """Child frames published by two sources (two nodes, or /tf and /tf_static)."""
    sources: dict[str, set[tuple[str, bool]]] = defaultdict(set)
    for heard in observation.transforms:
        sources[heard.child].add((heard.publisher, heard.static))
    by_sources: dict[tuple[tuple[str, bool], ...], list[str]] = defaultdict(list)
    for child, child_sources in sources.items():
        named = {publisher for publisher, _ in child_sources if publisher}
        topics = {static for _, static in child_sources}
        if len(named) > 1 or len(topics) > 1:
            by_sources[tuple(sorted(child_sources))].append(child)
    findings = []
    for key, children in by_sources.items():
        names = [describe_source(publisher, static) for publisher, static in key]
        findings.append(
            Finding(
                Severity.ERROR,
                Kind.TWO_PUBLISHERS,
                f"{len(children)} frame(s) published by {len(key)} sources "
                f"({'; '.join(names)}): {short_list(sorted(children))}",
                "two nodes own the same joint: two state publishers on one description "
                "(robot_state_publisher and joint_tf_publisher), a static_transform_publisher "
                "repeating a joint of the description, or a driver broadcasting a frame the "
                "description also has; tf2 takes whichever came last, so the frame jumps",
                "stop one of them, or add the joint to exclude_joints of the state publisher "
                "that should leave it to the other",
                {"frames": sorted(children), "sources": names},
            )
        )
    return findings


def describe_source(publisher: str, static: bool) -> str:
    topic = "/tf_static" if static else "/tf"
    return f"{publisher or 'a publisher the graph does not name'} on {topic}"


def parent_findings(observation: Observation) -> list[Finding]:
    """Child frames given two parents."""
    parents: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for heard in observation.transforms:
        parents[heard.child][heard.parent].add(heard.publisher or "unnamed publisher")
    findings = []
    for child, by_parent in sorted(parents.items()):
        if len(by_parent) < 2:
            continue
        said = [
            f"{parent!r} (from {', '.join(sorted(publishers))})"
            for parent, publishers in sorted(by_parent.items())
        ]
        findings.append(
            Finding(
                Severity.ERROR,
                Kind.TWO_PARENTS,
                f"frame {child!r} has {len(by_parent)} parents: {', '.join(said)}",
                "two publishers attach the same frame to different parents (a frame "
                "renamed in one description only, a localisation node and a driver both "
                "publishing it); tf2 keeps one parent at a time, so the tree changes shape",
                "make one node publish this frame, or give the frames distinct names "
                "(frame_prefix)",
                {"frame": child, "parents": sorted(by_parent)},
            )
        )
    return findings


# -- the shape of the tree -----------------------------------------------------------------


def tree_roots(transforms: Iterable[HeardTransform]) -> dict[str, set[str]]:
    """root frame -> the frames of its tree (every frame heard belongs to one root)."""
    parent_of: dict[str, str] = {}
    frames: set[str] = set()
    for heard in transforms:
        parent_of.setdefault(heard.child, heard.parent)
        frames |= {heard.child, heard.parent}
    trees: dict[str, set[str]] = defaultdict(set)
    for frame in frames:
        root, seen = frame, {frame}
        while root in parent_of and parent_of[root] not in seen:
            root = parent_of[root]
            seen.add(root)
        trees[root].add(frame)
    return dict(trees)


def split_tree_findings(observation: Observation) -> list[Finding]:
    """Several trees, but for subtrees below a missing joint of the description."""
    explained = explained_roots(observation)
    trees = {
        root: frames
        for root, frames in tree_roots(observation.transforms).items()
        if root not in explained
    }
    if len(trees) < 2:
        return []
    roots = sorted(trees, key=lambda root: (-len(trees[root]), root))
    world = [root for root in roots if root.rsplit("/", 1)[-1] in WORLD_FRAMES]
    robots = [root for root in roots if root not in world]
    said = ", ".join(f"{root!r} ({len(trees[root])} frames)" for root in roots)
    if world and robots:
        gap = f"{leaf_of(trees[world[0]])} -> {robots[0]}"
        cause = (
            f"nothing publishes {gap}: the robot's tree is not attached to the world; "
            "that transform usually comes from odometry (diff_drive_controller, "
            "robot_localization's ekf_node, Gazebo's OdometryPublisher) or localisation"
        )
        fix = (
            f"start the odometry or localisation that publishes {gap} (or for a fixed "
            "robot a static transform: ros2 run tf2_ros static_transform_publisher "
            f"--frame-id {leaf_of(trees[world[0]])} --child-frame-id "
            f"{robots[0]})"
        )
    else:
        cause = (
            "some transform joining these trees is not published: lookups between frames "
            "of different trees fail ('... are not part of the same tree')"
        )
        fix = (
            f"publish the transform that attaches {roots[1]!r} to the tree of {roots[0]!r} "
            "(a joint in the description, a static_transform_publisher for a fixed mount, "
            "or the node that computes it)"
        )
    return [
        Finding(
            Severity.ERROR,
            Kind.SPLIT_TREE,
            f"the TF graph is split into {len(trees)} trees, with roots {said}",
            cause,
            fix,
            {"roots": roots, "frames": {root: sorted(trees[root]) for root in roots}},
        )
    ]


def leaf_of(tree: set[str]) -> str:
    """The frame of a world tree a robot usually hangs from: odom where present, else the
    tree's deepest frame among WORLD_FRAMES, else its root."""
    named = [frame for frame in tree if frame.rsplit("/", 1)[-1] in WORLD_FRAMES]
    for preferred in ("odom", "map", "world", "earth"):
        for frame in named:
            if frame.rsplit("/", 1)[-1] == preferred:
                return frame
    return sorted(tree)[0]


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
    """Every /diagnostics status that is not OK, whatever its keys."""
    findings = []
    for status in observation.statuses:
        if status.level == 0:
            continue
        severity = Severity.ERROR if status.level == 2 else Severity.WARNING
        values = {key: value for key, value in status.values}
        shown = "; ".join(f"{key}: {value}" for key, value in status.values)
        findings.append(
            Finding(
                severity,
                Kind.DIAGNOSTICS,
                f"/diagnostics {status.level_name} from {status.name!r}"
                + (f" ({status.hardware_id})" if status.hardware_id else "")
                + f": {status.message or '(no message)'}",
                f"reported by the node itself{': ' + shown if shown else ''}"
                + ("; STALE: its reports stopped coming" if status.level == 3 else ""),
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


# -- wording -------------------------------------------------------------------------------


def short_list(items: Sequence[str], limit: int = 6) -> str:
    """``items`` joined by commas, the first ``limit`` and a count of the rest."""
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def format_time(stamp_ns: int) -> str:
    """A stamp as an ISO date (UTC) when it looks like wall time (after 2001), else seconds."""
    seconds = stamp_ns / NS_PER_S
    if seconds > 1e9:
        moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
        return f"{seconds:.3f} s ({moment:%Y-%m-%d %H:%M:%S} UTC)"
    return f"{seconds:.3f} s"


def format_gap(gap_ns: int) -> str:
    """A signed duration in words: '54.2 years ahead', '3.0 h behind'."""
    seconds = abs(gap_ns) / NS_PER_S
    side = "ahead of" if gap_ns > 0 else "behind"
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("h", 3600)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit} {side}"
    return f"{seconds:.1f} s {side}"
