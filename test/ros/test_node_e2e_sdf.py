"""End to end: the node publishes an SDFormat robot exactly as a URDF one.

The node's real console script runs in a subprocess with ``robot_description`` set to
``test/sdf/all_joint_types.sdf`` (every SDFormat joint type, a gearbox pair among them), and
a second one with ``test/sdf/relative_frames.sdf`` (``<frame>`` elements, published as fixed
links); the tests talk to them over DDS with the harness of ``node_harness.py`` and compare
what arrives on /tf and /tf_static with the explicit formulas of ``test_sdf.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from node_harness import (  # noqa: E402
    TOLERANCE,
    NodeUnderTest,
    Probe,
    compose,
    fresh_stamp,
    matrix_of,
    started,
    tree_of,
    wait_until,
)
from scipy.spatial.transform import Rotation  # noqa: E402
from test_sdf import (  # noqa: E402
    RELATIVE_FRAMES,
    SDF_DIR,
    X,
    Z,
    all_types_expected,
    file_link_poses,
    in_root,
    relative_frames_zero,
    screw,
)
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ALL_TYPES = SDF_DIR / "all_joint_types.sdf"


@pytest.fixture(scope="class")
def sdf_node(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    params = {"robot_description": ALL_TYPES.read_text()}
    node = started(
        probe, tmp_path_factory, "/sdf_all", params, handshake=("revolute_joint", "revolute_link")
    )
    yield node
    node.stop()


class TestAllJointTypes:
    """all_joint_types.sdf: every SDFormat joint type."""

    def test_fixed_sdf_joints_are_static(self, sdf_node: NodeUnderTest) -> None:
        statics = sdf_node.static_set()
        assert set(statics) == {"fixed_link"}
        zero = file_link_poses(ALL_TYPES)
        assert statics["fixed_link"].header.frame_id == "base"
        expected = np.linalg.inv(zero["base"]) @ zero["fixed_link"]
        np.testing.assert_allclose(
            matrix_of(statics["fixed_link"].transform), expected, atol=TOLERANCE
        )

    def test_every_sdf_joint_type_moves_on_tf(self, sdf_node: NodeUnderTest) -> None:
        ball = Rotation.from_rotvec([0.4, -0.7, 0.2]).as_quat()
        values = {
            "revolute_joint": 0.6,
            "continuous_joint": -2.5,
            "prismatic_joint": 0.3,
            "screw_joint": 12.0,
            "gear_in_joint": 0.45,
            "universal_joint/axis1": 0.3,
            "universal_joint/axis2": -0.8,
            "revolute2_joint/axis1": 1.2,
            "revolute2_joint/axis2": 0.5,
            "ball_joint/rot_x": ball[0],
            "ball_joint/rot_y": ball[1],
            "ball_joint/rot_z": ball[2],
            "ball_joint/rot_w": ball[3],
        }
        msg = sdf_node.publish_and_wait(
            list(values), list(values.values()), fresh_stamp(), "revolute_link"
        )
        robot = Robot.load(ALL_TYPES)
        moving = {j.child for j in robot.joints.values() if j.joint_type != "fixed"}
        # the gearbox follower gear_out is published with its leader, in the same message
        assert {t.child_frame_id for t in msg.transforms} == moving
        tree = tree_of([TFMessage(transforms=list(sdf_node.static_set().values())), msg])
        cfg = {
            "revolute_joint": 0.6,
            "continuous_joint": -2.5,
            "prismatic_joint": 0.3,
            "screw_joint": 12.0,
            "gear_in_joint": 0.45,
            "universal_joint": (0.3, -0.8),
            "revolute2_joint": (1.2, 0.5),
            "ball_joint": ball,
        }
        expected = in_root(robot, all_types_expected(cfg))
        for link, T_root_link in expected.items():
            received = compose(tree, link, robot.root)
            np.testing.assert_allclose(received, T_root_link, atol=TOLERANCE, err_msg=link)

    def test_bare_names_as_gazebos_bridge_sends_them(self, sdf_node: NodeUnderTest) -> None:
        """ros_gz's bridge names each joint by its bare name with its first axis's position:
        a two-axis joint's first angle (the second stays as set), a ball joint's rotation
        about x (Gazebo's first ball value, the x of its rotation vector)."""
        names = ["universal_joint/axis2", "revolute2_joint/axis2"]
        names += ["universal_joint", "revolute2_joint", "ball_joint"]
        msg = sdf_node.publish_and_wait(
            names, [-0.3, 0.4, 0.2, -1.1, 0.7], fresh_stamp(), "universal_link"
        )
        received = {t.child_frame_id: matrix_of(t.transform) for t in msg.transforms}
        robot = Robot.load(ALL_TYPES)
        expected = {
            "universal_link": robot.joints["universal_joint"].child_pose([0.2, -0.3]),
            "revolute2_link": robot.joints["revolute2_joint"].child_pose([-1.1, 0.4]),
            "ball_link": robot.joints["ball_joint"].child_pose(
                Rotation.from_rotvec([0.7, 0.0, 0.0]).as_quat()
            ),
        }
        assert set(received) == set(expected)
        for link, pose in expected.items():
            np.testing.assert_allclose(received[link], pose, atol=TOLERANCE, err_msg=link)

    def test_both_axes_of_a_two_axis_joint_are_clamped(self, sdf_node: NodeUnderTest) -> None:
        """universal_joint: <axis> limits [-1, 1], <axis2> [-1.2, 0.6] (hard, the default)."""
        names = [
            f"{joint}/axis{k}" for joint in ("universal_joint", "revolute2_joint") for k in (1, 2)
        ]
        msg = sdf_node.publish_and_wait(
            names, [0.4, 1.5, 0.0, 2.0], fresh_stamp(), "universal_link"
        )
        received = {t.child_frame_id: matrix_of(t.transform) for t in msg.transforms}
        robot = Robot.load(ALL_TYPES)
        universal = robot.joints["universal_joint"]
        np.testing.assert_allclose(
            received["universal_link"], universal.child_pose([0.4, 0.6]), atol=TOLERANCE
        )
        # revolute2_joint has no <axis2><limit>: its value passes unclamped
        np.testing.assert_allclose(
            received["revolute2_link"],
            robot.joints["revolute2_joint"].child_pose([0.0, 2.0]),
            atol=TOLERANCE,
        )
        msg = sdf_node.publish_and_wait(names[:1], [-3.0], fresh_stamp(), "universal_link")
        (t,) = msg.transforms
        np.testing.assert_allclose(
            matrix_of(t.transform), universal.child_pose([-1.0, 0.6]), atol=TOLERANCE
        )
        wait_until(
            lambda: (
                "clamped to their hard limits"
                in sdf_node.stderr() + sdf_node.stdout_path.read_text()
            ),
            what="the clamp warning",
        )
        log = sdf_node.stderr() + sdf_node.stdout_path.read_text()
        assert "universal_joint (" in log and "revolute2_joint (" not in log


@pytest.fixture(scope="class")
def frames_node(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    params = {"robot_description": RELATIVE_FRAMES.read_text()}
    node = started(probe, tmp_path_factory, "/sdf_frames", params, handshake=("shoulder", "arm"))
    yield node
    node.stop()


class TestFrames:
    """relative_frames.sdf: <frame>s published as fixed links."""

    def test_sdf_frames_arrive_on_tf_static_and_follow_their_links(
        self, frames_node: NodeUnderTest
    ) -> None:
        """Each <frame> is a static child of the link it is attached to (mount and tool_offset:
        base; model_marker: the canonical link base; elbow_marker, attached to the joint elbow:
        its child link hand), at its pose there; composed with /tf it follows that link."""
        statics = frames_node.static_set()
        parents = {
            "tool": "hand",
            "sensor": "arm",
            "mount": "base",
            "tool_offset": "base",
            "model_marker": "base",
            "elbow_marker": "hand",
        }
        assert {name: t.header.frame_id for name, t in statics.items()} == parents
        zero = relative_frames_zero()
        for name, parent in parents.items():
            expected = np.linalg.inv(zero[parent]) @ zero[name]
            received = matrix_of(statics[name].transform)
            np.testing.assert_allclose(received, expected, atol=TOLERANCE, err_msg=name)
        shoulder, elbow = 0.4, -1.1
        msg = frames_node.publish_and_wait(
            ["shoulder", "elbow"], [shoulder, elbow], fresh_stamp(), "hand"
        )
        tree = tree_of([TFMessage(transforms=list(statics.values())), msg])
        # as test_sdf.test_relative_frames_axes_follow_expressed_in: shoulder about the model's z
        # through mount, elbow about mount's x through the elbow joint frame
        s1 = screw(Z, zero["mount"][:3, 3], shoulder)
        s2 = screw(zero["mount"][:3, :3] @ X, zero["elbow"][:3, 3], elbow)
        moved = {"base": zero["base"], "elbow_marker": s1 @ s2 @ zero["elbow_marker"]}
        moved |= {name: zero[name] for name in ("mount", "tool_offset", "model_marker")}
        robot = Robot.load(RELATIVE_FRAMES)
        for name, T_root_frame in in_root(robot, moved).items():
            received = compose(tree, name, robot.root)
            np.testing.assert_allclose(received, T_root_frame, atol=TOLERANCE, err_msg=name)
