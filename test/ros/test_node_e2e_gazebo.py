"""End to end: a robot written as Gazebo users write it, over DDS.

The node's real console script runs with ``robot_description`` set to the text of
``test/sdf/gazebo/rover.sdf``, as a launch file that reads the file passes it: nested models
and includes of ``model://`` (found through GZ_SIM_RESOURCE_PATH), ``package://`` (through
AMENT_PREFIX_PATH) and a relative path (from the node's working directory, as the text has no
file), all set in the node's environment. /tf and /tf_static must carry each frame under the
name Gazebo (libsdformat) gives it, ``arm::gripper::finger``, at the pose composed by hand in
``test_sdf_gazebo.rover_moved``; joint states name joints the same way.
"""

from __future__ import annotations

import os
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
from test_sdf_gazebo import (  # noqa: E402
    GAZEBO_DIR,
    MODELS_DIR,
    RESOURCE_VARIABLES,
    ROVER,
    ROVER_CFG,
    fake_ament_prefix,
    rover_moved,
)
from tf2_msgs.msg import TFMessage  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: Fixed joints of rover.sdf (and its merged bumper's <frame>): child -> parent.
STATIC_PARENTS = {
    "arm::base": "chassis",
    "bar": "chassis",
    "camera::body": "chassis",
    "bumper_tip": "bar",
}
MOVING = {"arm::upper", "arm::gripper::palm", "arm::gripper::finger", "flap", "camera::lens"}


@pytest.fixture(scope="class")
def rover_node(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    prefix = fake_ament_prefix(tmp_path_factory.mktemp("ament") / "install")
    ament = [str(prefix), os.environ.get("AMENT_PREFIX_PATH", "")]
    with pytest.MonkeyPatch.context() as patch:  # the node inherits it when it starts
        for variable in RESOURCE_VARIABLES:
            patch.delenv(variable, raising=False)
        patch.setenv("GZ_SIM_RESOURCE_PATH", str(MODELS_DIR))
        patch.setenv("AMENT_PREFIX_PATH", os.pathsep.join(filter(None, ament)))
        patch.chdir(GAZEBO_DIR)
        params = {"robot_description": ROVER.read_text()}
        node = started(
            probe, tmp_path_factory, "/gz_rover", params, handshake=("arm::shoulder", "arm::upper")
        )
    yield node
    node.stop()


def in_chassis(poses: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    inverse = np.linalg.inv(poses["chassis"])
    return {name: inverse @ matrix for name, matrix in poses.items()}


class TestGazeboRover:
    """rover.sdf: nested and included models, named and placed as Gazebo does."""

    def test_fixed_joints_and_frames_arrive_on_tf_static_with_scoped_names(
        self, rover_node: NodeUnderTest
    ) -> None:
        statics = rover_node.static_set()
        assert {name: t.header.frame_id for name, t in statics.items()} == STATIC_PARENTS
        zero = rover_moved({})
        for child, parent in STATIC_PARENTS.items():
            expected = np.linalg.inv(zero[parent]) @ zero[child]
            received = matrix_of(statics[child].transform)
            np.testing.assert_allclose(received, expected, atol=TOLERANCE, err_msg=child)

    @pytest.mark.parametrize("form", ["scoped", "bare"])
    def test_joint_names_move_the_scoped_frames(self, rover_node: NodeUnderTest, form: str) -> None:
        """Scoped names (``arm::elbow``), and the bare names Gazebo's JointStatePublisher
        gives a nested model's joints (``elbow``; ``slide`` for ``arm::gripper::slide``)."""
        cfg = ROVER_CFG
        if form == "bare":
            cfg = {name.rpartition("::")[2]: value for name, value in ROVER_CFG.items()}
            assert len(cfg) == len(ROVER_CFG)  # no two nested joints share a bare name here
        msg = rover_node.publish_and_wait(
            list(cfg), list(cfg.values()), fresh_stamp(), "arm::gripper::finger"
        )
        assert {t.child_frame_id for t in msg.transforms} == MOVING
        tree = tree_of([TFMessage(transforms=list(rover_node.static_set().values())), msg])
        for link, T_chassis_link in in_chassis(rover_moved(ROVER_CFG)).items():
            received = compose(tree, link, "chassis")
            np.testing.assert_allclose(received, T_chassis_link, atol=TOLERANCE, err_msg=link)

    def test_a_frame_prefix_gives_the_names_of_gazebos_pose_publisher(
        self, rover_node: NodeUnderTest
    ) -> None:
        """Gazebo's PosePublisher names frames with the top model too (rover::arm::base):
        frame_prefix "rover::" gives the same names."""
        (result,) = rover_node.set_parameters(frame_prefix="rover::")
        assert result.successful
        statics = wait_until(
            lambda: (s := rover_node.static_set()) and "rover::bar" in s and s,
            what="statics with the prefix rover::",
        )
        assert {name: t.header.frame_id for name, t in statics.items()} == {
            f"rover::{child}": f"rover::{parent}" for child, parent in STATIC_PARENTS.items()
        }
