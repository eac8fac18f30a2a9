"""``doctor``'s checks of the TF graph's shape: the description's frames absent from TF (by
the joint that explains them), frames from two sources or with two parents, and a graph split
into several trees. Plain Python; ``doctor.diagnose`` runs them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from ...health.model import Key
from ...health.wording import (
    DEFAULT_POSITIONS_ADVICE,
    JOINT_STATE_PUBLISHERS,
    LISTENERS_KEEP_THEM,
)
from ...model.elements import Joint, RobotModel
from .observation import (
    Finding,
    HeardTransform,
    Kind,
    Observation,
    Severity,
    heard_frames,
    short_list,
)

#: Frame names that are usually the roots of the world side of a robot's TF tree.
WORLD_FRAMES = ("map", "odom", "world", "earth")


# -- frames of the description -------------------------------------------------------------


def frame_findings(observation: Observation) -> list[Finding]:
    """The description's frames absent from TF, one finding per cause: the joint that
    explains them, with the mimic followers whose frames are missing with their leader's."""
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
        missing_frames_finding(observation, robot, robot.joints[name], followers, frames)
        for name, (followers, frames) in mimic_groups(
            robot, unreachable_frames(observation, robot)
        ).items()
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


def mimic_groups(
    robot: RobotModel, causes: dict[str, list[str]]
) -> dict[str, tuple[list[str], list[str]]]:
    """``unreachable_frames``' causes grouped: joint -> (the mimic followers that join it, the
    frames of all of them). A follower whose leader is a cause too is one cause with it (one
    unpublished leader, as a gripper's fingers: one finding); chains of any depth."""
    groups: dict[str, tuple[list[str], list[str]]] = {}
    for name in causes:
        head = name
        seen = {head}
        while (mimic := robot.joints[head].mimic) is not None and mimic.joint in causes:
            if mimic.joint in seen:  # a cycle (refused at load): stop
                break
            head = mimic.joint
            seen.add(head)
        followers, frames = groups.setdefault(head, ([], []))
        if name != head:
            followers.append(name)
    order = {
        frame: i for i, frame in enumerate(frame for frames in causes.values() for frame in frames)
    }
    for head, (followers, frames) in groups.items():
        frames += sorted(
            {frame for joint in (head, *followers) for frame in causes[joint]},
            key=order.__getitem__,
        )
    return groups


def _published(observation: Observation, robot: RobotModel, joint: str) -> bool:
    """Whether ``joint``'s child frame is heard on TF."""
    child = observation.frame_prefix + robot.joints[joint].child
    return any(heard.child == child for heard in observation.transforms)


def _quoted(names: Sequence[str]) -> str:
    return ", ".join(repr(name) for name in names)


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
    observation: Observation,
    robot: RobotModel,
    joint: Joint,
    followers: Sequence[str],
    frames: Sequence[str],
) -> Finding:
    """Frames ``frames`` missing, or cut off from the root, because ``joint`` (the topmost
    joint above them whose child is missing) is never published, nor its mimic
    ``followers``, which follow it."""
    details: dict[str, object] = {"joint": joint.name, "joint_type": joint.joint_type}
    details["followers"] = list(followers)
    details["frames"] = list(frames)
    root = observation.frame_prefix + robot.root
    and_mimics = f", and its mimic joint(s) {_quoted(followers)}" if followers else ""
    summary = (
        f"{len(frames)} frame(s) of robot {robot.name!r} missing from TF or cut off from its "
        f"root {root!r}: {short_list(frames)} (below joint {joint.name!r}, "
        f"{joint.joint_type}{and_mimics})"
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
    elif joint.mimic is not None and _published(observation, robot, joint.mimic.joint):
        leader = joint.mimic.joint  # its leader's frame is on TF: the follower is left out
        details["leader"] = leader
        cause = (
            f"{joint.name!r} is a mimic of {leader!r}, whose frames are on TF: what "
            f"publishes {leader!r} leaves its mimic joint out (excluded there, or a driver "
            "that broadcasts TF itself)"
        )
        fix = (
            f"publish {joint.name!r} too, or let a state publisher that computes mimic joints "
            f"from their leader (joint_tf_publisher, robot_state_publisher) publish {leader!r}"
        )
    else:
        leader = joint.mimic.joint if joint.mimic is not None else joint.name
        mimics = [*followers] if leader == joint.name else [joint.name, *followers]
        details["leader"] = leader
        details["joint_state_topic"] = observation.joint_state_topic
        details["joint_state_publishers"] = list(observation.joint_state_publishers)
        followed = f" (followed by its mimic joint(s) {_quoted(mimics)})" if mimics else ""
        if observation.joint_state_publishers:
            publishers = ", ".join(observation.joint_state_publishers)
            said = f"{publishers} publish(es) {observation.joint_state_topic} but not this joint"
        else:
            said = f"nothing publishes {observation.joint_state_topic}"
        cause = f"no joint state gives {leader!r}{followed}: {said}"
        fix = (
            f"start what publishes the state of {leader!r}: {JOINT_STATE_PUBLISHERS}; "
            f"check its joint names against the description; or {DEFAULT_POSITIONS_ADVICE}"
        )
    return Finding(Severity.ERROR, Kind.MISSING_FRAMES, summary, cause, fix, details)


def removed_frames_findings(observation: Observation) -> list[Finding]:
    """Frames heard that the description no longer has: from a node that publishes the
    description's frames too, or named as removed by a node's health report (heard from a
    bridge or a recorder replaying an old set). Frames that are a description link under
    another prefix (a second robot, a global copy) are no such frames."""
    robot = observation.robot
    if robot is None or not observation.transforms:
        return []
    frames = {observation.frame_prefix + link for link in robot.links}
    owners = {
        heard.publisher
        for heard in observation.transforms
        if heard.child in frames and heard.publisher
    }
    reported = {
        frame.strip()
        for status in observation.statuses
        for key, value in status.values
        if key == Key.REMOVED_FRAMES
        for frame in value.split(",")
        if frame.strip()
    }

    def stale(heard: HeardTransform) -> bool:
        if heard.child in frames:
            return False
        prefixed_copy = any(heard.child.endswith(link) for link in robot.links)
        return heard.child in reported or (heard.publisher in owners and not prefixed_copy)

    stale_heard = [heard for heard in observation.transforms if stale(heard)]
    if not stale_heard:
        return []
    names = sorted({heard.child for heard in stale_heard})
    sources = sorted({describe_source(heard.publisher, heard.static) for heard in stale_heard})
    return [
        Finding(
            Severity.WARNING,
            Kind.REMOVED_FRAMES,
            f"{len(names)} frame(s) heard that robot {robot.name!r}'s description no longer "
            f"has: {short_list(names)} (from {'; '.join(sources)})",
            "they left the robot with a description change (a new robot_description, a tool "
            "change) but are still sent: robot_state_publisher's static broadcaster keeps "
            "every frame it ever sent in its latched /tf_static (ros/robot_state_publisher"
            "#144), or a bridge, recorder or bag replays an old set; "
            f"{LISTENERS_KEEP_THEM}",
            "restart the node that still sends them (joint_tf_publisher replaces its static "
            "set whole and names the frames that left in its health report), then RViz and "
            "the other listeners; or give doctor the description the node runs",
            {"frames": names, "sources": sources},
        )
    ]


# -- who publishes what --------------------------------------------------------------------


def publisher_findings(observation: Observation) -> list[Finding]:
    """Child frames published by two sources (two nodes, or /tf and /tf_static). Nodes
    with the static union on (``union_nodes``) carry every publisher's static frames by
    design: on /tf_static they are no second source of a frame another node gives there, and
    several of them giving one frame (each other's robots) are one source."""
    sources: dict[str, set[tuple[str, bool]]] = defaultdict(set)
    for heard in observation.transforms:
        sources[heard.child].add((heard.publisher, heard.static))
    unions = set(observation.union_nodes)
    for child_sources in sources.values():
        copies = sorted((name, True) for name, static in child_sources if static and name in unions)
        if any(static and name not in unions for name, static in child_sources):
            child_sources.difference_update(copies)
        else:
            child_sources.difference_update(copies[1:])
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
