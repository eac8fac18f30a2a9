"""The Joint API (urdfpy's): child_pose of every type, is_valid, limits, variable names.

Every expected pose is built here from scipy's Rotation or an explicit formula, never from
the package's own transforms helpers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from joint_tf_publisher import Joint, Limit, SafetyController
from joint_tf_publisher.model import ClampMode, Mimic

Array = NDArray[np.float64]

#: A non-trivial origin used by most tests: the joint frame in the parent link frame.
ORIGIN = np.eye(4)
ORIGIN[:3, :3] = Rotation.from_euler("xyz", [0.4, -0.3, 1.1]).as_matrix()
ORIGIN[:3, 3] = [0.1, -0.25, 0.7]

#: A tilted unit axis, so no test passes by accident of a coordinate axis.
AXIS = np.array([1.0, 2.0, -2.0]) / 3.0

SETTINGS = settings(max_examples=60, deadline=None)
angles = st.floats(-10.0, 10.0, allow_nan=False)
unit_vectors = (
    st.tuples(*[st.floats(-1.0, 1.0, allow_nan=False)] * 3)
    .map(np.array)
    .filter(lambda v: np.linalg.norm(v) > 0.1)
    .map(lambda v: v / np.linalg.norm(v))
)


def make_joint(kind: str, **fields: object) -> Joint:
    values: dict[str, object] = {"axis": AXIS, "origin": ORIGIN}
    values.update(fields)
    return Joint(name="j", joint_type=kind, parent="p", child="c", **values)  # type: ignore[arg-type]


def homogeneous(rotation: Array | None = None, translation: Array | None = None) -> Array:
    pose = np.eye(4)
    if rotation is not None:
        pose[:3, :3] = rotation
    if translation is not None:
        pose[:3, 3] = translation
    return pose


def rotation_about(axis: Array, angle: float) -> Array:
    return np.array(Rotation.from_rotvec(np.asarray(axis) * angle).as_matrix(), dtype=np.float64)


# -- urdfpy surface ---------------------------------------------------------------------------


def test_types_start_with_urdfpys_six_and_add_sdf_types() -> None:
    assert Joint.TYPES[:6] == ["fixed", "prismatic", "revolute", "continuous", "floating", "planar"]
    assert set(Joint.TYPES[6:]) == {"screw", "gearbox", "revolute2", "universal", "ball"}


def test_unknown_type_is_refused() -> None:
    with pytest.raises(ValueError, match="joint 'j': unknown type 'hinge'"):
        make_joint("hinge")


def test_defaults_follow_urdfpy() -> None:
    joint = Joint(name="j", joint_type="fixed", parent="p", child="c")
    np.testing.assert_array_equal(joint.axis, [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(joint.origin, np.eye(4))
    assert joint.limit is None and joint.dynamics is None and joint.mimic is None
    assert joint.safety_controller is None and joint.calibration is None


def test_origin_must_be_4x4() -> None:
    with pytest.raises(ValueError, match=r"a pose must be a \(4, 4\) matrix"):
        make_joint("fixed", origin=np.eye(3))


def test_get_child_pose_is_child_pose() -> None:
    joint = make_joint("revolute")
    np.testing.assert_array_equal(joint.get_child_pose(0.3), joint.child_pose(0.3))


@pytest.mark.parametrize("kind", Joint.TYPES)
def test_child_pose_none_is_the_origin(kind: str) -> None:
    np.testing.assert_array_equal(make_joint(kind).child_pose(), ORIGIN)
    np.testing.assert_array_equal(make_joint(kind).child_pose(None), ORIGIN)


# -- child_pose of every type against independent formulas -------------------------------------


def test_fixed_ignores_cfg() -> None:
    np.testing.assert_allclose(make_joint("fixed").child_pose(1.234), ORIGIN)


@pytest.mark.parametrize("kind", ["revolute", "continuous", "gearbox"])
def test_rotation_about_axis(kind: str) -> None:
    q = 0.83
    expected = ORIGIN @ homogeneous(rotation_about(AXIS, q))
    np.testing.assert_allclose(make_joint(kind).child_pose(q), expected, atol=1e-12)


def test_revolute_about_z_explicit_formula() -> None:
    q = -2.2
    joint = make_joint("revolute", axis=[0.0, 0.0, 1.0], origin=np.eye(4))
    rz = np.array([[math.cos(q), -math.sin(q), 0], [math.sin(q), math.cos(q), 0], [0, 0, 1]])
    np.testing.assert_allclose(joint.child_pose(q)[:3, :3], rz, atol=1e-12)
    np.testing.assert_array_equal(joint.child_pose(q)[:3, 3], [0.0, 0.0, 0.0])


def test_prismatic_translates_along_axis() -> None:
    q = -0.37
    expected = ORIGIN @ homogeneous(translation=q * AXIS)
    np.testing.assert_allclose(make_joint("prismatic").child_pose(q), expected, atol=1e-12)


def test_scalar_cfg_may_be_a_one_element_array() -> None:
    joint = make_joint("prismatic")
    np.testing.assert_allclose(joint.child_pose(np.array([0.2])), joint.child_pose(0.2))


def test_screw_couples_rotation_and_translation() -> None:
    q, pitch = 1.7, 0.05
    expected = ORIGIN @ homogeneous(rotation_about(AXIS, q), pitch * q * AXIS)
    joint = make_joint("screw", screw_pitch=pitch)
    np.testing.assert_allclose(joint.child_pose(q), expected, atol=1e-12)


def shortest_arc_basis(normal: Array) -> Array:
    """The planar rule written independently: the shortest rotation taking z onto normal."""
    z = np.array([0.0, 0.0, 1.0])
    cross = np.cross(z, normal)
    if np.linalg.norm(cross) < 1e-12:
        return np.eye(3) if normal[2] > 0 else rotation_about(np.array([1.0, 0.0, 0.0]), math.pi)
    angle = math.atan2(np.linalg.norm(cross), float(z @ normal))
    return rotation_about(cross / np.linalg.norm(cross), angle)


def test_planar_xy_translation_in_the_plane() -> None:
    x, y = 0.3, -1.2
    basis = shortest_arc_basis(AXIS)
    expected = ORIGIN @ homogeneous(translation=basis[:, 0] * x + basis[:, 1] * y)
    np.testing.assert_allclose(make_joint("planar").child_pose([x, y]), expected, atol=1e-12)


def test_planar_with_z_normal_uses_joint_x_and_y() -> None:
    joint = make_joint("planar", axis=[0.0, 0.0, 1.0], origin=np.eye(4))
    np.testing.assert_allclose(joint.child_pose([0.5, -0.25])[:3, 3], [0.5, -0.25, 0.0])
    theta = 0.9
    expected = homogeneous(
        rotation_about(np.array([0.0, 0.0, 1.0]), theta), np.array([0.5, -0.25, 0.0])
    )
    np.testing.assert_allclose(joint.child_pose([0.5, -0.25, theta]), expected, atol=1e-12)


def test_planar_with_minus_z_normal_is_a_half_turn_about_x() -> None:
    joint = make_joint("planar", axis=[0.0, 0.0, -1.0], origin=np.eye(4))
    np.testing.assert_allclose(joint.child_pose([0.5, -0.25])[:3, 3], [0.5, 0.25, 0.0], atol=1e-12)


def test_planar_xytheta_rotates_about_the_normal() -> None:
    x, y, theta = -0.4, 0.8, 2.5
    basis = shortest_arc_basis(AXIS)
    expected = ORIGIN @ homogeneous(rotation_about(AXIS, theta), basis[:, 0] * x + basis[:, 1] * y)
    np.testing.assert_allclose(make_joint("planar").child_pose([x, y, theta]), expected, atol=1e-12)


def test_floating_xyz_rpy() -> None:
    cfg = [0.1, 0.2, -0.3, 0.5, -1.0, 2.0]
    expected = homogeneous(Rotation.from_euler("xyz", cfg[3:]).as_matrix(), np.array(cfg[:3]))
    np.testing.assert_allclose(
        make_joint("floating").child_pose(cfg), ORIGIN @ expected, atol=1e-12
    )


def test_floating_xyz_quaternion() -> None:
    quat = np.array([0.2, -0.4, 0.1, 0.7])
    cfg = np.concatenate([[1.0, 2.0, 3.0], quat])
    expected = homogeneous(Rotation.from_quat(quat).as_matrix(), np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(
        make_joint("floating").child_pose(cfg), ORIGIN @ expected, atol=1e-12
    )


def test_floating_matrix() -> None:
    pose = homogeneous(Rotation.from_rotvec([0.3, 0.2, 0.1]).as_matrix(), np.array([4, 5, 6.0]))
    np.testing.assert_allclose(make_joint("floating").child_pose(pose), ORIGIN @ pose, atol=1e-12)


@pytest.mark.parametrize("kind", ["revolute2", "universal"])
def test_two_axis_rotation_first_axis_then_second(kind: str) -> None:
    axis2 = np.array([0.0, 0.6, 0.8])
    q1, q2 = 0.7, -1.3
    # "about axis, then about axis2" in the moved frame: intrinsic composition R1 @ R2.
    expected = ORIGIN @ homogeneous(rotation_about(AXIS, q1) @ rotation_about(axis2, q2))
    joint = make_joint(kind, axis2=axis2)
    np.testing.assert_allclose(joint.child_pose([q1, q2]), expected, atol=1e-12)


def test_two_axis_rotation_defaults_second_axis_to_y() -> None:
    joint = make_joint("universal", axis=[1.0, 0.0, 0.0], origin=np.eye(4))
    expected = Rotation.from_euler("XY", [0.3, 0.4]).as_matrix()  # intrinsic x then y
    np.testing.assert_allclose(joint.child_pose([0.3, 0.4])[:3, :3], expected, atol=1e-12)


def test_ball_quaternion_rpy_and_matrix() -> None:
    joint = make_joint("ball")
    quat = np.array([-0.3, 0.1, 0.5, 0.6])
    np.testing.assert_allclose(
        joint.child_pose(quat),
        ORIGIN @ homogeneous(Rotation.from_quat(quat).as_matrix()),
        atol=1e-12,
    )
    rpy = [0.2, -0.6, 1.4]
    np.testing.assert_allclose(
        joint.child_pose(rpy),
        ORIGIN @ homogeneous(Rotation.from_euler("xyz", rpy).as_matrix()),
        atol=1e-12,
    )
    matrix = Rotation.from_rotvec([0.0, 0.5, 0.5]).as_matrix()
    np.testing.assert_allclose(joint.child_pose(matrix), ORIGIN @ homogeneous(matrix), atol=1e-12)


def test_child_offset_is_applied_after_the_motion() -> None:
    offset = homogeneous(Rotation.from_rotvec([0.0, 0.0, 0.5]).as_matrix(), np.array([0, 0, 1.0]))
    joint = make_joint("revolute", child_offset=offset)
    expected = ORIGIN @ homogeneous(rotation_about(AXIS, 0.4)) @ offset
    np.testing.assert_allclose(joint.child_pose(0.4), expected, atol=1e-12)
    np.testing.assert_allclose(joint.child_pose(), ORIGIN @ offset, atol=1e-12)


@pytest.mark.parametrize(
    ("kind", "cfg", "message"),
    [
        ("revolute", [0.1, 0.2], r"a revolute joint takes one number, got shape \(2,\)"),
        ("planar", [1.0], r"a planar joint takes shape \(2,\) or \(3,\), got shape \(1,\)"),
        ("floating", [1.0] * 5, r"a floating joint takes shape \(6,\), \(7,\) or \(4, 4\)"),
        ("universal", [1.0] * 3, r"a universal joint takes shape \(2,\), got shape \(3,\)"),
        ("ball", [1.0] * 5, r"a ball joint takes shape \(4,\), \(3,\) or \(3, 3\)"),
    ],
)
def test_wrong_cfg_shape_is_a_value_error(kind: str, cfg: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=f"joint 'j': {message}"):
        make_joint(kind).child_pose(cfg)


# -- is_valid ----------------------------------------------------------------------------------


LIMIT = Limit(effort=1.0, velocity=1.0, lower=-0.5, upper=1.5)


@pytest.mark.parametrize(
    ("kind", "cfg", "valid"),
    [
        ("revolute", 0.0, True),
        ("revolute", -0.5, True),
        ("revolute", 1.5, True),
        ("revolute", 1.5001, False),
        ("revolute", -0.6, False),
        ("revolute", math.nan, False),
        ("revolute", [0.1, 0.2], False),
        ("revolute", "abc", False),
        ("prismatic", 1.0, True),
        ("prismatic", 2.0, False),
        ("continuous", 1e6, True),
        ("continuous", math.inf, False),
        ("fixed", None, True),
        ("fixed", 5.0, True),
        ("planar", [1.0, 2.0], True),
        ("planar", [1.0, 2.0, 3.0], True),
        ("planar", [1.0, math.nan], False),
        ("planar", [1.0, 2.0, 3.0, 4.0], False),
        ("floating", [0.0] * 6, True),
        ("floating", [0, 0, 0, 0, 0, 0, 1.0], True),
        ("floating", np.eye(4), True),
        ("floating", [0.0] * 5, False),
        ("floating", [0, 0, math.inf, 0, 0, 0], False),
        ("ball", [0.0, 0.0, 0.0, 1.0], True),
        ("ball", [0.0, 0.0, 0.0, 0.0], False),
        ("universal", [0.1, 0.2], True),
        ("universal", 0.1, False),
    ],
)
def test_is_valid(kind: str, cfg: object, valid: bool) -> None:
    assert make_joint(kind, limit=LIMIT).is_valid(cfg) is valid


def test_is_valid_without_a_position_range_accepts_any_finite_value() -> None:
    limit = Limit(effort=1.0, velocity=1.0, has_position_range=False)
    joint = make_joint("revolute", limit=limit)
    assert joint.is_valid(100.0)
    assert not joint.is_valid(math.nan)


LIMIT2 = Limit(effort=1.0, velocity=1.0, lower=-0.2, upper=0.3)


@pytest.mark.parametrize("kind", ["revolute2", "universal"])
@pytest.mark.parametrize(
    ("cfg", "valid"),
    [
        ([0.1, 0.2], True),
        ([-0.5, -0.2], True),
        ([1.5, 0.3], True),
        ([0.1, 0.31], False),  # second axis above limit2
        ([0.1, -0.25], False),  # second axis below limit2
        ([1.6, 0.0], False),  # first axis above limit
        ([0.1, math.nan], False),
    ],
)
def test_is_valid_checks_both_axes_of_a_two_axis_joint(
    kind: str, cfg: list[float], valid: bool
) -> None:
    assert make_joint(kind, limit=LIMIT, limit2=LIMIT2).is_valid(cfg) is valid


def test_is_valid_two_axis_without_a_second_range_accepts_any_second_value() -> None:
    inverted = Limit(effort=1.0, velocity=1.0, lower=1.0, upper=-1.0)  # SDF: not clamped
    unlimited = Limit(effort=1.0, velocity=1.0, lower=-math.inf, upper=math.inf)
    for limit2 in (None, inverted, unlimited):
        joint = make_joint("universal", limit=LIMIT, limit2=limit2)
        assert joint.is_valid([0.0, 99.0]), limit2
        assert not joint.is_valid([9.0, 0.0]), limit2


# -- limits, names -----------------------------------------------------------------------------


def test_hard_limits_by_type_and_range() -> None:
    assert make_joint("revolute", limit=LIMIT).hard_limits() == (-0.5, 1.5)
    assert make_joint("prismatic", limit=LIMIT).hard_limits() == (-0.5, 1.5)
    assert make_joint("continuous", limit=LIMIT).hard_limits() is None
    assert make_joint("planar", limit=LIMIT).hard_limits() is None
    assert make_joint("revolute").hard_limits() is None
    inverted = Limit(effort=1.0, velocity=1.0, lower=1.0, upper=-1.0)
    assert make_joint("revolute", limit=inverted).hard_limits() is None


def test_variable_limits_give_each_value_its_range() -> None:
    sc = SafetyController(k_velocity=1.0, soft_lower_limit=-0.1, soft_upper_limit=2.0)
    universal = make_joint("universal", limit=LIMIT, limit2=LIMIT2, safety_controller=sc)
    assert universal.hard_limits() == (-0.5, 1.5)
    assert universal.variable_limits("hard") == [(-0.5, 1.5), (-0.2, 0.3)]
    # the safety controller narrows the first axis; the second has no soft range of its own
    assert universal.variable_limits("soft") == [(-0.1, 1.5), (-0.2, 0.3)]
    assert make_joint("revolute2", limit2=LIMIT2).variable_limits() == [None, (-0.2, 0.3)]
    assert make_joint("revolute", limit=LIMIT).variable_limits("soft") == [(-0.5, 1.5)]
    assert make_joint("planar", limit=LIMIT).variable_limits() == [None] * 3
    assert make_joint("ball").variable_limits() == [None] * 4
    assert make_joint("fixed").variable_limits() == []
    with pytest.raises(ValueError, match="clamp must be 'hard' or 'soft', got 'firm'"):
        universal.variable_limits("firm")


def test_soft_limits_intersect_the_hard_range() -> None:
    def soft(lower: float, upper: float, written: bool = True) -> tuple[float, float] | None:
        sc = SafetyController(
            k_velocity=1.0, soft_lower_limit=lower, soft_upper_limit=upper, has_soft_range=written
        )
        return make_joint("revolute", limit=LIMIT, safety_controller=sc).soft_limits()

    assert soft(-0.2, 1.0) == (-0.2, 1.0)
    assert soft(-2.0, 1.0) == (-0.5, 1.0)
    assert soft(1.0, -1.0) == (-0.5, 1.5)  # empty: back to the hard range
    assert soft(0.0, 0.0, written=False) == (-0.5, 1.5)
    assert make_joint("revolute", limit=LIMIT).soft_limits() == (-0.5, 1.5)


def test_variable_names_and_dofs() -> None:
    assert make_joint("fixed").variable_names == []
    assert make_joint("revolute").variable_names == ["j"]
    assert make_joint("planar").variable_names == ["j/x", "j/y", "j/theta"]
    assert make_joint("floating").variable_names == [
        "j/trans_x",
        "j/trans_y",
        "j/trans_z",
        "j/rot_x",
        "j/rot_y",
        "j/rot_z",
        "j/rot_w",
    ]
    assert make_joint("ball").variable_names == ["j/rot_x", "j/rot_y", "j/rot_z", "j/rot_w"]
    assert make_joint("universal").variable_names == ["j/axis1", "j/axis2"]
    dofs = {kind: make_joint(kind).num_dofs for kind in Joint.TYPES}
    assert dofs == {
        "fixed": 0,
        "prismatic": 1,
        "revolute": 1,
        "continuous": 1,
        "floating": 6,
        "planar": 3,
        "screw": 1,
        "gearbox": 1,
        "revolute2": 2,
        "universal": 2,
        "ball": 3,
    }


def test_mimic_defaults_and_line_do_not_affect_equality() -> None:
    assert Mimic("a") == Mimic("a", 1.0, 0.0, line=12)


# -- properties ----------------------------------------------------------------------------------


@SETTINGS
@given(axis=unit_vectors, q=angles)
def test_revolute_is_a_proper_rotation_fixing_its_axis(axis: Array, q: float) -> None:
    joint = make_joint("revolute", axis=axis)
    motion = np.linalg.solve(ORIGIN, joint.child_pose(q))
    rotation = motion[:3, :3]
    np.testing.assert_allclose(rotation @ rotation.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(rotation) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(rotation @ axis, axis, atol=1e-12)
    np.testing.assert_allclose(motion[:3, 3], 0.0, atol=1e-12)
    # The rotation angle is q (mod 2 pi): trace = 1 + 2 cos q.
    assert np.trace(rotation) == pytest.approx(1.0 + 2.0 * math.cos(q), abs=1e-12)


@SETTINGS
@given(axis=unit_vectors, a=angles, b=angles)
def test_revolute_motions_compose_by_adding_angles(axis: Array, a: float, b: float) -> None:
    joint = make_joint("continuous", axis=axis)
    np.testing.assert_allclose(joint.motion(a) @ joint.motion(b), joint.motion(a + b), atol=1e-11)


@SETTINGS
@given(axis=unit_vectors, q=st.floats(-5.0, 5.0))
def test_prismatic_moves_q_metres_along_axis_without_rotating(axis: Array, q: float) -> None:
    motion = make_joint("prismatic", axis=axis).motion(q)
    np.testing.assert_array_equal(motion[:3, :3], np.eye(3))
    assert np.linalg.norm(motion[:3, 3]) == pytest.approx(abs(q), abs=1e-12)
    np.testing.assert_allclose(np.cross(motion[:3, 3], axis), 0.0, atol=1e-12)


@SETTINGS
@given(normal=unit_vectors, x=st.floats(-3, 3), y=st.floats(-3, 3), theta=angles)
def test_planar_stays_in_its_plane(normal: Array, x: float, y: float, theta: float) -> None:
    motion = make_joint("planar", axis=normal).motion([x, y, theta])
    assert float(motion[:3, 3] @ normal) == pytest.approx(0.0, abs=1e-12)
    assert np.linalg.norm(motion[:3, 3]) == pytest.approx(math.hypot(x, y), abs=1e-12)
    np.testing.assert_allclose(motion[:3, :3] @ normal, normal, atol=1e-12)
    np.testing.assert_allclose(motion[:3, :3], rotation_about(normal, theta), atol=1e-12)


@SETTINGS
@given(
    xyz=st.tuples(*[st.floats(-5, 5)] * 3),
    rpy=st.tuples(st.floats(-3, 3), st.floats(-1.5, 1.5), st.floats(-3, 3)),
)
def test_floating_rpy_and_quaternion_forms_agree(
    xyz: tuple[float, float, float], rpy: tuple[float, float, float]
) -> None:
    joint = make_joint("floating")
    quat = Rotation.from_euler("xyz", rpy).as_quat()
    np.testing.assert_allclose(joint.motion([*xyz, *rpy]), joint.motion([*xyz, *quat]), atol=1e-12)


def test_clamp_modes_come_in_as_strings_or_none_and_are_converted_once() -> None:
    assert [ClampMode.of(value) for value in ("hard", "soft", "none", None)] == [
        ClampMode.HARD,
        ClampMode.SOFT,
        ClampMode.NONE,
        ClampMode.NONE,
    ]
    assert ClampMode.of(ClampMode.SOFT) is ClampMode.SOFT
    with pytest.raises(ValueError, match=r"clamp must be one of \(None, 'hard', 'soft'\)"):
        ClampMode.of("firm")
    universal = make_joint("universal", limit=LIMIT, limit2=LIMIT2)
    assert universal.variable_limits(ClampMode.SOFT) == universal.variable_limits("soft")
    with pytest.raises(ValueError, match="clamp must be 'hard' or 'soft'"):
        universal.variable_limits(ClampMode.NONE)
