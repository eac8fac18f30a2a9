"""The compiled layout: tree order, variable names and slots, form groups, model errors."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
from kinematics_reference import (
    ALL_TYPES,
    SCALAR,
    assert_poses_close,
    chain_robot,
    random_robot,
    reference_fk,
    reference_values,
)

from joint_tf_publisher import Joint, Link, ModelError, Robot
from joint_tf_publisher.kinematics import Kinematics, compile_layout
from joint_tf_publisher.model import ClampMode, Mimic


def test_compiled_structure_orders_parents_first_and_lists_variables() -> None:
    robot = random_robot(1)
    kin = robot.kinematics
    assert robot.kinematics is kin  # cached
    order = kin.moving_joints
    assert {j.name for j in order} | {j.name for j in kin.fixed_joints} == set(robot.joints)
    assert all(j.joint_type != "fixed" for j in order)
    assert all(j.joint_type == "fixed" for j in kin.fixed_joints)
    # Parents before children: every moving joint's chain to the root has its moving
    # ancestors earlier in the list.
    position = {j.name: i for i, j in enumerate(order)}
    parent_joint = {j.child: j for j in robot.joints.values()}
    for joint in order:
        link = joint.parent
        while link in parent_joint:
            above = parent_joint[link]
            if above.joint_type != "fixed":
                assert position[above.name] < position[joint.name]
            link = above.parent
    expected_names = [n for j in order if j.mimic is None for n in j.variable_names]
    assert kin.variable_names == expected_names
    assert kin.link_names == list(robot.links)


def test_slots_lay_out_every_value_of_every_moving_joint_in_order() -> None:
    layout = compile_layout(random_robot(2, count=30))
    names = [name for joint in layout.moving_joints for name in joint.variable_names]
    assert layout.num_values == len(names)
    for name, (joint, slot) in layout.variable_lookup.items():
        assert names[slot] == name
        assert layout.slot[joint] <= slot < layout.slot[joint] + layout.size[joint]
        assert layout.slot_joint[slot] == joint


def test_form_groups_partition_the_moving_joints_by_type_family() -> None:
    layout = compile_layout(random_robot(3, count=40))
    seen: list[int] = []
    for g, group in enumerate(layout.groups):
        kinds = {layout.moving_joints[i].joint_type for i in group.joints}
        assert all(layout.joint_types[i].form is group.form for i in group.joints)
        if group.form.name == "screw":
            assert kinds <= set(SCALAR)
        assert (layout.group_of[group.joints] == g).all()
        assert (layout.row_in_group[group.joints] == np.arange(group.joints.size)).all()
        np.testing.assert_array_equal(group.slots[:, 0], layout.slot[group.joints])
        seen += group.joints.tolist()
    assert sorted(seen) == list(range(len(layout.moving_joints)))
    assert {layout.moving_joints[i].joint_type for i in seen} == set(ALL_TYPES) - {"fixed"}


def _robot_with(joints: list[Joint], source: str = "bad.urdf") -> Robot:
    links = {"base": Link("base")} | {j.child: Link(j.child) for j in joints}
    return Robot("bad", links, {j.name: j for j in joints}, "base", source=source)


def _joint(name: str, kind: str, parent: str, mimic: Mimic | None, line: int) -> Joint:
    return Joint(
        name=name, joint_type=kind, parent=parent, child=f"{name}_link", mimic=mimic, line=line
    )


def test_a_hand_built_model_is_checked_by_the_parsers_validation() -> None:
    """One validation path: the kinematics refuses what ``model.validate`` refuses, in its
    wording, naming source, line and joint."""
    cycle = _robot_with(
        [
            _joint("a", "continuous", "base", Mimic("b"), 3),
            _joint("b", "continuous", "a_link", Mimic("a"), 8),
        ]
    )
    with pytest.raises(ModelError, match=r"bad\.urdf:3: joint 'a': mimic cycle: a -> b -> a"):
        Kinematics(cycle)
    missing = _robot_with([_joint("a", "continuous", "base", Mimic("zz"), 5)])
    with pytest.raises(ModelError, match=r"bad\.urdf:5: joint 'a': <mimic> names joint 'zz'"):
        Kinematics(missing)
    floating = _robot_with(
        [
            _joint("f", "floating", "base", None, 2),
            _joint("a", "continuous", "f_link", Mimic("f"), 7),
        ]
    )
    with pytest.raises(
        ModelError, match=r"bad\.urdf:7: joint 'a': <mimic>: mimicked joint 'f' is floating"
    ):
        Kinematics(floating)
    follower = _robot_with(
        [
            _joint("c", "continuous", "base", None, 2),
            _joint("p", "planar", "c_link", Mimic("c"), 9),
        ]
    )
    with pytest.raises(
        ModelError, match=r"bad\.urdf:9: joint 'p': <mimic>: a mimic joint 'p' is planar"
    ):
        Kinematics(follower)


def test_broken_trees_raise_model_error_with_line() -> None:
    def robot_with(links: list[str], joints: list[Joint]) -> Robot:
        return Robot(
            "bad", {n: Link(n) for n in links}, {j.name: j for j in joints}, "base", "tree.urdf"
        )

    loop = robot_with(
        ["base", "a", "b"],
        [
            Joint(name="ab", joint_type="fixed", parent="a", child="b", line=4),
            Joint(name="ba", joint_type="fixed", parent="b", child="a", line=6),
        ],
    )
    with pytest.raises(ModelError, match=r"tree\.urdf:4: joint 'ab': joints form a cycle"):
        Kinematics(loop)
    missing = robot_with(
        ["base"], [Joint(name="j", joint_type="fixed", parent="base", child="nowhere", line=12)]
    )
    with pytest.raises(ModelError, match=r"tree\.urdf:12: joint 'j': child link 'nowhere' does"):
        Kinematics(missing)
    two_parents = robot_with(
        ["base", "a"],
        [
            Joint(name="j1", joint_type="fixed", parent="base", child="a", line=3),
            Joint(name="j2", joint_type="fixed", parent="base", child="a", line=9),
        ],
    )
    with pytest.raises(
        ModelError, match=r"tree\.urdf:9: joint 'j2': link 'a' already has parent joint 'j1'"
    ):
        Kinematics(two_parents)
    wrong_root = robot_with(
        ["base", "a"], [Joint(name="j", joint_type="fixed", parent="a", child="base", line=2)]
    )
    with pytest.raises(ModelError, match=r"tree\.urdf: robot: the root link is 'a', not 'base'"):
        Kinematics(wrong_root)


def test_a_joint_without_mimic_or_with_a_fixed_leader_moves_on_its_own() -> None:
    """A ``<mimic>`` dropped at load leaves ``mimic`` None: an ordinary joint. A mimic of a
    fixed joint has no effect (``model.validate`` warns): the joint moves on its own too."""
    robot = chain_robot()
    robot.joints["m1"].mimic = None
    robot.joints["j2"].mimic = Mimic("f1", 2.0, 0.5)  # f1 is fixed
    kin = Kinematics(robot)
    assert "m1" in kin.variable_names and "j2" in kin.variable_names
    positions = kin.new_positions()
    kin.apply(positions, ["j1", "m1", "j2"], [0.3, -0.7, 0.1], clamp=None)
    values = kin.variable_values(positions)
    assert (values["m1"], values["m2"], values["j2"]) == (-0.7, pytest.approx(0.8), 0.1)
    fk = kin.link_fk({"j1": 0.3, "m1": -0.7, "j2": 0.1})
    robot.joints["j2"].mimic = None  # for the reference: j2 moves on its own
    expected = reference_values(robot, {"j1": 0.3, "m1": -0.7, "j2": 0.1})
    assert_poses_close(fk, reference_fk(robot, expected))


def _chain_urdf(kind: str, x: str) -> str:
    """Three links on two joints of ``kind``, each origin ``x`` metres along x."""
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>' if kind == "revolute" else ""
    joints = "".join(
        f'\n<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
        f'<child link="{child}"/><origin xyz="{x} 0 0"/><axis xyz="0 0 1"/>{limit}</joint>'
        for name, parent, child in (("j", "a", "b"), ("k", "b", "c"))
    )
    return f'<robot name="r"><link name="a"/><link name="b"/><link name="c"/>{joints}\n</robot>'


@pytest.mark.parametrize("kind", ["fixed", "revolute"])
def test_a_model_whose_link_poses_would_overflow_is_refused_without_numpy_warnings(
    kind: str,
) -> None:
    # Each origin alone is within MAX_REACH (1e300 m), their sum is not; with 8e307 m each the
    # sum overflows to inf, and composing the poses gave inf and NaN with numpy warnings. The
    # model is refused at compile time instead, naming the first joint beyond the bound.
    for x, joint, line in (("8e299", "k", 3), ("8e307", "j", 2)):
        robot = Robot.from_xml_string(_chain_urdf(kind, x), source="far.urdf")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(
                ModelError, match=rf"far\.urdf:{line}: joint '{joint}': link '.' can lie up to "
            ):
                robot.link_fk()


def test_a_large_but_finite_model_loads_and_gives_finite_poses() -> None:
    robot = Robot.from_xml_string(_chain_urdf("revolute", "1e200"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        poses = robot.link_fk({"j": 0.5, "k": -0.5})
    assert all(np.all(np.isfinite(pose)) for pose in poses.values())
    assert poses["c"][0, 3] == pytest.approx(1e200 + 1e200 * math.cos(0.5))


def test_the_layout_is_frozen_and_its_arrays_read_only() -> None:
    layout = compile_layout(random_robot(4, count=12))
    with pytest.raises(dataclasses.FrozenInstanceError):
        layout.num_values = 0  # type: ignore[misc]
    for array in (layout.slot, layout.zero_values, layout.ranges[ClampMode.HARD][0]):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 1
    with pytest.raises(ValueError, match="read-only"):
        layout.groups[0].slots[0, 0] = 1
