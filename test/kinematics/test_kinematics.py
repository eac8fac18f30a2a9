"""Compiled kinematics: FK single and batched, joint transforms, mimic, clamping, JointState.

Every expected pose is computed here, independently of the package: a recursive per-link
product of joint transforms built from scipy's Rotation and explicit formulas (the semantics
of SPEC.md and model.py: T_parent_child(q) = origin @ motion(q) @ child_offset).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from repo_paths import TEST_DIR
from scipy.spatial.transform import Rotation

from joint_tf_publisher import Joint, Limit, Link, ModelError, Robot, SafetyController
from joint_tf_publisher.kinematics import MAX_JOINT_VALUE, Kinematics, Update
from joint_tf_publisher.model import Mimic

Array = NDArray[np.float64]
TOLERANCE = 1e-9
ALL_TYPES = list(Joint.TYPES)
SCALAR = ("revolute", "continuous", "prismatic", "screw", "gearbox")
TWO_AXIS = ("revolute2", "universal")

# -- independent reference ---------------------------------------------------------------------


def homogeneous(rotation: Any = None, translation: Any = None) -> Array:
    pose = np.eye(4)
    if rotation is not None:
        pose[:3, :3] = rotation
    if translation is not None:
        pose[:3, 3] = translation
    return pose


def rotvec(axis: Array, angle: float) -> Array:
    return np.asarray(Rotation.from_rotvec(np.asarray(axis) * angle).as_matrix())


def reference_plane_basis(normal: Array) -> Array:
    """The documented rule: shortest rotation taking z onto the normal (half turn about x
    for -z), written with scipy."""
    n = np.asarray(normal) / np.linalg.norm(normal)
    if np.allclose(n, [0, 0, 1]):
        return np.eye(3)
    if np.allclose(n, [0, 0, -1]):
        return np.diag([1.0, -1.0, -1.0])
    cross = np.cross([0.0, 0.0, 1.0], n)
    angle = math.atan2(np.linalg.norm(cross), n[2])
    return rotvec(cross / np.linalg.norm(cross), angle)


def reference_motion(joint: Joint, value: Any) -> Array:
    """motion(q) in the joint frame from scipy and explicit formulas.

    value: float for 1-DOF; (3,) x y theta for planar; (7,) xyz + quaternion for floating;
    (4,) quaternion for ball; (2,) for revolute2/universal.
    """
    kind = joint.joint_type
    if kind == "fixed":
        return np.eye(4)
    if kind in ("revolute", "continuous", "gearbox"):
        return homogeneous(rotvec(joint.axis, float(value)))
    if kind == "prismatic":
        return homogeneous(translation=float(value) * joint.axis)
    if kind == "screw":
        return homogeneous(
            rotvec(joint.axis, float(value)), joint.screw_pitch * float(value) * joint.axis
        )
    if kind == "planar":
        basis = reference_plane_basis(joint.axis)
        x, y, theta = value
        return homogeneous(rotvec(basis[:, 2], theta), x * basis[:, 0] + y * basis[:, 1])
    if kind == "floating":
        return homogeneous(Rotation.from_quat(value[3:]).as_matrix(), value[:3])
    if kind == "ball":
        return homogeneous(Rotation.from_quat(value).as_matrix())
    axis2 = joint.axis2 if joint.axis2 is not None else np.array([0.0, 1.0, 0.0])
    return homogeneous(rotvec(joint.axis, value[0]) @ rotvec(axis2, value[1]))


def reference_local(joint: Joint, value: Any) -> Array:
    return joint.origin @ reference_motion(joint, value) @ joint.child_offset


def reference_values(
    robot: Robot, given: dict[str, Any], clamp: str | None = None
) -> dict[str, Any]:
    """Every moving joint's value: given (or zero/identity), clamped, mimic followed."""

    def clamp_value(joint: Joint, value: float) -> float:
        if clamp is None:
            return value
        limit = joint.limit
        if joint.joint_type not in ("revolute", "prismatic", "screw", "gearbox", *TWO_AXIS):
            return value
        if limit is None:
            return value
        lower, upper = limit.lower, limit.upper
        if clamp == "soft" and joint.safety_controller is not None:
            sc = joint.safety_controller
            lower, upper = max(lower, sc.soft_lower_limit), min(upper, sc.soft_upper_limit)
        return min(max(value, lower), upper)

    def clamp_two_axes(joint: Joint, value: Any) -> Array:
        """Axis 1 as a 1-DOF joint; axis 2 into ``limit2`` in both modes (SDF has no soft)."""
        first, second = (float(v) for v in value)
        limit2 = joint.limit2
        if clamp is not None and limit2 is not None:
            second = min(max(second, limit2.lower), limit2.upper)
        return np.array([clamp_value(joint, first), second])

    def value_of(joint: Joint) -> Any:
        if joint.mimic is not None:
            leader = robot.joints[joint.mimic.joint]
            return clamp_value(
                joint, joint.mimic.multiplier * value_of(leader) + joint.mimic.offset
            )
        if joint.name in given:
            value = given[joint.name]
            if joint.joint_type in TWO_AXIS:
                return clamp_two_axes(joint, value)
            return clamp_value(joint, value) if joint.joint_type in SCALAR else value
        return {
            "planar": np.zeros(3),
            "floating": np.array([0, 0, 0, 0, 0, 0, 1.0]),
            "ball": np.array([0, 0, 0, 1.0]),
            "revolute2": np.zeros(2),
            "universal": np.zeros(2),
        }.get(joint.joint_type, 0.0)

    return {j.name: value_of(j) for j in robot.joints.values() if j.joint_type != "fixed"}


def reference_fk(robot: Robot, values: dict[str, Any]) -> dict[str, Array]:
    """Each link's pose in the root frame: a recursive product over parent joints."""
    parent_joint = {j.child: j for j in robot.joints.values()}
    poses: dict[str, Array] = {}

    def pose_of(link: str) -> Array:
        if link not in poses:
            joint = parent_joint.get(link)
            if joint is None:
                poses[link] = np.eye(4)
            else:
                poses[link] = pose_of(joint.parent) @ reference_local(joint, values.get(joint.name))
        return poses[link]

    return {name: pose_of(name) for name in robot.links}


# -- programmatic robots ----------------------------------------------------------------------


def random_pose(rng: np.random.Generator) -> Array:
    return homogeneous(Rotation.random(random_state=rng).as_matrix(), rng.uniform(-0.5, 0.5, 3))


def unit(rng: np.random.Generator) -> Array:
    vector = rng.normal(size=3)
    return vector / np.linalg.norm(vector)


def random_robot(
    seed: int, count: int = 24, types: tuple[str, ...] = tuple(ALL_TYPES), mimic_share: float = 0.3
) -> Robot:
    """A random tree of ``count`` joints of ``types``: random origins, axes, child offsets
    (SDF style), limits, soft limits, screw pitches, and mimic chains among 1-DOF joints."""
    rng = np.random.default_rng(seed)
    links = {"root": Link("root")}
    joints: dict[str, Joint] = {}
    scalar_joints: list[str] = []
    for k in range(count):
        kind = types[k % len(types)] if k < len(types) else str(rng.choice(types))
        parent = str(rng.choice(list(links)))
        child = f"link_{k}"
        links[child] = Link(child)
        lower = float(rng.uniform(-2.0, 0.0))
        upper = float(rng.uniform(0.0, 2.0))
        mimic = None
        if kind in SCALAR and scalar_joints and rng.random() < mimic_share:
            mimic = Mimic(
                str(rng.choice(scalar_joints)),
                float(rng.uniform(-2, 2)),
                float(rng.uniform(-0.3, 0.3)),
            )
        joint = Joint(
            name=f"joint_{k}",
            joint_type=kind,
            parent=parent,
            child=child,
            axis=unit(rng),
            origin=random_pose(rng),
            child_offset=random_pose(rng) if rng.random() < 0.3 else np.eye(4),
            limit=Limit(effort=1.0, velocity=1.0, lower=lower, upper=upper),
            safety_controller=SafetyController(1.0, 1.0, lower * 0.5, upper * 0.5),
            mimic=mimic,
            axis2=unit(rng),
            # a second range derived from the first (no extra draws: same robots as before)
            limit2=Limit(effort=1.0, velocity=1.0, lower=0.7 * lower - 0.1, upper=0.6 * upper),
            screw_pitch=float(rng.uniform(-0.2, 0.2)),
        )
        joints[joint.name] = joint
        if kind in SCALAR:
            scalar_joints.append(joint.name)
    return Robot(name=f"random_{seed}", links=links, joints=joints, root="root")


def random_cfg(robot: Robot, rng: np.random.Generator, scale: float = 2.5) -> dict[str, Any]:
    """A value for every non-fixed joint in the variable form of reference_motion."""
    cfg: dict[str, Any] = {}
    for joint in robot.joints.values():
        kind = joint.joint_type
        if kind in SCALAR:
            cfg[joint.name] = float(rng.uniform(-scale, scale))
        elif kind == "planar":
            cfg[joint.name] = rng.uniform(-scale, scale, 3)
        elif kind == "floating":
            cfg[joint.name] = np.concatenate(
                [rng.uniform(-1, 1, 3), Rotation.random(random_state=rng).as_quat()]
            )
        elif kind == "ball":
            cfg[joint.name] = Rotation.random(random_state=rng).as_quat()
        elif kind in ("revolute2", "universal"):
            cfg[joint.name] = rng.uniform(-scale, scale, 2)
    return cfg


def chain_robot() -> Robot:
    """j1 (revolute, hard [-1, 1], soft [-0.5, 0.5]) -> m1 = 2 j1 (limits [-1.5, 1.5]) ->
    m2 = -m1 + 0.1 (limits [-0.3, 2]) -> m3 = 0.5 m2 (continuous); j2 prismatic [0, 0.2];
    c1 continuous; w1 revolute without a written range (not clamped); f1 fixed."""

    def joint(
        name: str,
        kind: str,
        parent: str,
        lower: float = 0.0,
        upper: float = 0.0,
        mimic: Mimic | None = None,
        soft: tuple[float, float] | None = None,
        has_range: bool = True,
    ) -> Joint:
        return Joint(
            name=name,
            joint_type=kind,
            parent=parent,
            child=f"{name}_link",
            axis=np.array([0.0, 0.6, 0.8]),
            origin=homogeneous(rotvec([1, 0, 0], 0.3), [0.1, 0, 0.2]),
            limit=Limit(1.0, 1.0, lower, upper, has_position_range=has_range),
            mimic=mimic,
            safety_controller=None if soft is None else SafetyController(1.0, 1.0, *soft),
            line=10,
        )

    joints = [
        joint("j1", "revolute", "base", -1.0, 1.0, soft=(-0.5, 0.5)),
        joint("m1", "revolute", "j1_link", -1.5, 1.5, mimic=Mimic("j1", 2.0, 0.0)),
        joint("m2", "revolute", "m1_link", -0.3, 2.0, mimic=Mimic("m1", -1.0, 0.1)),
        joint("m3", "continuous", "m2_link", mimic=Mimic("m2", 0.5, 0.0)),
        joint("j2", "prismatic", "base", 0.0, 0.2),
        joint("c1", "continuous", "base"),
        joint("w1", "revolute", "base", has_range=False),
        joint("f1", "fixed", "j2_link"),
    ]
    links = {"base": Link("base")} | {j.child: Link(j.child) for j in joints}
    return Robot(name="chain", links=links, joints={j.name: j for j in joints}, root="base")


def assert_poses_close(actual: dict[str, Array], expected: dict[str, Array]) -> None:
    assert list(actual) == list(expected)
    for name, pose in expected.items():
        np.testing.assert_allclose(actual[name], pose, atol=TOLERANCE, rtol=0, err_msg=name)


def assert_transforms_match(
    kin: Kinematics,
    robot: Robot,
    translations: Array,
    quaternions: Array,
    indices: Any,
    values: dict[str, Any],
) -> None:
    for row, index in enumerate(indices):
        joint = kin.moving_joints[index]
        expected = reference_local(joint, values[joint.name])
        np.testing.assert_allclose(translations[row], expected[:3, 3], atol=TOLERANCE, rtol=0)
        rotation = Rotation.from_quat(quaternions[row]).as_matrix()
        np.testing.assert_allclose(rotation, expected[:3, :3], atol=TOLERANCE, rtol=0)
        assert abs(np.linalg.norm(quaternions[row]) - 1.0) < TOLERANCE


def state_names_values(kin: Kinematics, cfg: dict[str, Any]) -> tuple[list[str], list[float]]:
    """A JointState (MoveIt variable names for multi-DOF joints) for cfg, mimic joints left out."""
    names: list[str] = []
    values: list[float] = []
    for joint in kin.moving_joints:
        if joint.mimic is None and joint.name in cfg:
            names += joint.variable_names
            values += list(np.atleast_1d(cfg[joint.name]).astype(float))
    return names, values


FILE_ROBOTS = [
    "test/urdf/all_joint_types.urdf",
    "test/urdf/arm_mimic_gripper.urdf",
    "test/urdf/humanoid.urdf",
    "test/urdf/mobile_base_planar.urdf",
    "urdf/demo_arm.urdf",
    "test/sdf/all_joint_types.sdf",
    "test/sdf/gearbox_demo.sdf",
    "test/sdf/arm_1_11.sdf",
    "test/sdf/relative_frames.sdf",
]


def load(relative: str) -> Robot:
    return Robot.load(TEST_DIR.parent / relative)


# -- compiled structure -----------------------------------------------------------------------


def test_compiled_structure_orders_parents_first_and_lists_variables() -> None:
    robot = random_robot(1)
    kin = robot.kinematics
    assert robot.kinematics is kin  # cached
    seen = {robot.root}
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
        seen.add(joint.child)
    expected_names = [n for j in order if j.mimic is None for n in j.variable_names]
    assert kin.variable_names == expected_names


def test_new_positions_start_at_zero_with_identity_quaternions_and_mimic_offsets() -> None:
    robot = random_robot(2)
    kin = robot.kinematics
    positions = kin.new_positions()
    assert not positions.received.any()
    translations, quaternions = kin.joint_transforms(positions, np.arange(len(kin.moving_joints)))
    zero = reference_values(robot, {})
    assert_transforms_match(
        kin, robot, translations, quaternions, range(len(kin.moving_joints)), zero
    )
    assert kin.new_positions() is not positions


# -- forward kinematics -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_link_fk_matches_recursive_reference_for_every_joint_type(seed: int) -> None:
    robot = random_robot(seed, count=30)
    rng = np.random.default_rng(100 + seed)
    for _ in range(5):
        cfg = random_cfg(robot, rng)
        expected = reference_fk(robot, reference_values(robot, cfg))
        assert_poses_close(robot.link_fk(cfg), expected)


def test_link_fk_without_cfg_is_the_zero_configuration() -> None:
    robot = random_robot(7)
    assert_poses_close(robot.link_fk(), reference_fk(robot, reference_values(robot, {})))
    assert_poses_close(robot.link_fk({}), reference_fk(robot, reference_values(robot, {})))


@pytest.mark.parametrize("relative", FILE_ROBOTS)
def test_link_fk_matches_reference_on_test_robots(relative: str) -> None:
    robot = load(relative)
    rng = np.random.default_rng(5)
    for _ in range(3):
        cfg = random_cfg(robot, rng)
        expected = reference_fk(robot, reference_values(robot, cfg))
        assert_poses_close(robot.link_fk(cfg), expected)


def test_link_fk_takes_every_documented_multi_dof_shape() -> None:
    robot = random_robot(3, types=("floating", "ball", "planar", "revolute2", "universal"), count=5)
    rng = np.random.default_rng(0)
    floating, ball, planar = (robot.joints[f"joint_{k}"] for k in range(3))
    rotation = Rotation.random(random_state=rng)
    xyz, rpy = rng.uniform(-1, 1, 3), rotation.as_euler("xyz")  # fixed-axis roll, pitch, yaw
    expected_floating = np.concatenate([xyz, rotation.as_quat()])
    pose = homogeneous(rotation.as_matrix(), xyz)
    reference = reference_fk(
        robot,
        reference_values(
            robot,
            {
                floating.name: expected_floating,
                ball.name: rotation.as_quat(),
                planar.name: np.array([0.3, -0.2, 0.0]),
            },
        ),
    )
    for floating_value in (
        expected_floating,
        np.concatenate([xyz, rpy]),
        pose,
        np.concatenate([xyz, 3.0 * rotation.as_quat()]),
    ):
        for ball_value in (rotation.as_quat(), rpy, rotation.as_matrix()):
            cfg = {
                floating.name: floating_value,
                ball.name: ball_value,
                planar.name: np.array([0.3, -0.2]),
            }
            assert_poses_close(robot.link_fk(cfg), reference)
    # MoveIt variable names work in cfg too, and Joint objects as keys.
    by_variable = {
        f"{floating.name}/trans_x": xyz[0],
        f"{floating.name}/trans_y": xyz[1],
        f"{floating.name}/trans_z": xyz[2],
        planar: [0.3, -0.2],
    }
    by_variable |= dict(
        zip([f"{ball.name}/rot_{c}" for c in "xyzw"], rotation.as_quat(), strict=True)
    )
    by_variable |= dict(
        zip([f"{floating.name}/rot_{c}" for c in "xyzw"], rotation.as_quat(), strict=True)
    )
    assert_poses_close(robot.link_fk(by_variable), reference)


def test_link_fk_rejects_bad_cfg_by_message() -> None:
    robot = random_robot(4, types=("revolute", "floating", "ball"), count=3)
    with pytest.raises(ValueError, match="'nope', which is not a joint"):
        robot.link_fk({"nope": 1.0})
    with pytest.raises(ValueError, match="joint 'joint_0': non-finite value"):
        robot.link_fk({"joint_0": float("nan")})
    with pytest.raises(ValueError, match="joint 'joint_0': non-finite value"):
        robot.link_fk({"joint_0": np.array(np.inf)})
    with pytest.raises(ValueError, match="joint 'joint_1': quaternion of zero"):
        robot.link_fk({"joint_1": np.zeros(7)})
    with pytest.raises(
        ValueError,
        match="joint 'joint_2': a ball joint does not take values "
        r"of shape \(5,\)",
    ):
        robot.link_fk({"joint_2": np.zeros(5)})
    with pytest.raises(ValueError, match="joint 'joint_0': a revolute joint takes one value"):
        robot.link_fk({"joint_0": [1.0, 2.0]})
    with pytest.raises(ValueError, match="clamp must be one of"):
        robot.link_fk({"joint_0": 1.0}, clamp="firm")


@pytest.mark.parametrize("seed", range(3))
def test_float_cfg_fast_path_equals_reference_for_any_value_form(seed: int) -> None:
    """1-DOF robots with fixed joints and mimic chains: a cfg of numbers takes the cached
    matrix path; ints, numpy scalars, 0-d arrays, number strings, subsets of the joints, any
    key order and ignored mimic/fixed values give the reference poses."""
    robot = random_robot(seed, count=40, types=(*SCALAR, "fixed"), mimic_share=0.4)
    kin = robot.kinematics
    rng = np.random.default_rng(200 + seed)
    free = [j.name for j in robot.joints.values() if j.joint_type != "fixed" and j.mimic is None]
    ignored = [j.name for j in robot.joints.values() if j.joint_type == "fixed" or j.mimic]
    for trial in range(6):
        values = {name: float(rng.uniform(-2.5, 2.5)) for name in free}
        if trial == 1:
            values = {name: round(value) for name, value in values.items()}  # ints
        expected = reference_fk(robot, reference_values(robot, values))
        names = list(rng.permutation(free))
        forms: list[dict[str, Any]] = [
            {name: values[name] for name in names},
            {name: np.float64(values[name]) for name in free},
            {name: np.float32(values[name]) for name in free},
            {name: np.array(values[name]) for name in free},
            {**values, **{name: float("nan") for name in ignored}},
        ]
        for cfg in forms:
            atol = 1e-6 if isinstance(next(iter(cfg.values())), np.float32) else TOLERANCE
            for name, pose in robot.link_fk(cfg).items():
                np.testing.assert_allclose(pose, expected[name], atol=atol, rtol=0)
    subset = {name: 0.3 for name in free[::3]}
    assert_poses_close(robot.link_fk(subset), reference_fk(robot, reference_values(robot, subset)))
    as_text = {name: "0.3" for name in subset}
    assert_poses_close(robot.link_fk(as_text), robot.link_fk(subset))
    assert kin._cfg_plans  # the fast path was taken (and cached)


@pytest.mark.filterwarnings("error")
def test_float_cfg_fast_path_falls_back_for_errors_and_odd_values() -> None:
    """Non-finite leaders, overflowing mimic followers, a one-element list and a Joint key
    go the general path: same errors, same poses; more key tuples than the cache holds."""
    robot = chain_robot()
    reference = robot.link_fk({"j1": 0.4, "j2": 0.1})
    assert_poses_close(robot.link_fk({"j1": [0.4], "j2": 0.1}), reference)
    joint_keys: dict[Any, float] = {robot.joints["j1"]: 0.4, "j2": 0.1}
    assert_poses_close(robot.link_fk(joint_keys), reference)
    with pytest.raises(ValueError, match="joint 'j1': non-finite value"):
        robot.link_fk({"j1": float("inf"), "j2": 0.1})
    with pytest.raises(ValueError, match="joint 'm1': non-finite value"):
        robot.link_fk({"j1": 1.5e308})  # m1 = 2 j1 overflows
    with pytest.raises(ValueError, match="'nope', which is not a joint"):
        robot.link_fk({"j1": 0.4, "nope": 1.0})
    names = ["j1", "j2", "c1", "w1", "m1", "f1"]
    for k in range(150):  # many distinct key tuples: the cache is cleared and refilled
        keys = [names[(k + i) % len(names)] for i in range(1 + k % len(names))]
        cfg = dict.fromkeys(keys, 0.01 * k)
        expected = reference_fk(robot, reference_values(robot, cfg))
        assert_poses_close(robot.link_fk(cfg), expected)


@pytest.mark.parametrize("rows", [1, 5, 40, 1500])
@pytest.mark.parametrize("clamp", [None, "hard", "soft"])
def test_batch_fast_path_equals_single_fk(rows: int, clamp: str | None) -> None:
    """A batched cfg of 1-D arrays (or lists) of a 1-DOF robot with mimic chains takes the
    cached matrix path: every row equals single FK of that row, clamped or not."""
    robot = random_robot(7, count=40, types=(*SCALAR, "fixed"), mimic_share=0.4)
    rng = np.random.default_rng(7)
    free = [j.name for j in robot.joints.values() if j.joint_type != "fixed" and j.mimic is None]
    batch = {name: rng.uniform(-2.5, 2.5, rows) for name in free[::-1]}
    for cfgs in (batch, {name: column.tolist() for name, column in batch.items()}):
        poses = robot.link_fk_batch(cfgs, clamp=clamp)
        assert list(poses) == list(robot.links)
        for k in sorted(set(range(min(rows, 40))) | {rows // 2, rows - 1}):
            single = robot.link_fk({name: float(c[k]) for name, c in batch.items()}, clamp=clamp)
            for name in robot.links:
                assert poses[name].shape == (rows, 4, 4)
                np.testing.assert_allclose(poses[name][k], single[name], atol=TOLERANCE, rtol=0)
    assert robot.kinematics._batch_values_fast(batch) is not None


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_batch_fast_path_falls_back_for_errors() -> None:
    robot = chain_robot()
    with pytest.raises(ValueError, match="different batch sizes"):
        robot.link_fk_batch({"j1": np.zeros(3), "j2": np.zeros(2)})
    with pytest.raises(ValueError, match="leading batch axis"):
        robot.link_fk_batch({"j1": 0.3, "j2": 0.1})
    with pytest.raises(ValueError, match="joint 'j1': non-finite value"):
        robot.link_fk_batch({"j1": np.array([0.1, np.nan]), "j2": np.zeros(2)})
    with pytest.raises(ValueError, match="mimic value overflows"):
        robot.link_fk_batch({"j1": np.array([0.1, 1.5e308])})
    with pytest.raises(ValueError, match="clamp must be one of"):
        robot.link_fk_batch({"j1": np.zeros(2)}, clamp="firm")
    column = robot.link_fk_batch({"j1": np.array([[0.2], [0.3]])})  # (N, 1): general path
    rows = robot.link_fk_batch({"j1": np.array([0.2, 0.3])})
    for name in robot.links:
        np.testing.assert_allclose(column[name], rows[name], atol=TOLERANCE, rtol=0)


def test_link_fk_results_are_fresh_arrays() -> None:
    """A later call never changes the poses an earlier call returned."""
    robot = random_robot(5, count=30)
    rng = np.random.default_rng(5)
    first_cfg, second_cfg = random_cfg(robot, rng), random_cfg(robot, rng)
    first = robot.link_fk(first_cfg)
    kept = {name: pose.copy() for name, pose in first.items()}
    robot.link_fk(second_cfg)
    robot.link_fk_batch({name: np.stack([v, v]) for name, v in second_cfg.items()})
    assert_poses_close(first, kept)


def test_link_fk_batch_equals_repeated_single() -> None:
    robot = random_robot(11, count=30)
    rng = np.random.default_rng(11)
    cfgs = [random_cfg(robot, rng) for _ in range(7)]
    batch = {name: np.stack([cfg[name] for cfg in cfgs]) for name in cfgs[0]}
    poses = robot.link_fk_batch(batch)
    assert list(poses) == list(robot.links)
    for k, cfg in enumerate(cfgs):
        single = robot.link_fk(cfg)
        for name in robot.links:
            assert poses[name].shape == (7, 4, 4)
            np.testing.assert_allclose(poses[name][k], single[name], atol=TOLERANCE, rtol=0)
    # Absent joints sit at zero in every row; a batch of one works.
    one = robot.link_fk_batch({"joint_0": np.array([0.4])})
    single = robot.link_fk({"joint_0": 0.4})
    for name in robot.links:
        np.testing.assert_allclose(one[name][0], single[name], atol=TOLERANCE, rtol=0)


@pytest.mark.parametrize("rows", [1, 5, 33, 80, 2100])
def test_link_fk_batch_matches_reference_for_small_and_large_batches(rows: int) -> None:
    # Few configurations and many take different paths (all links at once, joint by joint);
    # 2100 spans two chunks of batched FK, the last one partial.
    robot = random_robot(13, count=30)
    rng = np.random.default_rng(rows)
    cfgs = [random_cfg(robot, rng) for _ in range(rows)]
    batch = robot.link_fk_batch({name: np.stack([c[name] for c in cfgs]) for name in cfgs[0]})
    for k in sorted({0, rows // 2, rows - 1}):
        expected = reference_fk(robot, reference_values(robot, cfgs[k]))
        for name, pose in expected.items():
            assert batch[name].shape == (rows, 4, 4)
            np.testing.assert_allclose(batch[name][k], pose, atol=TOLERANCE, rtol=0)


def test_link_fk_batch_rejects_inconsistent_batches() -> None:
    robot = random_robot(12, types=("revolute", "floating"), count=2)
    with pytest.raises(ValueError, match="different batch sizes"):
        robot.link_fk_batch({"joint_0": np.zeros(3), "joint_1": np.zeros((4, 7))})
    with pytest.raises(ValueError, match="leading batch axis"):
        robot.link_fk_batch({"joint_0": 1.0})


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), rows=st.integers(1, 6))
def test_batch_and_single_agree_with_reference_property(seed: int, rows: int) -> None:
    robot = random_robot(seed % 5, count=12)
    rng = np.random.default_rng(seed)
    cfgs = [random_cfg(robot, rng, scale=10.0) for _ in range(rows)]
    batch = robot.link_fk_batch({n: np.stack([c[n] for c in cfgs]) for n in cfgs[0]})
    for k, cfg in enumerate(cfgs):
        expected = reference_fk(robot, reference_values(robot, cfg))
        for name, pose in expected.items():
            np.testing.assert_allclose(batch[name][k], pose, atol=TOLERANCE, rtol=0)


# -- mimic ------------------------------------------------------------------------------------


def test_mimic_chain_follows_leader_and_ignores_given_values() -> None:
    robot = chain_robot()
    kin = robot.kinematics
    positions = kin.new_positions()
    update = kin.apply(positions, ["m1", "j1", "m3"], [9.0, 0.4, 9.0], clamp=None)
    assert update.ignored_mimic == ["m1", "m3"]
    expected = {"j1": 0.4, "m1": 0.8, "m2": -0.8 + 0.1, "m3": 0.5 * (-0.8 + 0.1)}
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    assert sorted(update.moved.tolist()) == sorted(index[n] for n in expected)
    assert update.moved.tolist() == sorted(update.moved.tolist())
    assert all(positions.received[index[n]] for n in expected)
    assert not positions.received[index["j2"]]
    translations, quaternions = kin.joint_transforms(positions, [index[n] for n in expected])
    assert_transforms_match(
        kin, robot, translations, quaternions, [index[n] for n in expected], expected
    )
    # link_fk ignores a value given for a mimic joint, too.
    fk = robot.link_fk({"j1": 0.4, "m2": 5.0})
    assert_poses_close(fk, reference_fk(robot, reference_values(robot, {"j1": 0.4})))


def test_mimic_followers_move_only_with_their_leader() -> None:
    robot = chain_robot()
    kin = robot.kinematics
    positions = kin.new_positions()
    kin.apply(positions, ["j1"], [0.2])
    update = kin.apply(positions, ["j2"], [0.1])
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    assert update.moved.tolist() == [index["j2"]]


@pytest.mark.parametrize("clamp", [None, "hard", "soft"])
def test_clamping_modes_clamp_leaders_then_followers_by_their_own_limits(clamp: str | None) -> None:
    robot = chain_robot()
    kin = robot.kinematics
    positions = kin.new_positions()
    update = kin.apply(positions, ["j1", "j2", "c1", "w1"], [2.0, -1.0, 7.0, 5.0], clamp=clamp)
    # Expected by hand from the limits written in chain_robot.
    j1 = {None: 2.0, "hard": 1.0, "soft": 0.5}[clamp]
    m1 = 2.0 * j1 if clamp is None else min(max(2.0 * j1, -1.5), 1.5)
    m2 = -m1 + 0.1 if clamp is None else min(max(-m1 + 0.1, -0.3), 2.0)
    j2 = -1.0 if clamp is None else 0.0
    values = {"j1": j1, "m1": m1, "m2": m2, "m3": 0.5 * m2, "j2": j2, "c1": 7.0, "w1": 5.0}
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    translations, quaternions = kin.joint_transforms(positions, np.arange(len(index)))
    assert_transforms_match(
        kin, robot, translations, quaternions, [index[j.name] for j in kin.moving_joints], values
    )
    expected_clamped = (
        set() if clamp is None else {"j1", "j2", "m2"} | ({"m1"} if clamp == "hard" else set())
    )
    assert set(update.clamped) == expected_clamped
    assert update.rejected == [] and update.unknown == []
    # link_fk and the public Robot.link_fk_batch apply the same rule.
    fk = robot.link_fk({"j1": 2.0, "j2": -1.0, "c1": 7.0, "w1": 5.0}, clamp=clamp)
    assert_poses_close(fk, reference_fk(robot, values))
    batch = robot.link_fk_batch(
        {
            "j1": np.array([2.0, 2.0]),
            "j2": np.array([-1.0, -1.0]),
            "c1": np.array([7.0, 7.0]),
            "w1": np.array([5.0, 5.0]),
        },
        clamp=clamp,
    )
    for name, pose in fk.items():
        np.testing.assert_allclose(batch[name][1], pose, atol=TOLERANCE, rtol=0)


TWO_AXIS_SDF = """<sdf version="1.7">
<model name="two_axis">
<link name="base"/>
<link name="u_link"/>
<link name="r_link"><pose>0 0 0.3 0 0 0</pose></link>
<link name="open_link"/>
<joint name="u" type="universal">
<parent>base</parent><child>u_link</child>
<axis><xyz>1 0 0</xyz><limit><lower>-0.5</lower><upper>0.5</upper></limit></axis>
<axis2><xyz>0 1 0</xyz><limit><lower>-1</lower><upper>0.25</upper></limit></axis2>
</joint>
<joint name="r2" type="revolute2">
<parent>u_link</parent><child>r_link</child>
<axis><xyz>0 0 1</xyz></axis>
<axis2><xyz>1 0 0</xyz><limit><lower>0.1</lower><upper>0.4</upper></limit></axis2>
</joint>
<joint name="open" type="revolute2">
<parent>base</parent><child>open_link</child>
<axis><xyz>0 0 1</xyz><limit><lower>-0.2</lower></limit></axis>
<axis2><xyz>0 1 0</xyz><limit><lower>1</lower><upper>-1</upper></limit></axis2>
</joint>
</model>
</sdf>"""

#: Values beyond every written bound of TWO_AXIS_SDF, and those values clamped by hand: u into
#: [-0.5, 0.5] x [-1, 0.25]; r2's first axis unlimited, second into [0.1, 0.4]; open's first
#: axis above -0.2, second unlimited (lower > upper). SDFormat has no soft limits: soft = hard.
TWO_AXIS_GIVEN = {"u": (0.9, 0.7), "r2": (5.0, -0.3), "open": (-3.0, 9.0)}
TWO_AXIS_CLAMPED = {"u": (0.5, 0.25), "r2": (5.0, 0.1), "open": (-0.2, 9.0)}


@pytest.mark.parametrize("clamp", [None, "hard", "soft"])
def test_two_axis_joints_clamp_each_axis_into_its_own_limits(clamp: str | None) -> None:
    robot = Robot.from_xml_string(TWO_AXIS_SDF)
    kin = robot.kinematics
    positions = kin.new_positions()
    names = [f"{joint}/axis{k + 1}" for joint in TWO_AXIS_GIVEN for k in range(2)]
    values = [value for pair in TWO_AXIS_GIVEN.values() for value in pair]
    update = kin.apply(positions, names, values, clamp=clamp)
    expected = TWO_AXIS_GIVEN if clamp is None else TWO_AXIS_CLAMPED
    stored = kin.variable_values(positions)
    assert {joint: (stored[f"{joint}/axis1"], stored[f"{joint}/axis2"]) for joint in expected} == (
        expected
    )
    assert set(update.clamped) == (set() if clamp is None else {"u", "r2", "open"})
    reference = reference_fk(robot, {name: np.array(pair) for name, pair in expected.items()})
    cfg = {name: np.array(pair) for name, pair in TWO_AXIS_GIVEN.items()}
    assert_poses_close(robot.link_fk(cfg, clamp=clamp), reference)
    batch = robot.link_fk_batch({name: np.stack([v, v, v]) for name, v in cfg.items()}, clamp)
    for name, pose in reference.items():
        np.testing.assert_allclose(batch[name][2], pose, atol=TOLERANCE, rtol=0, err_msg=name)


def test_a_second_axis_alone_out_of_range_is_clamped_and_reported() -> None:
    kin = Robot.from_xml_string(TWO_AXIS_SDF).kinematics
    positions = kin.new_positions()
    kin.apply(positions, ["u/axis1"], [0.3])
    update = kin.apply(positions, ["u/axis2", "r2/axis2"], [-4.0, 0.2], clamp="hard")
    assert update.clamped == ["u"]
    stored = kin.variable_values(positions)
    assert (stored["u/axis1"], stored["u/axis2"], stored["r2/axis2"]) == (0.3, -1.0, 0.2)


def test_clamping_in_range_reports_nothing_and_bad_mode_raises() -> None:
    kin = chain_robot().kinematics
    positions = kin.new_positions()
    update = kin.apply(positions, ["j1", "j2"], [0.0, 0.1], clamp="hard")
    assert update.clamped == []
    with pytest.raises(ValueError, match="clamp must be one of"):
        kin.apply(positions, ["j1"], [0.0], clamp="firm")


def test_random_robot_clamps_into_range_per_mode() -> None:
    robot = random_robot(21, count=30, mimic_share=0.5)
    kin = robot.kinematics
    rng = np.random.default_rng(21)
    cfg = random_cfg(robot, rng, scale=4.0)
    for clamp in (None, "hard", "soft"):
        positions = kin.new_positions()
        names, values = state_names_values(kin, cfg)
        kin.apply(positions, names, values, clamp=clamp)
        expected = reference_values(robot, cfg, clamp)
        translations, quaternions = kin.joint_transforms(
            positions, np.arange(len(kin.moving_joints))
        )
        assert_transforms_match(
            kin, robot, translations, quaternions, range(len(kin.moving_joints)), expected
        )
        assert_poses_close(robot.link_fk(cfg, clamp=clamp), reference_fk(robot, expected))


# -- JointState input -------------------------------------------------------------------------


def test_apply_by_names_gives_the_reference_transforms_for_every_type() -> None:
    robot = random_robot(31, count=30)
    kin = robot.kinematics
    rng = np.random.default_rng(31)
    positions = kin.new_positions()
    cfg = random_cfg(robot, rng)
    names, values = state_names_values(kin, cfg)
    update = kin.apply(positions, names, values, clamp=None)
    assert update.moved.tolist() == list(range(len(kin.moving_joints)))
    assert positions.received.all()
    expected = reference_values(robot, cfg)
    indices = rng.permutation(len(kin.moving_joints))[:9]
    translations, quaternions = kin.joint_transforms(positions, indices)
    assert translations.shape == (9, 3) and quaternions.shape == (9, 4)
    assert_transforms_match(kin, robot, translations, quaternions, indices, expected)


def test_apply_lists_unknown_and_fixed_names_and_rejects_length_mismatch() -> None:
    kin = chain_robot().kinematics
    positions = kin.new_positions()
    update = kin.apply(positions, ["ghost", "f1", "j2"], [1.0, 2.0, 0.1])
    assert update.unknown == ["ghost", "f1"]
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    assert update.moved.tolist() == [index["j2"]]
    with pytest.raises(ValueError, match="2 names but values of shape"):
        kin.apply(positions, ["j1", "j2"], [1.0])


def test_non_finite_values_are_rejected_and_keep_the_last_good_value() -> None:
    robot = chain_robot()
    kin = robot.kinematics
    positions = kin.new_positions()
    kin.apply(positions, ["j1", "c1"], [0.3, 1.0], clamp=None)
    before = positions.values.copy()
    update = kin.apply(positions, ["j1", "c1", "j2"], [float("nan"), float("inf"), 0.1], clamp=None)
    assert update.rejected == ["j1", "c1"]
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    assert update.moved.tolist() == [index["j2"]]
    unchanged = [index[n] for n in ("j1", "m1", "m2", "m3", "c1")]
    translations, quaternions = kin.joint_transforms(positions, unchanged)
    values = {"j1": 0.3, "m1": 0.6, "m2": -0.5, "m3": -0.25, "c1": 1.0}
    assert_transforms_match(kin, robot, translations, quaternions, unchanged, values)
    assert np.isfinite(positions.values).all()
    assert positions.values[index["j2"]] != before[index["j2"]]


def test_values_beyond_the_maximum_are_rejected_like_nan() -> None:
    kin = chain_robot().kinematics
    positions = kin.new_positions()
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    update = kin.apply(positions, ["j1", "c1"], [0.25, MAX_JOINT_VALUE], clamp=None)
    assert update.rejected == [] and positions.values[index["c1"]] == MAX_JOINT_VALUE
    update = kin.apply(positions, ["j1", "c1"], [1e308, -2 * MAX_JOINT_VALUE], clamp=None)
    assert update.rejected == ["j1", "c1"]
    assert positions.values[index["j1"]] == 0.25  # the last good value
    assert positions.values[index["m1"]] == 0.5  # its follower did not move either


def test_mimic_overflow_keeps_the_follower_finite() -> None:
    robot = chain_robot()
    robot.joints["m1"].mimic = Mimic("j1", 1e250, 0.0)
    kin = Kinematics(robot)
    positions = kin.new_positions()
    update = kin.apply(positions, ["j1"], [1e99], clamp=None)
    # m1 = 1e250 * j1 overflows: m1 keeps its last good value (0), so m2 and m3 stay finite.
    assert update.rejected == ["m1"]
    assert np.isfinite(positions.values).all()
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    assert positions.values[index["j1"]] == 1e99
    assert positions.values[index["m1"]] == 0.0


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
    translations, quaternions = kin.joint_transforms(positions, ids)
    assert_transforms_match(kin, robot, translations, quaternions, ids, expected)
    # A zero quaternion is rejected: the joint keeps its last good value.
    update = kin.apply(positions, [f"{ball.name}/rot_{c}" for c in "xyzw"], [0.0] * 4)
    assert update.rejected == [ball.name]
    assert update.moved.size == 0
    _, quaternion = kin.joint_transforms(positions, [index[ball.name]])
    assert_transforms_match(
        kin,
        robot,
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
    translations, quaternions = kin.joint_transforms(positions, ids)
    assert_transforms_match(kin, robot, translations, quaternions, ids, expected)
    with pytest.raises(ValueError, match="1 joint names but 2 translations"):
        kin.apply_multi_dof(positions, [ball.name], np.zeros((2, 3)), np.zeros((2, 4)))


def test_fixed_transforms_are_the_fixed_joints_poses() -> None:
    robot = random_robot(61, types=("fixed", "revolute"), count=12)
    kin = robot.kinematics
    translations, quaternions = kin.fixed_transforms()
    assert len(kin.fixed_joints) == translations.shape[0] == quaternions.shape[0] > 0
    for row, joint in enumerate(kin.fixed_joints):
        expected = joint.origin @ joint.child_offset
        np.testing.assert_allclose(translations[row], expected[:3, 3], atol=TOLERANCE)
        np.testing.assert_allclose(
            Rotation.from_quat(quaternions[row]).as_matrix(), expected[:3, :3], atol=TOLERANCE
        )


@settings(max_examples=30, deadline=None)
@given(
    values=st.lists(
        st.one_of(st.floats(-1e6, 1e6), st.just(float("nan")), st.just(float("inf"))),
        min_size=4,
        max_size=4,
    ),
    clamp=st.sampled_from([None, "hard", "soft"]),
)
def test_apply_keeps_every_value_finite_property(values: list[float], clamp: str | None) -> None:
    kin = chain_robot().kinematics
    positions = kin.new_positions()
    update = kin.apply(positions, ["j1", "j2", "c1", "w1"], values, clamp=clamp)
    assert np.isfinite(positions.values).all()
    bad = {n for n, v in zip(["j1", "j2", "c1", "w1"], values, strict=True) if not np.isfinite(v)}
    assert set(update.rejected) == bad
    translations, quaternions = kin.joint_transforms(positions, np.arange(7))
    assert np.isfinite(translations).all() and np.isfinite(quaternions).all()


# -- model errors -----------------------------------------------------------------------------


def test_mimic_cycle_unknown_leader_and_multi_dof_leader_raise_model_error() -> None:
    def robot_with(joints: list[Joint]) -> Robot:
        links = {"base": Link("base")} | {j.child: Link(j.child) for j in joints}
        return Robot("bad", links, {j.name: j for j in joints}, "base", source="bad.urdf")

    def joint(name: str, kind: str, parent: str, mimic: Mimic | None, line: int) -> Joint:
        return Joint(
            name=name, joint_type=kind, parent=parent, child=f"{name}_link", mimic=mimic, line=line
        )

    cycle = robot_with(
        [
            joint("a", "continuous", "base", Mimic("b"), 3),
            joint("b", "continuous", "a_link", Mimic("a"), 8),
        ]
    )
    with pytest.raises(
        ModelError,
        match=r"bad\.urdf:8: joint 'b': <mimic> joints form a "
        r"cycle: a -> b -> a",
    ):
        Kinematics(cycle)
    missing = robot_with([joint("a", "continuous", "base", Mimic("zz"), 5)])
    with pytest.raises(ModelError, match=r"bad\.urdf:5: joint 'a': <mimic> names joint 'zz'"):
        Kinematics(missing)
    floating = robot_with(
        [joint("f", "floating", "base", None, 2), joint("a", "continuous", "f_link", Mimic("f"), 7)]
    )
    with pytest.raises(
        ModelError,
        match=r"bad\.urdf:7: joint 'a': <mimic> leader 'f' is a "
        "floating joint",
    ):
        Kinematics(floating)
    follower = robot_with(
        [joint("c", "continuous", "base", None, 2), joint("p", "planar", "c_link", Mimic("c"), 9)]
    )
    with pytest.raises(ModelError, match=r"bad\.urdf:9: joint 'p': <mimic> on a planar joint"):
        Kinematics(follower)


def test_broken_trees_raise_model_error_with_line() -> None:
    def robot_with(links: list[str], joints: list[Joint]) -> Robot:
        return Robot(
            "bad",
            {n: Link(n) for n in links},
            {j.name: j for j in joints},
            "base",
            source="tree.urdf",
        )

    loop = robot_with(
        ["base", "a", "b"],
        [
            Joint(name="ab", joint_type="fixed", parent="a", child="b", line=4),
            Joint(name="ba", joint_type="fixed", parent="b", child="a", line=6),
        ],
    )
    with pytest.raises(ModelError, match=r"tree\.urdf:4: joint 'ab': not connected to the root"):
        Kinematics(loop)
    missing = robot_with(
        ["base"], [Joint(name="j", joint_type="fixed", parent="base", child="nowhere", line=12)]
    )
    with pytest.raises(ModelError, match=r"tree\.urdf:12: joint 'j': link 'nowhere' does not"):
        Kinematics(missing)
    two_parents = robot_with(
        ["base", "a"],
        [
            Joint(name="j1", joint_type="fixed", parent="base", child="a", line=3),
            Joint(name="j2", joint_type="fixed", parent="base", child="a", line=9),
        ],
    )
    with pytest.raises(
        ModelError,
        match=r"tree\.urdf:9: joint 'j2': link 'a' already has "
        "parent joint 'j1'",
    ):
        Kinematics(two_parents)


def test_update_is_a_plain_report() -> None:
    update = Update(moved=np.array([1, 2], dtype=np.intp))
    assert update.clamped == update.rejected == update.unknown == update.ignored_mimic == []


@pytest.mark.parametrize("value", [1e308, -1.7e308, math.inf, math.nan, 5e-324])
def test_apply_with_extreme_values_raises_no_numpy_warning(value: float) -> None:
    # numpy warnings would reach the node's stderr as bare Python warnings.
    robot = load("test/urdf/all_joint_types.urdf")
    kin = robot.kinematics
    positions = kin.new_positions()
    names = list(kin.variable_names)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for clamp in (None, "hard", "soft"):
            kin.apply(positions, names, [value] * len(names), clamp=clamp)
        translations, quaternions = kin.joint_transforms(
            positions, np.arange(len(kin.moving_joints))
        )
    assert np.isfinite(translations).all() and np.isfinite(quaternions).all()


def test_variable_values_name_every_variable_with_mimic_followers_resolved() -> None:
    kin = chain_robot().kinematics
    positions = kin.new_positions()
    kin.apply(positions, ["j1", "c1"], [0.25, -2.0], clamp=None)
    values = kin.variable_values(positions)
    assert set(values) == {name for j in kin.moving_joints for name in j.variable_names}
    # chain_robot: m1 = 2 j1, m2 = -m1 + 0.1, m3 = 0.5 m2 (its docstring).
    assert values["j1"] == 0.25 and values["c1"] == -2.0
    assert values["m1"] == pytest.approx(0.5)
    assert values["m2"] == pytest.approx(-0.4)
    assert values["m3"] == pytest.approx(-0.2)


@pytest.mark.parametrize("seed", range(6))
def test_joint_transforms_of_multi_dof_joints_equal_child_pose(seed: int) -> None:
    """The composed closed form of planar, floating and ball joints (and the other paths)
    equals ``Joint.child_pose`` at the stored values, also for stored quaternions that are
    not unit (written by hand), large translations and any order of indices."""
    robot = random_robot(
        seed, count=14, types=("floating", "ball", "planar", "revolute", "universal", "prismatic")
    )
    kin = robot.kinematics
    rng = np.random.default_rng(seed)
    positions = kin.new_positions()
    for _ in range(5):
        positions.values[:] = rng.uniform(-4.0, 4.0, positions.values.size)
        for index, joint in enumerate(kin.moving_joints):
            start = int(kin._slot[index])
            if joint.joint_type == "floating":
                positions.values[start : start + 3] *= 10.0 ** rng.uniform(-3, 30)
            if joint.joint_type in ("floating", "ball"):
                first = start + (3 if joint.joint_type == "floating" else 0)
                positions.values[first : first + 4] *= 10.0 ** rng.uniform(-5, 5)
        indices = rng.integers(0, len(kin.moving_joints), 20)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            translations, quaternions = kin.joint_transforms(positions, indices)
        for row, index in enumerate(indices):
            joint = kin.moving_joints[index]
            start = int(kin._slot[index])
            expected = joint.child_pose(positions.values[start : start + int(kin._size[index])])
            scale = max(1.0, float(np.max(np.abs(expected[:3, 3]))))
            np.testing.assert_allclose(
                translations[row], expected[:3, 3], atol=1e-12 * scale, rtol=0
            )
            rotation = Rotation.from_quat(quaternions[row]).as_matrix()
            np.testing.assert_allclose(rotation, expected[:3, :3], atol=1e-12, rtol=0)
            assert abs(np.linalg.norm(quaternions[row]) - 1.0) < 1e-12
            if joint.joint_type in ("floating", "ball", "planar"):
                assert quaternions[row][3] >= 0.0


def test_apply_normalises_every_quaternion_and_rejects_zero_ones_together() -> None:
    """apply normalises all written quaternions at once: huge, tiny and partly written ones;
    a zero quaternion rejects its joint, which keeps all its previous values."""
    robot = random_robot(5, count=6, types=("floating", "ball"), mimic_share=0.0)
    kin = robot.kinematics
    positions = kin.new_positions()
    rng = np.random.default_rng(5)
    cfg = random_cfg(robot, rng)
    names, values = state_names_values(kin, cfg)
    kin.apply(positions, names, values, clamp=None)
    before = kin.variable_values(positions)
    joints: dict[str, list[Joint]] = {"floating": [], "ball": []}
    for joint in kin.moving_joints:
        joints[joint.joint_type].append(joint)
    zero_floating, huge_floating = joints["floating"][:2]
    zero_ball, tiny_ball, partial_ball = joints["ball"][:3]
    message = {
        **dict(zip(zero_floating.variable_names, [5.0, 6.0, 7.0, 0.0, 0.0, 0.0, 0.0], strict=True)),
        **dict(
            zip(huge_floating.variable_names, [1.0, 2.0, 3.0, 1e100, 0.0, -1e100, 0.0], strict=True)
        ),
        **dict(zip(zero_ball.variable_names, [0.0] * 4, strict=True)),
        **dict(zip(tiny_ball.variable_names, [1e-300, 0.0, 0.0, 1e-300], strict=True)),
        partial_ball.variable_names[3]: 1e9,  # the other components stay as stored
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        update = kin.apply(positions, list(message), list(message.values()), clamp="hard")
    assert update.rejected == sorted([zero_floating.name, zero_ball.name])
    moved = {kin.moving_joints[i].name for i in update.moved}
    assert moved == {huge_floating.name, tiny_ball.name, partial_ball.name}
    after = kin.variable_values(positions)
    for joint in (zero_floating, zero_ball):
        assert [after[n] for n in joint.variable_names] == [before[n] for n in joint.variable_names]
    half = math.sqrt(0.5)
    expected = {
        huge_floating: [1.0, 2.0, 3.0, half, 0.0, -half, 0.0],
        tiny_ball: [half, 0.0, 0.0, half],
    }
    for joint, stored in expected.items():
        np.testing.assert_allclose(
            [after[n] for n in joint.variable_names], stored, atol=1e-15, rtol=0
        )
    quaternion = np.array([before[n] for n in partial_ball.variable_names[:3]] + [1e9])
    np.testing.assert_allclose(
        [after[n] for n in partial_ball.variable_names],
        quaternion / np.linalg.norm(quaternion),
        atol=1e-15,
        rtol=0,
    )


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
