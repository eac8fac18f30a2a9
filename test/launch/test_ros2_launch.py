"""``ros2 launch`` of the package's launch files with each documented argument, as users run them.

One launch per scenario class (started once, ended by its last test): the node comes up,
/tf_static and /tf arrive as the arguments say, the parameters are what the arguments and
the params file set, and SIGINT to the launch process (what ``kill -INT`` or a supervisor
sends) ends everything with exit code 0, no traceback and no process left in the group.
``TestCtrlCInATerminal`` sends SIGINT to the whole process group as a terminal's Ctrl-C does.

Needs the ROS 2 tools (a sourced distro, or the kit that ``make test`` builds) with this
package built and sourced; skipped where launch_testing is not importable.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

REASON = "needs ROS 2's launch tools: a sourced distro or the kit (make test)"
pytest.importorskip("launch_testing", reason=REASON)
pytest.importorskip("launch_ros", reason=REASON)

import numpy as np  # noqa: E402
from launch_harness import (  # noqa: E402
    REPO,
    START_S,
    STOP_S,
    Launch,
    get_parameters,
    joint_state,
    launched,
    send_until_tf,
    transform_matrix,
    wait_static_children,
)
from node_harness import pause, stamp_ns, wait_until  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402

pytestmark = pytest.mark.ros

XACRO = REPO / "test" / "urdf" / "small_arm.urdf.xacro"
MIMIC_URDF = REPO / "test" / "urdf" / "arm_mimic_gripper.urdf"
SDF_MODELS = [REPO / "test" / "sdf" / "all_joint_types.sdf", REPO / "test" / "sdf" / "arm_1_10.sdf"]
WALL_CLOCK_AFTER_S = 1.0e9  # any wall-clock stamp of this century is later


def start(
    tmp_path_factory: pytest.TempPathFactory,
    launch_file: str,
    arguments: dict[str, str],
    env: dict[str, str] | None = None,
) -> AbstractContextManager[Launch]:
    """The launch of a scenario class, its output in a fresh folder; use it in a ``with``."""
    log = tmp_path_factory.mktemp(launch_file.replace(".", "_")) / "launch.log"
    return launched(launch_file, arguments, log, env)


def two_model_world() -> str:
    """SDFormat text of a world holding the models of two bundled SDF files (both 1.10)."""
    root = etree.Element("sdf", version="1.10")
    world = etree.SubElement(root, "world", name="two_models")
    for path in SDF_MODELS:
        world.append(etree.parse(str(path)).getroot().find("model"))
    return etree.tostring(root, encoding="unicode")


class TestXacroNodeNameSimTime:
    """joint_tf_publisher.launch.py model:=<.xacro> xacro_args:=...
    node_name:=robot_state_publisher use_sim_time:=true publish_frequency:=50."""

    ARGUMENTS = {
        "model": str(XACRO),
        "xacro_args": "prefix:=x_",
        "node_name": "robot_state_publisher",
        "use_sim_time": "true",
        "publish_frequency": "50",
    }

    @pytest.fixture(scope="class")
    def launch(self, probe: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launch]:
        with start(tmp_path_factory, "joint_tf_publisher.launch.py", self.ARGUMENTS) as launch:
            wait_static_children(probe, set())  # this arm has no fixed joint: an empty set
            yield launch

    def test_xacro_arguments_reach_the_frames(self, probe: Any, launch: Launch) -> None:
        msg = joint_state(["x_joint_1", "x_joint_2"], [0.3, -0.2], 12.0)
        transforms = send_until_tf(probe, "/joint_states", msg, "x_link_1")
        assert transforms["x_link_1"].header.frame_id == "x_base_link"

    def test_tools_fetch_the_description_from_robot_state_publisher(
        self, probe: Any, launch: Launch
    ) -> None:
        # What gz_ros2_control does: GetParameters robot_description on that node.
        text = get_parameters(probe, "/robot_state_publisher", ["robot_description"])[
            "robot_description"
        ]
        robot = Robot.from_xml_string(text)
        assert set(robot.links) == {"x_base_link", "x_link_1", "x_link_2", "x_link_3"}

    def test_arguments_set_the_parameters(self, probe: Any, launch: Launch) -> None:
        values = get_parameters(
            probe, "/robot_state_publisher", ["use_sim_time", "publish_frequency", "frame_prefix"]
        )
        assert values == {"use_sim_time": True, "publish_frequency": 50.0, "frame_prefix": ""}

    def test_zero_stamps_take_simulation_time(self, probe: Any, launch: Launch) -> None:
        clock = probe.node.create_publisher(Clock, "/clock", 10)
        sim_time = [700.0]
        start_index = len(probe.tf)
        joint_states = probe.node.create_publisher(JointState, "/joint_states", 10)

        def stamped_in_sim_time() -> bool:
            sim_time[0] += 0.5
            msg = Clock()
            msg.clock.sec = int(sim_time[0])
            msg.clock.nanosec = int((sim_time[0] % 1) * 1e9)
            clock.publish(msg)
            joint_states.publish(joint_state(["x_joint_3"], [0.1], 0.0))
            return any(
                t.child_frame_id == "x_link_3" and 0 < stamp_ns(t.header.stamp) * 1e-9 < 1e6
                for m in probe.tf.messages(start_index)
                for t in m.transforms
            )

        try:
            wait_until(stamped_in_sim_time, START_S, what="/tf stamped in simulation time")
        finally:
            probe.node.destroy_publisher(clock)
            probe.node.destroy_publisher(joint_states)

    def test_sigint_to_launch_ends_everything_cleanly(self, launch: Launch) -> None:
        launch.assert_clean_stop(launch.interrupt())


class TestNamespacePrefixParamsFile:
    """joint_tf_publisher.launch.py namespace:=r1 frame_prefix:=r1/ time_offset:=-0.008
    static_republish_period:=2.0 params_file:=<file>."""

    PARAMS = (
        "/**:\n  ros__parameters:\n"
        '    frame_prefix: "file/"\n'
        "    clamp: soft\n"
        "    publish_frequency: 7.0\n"
        "    time_offset: -0.5\n"
        '    exclude_joints: ["camera_optical_joint"]\n'
    )

    @pytest.fixture(scope="class")
    def launch(self, probe: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launch]:
        params = tmp_path_factory.mktemp("params") / "params.yaml"
        params.write_text(self.PARAMS)
        arguments = {
            "model": str(MIMIC_URDF),
            "namespace": "r1",
            "frame_prefix": "r1/",
            "time_offset": "-0.008",
            "static_republish_period": "2.0",
            "params_file": str(params),
        }
        with start(tmp_path_factory, "joint_tf_publisher.launch.py", arguments) as launch:
            wait_static_children(probe, {"r1/camera_link"})
            yield launch

    def test_statics_carry_the_argument_s_prefix_and_honour_the_file(
        self, probe: Any, launch: Launch
    ) -> None:
        children = set(wait_static_children(probe, {"r1/camera_link"}))
        robot = Robot.load(MIMIC_URDF)
        fixed = {j.child for j in robot.joints.values() if j.joint_type == "fixed"}
        # The argument's prefix wins over the file's; the file's exclude_joints applies.
        assert {"r1/" + child for child in fixed - {"camera_optical_frame"}} <= children
        assert "r1/camera_optical_frame" not in children
        assert not any(child.startswith("file/") for child in children)

    def test_namespaced_joint_states_drive_prefixed_frames_clamped_by_the_file(
        self, probe: Any, launch: Launch
    ) -> None:
        msg = joint_state(["joint_1"], [2.95], 20.0)  # inside hard (2.9671), beyond soft (2.9)
        # Stamped 20.0 s, on /tf at 20.0 s + time_offset (the argument's, not the file's).
        transforms = send_until_tf(
            probe, "/r1/joint_states", msg, "r1/link_1", time_offset_s=-0.008
        )
        joint = Robot.load(MIMIC_URDF).joints["joint_1"]
        np.testing.assert_allclose(
            transform_matrix(transforms["r1/link_1"].transform),
            joint.origin @ joint.motion(2.9),
            atol=1e-9,
        )

    def test_node_parameters(self, probe: Any, launch: Launch) -> None:
        names = [
            "frame_prefix",
            "clamp",
            "publish_frequency",
            "time_offset",
            "static_republish_period",
        ]
        values = get_parameters(probe, "/r1/joint_tf_publisher", names)
        # The arguments win over the file (frame_prefix, time_offset); the file sets the rest.
        assert values == {
            "frame_prefix": "r1/",
            "clamp": "soft",
            "publish_frequency": 7.0,
            "time_offset": -0.008,
            "static_republish_period": 2.0,
        }

    def test_sigint_to_launch_ends_everything_cleanly(self, launch: Launch) -> None:
        launch.assert_clean_stop(launch.interrupt())


class TestDescriptionTextModelNameIgnoreTimestamp:
    """joint_tf_publisher.launch.py robot_description:=<SDF world text> model_name:=arm_1_10
    ignore_timestamp:=true."""

    @pytest.fixture(scope="class")
    def launch(self, probe: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launch]:
        arguments = {
            "robot_description": two_model_world(),
            "model_name": "arm_1_10",
            "ignore_timestamp": "true",
        }
        with start(tmp_path_factory, "joint_tf_publisher.launch.py", arguments) as launch:
            wait_static_children(probe, set())
            yield launch

    def test_the_named_model_is_published(self, probe: Any, launch: Launch) -> None:
        msg = joint_state(["hinge"], [0.4], 30.0)
        transforms = send_until_tf(probe, "/joint_states", msg, "arm")
        assert transforms["arm"].header.frame_id == "base"
        # The other model's fixed joint (fixed_link) is not among the statics.
        assert "fixed_link" not in wait_static_children(probe, set())

    def test_ignore_timestamp_publishes_a_repeated_stamp(self, probe: Any, launch: Launch) -> None:
        robot = Robot.from_xml_string(two_model_world(), model_name="arm_1_10")

        def at(hinge: float) -> Any:
            pose = robot.link_fk({"hinge": hinge})["arm"]
            return lambda transform: np.allclose(transform_matrix(transform), pose, atol=1e-9)

        # The same stamp twice with different values: rate limiting would drop the second.
        for hinge in (0.1, 0.2):
            msg = joint_state(["hinge"], [hinge], 40.0)
            send_until_tf(probe, "/joint_states", msg, "arm", accept=at(hinge))

    def test_sigint_to_launch_ends_everything_cleanly(self, launch: Launch) -> None:
        launch.assert_clean_stop(launch.interrupt())


class TestXmlLaunchFile:
    """joint_tf_publisher.launch.xml model:=<.xacro> xacro_args:=...
    node_name:=robot_state_publisher namespace:=xml frame_prefix:=xml/ time_offset:=-0.008
    static_republish_period:=2.0."""

    ARGUMENTS = {
        "model": str(XACRO),
        "xacro_args": "prefix:=y_",
        "node_name": "robot_state_publisher",
        "namespace": "xml",
        "frame_prefix": "xml/",
        "time_offset": "-0.008",
        "static_republish_period": "2.0",
    }

    @pytest.fixture(scope="class")
    def launch(self, probe: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launch]:
        with start(tmp_path_factory, "joint_tf_publisher.launch.xml", self.ARGUMENTS) as launch:
            wait_static_children(probe, set())
            yield launch

    def test_xacro_command_and_namespace(self, probe: Any, launch: Launch) -> None:
        msg = joint_state(["y_joint_1"], [0.3], 50.0)
        transforms = send_until_tf(
            probe, "/xml/joint_states", msg, "xml/y_link_1", time_offset_s=-0.008
        )
        assert transforms["xml/y_link_1"].header.frame_id == "xml/y_base_link"

    def test_parameters_of_robot_state_publisher(self, probe: Any, launch: Launch) -> None:
        values = get_parameters(
            probe,
            "/xml/robot_state_publisher",
            [
                "robot_description",
                "frame_prefix",
                "publish_frequency",
                "use_sim_time",
                "time_offset",
                "static_republish_period",
            ],
        )
        assert set(Robot.from_xml_string(values.pop("robot_description")).links) == {
            "y_base_link",
            "y_link_1",
            "y_link_2",
            "y_link_3",
        }
        assert values == {
            "frame_prefix": "xml/",
            "publish_frequency": 20.0,
            "use_sim_time": False,
            "time_offset": -0.008,
            "static_republish_period": 2.0,
        }

    def test_sigint_to_launch_ends_everything_cleanly(self, launch: Launch) -> None:
        launch.assert_clean_stop(launch.interrupt())


class TestDescriptionFile:
    """joint_tf_publisher.launch.py description_file:=<.xacro> xacro_args:=...: the node gets
    the path, not the text, and a save of the file reaches /tf_static (edit and see)."""

    @pytest.fixture(scope="class")
    def robot_file(self, tmp_path_factory: pytest.TempPathFactory) -> Path:
        path = tmp_path_factory.mktemp("edited") / "arm.urdf.xacro"
        path.write_text(self.with_tool(0.1))
        return path

    @staticmethod
    def with_tool(x: float) -> str:
        """The small xacro arm with a tool on a fixed joint ``x`` m along its last link."""
        tool = (
            '<link name="$(arg prefix)tool"/><joint name="tool_mount" type="fixed">'
            '<parent link="$(arg prefix)link_3"/><child link="$(arg prefix)tool"/>'
            f'<origin xyz="{x} 0 0"/></joint></robot>'
        )
        return XACRO.read_text().replace("</robot>", tool)

    @pytest.fixture(scope="class")
    def launch(
        self, probe: Any, tmp_path_factory: pytest.TempPathFactory, robot_file: Path
    ) -> Iterator[Launch]:
        arguments = {"description_file": str(robot_file), "xacro_args": "prefix:=e_"}
        with start(tmp_path_factory, "joint_tf_publisher.launch.py", arguments) as launch:
            yield launch

    def test_the_node_reads_the_file_itself(
        self, probe: Any, launch: Launch, robot_file: Path
    ) -> None:
        statics = wait_static_children(probe, {"e_tool"})
        assert statics["e_tool"].transform.translation.x == pytest.approx(0.1)
        names = ["description_file", "description_args", "robot_description"]
        assert get_parameters(probe, "/joint_tf_publisher", names) == {
            "description_file": str(robot_file),
            "description_args": ["prefix:=e_"],
            "robot_description": "",
        }

    def test_a_save_reaches_tf_static(self, probe: Any, launch: Launch, robot_file: Path) -> None:
        temporary = robot_file.with_suffix(".swp")
        temporary.write_text(self.with_tool(0.3))
        os.replace(temporary, robot_file)
        wait_until(
            lambda: (
                wait_static_children(probe, {"e_tool"})["e_tool"].transform.translation.x
                == pytest.approx(0.3)
            ),
            START_S,
            what=lambda: f"the saved tool origin on /tf_static:\n{launch.output()[-2000:]}",
        )

    def test_sigint_to_launch_ends_everything_cleanly(self, launch: Launch) -> None:
        launch.assert_clean_stop(launch.interrupt())


class TestDemo:
    """demo.launch.py with its defaults: the bundled arm swept by the demo source."""

    @pytest.fixture(scope="class")
    def launch(self, probe: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launch]:
        with start(tmp_path_factory, "demo.launch.py", {}) as launch:
            yield launch

    def test_tf_static_and_tf_arrive(self, probe: Any, launch: Launch) -> None:
        robot = Robot.load(REPO / "urdf" / "demo_arm.urdf")
        fixed = {j.child for j in robot.joints.values() if j.joint_type == "fixed"}
        wait_static_children(probe, fixed)
        moving = {j.child for j in robot.joints.values() if j.joint_type != "fixed"}
        start_index = len(probe.tf)
        wait_until(
            lambda: (
                moving
                <= {t.child_frame_id for m in probe.tf.messages(start_index) for t in m.transforms}
            ),
            START_S,
            what="/tf of every moving joint from the demo source",
        )

    def test_sigint_to_launch_ends_everything_cleanly(self, launch: Launch) -> None:
        launch.assert_clean_stop(launch.interrupt())


class TestDemoInANamespace:
    """demo.launch.py namespace:=r1 frame_prefix:=r1/ model:=<.xacro> xacro_args:=...: the demo
    source publishes where the node listens (issue: it used to publish on /joint_states)."""

    ARGUMENTS = {
        "namespace": "r1",
        "frame_prefix": "r1/",
        "model": str(XACRO),
        "xacro_args": "prefix:=z_",
    }

    @pytest.fixture(scope="class")
    def temp_dir(self, tmp_path_factory: pytest.TempPathFactory) -> Path:
        """TMPDIR of the launch: where the demo writes the expanded description."""
        return tmp_path_factory.mktemp("demo_tmp")

    @pytest.fixture(scope="class")
    def launch(
        self, probe: Any, tmp_path_factory: pytest.TempPathFactory, temp_dir: Path
    ) -> Iterator[Launch]:
        env = {"TMPDIR": str(temp_dir)}
        with start(tmp_path_factory, "demo.launch.py", self.ARGUMENTS, env) as launch:
            yield launch

    def test_demo_joint_states_reach_the_namespaced_node(self, probe: Any, launch: Launch) -> None:
        start_index = len(probe.tf)
        wait_until(
            lambda: any(
                t.child_frame_id == "r1/z_link_3"
                for m in probe.tf.messages(start_index)
                for t in m.transforms
            ),
            START_S,
            what=lambda: f"/tf for r1/z_link_3 from the demo source:\n{launch.output()[-2000:]}",
        )
        assert probe.node.count_publishers("/joint_states") == 0

    def test_the_demo_reads_the_expanded_description_from_a_temporary_file(
        self, launch: Launch, temp_dir: Path
    ) -> None:
        (folder,) = temp_dir.glob("joint_tf_publisher_demo_*")
        text = (folder / "description.xml").read_text()
        assert set(Robot.from_xml_string(text).links) >= {"z_base_link", "z_link_3"}

    def test_sigint_to_launch_ends_everything_cleanly(self, launch: Launch, temp_dir: Path) -> None:
        launch.assert_clean_stop(launch.interrupt())
        assert not list(temp_dir.glob("joint_tf_publisher_demo_*")), "temporary file left"


def test_ctrl_c_in_a_terminal_ends_everything_cleanly(probe: Any, tmp_path: Path) -> None:
    """SIGINT to the launch's whole process group (a terminal's Ctrl-C: launch forwards a
    second one to each process), repeated; the last tries keep sending SIGINT to the node
    every 10 ms until it has exited (a user pressing Ctrl-C again while it stops)."""
    for attempt, repeat_to_node in enumerate((False, False, True)):
        with launched("demo.launch.py", {}, tmp_path / f"launch_{attempt}.log") as launch:
            # The node first, then /tf sent after it started: a late /tf of the previous
            # attempt must not count (SIGINT would then hit launch while Python starts).
            wait_until(
                lambda: any(n.startswith("joint_tf_publisher-") for n in launch.process_pids()),
                START_S,
                what="the node started by launch",
            )
            seen = len(probe.tf)
            wait_until(lambda n=seen: len(probe.tf) > n, START_S, what="/tf from the demo")
            (node_pid,) = [
                pid
                for name, pid in launch.process_pids().items()
                if name.startswith("joint_tf_publisher-")
            ]
            os.killpg(launch.pgid, signal.SIGINT)
            deadline = time.monotonic() + STOP_S
            while repeat_to_node and launch.process.poll() is None:
                if time.monotonic() > deadline:
                    break
                try:
                    os.kill(node_pid, signal.SIGINT)
                except ProcessLookupError:
                    break
                time.sleep(0.01)
            launch.assert_clean_stop(launch.process.wait(timeout=STOP_S))
            pause(0.1)
