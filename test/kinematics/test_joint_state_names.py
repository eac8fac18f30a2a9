"""JointState names: unknown and fixed names, MoveIt's multi-DOF names, MultiDOFJointState,
and Gazebo's bare names of multi-value joints."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kinematics_reference import (
    assert_transforms_match,
    chain_robot,
    random_robot,
    reference_local,
    reference_plane_basis,
)
from repo_paths import TEST_DIR
from scipy.spatial.transform import Rotation

from joint_tf_publisher import Robot


def test_apply_lists_unknown_and_fixed_names_and_rejects_length_mismatch() -> None:
    kin = chain_robot().kinematics
    positions = kin.new_positions()
    update = kin.apply(positions, ["ghost", "f1", "j2"], [1.0, 2.0, 0.1])
    assert update.unknown == ["ghost", "f1"]
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    assert update.moved.tolist() == [index["j2"]]
    with pytest.raises(ValueError, match="2 names but values of shape"):
        kin.apply(positions, ["j1", "j2"], [1.0])


def test_multi_dof_by_variable_names_completes_and_normalises_quaternions() -> None:
    robot = random_robot(41, types=("floating", "ball", "planar"), count=3)
    kin = robot.kinematics
    floating, ball, planar = (robot.joints[f"joint_{k}"] for k in range(3))
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    positions = kin.new_positions()
    # Only rot_z and rot_w of the floating joint: x, y from the stored identity (0, 0).
    update = kin.apply(
        positions,
        [
            f"{floating.name}/rot_z",
            f"{floating.name}/rot_w",
            f"{floating.name}/trans_y",
            f"{planar.name}/theta",
        ],
        [2.0, 2.0, 0.5, 0.7],
    )
    assert update.moved.tolist() == sorted([index[floating.name], index[planar.name]])
    half = math.sqrt(0.5)
    expected = {
        floating.name: np.array([0, 0.5, 0, 0, 0, half, half]),
        planar.name: np.array([0.0, 0.0, 0.7]),
    }
    ids = [index[floating.name], index[planar.name]]
    translations, quaternions = kin.transforms.transforms(positions.values, ids)
    assert_transforms_match(kin, translations, quaternions, ids, expected)
    # A zero quaternion is rejected: the joint keeps its last good value.
    update = kin.apply(positions, [f"{ball.name}/rot_{c}" for c in "xyzw"], [0.0] * 4)
    assert update.rejected == [ball.name]
    assert update.moved.size == 0
    _, quaternion = kin.transforms.transforms(positions.values, [index[ball.name]])
    assert_transforms_match(
        kin,
        np.zeros((1, 3)) + reference_local(ball, [0, 0, 0, 1.0])[:3, 3],
        quaternion,
        [index[ball.name]],
        {ball.name: np.array([0, 0, 0, 1.0])},
    )


def test_apply_multi_dof_sets_planar_floating_and_ball_joints() -> None:
    robot = random_robot(51, types=("floating", "ball", "planar", "revolute"), count=4)
    kin = robot.kinematics
    floating, ball, planar, revolute = (robot.joints[f"joint_{k}"] for k in range(4))
    rng = np.random.default_rng(51)
    rotation = Rotation.random(random_state=rng)
    translation = rng.uniform(-1, 1, 3)
    # For the planar joint: a pose in its plane, a rotation about its normal.
    basis = reference_plane_basis(planar.axis)
    theta = 0.9
    planar_rotation = Rotation.from_rotvec(basis[:, 2] * theta)
    planar_translation = 0.4 * basis[:, 0] - 0.3 * basis[:, 1]
    positions = kin.new_positions()
    update = kin.apply_multi_dof(
        positions,
        [floating.name, ball.name, planar.name, revolute.name, "ghost"],
        [translation, np.zeros(3), planar_translation, np.zeros(3), np.zeros(3)],
        [
            rotation.as_quat(),
            rotation.as_quat(),
            planar_rotation.as_quat(),
            [0, 0, 0, 1.0],
            [0, 0, 0, 1.0],
        ],
    )
    assert update.unknown == [revolute.name, "ghost"]
    expected = {
        floating.name: np.concatenate([translation, rotation.as_quat()]),
        ball.name: rotation.as_quat(),
        planar.name: np.array([0.4, -0.3, theta]),
    }
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    ids = [index[n] for n in expected]
    assert update.moved.tolist() == sorted(ids)
    translations, quaternions = kin.transforms.transforms(positions.values, ids)
    assert_transforms_match(kin, translations, quaternions, ids, expected)
    with pytest.raises(ValueError, match="1 joint names but 2 translations"):
        kin.apply_multi_dof(positions, [ball.name], np.zeros((2, 3)), np.zeros((2, 4)))


def test_a_multi_dof_message_is_a_joint_state_of_its_variable_names() -> None:
    """``multi_dof_plan``: the variables the transforms give, in message order, and their
    values; a transform beyond +-1e100 gives NaN values, rejected as in a JointState."""
    robot = random_robot(52, types=("floating", "planar", "revolute"), count=3)
    kin = robot.kinematics
    floating, planar, revolute = (robot.joints[f"joint_{k}"] for k in range(3))
    plan = kin.multi_dof_plan((planar.name, "ghost", floating.name, revolute.name))
    assert plan.variable_names == (*planar.variable_names, *floating.variable_names)
    assert plan.unknown == ("ghost", revolute.name)
    rotation = Rotation.from_euler("xyz", [0.3, -0.2, 0.1])
    translations = np.array([[0.0] * 3, [0.0] * 3, [0.5, -1.0, 2.0], [0.0] * 3])
    quaternions = np.array([[0.0, 0.0, 0.0, 1.0], [0.0] * 4, rotation.as_quat(), [0.0] * 4])
    values = plan.values(translations, quaternions)
    np.testing.assert_allclose(values, [0.0, 0.0, 0.0, 0.5, -1.0, 2.0, *rotation.as_quat()])
    by_transform, by_name = kin.new_positions(), kin.new_positions()
    kin.apply_multi_dof(by_transform, plan.joint_names, translations, quaternions)
    kin.apply(by_name, plan.variable_names, values)
    np.testing.assert_array_equal(by_transform.values, by_name.values)
    translations[2, 0] = 1e101
    unusable = plan.values(translations, quaternions)
    assert np.isnan(unusable[3:]).all() and not np.isnan(unusable[:3]).any()
    update = kin.apply_multi_dof(by_transform, plan.joint_names, translations, quaternions)
    assert update.rejected == [floating.name] and update.unknown == ["ghost", revolute.name]
    np.testing.assert_array_equal(by_transform.values, by_name.values)  # its last good value


# -- Gazebo's bare names --------------------------------------------------------------------

GAZEBO_SDF = """<sdf version="1.9">
<model name="gazebo">
<link name="base"/><link name="u_link"/><link name="r_link"/><link name="ball_link"/>
<link name="wheel"/>
<joint name="u" type="universal">
<parent>base</parent><child>u_link</child>
<axis><xyz>1 0 0</xyz><limit><lower>-0.5</lower><upper>0.5</upper></limit></axis>
<axis2><xyz>0 1 0</xyz></axis2>
</joint>
<joint name="r2" type="revolute2">
<parent>u_link</parent><child>r_link</child>
<axis><xyz>0 0 1</xyz></axis><axis2><xyz>1 0 0</xyz></axis2>
</joint>
<joint name="ball" type="ball"><parent>base</parent><child>ball_link</child></joint>
<joint name="wheel_joint" type="revolute">
<parent>base</parent><child>wheel</child><axis><xyz>0 1 0</xyz></axis>
</joint>
</model>
</sdf>"""


def test_a_bare_name_sets_the_first_value_of_a_two_axis_joint() -> None:
    """ros_gz's bridge publishes every joint under its bare name with its first axis's
    position: a two-axis joint's first value; its second keeps its value."""
    kin = Robot.from_xml_string(GAZEBO_SDF).kinematics
    positions = kin.new_positions()
    kin.apply(positions, ["r2/axis2"], [0.25])
    update = kin.apply(positions, ["u", "r2", "wheel_joint"], [0.9, -0.3, 1.0], clamp="hard")
    assert update.first_value_only == ["u", "r2"] and update.unknown == []
    assert update.clamped == ["u"]  # the first axis's <limit>
    stored = kin.variable_values(positions)
    assert (stored["u/axis1"], stored["u/axis2"]) == (0.5, 0.0)
    assert (stored["r2/axis1"], stored["r2/axis2"]) == (-0.3, 0.25)
    assert stored["wheel_joint"] == 1.0
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    assert update.moved.tolist() == sorted(index[n] for n in ("u", "r2", "wheel_joint"))


def test_a_bare_ball_name_is_a_rotation_about_x() -> None:
    """Gazebo's ball joint has three values, its rotation vector; the bridge publishes the
    first: the rotation vector (v, 0, 0), a rotation by v about the joint's x axis."""
    robot = Robot.from_xml_string(GAZEBO_SDF)
    kin = robot.kinematics
    positions = kin.new_positions()
    update = kin.apply(positions, ["ball"], [0.8])
    assert update.first_value_only == ["ball"]
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    translations, quaternions = kin.transforms.transforms(positions.values, [index["ball"]])
    expected = {"ball": Rotation.from_rotvec([0.8, 0.0, 0.0]).as_quat()}
    assert_transforms_match(kin, translations, quaternions, [index["ball"]], expected)
    # An unusable bare value is rejected: the joint keeps its last good value.
    update = kin.apply(positions, ["ball"], [math.inf])
    assert update.rejected == ["ball"] and update.moved.size == 0
    _, again = kin.transforms.transforms(positions.values, [index["ball"]])
    np.testing.assert_array_equal(again, quaternions)


def test_bare_names_of_planar_and_floating_joints_are_unknown() -> None:
    """Gazebo has no planar or floating joints; MoveIt names their values ``<joint>/x``..."""
    robot = random_robot(71, types=("planar", "floating", "universal", "revolute"), count=4)
    kin = robot.kinematics
    positions = kin.new_positions()
    update = kin.apply(positions, ["joint_0", "joint_1", "joint_2", "joint_3"], [0.1] * 4)
    assert update.unknown == ["joint_0", "joint_1"]
    assert update.first_value_only == ["joint_2"]


#: Two legs, each a nested model with a joint named knee; a nested model with a universal
#: joint named hip; a top-level joint named ankle beside a nested one of that name.
WALKER_SDF = TEST_DIR / "sdf" / "walker_nested.sdf"


@pytest.fixture
def walker() -> Robot:
    return Robot.load(WALKER_SDF)


def test_a_bare_name_of_one_nested_joint_sets_it(walker: Robot) -> None:
    kin = walker.kinematics
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    positions = kin.new_positions()
    update = kin.apply(positions, ["hip", "left::knee"], [0.3, -0.5])
    assert update.unknown == []
    assert update.moved.tolist() == sorted([index["pelvis::hip"], index["left::knee"]])
    values = kin.variable_values(positions)
    assert values["pelvis::hip/axis1"] == pytest.approx(0.3)  # Gazebo's first axis
    assert values["left::knee"] == pytest.approx(-0.5)
    plan = kin.state.plans.plan(("hip",))
    assert plan.first_value_only == ["hip"] and plan.ambiguous == {}


def test_a_joints_own_name_wins_over_a_nested_joints_bare_name(walker: Robot) -> None:
    kin = walker.kinematics
    positions = kin.new_positions()
    kin.apply(positions, ["ankle"], [0.25])
    values = kin.variable_values(positions)
    assert values["ankle"] == pytest.approx(0.25)
    assert values["left::ankle"] == 0.0


def test_an_ambiguous_bare_name_is_ignored_and_lists_its_candidates(walker: Robot) -> None:
    kin = walker.kinematics
    plan = kin.state.plans.plan(("knee", "right::knee"))
    assert plan.ambiguous == {"knee": ("left::knee", "right::knee")}
    assert plan.unknown == []
    positions = kin.new_positions()
    kin.apply(positions, ["knee", "right::knee"], [-1.0, -0.2])
    values = kin.variable_values(positions)
    assert (values["left::knee"], values["right::knee"]) == (0.0, pytest.approx(-0.2))
