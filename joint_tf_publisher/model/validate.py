"""Checks of a robot's link/joint tree shared by the URDF and SDF parsers.

Parser-independent: the checks see ``Link`` and ``Joint`` objects in file order, with the
``line`` each was written on, and report through a ``Diagnostics`` so every error names
source, line and element. ``assemble_robot`` runs them all in a fixed order (names, links
of each joint, one parent per link, cycles, one root, mimic references, mimic cycles, the
ranges mimic followers move over).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import Diagnostics
from .elements import Joint, Link, RobotModel
from .joint_types import SINGLE_VALUE_TYPES
from .loops import LoopJoint

#: Relative slack (of the larger limit, at least 1) within which a follower's range is inside.
FOLLOWER_RANGE_TOLERANCE = 1e-9


def joint_label(joint: Joint) -> str:
    """How error messages name a joint: ``joint 'name'``."""
    return f"joint {joint.name!r}"


#: Where a loop joint is written, for error messages: (line, element label).
LoopSite = tuple[int | None, str]

#: Most loop joints a robot may have: every JointState solves them all together.
MAX_LOOP_JOINTS = 128
#: Most entries of the loop solver's dense map from cycle-joint twists to loop sides, 2 K C^2
#: for K loop joints and C moving joints on their cycles (``kinematics.loop_solver``): each
#: solver iteration and the description's load cost time (and memory, 8 bytes an entry) in
#: proportion. 2^20 (8 MB, some milliseconds an iteration) holds a hundredfold of a legged
#: robot's rod loops (4 loops of 6 joints: 4608); beyond it a description that anyone may
#: publish would make each JointState cost seconds.
MAX_LOOP_WORK = 1 << 18


def check_loop_joints(
    links: Mapping[str, Link],
    joints: Mapping[str, Joint],
    loop_joints: Sequence[LoopJoint],
    diag: Diagnostics,
    sites: Mapping[str, LoopSite] | None = None,
) -> None:
    """Refuse a loop joint that cannot close a loop of the tree ``joints`` over ``links``: a
    name already used by a joint, a link that is not in the tree, or the same link on both
    sides (it closes nothing). ``sites`` gives each loop joint's line and element label
    (default: no line, ``loop joint 'name'``)."""
    taken = {name: joint.line for name, joint in joints.items()}
    for loop in loop_joints:
        line, label = (sites or {}).get(loop.name, (None, f"loop joint {loop.name!r}"))
        if loop.name in taken:
            raise diag.error(
                f"duplicate joint name (first defined at line {taken[loop.name]})", line, label
            )
        taken[loop.name] = line
        for side, link in (("link1", loop.link1), ("link2", loop.link2)):
            if link not in links:
                raise diag.error(
                    f"{side} {link!r} is not a link of the TF tree; a loop joint connects "
                    "two links of the tree",
                    line,
                    label,
                )
        if loop.link1 == loop.link2:
            raise diag.error(
                f"both sides are link {loop.link1!r}: the joint closes no loop", line, label
            )
    _check_loop_work(joints, loop_joints, diag, sites or {})


def check_loop_count(count: int, diag: Diagnostics, line: int | None, label: str) -> None:
    """Refuse the ``count``-th loop joint (written at ``line`` as ``label``) beyond
    ``MAX_LOOP_JOINTS``. Readers call it as they meet each one, before its reading costs."""
    if count > MAX_LOOP_JOINTS:
        raise diag.error(
            f"more than {MAX_LOOP_JOINTS} loop joints: each JointState solves them all",
            line,
            label,
        )


def _check_loop_work(
    joints: Mapping[str, Joint],
    loop_joints: Sequence[LoopJoint],
    diag: Diagnostics,
    sites: Mapping[str, LoopSite],
) -> None:
    """Refuse loops beyond what a JointState's solve may cost (``MAX_LOOP_JOINTS``,
    ``MAX_LOOP_WORK``), naming the first loop joint beyond. Links are known to be in the tree;
    the work is counted loop by loop, so a description of thousands costs no more than the
    first ones beyond."""
    parent_joint = {joint.child: joint for joint in joints.values()}
    moving: set[str] = set()
    for count, loop in enumerate(loop_joints, start=1):
        line, label = sites.get(loop.name, (None, f"loop joint {loop.name!r}"))
        check_loop_count(count, diag, line, label)
        sides = []
        for link in (loop.link1, loop.link2):
            chain = []
            while link in parent_joint:
                chain.append(parent_joint[link])
                link = parent_joint[link].parent
            sides.append(chain)
        shared = {joint.name for joint in sides[0]} & {joint.name for joint in sides[1]}
        moving.update(
            joint.name
            for chain in sides
            for joint in chain
            if joint.name not in shared and joint.joint_type != "fixed"
        )
        work = 2 * count * len(moving) ** 2
        if work > MAX_LOOP_WORK:
            raise diag.error(
                f"the loops up to this one have {len(moving)} moving joints on their cycles: "
                f"solving {count} loop joints over them would cost {work} entries a JointState "
                f"(at most {MAX_LOOP_WORK})",
                line,
                label,
            )


def check_unique_names(
    items: Sequence[Link] | Sequence[Joint], kind: str, diag: Diagnostics
) -> None:
    """Refuse a second link (or joint) with a name already used; ``kind`` is "link"/"joint"."""
    first_line: dict[str, int | None] = {}
    for item in items:
        if item.name in first_line:
            raise diag.error(
                f"duplicate {kind} name (first defined at line {first_line[item.name]})",
                item.line,
                f"{kind} {item.name!r}",
            )
        first_line[item.name] = item.line


def check_joint_links(
    links: Mapping[str, Link], joints: Sequence[Joint], diag: Diagnostics
) -> None:
    """Refuse joints whose parent or child link does not exist, or is the same link."""
    for joint in joints:
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in links:
                raise diag.error(
                    f"{role} link {link!r} does not exist", joint.line, joint_label(joint)
                )
        if joint.parent == joint.child:
            raise diag.error(
                f"parent and child are the same link {joint.parent!r}",
                joint.line,
                joint_label(joint),
            )


def parent_joints(joints: Sequence[Joint], diag: Diagnostics) -> dict[str, Joint]:
    """Map each child link to its one parent joint; refuse a link with two parents."""
    parent_of: dict[str, Joint] = {}
    for joint in joints:
        earlier = parent_of.get(joint.child)
        if earlier is not None:
            raise diag.error(
                f"link {joint.child!r} already has parent joint {earlier.name!r} "
                f"(line {earlier.line}); a link can have only one parent",
                joint.line,
                joint_label(joint),
            )
        parent_of[joint.child] = joint
    return parent_of


def check_no_cycles(
    links: Mapping[str, Link], parent_of: Mapping[str, Joint], diag: Diagnostics
) -> None:
    """Refuse a closed loop of joints (links that no root reaches)."""
    children: dict[str, list[str]] = {}
    for child, joint in parent_of.items():
        children.setdefault(joint.parent, []).append(child)
    reached = [name for name in links if name not in parent_of]
    seen = set(reached)
    while reached:
        for child in children.get(reached.pop(), ()):
            if child not in seen:
                seen.add(child)
                reached.append(child)
    for name in links:
        if name in seen:
            continue
        # Every unreached link hangs off a cycle: walk up parent joints until one repeats.
        path: list[str] = []
        link = name
        while link not in path:
            path.append(link)
            link = parent_of[link].parent
        cycle_links = path[path.index(link) :]
        cycle_joints = sorted(
            (parent_of[c] for c in cycle_links), key=lambda j: j.line if j.line is not None else 0
        )
        loop = " -> ".join(reversed(cycle_links + [cycle_links[0]]))
        first = cycle_joints[0]
        raise diag.error(
            f"joints form a cycle through links {loop} "
            f"(joints {', '.join(repr(j.name) for j in cycle_joints)})",
            first.line,
            joint_label(first),
        )


def find_root(
    links: Mapping[str, Link],
    parent_of: Mapping[str, Joint],
    diag: Diagnostics,
    robot_line: int | None = None,
) -> str:
    """The one link without a parent joint; refuse none or several."""
    if not links:
        raise diag.error("robot has no links", robot_line)
    roots = [link for name, link in links.items() if name not in parent_of]
    if not roots:
        raise diag.error("no root link: every link has a parent joint", robot_line)
    if len(roots) > 1:
        listed = ", ".join(f"{r.name!r} (line {r.line})" for r in roots[:5])
        more = f" and {len(roots) - 5} more" if len(roots) > 5 else ""
        second = roots[1]
        raise diag.error(
            f"several root links: {listed}{more}; every link but one needs a parent joint",
            second.line,
            f"link {second.name!r}",
        )
    return roots[0].name


def check_mimics(joints: Mapping[str, Joint], diag: Diagnostics) -> None:
    """Refuse mimics naming a missing joint, the joint itself, a multi-value joint, or a cycle.

    For URDF, ``assemble_robot`` first drops the mimics urdfdom loads but that cannot apply
    (``drop_unusable_mimics``), so only the joint itself and cycles remain errors there.

    A mimic on a fixed joint (or of one) means nothing and only gets a warning.
    """
    for joint in joints.values():
        mimic = joint.mimic
        if mimic is None:
            continue
        line = mimic.line if mimic.line is not None else joint.line
        if mimic.joint == joint.name:
            raise diag.error("<mimic> names the joint itself", line, joint_label(joint))
        leader = joints.get(mimic.joint)
        if leader is None:
            raise diag.error(
                f"<mimic> names joint {mimic.joint!r}, which does not exist",
                line,
                joint_label(joint),
            )
        for role, who in (("a mimic", joint), ("mimicked", leader)):
            if who.joint_type == "fixed":
                diag.warn(
                    f"<mimic>: {role} joint {who.name!r} is fixed; the mimic has no effect",
                    line,
                    joint_label(joint),
                )
            elif who.joint_type not in SINGLE_VALUE_TYPES:
                raise diag.error(
                    f"<mimic>: {role} joint {who.name!r} is {who.joint_type}; "
                    "only single-value joints can mimic or be mimicked",
                    line,
                    joint_label(joint),
                )
    ends: set[str] = set()  # joints whose chain reaches one that follows none: on no cycle
    for joint in joints.values():
        chain = [joint.name]
        walked = {joint.name}  # a set beside the chain: a 2000-joint chain took 35 s
        current = joint
        while current.mimic is not None:
            current = joints[current.mimic.joint]
            if current.name in ends:
                break  # its chain reaches one that follows none: no cycle further on
            if current.name == joint.name:
                members = [joints[n] for n in chain]
                first = min(members, key=lambda j: j.line if j.line is not None else 0)
                assert first.mimic is not None
                start = chain.index(first.name)
                loop = " -> ".join(chain[start:] + chain[:start] + [first.name])
                raise diag.error(
                    f"mimic cycle: {loop}", first.mimic.line or first.line, joint_label(first)
                )
            if current.name in walked:
                break  # a cycle not through `joint`; found when its own members are visited
            chain.append(current.name)
            walked.add(current.name)
        else:  # reached a joint that follows none
            ends.update(chain)
            continue
        if current.name in ends:
            ends.update(chain)


def drop_unusable_mimics(joints: Mapping[str, Joint], diag: Diagnostics) -> None:
    """Ignore, with a warning, each ``<mimic>`` that names a joint that does not exist, or
    that couples a joint without a single value (fixed, planar, floating) to another.

    urdfdom, robot_state_publisher, MoveIt and pinocchio load such a file; the joint then
    takes its own values: its ``mimic`` is set to None, so it is an ordinary joint. A mimic
    of the joint itself is left for ``check_mimics`` to refuse.
    """
    for joint in joints.values():
        mimic = joint.mimic
        if mimic is None or mimic.joint == joint.name:
            continue
        leader = joints.get(mimic.joint)
        if leader is None:
            reason = f"<mimic> names joint {mimic.joint!r}, which does not exist"
        else:
            unfit = [j for j in (joint, leader) if j.joint_type not in SINGLE_VALUE_TYPES]
            if not unfit:
                continue
            reason = (
                f"<mimic>: joint {unfit[0].name!r} is {unfit[0].joint_type}; only "
                "single-value joints can mimic or be mimicked"
            )
        moves = "" if joint.joint_type == "fixed" else " and the joint moves on its own"
        diag.warn(
            f"{reason}; the mimic is ignored{moves}",
            mimic.line if mimic.line is not None else joint.line,
            joint_label(joint),
        )
        joint.mimic = None


def follower_range(
    joint: Joint,
    joints: Mapping[str, Joint],
    known: dict[str, tuple[float, float] | None] | None = None,
) -> tuple[float, float] | None:
    """The values (rad or m) a mimic follower takes as its leader sweeps its hard limits.

    multiplier * [lower, upper] + offset of the leader, through a chain of followers down from
    the first joint that follows none (followers are not clamped to their own limits). None
    if ``joint`` is no follower or that first joint has no hard limits. Call after
    ``check_mimics`` (no cycles, every leader exists). ``known``: the ranges found so far
    (by joint name, kept across calls: every follower of a 2000-joint chain walked it to
    its start again, 2.4 s; with it each link is computed once).
    """
    known = {} if known is None else known
    chain: list[Joint] = []
    current = joint
    while current.mimic is not None and current.name not in known:
        chain.append(current)
        current = joints[current.mimic.joint]
    if current.name not in known:
        known[current.name] = current.hard_limits()
    limits = known[current.name]
    if joint.mimic is None or limits is None:
        known.update((follower.name, None) for follower in chain)
        return None
    lower, upper = limits
    for follower in reversed(chain):
        assert follower.mimic is not None
        multiplier, offset = follower.mimic.multiplier, follower.mimic.offset
        if multiplier == 0.0:
            lower = upper = offset
        else:
            ends = (multiplier * lower + offset, multiplier * upper + offset)
            lower, upper = min(ends), max(ends)
        known[follower.name] = (lower, upper)
    return (lower + 0.0, upper + 0.0)  # + 0.0: no -0 in messages


def check_follower_ranges(joints: Mapping[str, Joint], diag: Diagnostics) -> None:
    """Warn where a mimic follower's range (``follower_range``) leaves its own hard limits.

    A follower moves as its leader says, beyond its own ``<limit>`` if need be (as in
    joint_state_publisher, MoveIt, pinocchio and robot_state_publisher): the warning says
    that the limits written for it do not hold.
    """
    known: dict[str, tuple[float, float] | None] = {}
    for joint in joints.values():
        own = joint.hard_limits()
        implied = follower_range(joint, joints, known)
        if joint.mimic is None or own is None or implied is None:
            continue
        slack = FOLLOWER_RANGE_TOLERANCE * max(1.0, abs(own[0]), abs(own[1]))
        if implied[0] >= own[0] - slack and implied[1] <= own[1] + slack:
            continue
        mimic = joint.mimic
        diag.warn(
            f"<mimic> moves the joint over [{implied[0]:g}, {implied[1]:g}] "
            f"({mimic.multiplier:g} * {mimic.joint!r} + {mimic.offset:g}), outside its own "
            f"limits [{own[0]:g}, {own[1]:g}]; a mimic joint is not clamped to its own limits",
            mimic.line if mimic.line is not None else joint.line,
            joint_label(joint),
        )


def assemble_robot(
    name: str,
    links: Sequence[Link],
    joints: Sequence[Joint],
    diag: Diagnostics,
    robot_line: int | None = None,
) -> RobotModel:
    """Check the tree and mimics, and build the Robot (links and joints in file order)."""
    check_unique_names(links, "link", diag)
    check_unique_names(joints, "joint", diag)
    links_by_name = {link.name: link for link in links}
    check_joint_links(links_by_name, joints, diag)
    parent_of = parent_joints(joints, diag)
    check_no_cycles(links_by_name, parent_of, diag)
    root = find_root(links_by_name, parent_of, diag, robot_line)
    joints_by_name = {joint.name: joint for joint in joints}
    drop_unusable_mimics(joints_by_name, diag)
    check_mimics(joints_by_name, diag)
    check_follower_ranges(joints_by_name, diag)
    return RobotModel(
        name=name,
        links=links_by_name,
        joints=joints_by_name,
        root=root,
        source=diag.source,
        warnings=diag.warnings,
    )


class _ErrorsOnly(Diagnostics):
    """Diagnostics that raise errors and drop warnings (already given when the model loaded)."""

    def warn(self, message: str, line: int | None = None, element: str | None = None) -> None:
        return None


def check_model(robot: RobotModel) -> None:
    """Raise the ModelError ``assemble_robot`` raises for a model built some other way (by
    hand, or edited after loading): the same checks of links, tree, root and mimics.

    A loaded model passes; warnings are not repeated. ``kinematics`` calls this before
    compiling, so a hand-built model fails with the parsers' wording. The URDF parser's
    leniency (``drop_unusable_mimics``) does not apply: a mimic that cannot apply is refused
    rather than removed from the caller's joints.
    """
    diag = _ErrorsOnly(robot.source)
    joints = list(robot.joints.values())
    check_joint_links(robot.links, joints, diag)
    parent_of = parent_joints(joints, diag)
    check_no_cycles(robot.links, parent_of, diag)
    root = find_root(robot.links, parent_of, diag)
    if root != robot.root:
        raise diag.error(f"the root link is {root!r}, not {robot.root!r}", None, "robot")
    check_mimics(robot.joints, diag)
    check_loop_joints(robot.links, robot.joints, robot.loop_joints, diag)
