"""The joint-type table and everything derived from it, type by type.

Each entry of ``model.joint_types.JOINT_TYPES`` must give, for random values and axes, the
motion of the independent reference; its quaternion terms must give that motion's rotation;
and the representations the kinematics derives from it (single FK, batched FK on each of its
paths, per-joint transforms, JointState input) must agree with the reference. The last test
adds a joint type as one table entry (and one motion form) and checks that everything works.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from kinematics_reference import (
    ALL_TYPES,
    CLAMPED,
    QUATERNION,
    SCALAR,
    TOLERANCE,
    TWO_AXIS,
    all_transforms,
    assert_transforms_match,
    random_pose,
    random_value,
    reference_fk,
    reference_motion,
    unit,
)
from scipy.spatial.transform import Rotation

from joint_tf_publisher import Joint, Limit, Link, Robot
from joint_tf_publisher.model import joint_types
from joint_tf_publisher.model import motion_forms as forms
from joint_tf_publisher.model.joint_types import JOINT_TYPES, JointType

MOVING = [kind for kind in ALL_TYPES if kind != "fixed"]


def variables_of(kind: str, value: Any) -> np.ndarray:
    """The table's values (size,) of a reference value (reference_motion's form)."""
    return np.atleast_1d(np.asarray(value, dtype=np.float64)) if value is not None else np.zeros(0)


def joint_of(kind: str, rng: np.random.Generator, **fields: Any) -> Joint:
    return Joint(
        name="j",
        joint_type=kind,
        parent="p",
        child="c",
        axis=unit(rng),
        axis2=unit(rng),
        screw_pitch=float(rng.uniform(-0.3, 0.3)),
        **fields,
    )


def test_the_table_lists_every_type_with_consistent_sizes() -> None:
    assert tuple(JOINT_TYPES) == ALL_TYPES == tuple(Joint.TYPES)
    for name, kind in JOINT_TYPES.items():
        size = kind.form.size
        assert kind.name == name
        assert len(kind.variables) == len(kind.identity) == len(kind.limits) == size, name
        assert len(kind.form.pose_in_transform) == kind.form.pose_feature_count, name
        assert (kind.quaternion_at is not None) == (name in QUATERNION), name
        assert (kind.limits[:1] == ("limit",)) == (name in CLAMPED), name
        assert ("limit2" in kind.limits) == (name in TWO_AXIS), name
    assert joint_types.SINGLE_VALUE_TYPES == frozenset(SCALAR)
    assert joint_types.TWO_AXIS_TYPES == frozenset(TWO_AXIS)


@pytest.mark.parametrize("kind", ALL_TYPES)
def test_identity_values_are_the_identity_motion(kind: str) -> None:
    entry = JOINT_TYPES[kind]
    joint = joint_of(kind, np.random.default_rng(0))
    motion = entry.motion(joint, np.array([entry.identity]).reshape(1, -1))
    np.testing.assert_allclose(motion[0], np.eye(4), atol=1e-15)


@pytest.mark.parametrize("kind", MOVING)
def test_every_entry_gives_the_reference_motion_and_its_quaternion(kind: str) -> None:
    entry = JOINT_TYPES[kind]
    rng = np.random.default_rng(len(kind))
    for _ in range(20):
        joint = joint_of(kind, rng)
        value = random_value(kind, rng, scale=7.0)
        values = variables_of(kind, value)[None]
        expected = reference_motion(joint, value)
        np.testing.assert_allclose(entry.motion(joint, values)[0], expected, atol=1e-12)
        np.testing.assert_allclose(joint.motion(value), expected, atol=1e-12)
        # The transform features hold the pose features ...
        pose = entry.form.pose_features(values.T, 1)
        transform = entry.form.transform_features(values.T, 1)
        np.testing.assert_allclose(transform[:, list(entry.form.pose_in_transform)], pose)
        # ... and the quaternion terms give the motion's rotation.
        quaternion = transform[0] @ entry.quaternion_terms(joint)
        assert abs(np.linalg.norm(quaternion) - 1.0) < 1e-12
        rotation = Rotation.from_quat(quaternion).as_matrix()
        np.testing.assert_allclose(rotation, expected[:3, :3], atol=1e-12)


def chain_of(kind: str, seed: int, count: int = 4) -> Robot:
    """``count`` joints of ``kind`` in a chain with a fixed joint and a side branch: random
    origins, axes and child offsets; limits on every axis."""
    rng = np.random.default_rng(seed)
    joints = []
    parents = ["root"]
    for k in range(count):
        joints.append(
            Joint(
                name=f"j{k}",
                joint_type=kind,
                parent=parents[-1] if k != 2 else parents[0],
                child=f"l{k}",
                axis=unit(rng),
                axis2=unit(rng),
                origin=random_pose(rng),
                child_offset=random_pose(rng),
                screw_pitch=float(rng.uniform(-0.2, 0.2)),
                limit=Limit(1.0, 1.0, -1.0, 1.5),
                limit2=Limit(1.0, 1.0, -0.5, 2.0),
            )
        )
        parents.append(f"l{k}")
    joints.append(Joint(name="tool", joint_type="fixed", parent="l1", child="tip"))
    links = {name: Link(name) for name in [*parents, "tip"]}
    return Robot(f"chain_{kind}", links, {j.name: j for j in joints}, "root")


@pytest.mark.parametrize("kind", MOVING)
def test_every_entry_derived_fk_transforms_and_state_agree_with_the_reference(kind: str) -> None:
    robot = chain_of(kind, seed=len(kind))
    kin = robot.kinematics
    rng = np.random.default_rng(1)
    for rows in (1, 7, 300):  # single FK, pointer jumping on a few, joint by joint on many
        cfgs = [{j: random_value(kind, rng) for j in ("j0", "j1", "j2", "j3")} for _ in range(rows)]
        batch = robot.link_fk_batch({j: np.stack([c[j] for c in cfgs]) for j in cfgs[0]})
        for k in sorted({0, rows // 2, rows - 1}):
            expected = reference_fk(robot, cfgs[k])
            for link, pose in expected.items():
                np.testing.assert_allclose(batch[link][k], pose, atol=TOLERANCE, err_msg=link)
        single = robot.link_fk(cfgs[0])
        for link, pose in reference_fk(robot, cfgs[0]).items():
            np.testing.assert_allclose(single[link], pose, atol=TOLERANCE, err_msg=link)
    # JointState by variable names, no clamping: the published transforms.
    positions = kin.new_positions()
    names = [n for j in kin.moving_joints for n in j.variable_names]
    values = [float(v) for j in kin.moving_joints for v in np.atleast_1d(cfgs[0][j.name])]
    kin.apply(positions, names, values, clamp=None)
    translations, quaternions = all_transforms(kin, positions)
    assert_transforms_match(kin, translations, quaternions, range(4), cfgs[0])


# -- a new joint type is one entry ------------------------------------------------------------


def _fill_cylinder_pose(variables: Any, out: np.ndarray) -> None:
    """[1, cos q, sin q, d]: a rotation by q about the axis, a translation d along it (feature
    0, the constant 1, is set by the caller)."""
    np.cos(variables[0], out=out[:, 1])
    np.sin(variables[0], out=out[:, 2])
    out[:, 3] = variables[1]


def _fill_cylinder_transform(variables: Any, out: np.ndarray) -> None:
    """The pose features, then [cos q/2, sin q/2]."""
    out[:, 0] = 1.0
    _fill_cylinder_pose(variables, out[:, :4])
    np.cos(variables[0] * 0.5, out=out[:, 4])
    np.sin(variables[0] * 0.5, out=out[:, 5])


CYLINDER = forms.MotionForm(
    "cylinder", 2, 4, 6, (0, 1, 2, 3), _fill_cylinder_pose, _fill_cylinder_transform
)


def _cylinder_terms(joint: Any) -> np.ndarray:
    terms = np.zeros((4, 4, 4))
    terms[:3] = forms.rotation_terms(joint.axis)
    terms[3] = forms.translation_term(joint.axis)
    return terms


def _cylinder_quaternion_terms(joint: Any) -> np.ndarray:
    terms = np.zeros((6, 4))
    terms[4, 3] = 1.0
    terms[5, :3] = joint.axis
    return terms


def _cylinder_values(name: str, array: np.ndarray) -> np.ndarray:
    if array.shape[1:] != (2,):
        raise joint_types.cfg_error(name, JOINT_TYPES["cylindrical"], array.shape[1:])
    return array


CYLINDRICAL = JointType(
    name="cylindrical",
    form=CYLINDER,
    variables=("rotation", "translation"),
    identity=(0.0, 0.0),
    dofs=2,
    limits=("limit", None),
    cfg_shapes=((2,),),
    values_from_cfg=_cylinder_values,
    motion_terms=_cylinder_terms,
    quaternion_terms=_cylinder_quaternion_terms,
    bare_name=joint_types.BareName((0,)),
)


def test_a_new_joint_type_is_one_table_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(JOINT_TYPES, "cylindrical", CYLINDRICAL)
    monkeypatch.setattr(Joint, "TYPES", [*Joint.TYPES, "cylindrical"])
    robot = chain_of("cylindrical", seed=3)
    kin = robot.kinematics
    joint = robot.joints["j0"]
    assert joint.variable_names == ["j0/rotation", "j0/translation"]
    assert joint.variable_limits("hard") == [(-1.0, 1.5), None]

    def reference_local(joint: Joint, value: np.ndarray) -> np.ndarray:
        motion = np.eye(4)
        motion[:3, :3] = Rotation.from_rotvec(joint.axis * value[0]).as_matrix()
        motion[:3, 3] = joint.axis * value[1]
        return joint.origin @ motion @ joint.child_offset

    def expected_poses(cfg: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        parent_of = {j.child: j for j in robot.joints.values()}
        poses: dict[str, np.ndarray] = {"root": np.eye(4)}
        for link in robot.links:  # links are listed parents first
            if link != "root":
                above = parent_of[link]
                local = (
                    above.child_pose()
                    if above.name not in cfg
                    else reference_local(above, cfg[above.name])
                )
                poses[link] = poses[above.parent] @ local
        return poses

    rng = np.random.default_rng(3)
    cfgs = [{f"j{k}": rng.uniform(-2, 2, 2) for k in range(4)} for _ in range(300)]
    single = robot.link_fk(cfgs[0])
    batch = robot.link_fk_batch({j: np.stack([c[j] for c in cfgs]) for j in cfgs[0]})
    for k in (0, 299):
        for link, pose in expected_poses(cfgs[k]).items():
            np.testing.assert_allclose(batch[link][k], pose, atol=TOLERANCE, err_msg=link)
    for link, pose in expected_poses(cfgs[0]).items():
        np.testing.assert_allclose(single[link], pose, atol=TOLERANCE, err_msg=link)
    # JointState input by name, the first value clamped to <limit>, bare names (Gazebo).
    positions = kin.new_positions()
    update = kin.apply(positions, ["j0/rotation", "j0/translation", "j1"], [2.0, 3.0, 0.5])
    assert update.clamped == ["j0"] and update.first_value_only == ["j1"]
    stored = kin.variable_values(positions)
    assert (stored["j0/rotation"], stored["j0/translation"], stored["j1/rotation"]) == (
        1.5,
        3.0,
        0.5,
    )
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    translations, quaternions = kin.transforms.transforms(positions.values, [index["j0"]])
    expected = reference_local(joint, np.array([1.5, 3.0]))
    np.testing.assert_allclose(translations[0], expected[:3, 3], atol=TOLERANCE)
    rotation = Rotation.from_quat(quaternions[0]).as_matrix()
    np.testing.assert_allclose(rotation, expected[:3, :3], atol=TOLERANCE)


@pytest.mark.parametrize(
    "form", [forms.SCREW, forms.TWO_AXIS, forms.PLANAR, forms.FLOATING, forms.BALL]
)
def test_features_picked_by_index_are_the_filled_features(form: forms.MotionForm) -> None:
    rng = np.random.default_rng(5)
    rows = 11
    variables = rng.uniform(-3.0, 3.0, (form.size, rows))
    everything = form.transform_features(variables, rows)
    indices = list(range(form.transform_feature_count))
    for picked in (indices, indices[::-1], indices[1::2]):
        features = form.transform_features_at(variables, rows, picked)
        np.testing.assert_allclose(np.array(features), everything[:, picked].T, atol=1e-15)
