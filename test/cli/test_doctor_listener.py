"""The doctor listener's bookkeeping on plain data: publisher gids as rclpy gives them (bytes
in MessageInfo, ints in the graph) and transforms rekeyed by the publishing node.

The listener is imported by the tests, not at collection: importing it imports rclpy's
modules for the whole session, and test/cli checks what the CLI says where rclpy is missing."""

from __future__ import annotations

import importlib

import pytest
from repo_paths import REPO_ROOT

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")

GID = bytes(range(16))


def test_a_gid_reads_the_same_from_message_info_and_from_the_graph() -> None:
    from joint_tf_publisher.cli.doctor.listener import gid_text

    assert gid_text(GID) == gid_text(list(GID)) == GID.hex()


def test_two_publishers_of_one_node_merge_and_an_unknown_gid_is_unnamed() -> None:
    from joint_tf_publisher.cli.doctor.listener import by_publisher_name

    other, gone = bytes(16).hex(), bytes([9] * 16).hex()
    transforms = {
        ("base_link", "arm", False, GID.hex()): (5, 2),
        ("base_link", "arm", False, other): (7, 3),
        ("base_link", "arm", False, gone): (1, 1),
    }
    names = {GID.hex(): "/state_publisher", other: "/state_publisher"}
    assert by_publisher_name(transforms, names) == {
        ("base_link", "arm", False, "/state_publisher"): (7, 5),
        ("base_link", "arm", False, ""): (1, 1),
    }


def test_a_joint_state_publisher_heard_is_named_in_the_listening() -> None:
    """Over real DDS: a source in its own context publishes joint states while the doctor
    listens; its messages' gid is kept and the graph names it among the topic's publishers."""
    import threading

    from sensor_msgs.msg import JointState

    from joint_tf_publisher.cli.doctor.listener import DoctorTarget, listen
    from joint_tf_publisher.ros.demo_source import DemoSession

    with DemoSession("doctor_test_joint_source") as source:
        publisher = source.node.create_publisher(JointState, "/joint_states", 10)
        source.node.create_timer(
            0.05, lambda: publisher.publish(JointState(name=["a"], position=[0.0]))
        )
        stopped = threading.Event()
        spinning = threading.Thread(target=source.spin, args=(stopped.is_set,))
        spinning.start()
        try:
            heard = listen(1.0, DoctorTarget(node="/doctor_test_state_publisher"))
        finally:
            stopped.set()
            spinning.join()
    message_info = getattr(importlib.import_module("rclpy.subscription"), "MessageInfo", None)
    tells_publisher = message_info is not None and "publisher_gid" in message_info.__annotations__
    assert bool(heard.joint_state_gids) == tells_publisher  # Jazzy's rclpy does not tell it
    assert heard.joint_state_topic == "/joint_states"
    assert heard.joint_state_publishers == ["/doctor_test_joint_source"]
    assert heard.silent_node == "/doctor_test_state_publisher"


def test_a_publishers_only_node_on_tf_is_not_asked_for_its_parameters() -> None:
    """Over real DDS: the node's global-tree publisher (``GlobalTree``: a node without
    parameter services) publishes /tf beside a node that has them. The doctor asks the
    latter, names the former as not asked (it would wait PARAMETER_TIMEOUT_S for no
    answer), and, named by --node, reports it not asked rather than silent."""
    import threading

    from tf2_msgs.msg import TFMessage

    from joint_tf_publisher.cli.doctor.analysis import diagnose
    from joint_tf_publisher.cli.doctor.command import observation_of
    from joint_tf_publisher.cli.doctor.listener import DoctorTarget, listen
    from joint_tf_publisher.cli.doctor.observation import Kind
    from joint_tf_publisher.ros.demo_source import DemoSession
    from joint_tf_publisher.ros.qos import tf_qos
    from joint_tf_publisher.ros.tf_publishers import GlobalTree

    with DemoSession("doctor_test_tf_source") as source:
        global_tree = GlobalTree(source.node)
        own_tf = source.node.create_publisher(TFMessage, "/tf", tf_qos())

        def publish() -> None:
            global_tree.tf.publish(TFMessage())
            own_tf.publish(TFMessage())

        source.node.create_timer(0.05, publish)
        stopped = threading.Event()
        spinning = threading.Thread(target=source.spin, args=(stopped.is_set,))
        spinning.start()
        try:
            heard = listen(1.0, DoctorTarget(node="/doctor_test_tf_source_global_tf"))
        finally:
            stopped.set()
            spinning.join()
            global_tree.destroy()
    assert heard.unasked_nodes == ["/doctor_test_tf_source_global_tf"]
    assert heard.silent_node == "/doctor_test_tf_source_global_tf"
    (finding,) = (
        f for f in diagnose(observation_of(heard, None, "", None)) if f.kind is Kind.NODE_SILENT
    )
    assert "was not asked (it has no parameter service)" in finding.summary


def test_a_message_info_without_publisher_gid_gives_an_unknown_publisher() -> None:
    """Jazzy's rclpy (7.1) passes timestamps and sequence numbers only: no KeyError, the
    publisher is unknown; with a gid (rclpy 8 and later) it is the gid's text."""
    from joint_tf_publisher.cli.doctor.listener import UNKNOWN_PUBLISHER, gid_text, publisher_of

    jazzy_info = {"source_timestamp": 1, "received_timestamp": 2}
    assert publisher_of(jazzy_info) == UNKNOWN_PUBLISHER
    assert publisher_of({**jazzy_info, "publisher_gid": {"data": GID}}) == gid_text(GID)


def test_the_live_doctor_s_frame_prefix_overrides_the_node_s() -> None:
    """cli.md: the live doctor checks the frames under the ``frame_prefix`` of the node it
    asked; ``--frame-prefix`` overrides it, and without either there is none (what the
    analysis does with the prefix: test_a_robot_under_another_prefix_...)."""
    from joint_tf_publisher.cli.doctor.command import observation_of
    from joint_tf_publisher.cli.doctor.listener import Heard, NodeSetup
    from joint_tf_publisher.cli.main import build_parser

    arm_text = (REPO_ROOT / "urdf" / "demo_arm.urdf").read_text()
    setup = NodeSetup("/joint_tf_publisher", arm_text, "r1/", ())
    assert build_parser().parse_args(["doctor"]).frame_prefix is None
    given = build_parser().parse_args(["doctor", "--frame-prefix", "r2/"]).frame_prefix
    assert given == "r2/"
    assert observation_of(Heard(setup=setup), None, "", None).frame_prefix == "r1/"
    assert observation_of(Heard(setup=setup), None, "", given).frame_prefix == "r2/"
    assert observation_of(Heard(), None, "", None).frame_prefix == ""
