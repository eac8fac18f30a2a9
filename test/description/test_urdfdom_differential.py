"""This package against urdfdom (the parser behind robot_state_publisher, RViz, MoveIt and
pinocchio) on the project's own URDFs and several hundred generated variants.

urdfdom's verdict and link tree come from its ``check_urdf`` program (``urdfdom_variants``
runs it, one process per text); kinematics come from pinocchio, which reads the same text
through urdfdom. Rules checked:

- every text urdfdom loads loads here, except the cases listed in DELIBERATE_REFUSALS;
- every text that loads here but not in urdfdom is of a kind EXPLAINED_ACCEPTANCES explains;
- where both load a text: the same robot name, root link and (parent, child) link pairs, and
  every link's pose equal to pinocchio's to 1e-9 at random configurations;
- docs/urdf-compatibility.md states the agreement figure and every explanation.

check_urdf ships in the ``cmeel-urdfdom`` wheel that ``pin`` (a dev requirement) brings:
where it is missing the tests skip, which fails a strict run (``make test``).
"""

from __future__ import annotations

import math
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from repo_paths import REPO_ROOT
from scipy.spatial.transform import Rotation
from urdfdom_variants import (
    CATEGORIES,
    Comparison,
    compare_all,
    figures,
    find_check_urdf,
    make_variants,
    own_descriptions,
    read_with_urdfdom,
    tree_mismatches,
)

from joint_tf_publisher import Robot
from joint_tf_publisher.description.compose import Attachment, compose

pin = pytest.importorskip("pinocchio")

DOC = REPO_ROOT / "docs" / "urdf-compatibility.md"
TOLERANCE = 1e-9

#: Texts urdfdom loads that are refused here on purpose: (our error message pattern, the
#: heading of the section of docs/urdf-compatibility.md that gives the reason).
DELIBERATE_REFUSALS = (
    (r"^malformed XML: ", "XML that is not well-formed"),
    (
        r"^(parent and child are the same link|link '.*' already has parent joint|"
        r"joints form a cycle)",
        "Joints that do not form a tree",
    ),
    (r"^(<mimic> names the joint itself|mimic cycle: )", "A mimic of itself, and mimic cycles"),
    (
        r"^(<axis> xyz is zero; a \w+ joint needs a direction|<axis> requires 'xyz')",
        "A zero axis on a moving joint",
    ),
    (r"^<link> has an empty 'name'", "An empty link name"),
)

#: Kinds of text that load here and not in urdfdom: (kind pattern, docs heading).
EXPLAINED_ACCEPTANCES = (
    # Kinds show values as repr(): a tab is "\t" there.
    (
        r": legal '(\s|.*\s'|.*\\[tn])",
        "Whitespace around numbers, tabs and line breaks between them",
    ),
    (r": non-finite '(-?inf|Infinity|1e999)'", "Infinite numbers"),
    (r"^<(dynamics)> (damping: absent|emptied)", "A <dynamics> element without attributes"),
    (r"^<material> repeated", "Visual, collision, inertial and material data"),
    (r"processing instruction in the robot", "Processing instructions"),
    (r"UTF-16 document", "Encodings other than UTF-8"),
    (r"DOCTYPE with an internal entity|character references", "DTD entities"),
)


@pytest.fixture(scope="module")
def comparisons(tmp_path_factory: pytest.TempPathFactory) -> list[Comparison]:
    check_urdf = find_check_urdf()
    if check_urdf is None:
        pytest.skip("urdfdom's check_urdf not found (the cmeel-urdfdom wheel, pulled by pin)")
    texts = own_descriptions() + make_variants()
    start = time.perf_counter()
    found = compare_all(texts, check_urdf, tmp_path_factory.mktemp("urdfdom"))
    print(f"{len(found)} texts compared in {time.perf_counter() - start:.1f} s")
    return found


def in_category(comparisons: list[Comparison], category: str) -> list[Comparison]:
    return [c for c in comparisons if c.category == category]


def test_the_variants_are_many_and_deterministic(comparisons: list[Comparison]) -> None:
    variants = [c.variant for c in comparisons if c.variant.kind != "own description"]
    assert len(variants) >= 500
    assert [v.text for v in variants] == [v.text for v in make_variants()]
    assert len({v.text for v in variants}) > 0.9 * len(variants)


def test_own_descriptions_load_in_both_with_the_same_tree(
    comparisons: list[Comparison],
) -> None:
    own = [c for c in comparisons if c.variant.kind == "own description"]
    assert len(own) >= 7
    assert [c.variant.name for c in own if c.category != "accepted by both"] == []
    assert tree_mismatches(own) == []


def test_the_comparison_is_not_one_sided(comparisons: list[Comparison]) -> None:
    counts = {category: len(in_category(comparisons, category)) for category in CATEGORIES}
    assert counts["accepted by both"] > 300, counts
    assert counts["refused by both"] > 50, counts


def test_what_urdfdom_loads_loads_here_but_for_the_deliberate_cases(
    comparisons: list[Comparison],
) -> None:
    unexplained = [
        f"{c.variant.kind} [{c.variant.origin}]: {c.ours.message}"
        for c in in_category(comparisons, "urdfdom only")
        if not any(re.search(pattern, c.ours.message) for pattern, _ in DELIBERATE_REFUSALS)
    ]
    assert unexplained == []


def test_what_loads_here_only_is_explained(comparisons: list[Comparison]) -> None:
    unexplained = [
        f"{c.variant.kind} [{c.variant.origin}]: {c.urdfdom.message.splitlines()[:1]}"
        for c in in_category(comparisons, "ours only")
        if not any(re.search(pattern, c.variant.kind) for pattern, _ in EXPLAINED_ACCEPTANCES)
    ]
    assert unexplained == []


def test_trees_agree_where_both_load(comparisons: list[Comparison]) -> None:
    assert tree_mismatches(comparisons) == []


def test_the_compatibility_doc_has_the_figure_and_every_reason(
    comparisons: list[Comparison],
) -> None:
    text = DOC.read_text()
    assert figures(comparisons) in text
    for _, heading in DELIBERATE_REFUSALS + EXPLAINED_ACCEPTANCES:
        assert f"### {heading}\n" in text, heading


# -- kinematics: pinocchio reads the same texts through urdfdom ---------------------------------


def random_configuration(robot: Robot, rng: np.random.Generator) -> dict[str, Any]:
    """Values for the joints that follow no mimic, inside their limits where they have any."""
    cfg: dict[str, Any] = {}
    for joint in robot.joints.values():
        if joint.mimic is not None or joint.joint_type == "fixed":
            continue
        if joint.joint_type == "floating":
            xyz = rng.uniform(-1, 1, 3)
            cfg[joint.name] = np.concatenate([xyz, Rotation.random(random_state=rng).as_quat()])
        elif joint.joint_type == "planar":
            cfg[joint.name] = rng.uniform(-1, 1, 3)
        else:
            limits = joint.hard_limits()
            low, high = limits if limits is not None else (-3.0, 3.0)
            cfg[joint.name] = float(rng.uniform(max(low, -3.0), min(high, 3.0)))
    return cfg


def joint_values(robot: Robot, cfg: dict[str, Any]) -> dict[str, Any]:
    """Every moving joint's value: cfg's, or multiplier * leader + offset for a follower."""

    def value_of(name: str) -> Any:
        mimic = robot.joints[name].mimic
        if mimic is None:
            return cfg.get(name, 0.0)
        return mimic.multiplier * value_of(mimic.joint) + mimic.offset

    return {name: value_of(name) for name, j in robot.joints.items() if j.joint_type != "fixed"}


def pinocchio_q(model: Any, robot: Robot, values: dict[str, Any]) -> Any:
    """pinocchio's q for the joint values (built with mimic=False: followers are ordinary)."""
    q = pin.neutral(model)
    for index in range(1, model.njoints):
        name = model.names[index]
        start, size = model.joints[index].idx_q, model.joints[index].nq
        kind = robot.joints[name].joint_type
        value = values[name]
        if kind == "floating":
            q[start : start + 7] = value
        elif kind == "planar":
            x, y, theta = np.asarray(value, dtype=float)
            q[start : start + 4] = [x, y, math.cos(theta), math.sin(theta)]
        elif kind == "continuous" and size == 2:
            q[start : start + 2] = [math.cos(value), math.sin(value)]
        else:
            q[start] = value
    return q


def model_link_poses(robot: Robot, values: dict[str, Any]) -> dict[str, Any]:
    """Each link's pose in the root frame, composed from the parsed joints' ``child_pose``
    (the model as read, without the compiled kinematics)."""
    poses = {robot.root: np.eye(4)}
    below: dict[str, list[Any]] = {}
    for joint in robot.joints.values():
        below.setdefault(joint.parent, []).append(joint)
    stack = [robot.root]
    while stack:
        parent = stack.pop()
        for joint in below.get(parent, []):
            motion = None if joint.joint_type == "fixed" else values[joint.name]
            poses[joint.child] = poses[parent] @ joint.child_pose(motion)
            stack.append(joint.child)
    return poses


def kinematic_fingerprint(robot: Robot) -> tuple[Any, ...]:
    """What the compiled kinematics depend on: joints with frames, axes, mimic and limits."""
    return tuple(
        (j.name, j.joint_type, j.parent, j.child, j.origin.tobytes(), j.axis.tobytes())
        + ((j.mimic.joint, j.mimic.multiplier, j.mimic.offset) if j.mimic else ())
        + (j.hard_limits(),)
        for j in robot.joints.values()
    )


def pinocchio_can_model(robot: Robot) -> bool:
    """pinocchio moves planar joints in their frame's xy plane only (axis 0 0 1)."""
    return all(
        np.allclose(j.axis, [0.0, 0.0, 1.0])
        for j in robot.joints.values()
        if j.joint_type == "planar"
    )


def test_link_poses_agree_with_pinocchio_where_both_load(comparisons: list[Comparison]) -> None:
    """Every text both load: the parsed joints' poses against pinocchio's, at two random
    configurations; once per distinct kinematic model, ``link_fk`` against both too."""
    rng = np.random.default_rng(20261123)
    both = in_category(comparisons, "accepted by both")
    compared = 0
    compiled: set[tuple[Any, ...]] = set()
    for comparison in both:
        robot = comparison.ours.robot
        assert robot is not None
        if not pinocchio_can_model(robot):
            continue
        where = f"{comparison.variant.kind} [{comparison.variant.origin}]"
        model = pin.buildModelFromXML(comparison.variant.text.decode("utf-8-sig"), mimic=False)
        data = model.createData()
        fingerprint = kinematic_fingerprint(robot)
        for _ in range(2):
            cfg = random_configuration(robot, rng)
            values = joint_values(robot, cfg)
            pin.framesForwardKinematics(model, data, pinocchio_q(model, robot, values))
            poses = model_link_poses(robot, values)
            if fingerprint not in compiled:
                fk = robot.link_fk(cfg)
                for link in robot.links:
                    np.testing.assert_allclose(fk[link], poses[link], atol=TOLERANCE, rtol=0)
            for link in robot.links:
                expected = data.oMf[model.getFrameId(link, pin.BODY)].homogeneous
                np.testing.assert_allclose(
                    poses[link], expected, atol=TOLERANCE, rtol=0, err_msg=f"{where}: {link}"
                )
        compiled.add(fingerprint)
        compared += 1
    assert compared > 0.9 * len(both)
    assert len(compiled) > 30


def test_an_arm_with_attached_tools_loads_in_urdfdom_with_the_same_tree(
    tmp_path: Path,
) -> None:
    """A composed robot (attachments) passes urdfdom's rules: names unique, one root."""
    check_urdf = find_check_urdf()
    if check_urdf is None:
        pytest.skip("urdfdom's check_urdf not found (the cmeel-urdfdom wheel, pulled by pin)")
    urdf = REPO_ROOT / "urdf"
    gripper = Attachment("gripper", "tool_flange", file=str(urdf / "gripper.urdf"), prefix="tool_")
    suction = Attachment("cup", "tool_tcp", file=str(urdf / "suction_tool.urdf"), prefix="s_")
    text = compose((urdf / "demo_arm.urdf").read_text(), [gripper, suction])
    reading = read_with_urdfdom(text.encode(), check_urdf, tmp_path)
    assert reading.accepted, reading.message
    robot = Robot.from_xml_string(text)
    assert reading.root == robot.root == "base_link"
    assert reading.edges == {(joint.parent, joint.child) for joint in robot.joints.values()}
    assert {("tool_flange", "tool_base_link"), ("tool_tcp", "s_base_link")} <= reading.edges


SDF_TOOL = """<sdf version="1.9"><model name="sdf_tool">
  <link name="body"/>
  <link name="jaw"><pose relative_to="hinge"/></link>
  <joint name="hinge" type="revolute">
    <pose relative_to="body">0.1 0 0.05 0 0.3 0</pose>
    <parent>body</parent><child>jaw</child>
    <axis><xyz>0 1 0</xyz><limit><lower>-0.5</lower><upper>0.5</upper></limit></axis>
  </joint>
</model></sdf>"""


def test_sdformat_parts_written_as_urdf_load_in_urdfdom(tmp_path: Path) -> None:
    """An SDFormat attachment, and an SDFormat robot with one, are written as URDF that
    urdfdom takes (unlimited effort and velocity as finite numbers)."""
    check_urdf = find_check_urdf()
    if check_urdf is None:
        pytest.skip("urdfdom's check_urdf not found (the cmeel-urdfdom wheel, pulled by pin)")
    urdf = REPO_ROOT / "urdf"
    on_arm = compose(
        (urdf / "demo_arm.urdf").read_text(),
        [Attachment("tool", "tool_flange", description=SDF_TOOL, prefix="s_")],
    )
    sdf_robot = compose(
        (REPO_ROOT / "test" / "sdf" / "relative_frames.sdf").read_text(),
        [Attachment("cup", "tool", file=str(urdf / "suction_tool.urdf"), prefix="cup_")],
    )
    for text in (on_arm, sdf_robot):
        reading = read_with_urdfdom(text.encode(), check_urdf, tmp_path)
        assert reading.accepted, reading.message
        robot = Robot.from_xml_string(text)
        assert reading.edges == {(joint.parent, joint.child) for joint in robot.joints.values()}
