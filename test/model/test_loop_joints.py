"""The loop joint type (model/loops.py), its checks (validate.check_loop_joints through
check_model, as the kinematics run it on a hand-built model) and the tree path a loop closes
(tree.tree_path)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest

from joint_tf_publisher import Joint, Link, ModelError, Robot
from joint_tf_publisher.model import LoopJoint, LoopJointType, RobotModel
from joint_tf_publisher.model.tree import tree_path


def loop(name: str = "loop", link1: str = "r", link2: str = "b") -> LoopJoint:
    return LoopJoint(
        name=name,
        type=LoopJointType.REVOLUTE,
        link1=link1,
        link1_to_joint=np.eye(4),
        link2=link2,
        link2_to_joint=np.eye(4),
        axis=np.array([0.0, 0.0, 1.0]),
        lower=None,
        upper=None,
        where="hand-built",
    )


def robot(*loops: LoopJoint) -> Robot:
    links = {name: Link(name) for name in ("r", "a", "b")}
    joints = {
        "ra": Joint("ra", "continuous", "r", "a"),
        "ab": Joint("ab", "continuous", "a", "b"),
    }
    return Robot.from_model(
        RobotModel(name="m", links=links, joints=joints, root="r", loop_joints=loops)
    )


def test_a_tree_has_no_loop_joints() -> None:
    model = RobotModel(name="m", links={"r": Link("r")}, joints={}, root="r")
    assert model.loop_joints == ()


def test_degrees_of_freedom_of_each_type() -> None:
    dofs = {kind: kind.dofs for kind in LoopJointType}
    assert dofs == {
        LoopJointType.REVOLUTE: 1,
        LoopJointType.CONTINUOUS: 1,
        LoopJointType.PRISMATIC: 1,
        LoopJointType.BALL: 3,
        LoopJointType.FIXED: 0,
    }


def test_a_hand_built_loop_joint_is_checked_before_the_kinematics_compile() -> None:
    assert robot(loop()).link_fk({"ra": 0.0, "ab": 0.0})["b"].shape == (4, 4)
    with pytest.raises(ModelError, match=r"loop joint 'loop': link2 'nowhere' is not a link"):
        robot(loop(link2="nowhere")).link_fk()
    with pytest.raises(ModelError, match=r"loop joint 'loop': both sides are link 'b'"):
        robot(loop(link1="b")).link_fk()
    with pytest.raises(ModelError, match=r"loop joint 'ab': duplicate joint name"):
        robot(loop(name="ab")).link_fk()


@dataclass
class Edge:
    name: str
    parent: str
    child: str


def test_tree_path_goes_up_to_the_common_ancestor_and_down() -> None:
    # r -> a -> b -> c and r -> d -> e: a loop between c and e closes through r.
    joints = [
        Edge("ra", "r", "a"),
        Edge("ab", "a", "b"),
        Edge("bc", "b", "c"),
        Edge("rd", "r", "d"),
        Edge("de", "d", "e"),
    ]
    assert tree_path(joints, "c", "e") == ["bc", "ab", "ra", "rd", "de"]
    assert tree_path(joints, "e", "b") == ["de", "rd", "ra", "ab"]
    assert tree_path(joints, "c", "a") == ["bc", "ab"]
    assert tree_path(joints, "a", "c") == ["ab", "bc"]
    assert tree_path(joints, "c", "c") == []
    with pytest.raises(ValueError, match="no common ancestor"):
        tree_path(joints + [Edge("xy", "x", "y")], "y", "c")


def _moved(pose: np.ndarray, row: int, column: int, by: float) -> np.ndarray:
    moved = pose.copy()
    moved[row, column] += by
    return moved


def test_same_as_compares_every_field_within_the_tolerance_in_metres_and_radians() -> None:
    """``same_as`` (the three spellings read alike): each field that differs makes two loop
    joints differ; frames and axis within the tolerance (absolute: m and rad, 1e-9 by
    default, not relative to the values) are the same."""
    base = replace(loop(), link1_to_joint=_moved(np.eye(4), 0, 3, 3.0), lower=-1.0, upper=1.0)
    assert base.same_as(replace(base, where="elsewhere:1: <joint>"))
    different = [
        replace(base, name="other"),
        replace(base, type=LoopJointType.CONTINUOUS),
        replace(base, link1="a"),
        replace(base, link2="a"),
        replace(base, lower=-2.0),
        replace(base, upper=2.0),
    ]
    for field, pose in (("link1_to_joint", base.link1_to_joint), ("link2_to_joint", np.eye(4))):
        # 5e-9 off a zero entry, and 1e-6 off the 3 m and the 1 ones (a tolerance relative
        # to the values would pass those).
        different.append(replace(base, **{field: _moved(pose, 0, 1, 5e-9)}))
        different.append(replace(base, **{field: _moved(pose, 0, 3, 1e-6)}))
        different.append(replace(base, **{field: _moved(pose, 0, 0, 1e-6)}))
    different.append(replace(base, axis=np.array([0.0, 0.0, 1.0 + 1e-6])))
    different.append(replace(base, axis=np.array([0.0, 5e-9, 1.0])))
    for other in different:
        assert not base.same_as(other), other
        assert not other.same_as(base), other
    close = replace(base, link2_to_joint=_moved(np.eye(4), 0, 1, 5e-10))
    assert base.same_as(close)
    assert not base.same_as(close, tolerance=1e-10)
    assert base.same_as(different[-1], tolerance=1e-8)


def test_a_loop_joints_motion_is_its_types() -> None:
    """``LoopJoint.motion``: a turn about the axis (revolute, continuous), a travel along it
    (prismatic), in the joint frame; only those types take a value."""
    axis = np.array([0.0, 0.6, 0.8])
    turning = replace(loop(), axis=axis)
    motion = turning.motion(0.5)
    assert np.allclose(motion[:3, :3] @ axis, axis) and np.allclose(motion[:3, 3], 0.0)
    normal = np.array([1.0, 0.0, 0.0])
    assert np.isclose(float(normal @ motion[:3, :3] @ normal), np.cos(0.5))
    sliding = replace(loop(), type=LoopJointType.PRISMATIC, axis=axis).motion(0.5)
    assert np.allclose(sliding[:3, :3], np.eye(3)) and np.allclose(sliding[:3, 3], 0.5 * axis)
    takes = {kind: kind.takes_value for kind in LoopJointType}
    assert takes == {
        LoopJointType.REVOLUTE: True,
        LoopJointType.CONTINUOUS: True,
        LoopJointType.PRISMATIC: True,
        LoopJointType.BALL: False,
        LoopJointType.FIXED: False,
    }
