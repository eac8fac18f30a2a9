"""zeros: ``zeros.<joint>`` values checked against real models, and the pipeline using them.

No rclpy: the models are the test URDFs read by the package's parser, the poses checked
against the model's own ``Joint.child_pose``. That the node declares the parameters and
rejects a bad one is in test_node.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from repo_paths import TEST_DIR
from test_pipeline import ARM_URDF, PLANAR_URDF, T0, Rig, assert_pose, poses

from joint_tf_publisher import Robot
from joint_tf_publisher.model import ClampMode
from joint_tf_publisher.node_core.parameters import ParameterRejected, Settings
from joint_tf_publisher.node_core.zeros import declared_zeros, start_positions

ALL_TYPES_URDF = TEST_DIR / "urdf" / "all_joint_types.urdf"


@pytest.mark.parametrize(
    ("path", "joint", "values", "reason"),
    [
        (ARM_URDF, "nowhere", (0.0,), r"zeros.nowhere: the robot has no joint 'nowhere'"),
        (ARM_URDF, "end_effector", (0.0,), r"zeros.end_effector: joint 'end_effector' is fixed"),
        (
            ARM_URDF,
            "right_knuckle_joint",
            (0.1,),
            r"zeros.right_knuckle_joint: joint 'right_knuckle_joint' follows 'finger_joint' "
            r"\(mimic\): give zeros.finger_joint instead",
        ),
        (
            ARM_URDF,
            "finger_joint",
            (0.9,),
            r"zeros.finger_joint = \[0.9\] is outside the joint's limits \[\[0.0, 0.8\]\]",
        ),
        (ARM_URDF, "joint_3", (float("nan"),), r"zeros.joint_3 must be finite"),
        (
            PLANAR_URDF,
            "base_planar_joint",
            (1.0,),
            r"zeros.base_planar_joint must give 3 value\(s\) \(base_planar_joint/x, "
            r"base_planar_joint/y, base_planar_joint/theta\), got 1",
        ),
        (ALL_TYPES_URDF, "float_joint", (0.0,) * 7, r"zeros.float_joint must be finite .*"),
    ],
)
def test_a_zero_the_model_refuses_names_its_parameter(
    path: Any, joint: str, values: tuple[float, ...], reason: str
) -> None:
    kin = Robot.load(path).kinematics
    with pytest.raises(ParameterRejected, match=reason):
        start_positions(kin, [(joint, values)], ClampMode.HARD)


def test_every_joint_taking_a_zero_is_declared_at_zero_clamped_into_its_limits() -> None:
    kin = Robot.load(ALL_TYPES_URDF).kinematics
    zeros = declared_zeros(kin)
    assert "follower_joint" not in zeros  # a mimic follower: its leader's value decides
    assert zeros["float_joint"] == [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    assert zeros["plane_joint"] == [0.0, 0.0, 0.0]
    slide = kin.robot.joints["slide_joint"].hard_limits()
    assert zeros["slide_joint"] == float(np.clip(0.0, *slide))
    # The declared values are accepted as given.
    given = [(name, tuple(np.atleast_1d(value).tolist())) for name, value in zeros.items()]
    start_positions(kin, given, ClampMode.HARD)


def test_a_caster_set_by_zeros_is_published_there_until_it_is_received() -> None:
    rig = Rig(PLANAR_URDF, zeros=(("caster_swivel_joint", (0.3,)),))
    publication = rig.pipeline.default_positions()
    assert publication is not None
    assert_pose(publication, rig.robot, "caster_swivel_joint", 0.3)
    assert_pose(publication, rig.robot, "left_wheel_joint", 0.0)
    received = rig.send(["caster_swivel_joint"], [-1.0])
    assert received is not None
    assert_pose(received, rig.robot, "caster_swivel_joint", -1.0)
    later = rig.pipeline.default_positions()
    assert later is not None
    child = rig.robot.joints["caster_swivel_joint"].child
    assert child not in {frame for _, frame in later.layout.frames}


def test_a_mimic_leader_starts_from_its_zero() -> None:
    """finger_joint at 0.5 from zeros: its followers (multiplier -1) start at -0.5, in the
    default positions and when a message moves the leader's follower chain only."""
    rig = Rig(ARM_URDF, zeros=(("finger_joint", (0.5,)),))
    publication = rig.pipeline.default_positions()
    assert publication is not None
    assert_pose(publication, rig.robot, "finger_joint", 0.5)
    assert_pose(publication, rig.robot, "right_knuckle_joint", -0.5)
    assert_pose(publication, rig.robot, "right_inner_finger_joint", -0.5)
    # right_knuckle_joint given alone: its own follower follows it, the leader keeps 0.5.
    moved = rig.send(["right_knuckle_joint"], [-0.2])
    assert moved is not None
    assert_pose(moved, rig.robot, "right_inner_finger_joint", -0.2)
    assert rig.pipeline.model is not None
    finger = rig.robot.kinematics.variable_values(rig.pipeline.model.positions)["finger_joint"]
    assert finger == pytest.approx(0.5)


def test_a_zeros_change_moves_the_joints_not_received_only() -> None:
    rig = Rig(ARM_URDF)
    rig.send(["joint_1"], [0.25])
    rig.pipeline.configure(
        Settings.from_values({"zeros.joint_1": 1.0, "zeros.joint_2": 0.5, "ignore_timestamp": True})
    )
    publication = rig.pipeline.default_positions()
    assert publication is not None
    assert_pose(publication, rig.robot, "joint_2", 0.5)
    assert rig.robot.joints["joint_1"].child not in poses(publication)
    moved = rig.send(["joint_3"], [0.1], T0 + 10**9)
    assert moved is not None
    assert rig.pipeline.model is not None
    values = rig.robot.kinematics.variable_values(rig.pipeline.model.positions)
    assert values["joint_1"] == pytest.approx(0.25)  # received: kept
    assert values["joint_2"] == pytest.approx(0.5)


def test_under_soft_clamping_a_zero_inside_the_hard_limits_is_accepted_and_starts_clamped() -> None:
    """joint_1: hard [-2.9671, 2.9671], soft [-2.9, 2.9]. zeros.joint_1 = 2.95 lies between:
    accepted (zeros are checked against the hard limits), and the joint starts at 2.9, the
    soft limit, as any value would be clamped under clamp: soft."""
    rig = Rig(ARM_URDF, clamp="soft", zeros=(("joint_1", (2.95,)),))
    publication = rig.pipeline.default_positions()
    assert publication is not None
    assert_pose(publication, rig.robot, "joint_1", 2.9)
    hard = Rig(ARM_URDF, zeros=(("joint_1", (2.95,)),)).pipeline.default_positions()
    assert hard is not None
    assert_pose(hard, rig.robot, "joint_1", 2.95)
    with pytest.raises(ParameterRejected, match=r"zeros.joint_1 = \[2.97\] is outside"):
        Rig(ARM_URDF, clamp="soft", zeros=(("joint_1", (2.97,)),))


def test_a_joint_whose_range_excludes_zero_is_declared_and_starts_at_its_nearest_limit(
    tmp_path: Any,
) -> None:
    """slide_joint moved to hard [0.1, 0.3], soft [0.15, 0.25]: 0 is outside both. Its
    declared zero is 0 clamped into the hard limits, 0.1; published with no zero given at
    0.1 (clamp: hard) or 0.15 (clamp: soft)."""
    text = ALL_TYPES_URDF.read_text()
    moved = text.replace('lower="-0.2" upper="0.3"', 'lower="0.1" upper="0.3"').replace(
        'soft_lower_limit="-0.15"', 'soft_lower_limit="0.15"'
    )
    assert moved.count('lower="0.1"') == 1 and 'soft_lower_limit="0.15"' in moved
    path = tmp_path / "slide.urdf"
    path.write_text(moved)
    assert declared_zeros(Robot.load(path).kinematics)["slide_joint"] == pytest.approx(0.1)
    for clamp, start in (("hard", 0.1), ("soft", 0.15)):
        rig = Rig(path, clamp=clamp)
        publication = rig.pipeline.default_positions()
        assert publication is not None
        assert_pose(publication, rig.robot, "slide_joint", start)


def test_a_joint_received_stays_received_after_a_message_of_another_shape() -> None:
    """joint_1 arrives once (0.25) in a message of its own; then messages name other joints
    only (by the fast path and the general one). joint_1 is neither published again at its
    zero (0.7) by the default positions nor moved back to it: it keeps 0.25."""
    rig = Rig(ARM_URDF, ignore_timestamp=True, zeros=(("joint_1", (0.7,)), ("joint_2", (0.5,))))
    assert rig.send(["joint_1"], [0.25]) is not None
    joint_1 = rig.robot.joints["joint_1"].child
    # The last one clamps joint_2: the general path, not the fast one.
    shapes = ((["joint_2"], [0.1]), (["joint_3", "joint_4"], [0.1, 0.1]), (["joint_2"], [9.0]))
    for k, (names, given) in enumerate(shapes):
        assert rig.send(names, given, T0 + (k + 1) * 10**8) is not None
        pending = rig.pipeline.default_positions()
        assert pending is not None
        assert joint_1 not in poses(pending)
    assert rig.pipeline.model is not None
    values = rig.robot.kinematics.variable_values(rig.pipeline.model.positions)
    assert values["joint_1"] == pytest.approx(0.25)
    moved = rig.send(["joint_1", "joint_2"], [0.3, 0.1], T0 + 10**9)
    assert moved is not None
    assert_pose(moved, rig.robot, "joint_1", 0.3)


def test_checking_zeros_keeps_no_joint_state_plan() -> None:
    """Checking zeros (each joint's declaration is a change checked with all the zeros) makes
    no plan that stays cached: a humanoid's node kept one per joint (about 0.4 MB each node,
    which a fleet of many robots multiplies), and checking each zero alone on every change
    cost it as much start time as the rest of its start."""
    kin = Robot.load(TEST_DIR / "urdf" / "humanoid.urdf").kinematics
    cached = kin.state.plans.plan.cache_info  # type: ignore[attr-defined]
    before = cached().currsize
    zeros = [(joint, tuple(np.atleast_1d(value))) for joint, value in declared_zeros(kin).items()]
    for count in range(1, len(zeros) + 1):  # as the node declares them, one change each
        start_positions(kin, zeros[:count], ClampMode.HARD)
    assert cached().currsize == before
    with pytest.raises(ParameterRejected, match=r"zeros\.l_knee_joint = \[9\.0\] is outside"):
        start_positions(kin, [*zeros, ("l_knee_joint", (9.0,))], ClampMode.HARD)
    assert cached().currsize == before
