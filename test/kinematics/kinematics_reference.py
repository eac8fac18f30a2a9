"""Shared by the kinematics tests: an independent reference, test robots, pose comparisons.

Every expected pose is computed here, independently of the package: a recursive per-link
product of joint transforms built from scipy's Rotation and explicit formulas
(T_parent_child(q) = origin @ motion(q) @ child_offset). The joint-type lists are written
here too, not read from the package's table, so that the tests check the table.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from repo_paths import TEST_DIR
from scipy.spatial.transform import Rotation

from joint_tf_publisher import Joint, Limit, Link, Robot, SafetyController
from joint_tf_publisher.kinematics import Kinematics
from joint_tf_publisher.model import Mimic

Array = NDArray[np.float64]
TOLERANCE = 1e-9
ALL_TYPES = (
    "fixed",
    "prismatic",
    "revolute",
    "continuous",
    "floating",
    "planar",
    "screw",
    "gearbox",
    "revolute2",
    "universal",
    "ball",
)
#: One value each: they can lead or follow a mimic.
SCALAR = ("revolute", "continuous", "prismatic", "screw", "gearbox")
TWO_AXIS = ("revolute2", "universal")
#: Types whose values include a unit quaternion.
QUATERNION = ("floating", "ball")
#: Types whose first value (both, for two axes) ``<limit>`` clamps.
CLAMPED = ("revolute", "prismatic", "screw", "gearbox", *TWO_AXIS)

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
    """A robot description of the repository, by path from its root."""
    return Robot.load(TEST_DIR.parent / relative)


# -- independent reference ---------------------------------------------------------------------


def homogeneous(rotation: Any = None, translation: Any = None) -> Array:
    pose = np.eye(4)
    if rotation is not None:
        pose[:3, :3] = rotation
    if translation is not None:
        pose[:3, 3] = translation
    return pose


def rotvec(axis: Any, angle: float) -> Array:
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


def identity_value(kind: str) -> Any:
    """A joint's value at zero configuration, in reference_motion's form."""
    return {
        "planar": np.zeros(3),
        "floating": np.array([0, 0, 0, 0, 0, 0, 1.0]),
        "ball": np.array([0, 0, 0, 1.0]),
        "revolute2": np.zeros(2),
        "universal": np.zeros(2),
    }.get(kind, 0.0)


def has_range(limit: Limit | None) -> bool:
    """A limit clamps where it has a written, ordered range."""
    return limit is not None and limit.has_position_range and limit.lower <= limit.upper


def clamp_value(joint: Joint, value: float, clamp: str | None) -> float:
    """A one-value joint's (or a first axis's) value clamped by hand from its limits."""
    limit = joint.limit
    if clamp is None or joint.joint_type not in CLAMPED or not has_range(limit):
        return value
    assert limit is not None
    lower, upper = limit.lower, limit.upper
    if clamp == "soft" and joint.safety_controller is not None:
        sc = joint.safety_controller
        lower, upper = max(lower, sc.soft_lower_limit), min(upper, sc.soft_upper_limit)
    return min(max(value, lower), upper)


def reference_values(
    robot: Robot, given: dict[str, Any], clamp: str | None = None, measured: bool = False
) -> dict[str, Any]:
    """Every moving joint's value: given (or zero/identity), clamped, mimic followed.

    A mimic follower is multiplier * leader + offset from its leader's final value, never
    clamped to its own limits. With ``measured`` (JointState semantics) a follower given a
    value takes it, clamped like any given value; without (cfg semantics) that value is
    ignored.
    """

    def clamp_two_axes(joint: Joint, value: Any) -> Array:
        """Axis 1 as a 1-DOF joint; axis 2 into ``limit2`` in both modes (SDF has no soft)."""
        first, second = (float(v) for v in value)
        limit2 = joint.limit2
        if clamp is not None and limit2 is not None and has_range(limit2):
            second = min(max(second, limit2.lower), limit2.upper)
        return np.array([clamp_value(joint, first, clamp), second])

    def value_of(joint: Joint) -> Any:
        if joint.mimic is not None and not (measured and joint.name in given):
            leader = robot.joints[joint.mimic.joint]
            return joint.mimic.multiplier * value_of(leader) + joint.mimic.offset
        if joint.name in given:
            value = given[joint.name]
            if joint.joint_type in TWO_AXIS:
                return clamp_two_axes(joint, value)
            return clamp_value(joint, value, clamp) if joint.joint_type in SCALAR else value
        return identity_value(joint.joint_type)

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
    seed: int, count: int = 24, types: tuple[str, ...] = ALL_TYPES, mimic_share: float = 0.3
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


def random_value(kind: str, rng: np.random.Generator, scale: float = 2.5) -> Any:
    """A random value of a joint type in the variable form of reference_motion."""
    if kind in SCALAR:
        return float(rng.uniform(-scale, scale))
    if kind == "planar":
        return rng.uniform(-scale, scale, 3)
    if kind == "floating":
        return np.concatenate([rng.uniform(-1, 1, 3), Rotation.random(random_state=rng).as_quat()])
    if kind == "ball":
        return Rotation.random(random_state=rng).as_quat()
    if kind in TWO_AXIS:
        return rng.uniform(-scale, scale, 2)
    return None


def random_cfg(robot: Robot, rng: np.random.Generator, scale: float = 2.5) -> dict[str, Any]:
    """A value for every non-fixed joint in the variable form of reference_motion."""
    return {
        joint.name: random_value(joint.joint_type, rng, scale)
        for joint in robot.joints.values()
        if joint.joint_type != "fixed"
    }


def in_range_cfg(robot: Robot, clamp: str | None, rng: np.random.Generator) -> dict[str, float]:
    """A value for every non-fixed, non-mimic one-value joint, inside its ``clamp`` range
    ("hard" for None; [-3, 3] without one): a message with nothing to clamp."""
    cfg = {}
    for joint in robot.joints.values():
        if joint.joint_type == "fixed" or joint.mimic is not None:
            continue
        limits = joint.variable_limits(clamp or "hard")[0]
        low, high = limits if limits is not None else (-3.0, 3.0)
        cfg[joint.name] = float(rng.uniform(low, high))
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


#: A PR2-style parallel gripper: the leader ``l_gripper_joint`` and the follower
#: ``r_gripper_joint`` = -1 * leader both have limits [0, 0.548], so the follower's implied
#: range [-0.548, 0] leaves its own limits (real PR2 descriptions are written this way).
GRIPPER_URDF = """<robot name="gripper">
  <link name="palm"/><link name="l_finger"/><link name="r_finger"/>
  <joint name="l_gripper_joint" type="revolute">
    <parent link="palm"/><child link="l_finger"/><origin xyz="0.07 0.01 0"/>
    <axis xyz="0 0 1"/><limit lower="0" upper="0.548" effort="1000" velocity="0.5"/>
  </joint>
  <joint name="r_gripper_joint" type="revolute">
    <parent link="palm"/><child link="r_finger"/><origin xyz="0.07 -0.01 0"/>
    <axis xyz="0 0 1"/><limit lower="0" upper="0.548" effort="1000" velocity="0.5"/>
    <mimic joint="l_gripper_joint" multiplier="-1" offset="0"/>
  </joint>
</robot>"""


# -- comparisons ----------------------------------------------------------------------------


def assert_poses_close(actual: dict[str, Array], expected: dict[str, Array]) -> None:
    """Same links in the same order, each pose within TOLERANCE."""
    assert list(actual) == list(expected)
    for name, pose in expected.items():
        np.testing.assert_allclose(actual[name], pose, atol=TOLERANCE, rtol=0, err_msg=name)


def assert_transforms_match(
    kin: Kinematics,
    translations: Array,
    quaternions: Array,
    indices: Any,
    values: dict[str, Any],
) -> None:
    """Row k of the transforms is moving joint indices[k]'s reference transform at its value
    in ``values``; quaternions are unit."""
    for row, index in enumerate(indices):
        joint = kin.moving_joints[index]
        expected = reference_local(joint, values[joint.name])
        np.testing.assert_allclose(translations[row], expected[:3, 3], atol=TOLERANCE, rtol=0)
        rotation = Rotation.from_quat(quaternions[row]).as_matrix()
        np.testing.assert_allclose(rotation, expected[:3, :3], atol=TOLERANCE, rtol=0)
        assert abs(np.linalg.norm(quaternions[row]) - 1.0) < TOLERANCE


def all_transforms(kin: Kinematics, positions: Any) -> tuple[Array, Array]:
    """Translations and quaternions of every moving joint, in ``moving_joints`` order."""
    return kin.transforms.transforms(positions.values, np.arange(len(kin.moving_joints)))


def moving_index(kin: Kinematics) -> dict[str, int]:
    """Moving joint name -> its index in ``moving_joints``."""
    return {joint.name: i for i, joint in enumerate(kin.moving_joints)}


def state_names_values(kin: Kinematics, cfg: dict[str, Any]) -> tuple[list[str], list[float]]:
    """A JointState (MoveIt variable names for multi-DOF joints) for cfg, mimic joints left out."""
    names: list[str] = []
    values: list[float] = []
    for joint in kin.moving_joints:
        if joint.mimic is None and joint.name in cfg:
            names += joint.variable_names
            values += list(np.atleast_1d(cfg[joint.name]).astype(float))
    return names, values
