"""The static union over real DDS against hostile and unlucky graphs (issue #46's review):

- a participant announcing another node's ``/tf_static`` writer as a union (anyone may publish
  on ``/tf_static_union_writers``), then publishing that writer's frame with another value: the
  writer is no copy to the union, the first publisher keeps its frame, the conflict is
  reported;
- a node without a model yet (``description_from_topic``) that latched foreign frames, the
  union turned off: nothing foreign stays latched.

The hostile participant is an rclpy context of its own (a DDS participant of its own, as
another process is). One node under test each; every wait is on a condition with a generous
timeout.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from node_harness import NodeUnderTest, Probe, Recorder, started, wait_until  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.qos import DurabilityPolicy  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from test_node_static_union import (  # noqa: E402
    ARM_URDF,
    StaticPublisher,
    first_set,
    fixed_children,
    late,
    transform,
    writer_of,
)
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher.health.model import Key  # noqa: E402
from joint_tf_publisher.ros.qos import latched_qos, tf_static_qos  # noqa: E402
from joint_tf_publisher.ros.static_union import UNION_WRITERS_TOPIC  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

_diagnostics: dict[int, Recorder] = {}


def union_diagnostics(probe: Probe) -> Recorder:
    """/diagnostics as the probe of this module hears it (one subscription)."""
    if id(probe) not in _diagnostics:
        _diagnostics[id(probe)] = probe.subscribe(
            DiagnosticArray, "/diagnostics", late(DurabilityPolicy.VOLATILE)
        )
    return _diagnostics[id(probe)]


def union_status(probe: Probe) -> dict[str, str]:
    """The values of the latest status that has the union's keys."""
    statuses = [
        status
        for array in union_diagnostics(probe).messages()
        for status in array.status
        if any(v.key == Key.UNION_FRAMES for v in status.values)
    ]
    return {v.key: v.value for v in statuses[-1].values} if statuses else {}


@pytest.fixture(scope="module")
def node(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    union_diagnostics(probe)  # subscribed before the node starts
    params = {
        "robot_description": ARM_URDF.read_text(),
        "static_union": True,
        "diagnostic_period": 0.3,
    }
    under_test = started(probe, tmp_path_factory, "/union_h", params, handshake=None)
    yield under_test
    assert under_test.stop() == 0, under_test.stderr()


def wait_for_conflict(probe: Probe, conflict: str) -> None:
    """Until ``conflict`` (an entry of ``static union conflicts``) is on /diagnostics."""
    wait_until(
        lambda: conflict in union_status(probe).get(Key.UNION_CONFLICTS, ""),
        what=lambda: f"the conflict on /diagnostics, got {union_status(probe)}",
    )


def second_union(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory, namespace: str, **params: Any
) -> NodeUnderTest:
    """Another node with the union on, reporting nothing (/union_h's reports alone on
    /diagnostics)."""
    common = {"robot_description": ARM_URDF.read_text(), "static_union": True}
    return started(
        probe,
        tmp_path_factory,
        namespace,
        {**common, "diagnostic_period": 0.0, **params},
        handshake=None,
    )


@pytest.fixture
def hostile() -> Iterator[rclpy.node.Node]:
    """A node in a DDS participant of its own."""
    context = Context()
    rclpy.init(context=context)
    hostile_node = rclpy.create_node("evil", context=context)
    yield hostile_node
    hostile_node.destroy_node()
    rclpy.shutdown(context=context)


def test_an_announcement_naming_another_nodes_writer_makes_it_no_copy(
    probe: Probe, node: NodeUnderTest, hostile: rclpy.node.Node
) -> None:
    calibration = StaticPublisher(probe, "calibration_h")
    try:
        calibration.send(transform("base_link", "camera_h", 0.1))
        gid = writer_of(probe, "/union_h")
        wait_until(lambda: "camera_h" in first_set(probe, gid), what="camera_h in the union")
        calibration_gid = bytes(
            next(
                e.endpoint_gid
                for e in probe.node.get_publishers_info_by_topic("/tf_static")
                if e.node_name == "calibration_h"
            )
        ).rstrip(b"\0")
        announcer = hostile.create_publisher(String, UNION_WRITERS_TOPIC, latched_qos())
        announcer.publish(String(data=calibration_gid.hex()))
        rival = hostile.create_publisher(TFMessage, "/tf_static", tf_static_qos())
        rival.publish(TFMessage(transforms=[transform("base_link", "camera_h", 0.9)]))
        conflict = "camera_h (kept /calibration_h, refused /evil)"
        wait_for_conflict(probe, conflict)
        # the announcement has been read for a while (graph reads every second): still kept
        statuses = len(union_diagnostics(probe))
        wait_until(lambda: len(union_diagnostics(probe)) > statuses + 8, what="8 more statuses")
        assert conflict in union_status(probe).get(Key.UNION_CONFLICTS, "")
        assert first_set(probe, gid)["camera_h"].transform.translation.x == 0.1
    finally:
        calibration.leave()


def test_turned_off_without_a_model_nothing_foreign_stays_latched(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory
) -> None:
    waiting = started(
        probe,
        tmp_path_factory,
        "/union_n",
        {"description_from_topic": True, "static_union": True},
        handshake=None,
    )
    foreigner = StaticPublisher(probe, "foreigner")
    try:
        foreigner.send(transform("world", "foreign_frame", 1.0))
        gid = writer_of(probe, "/union_n")
        wait_until(lambda: "foreign_frame" in first_set(probe, gid), what="the foreign frame")
        assert all(r.successful for r in waiting.set_parameters(static_union=False))
        wait_until(
            lambda: "foreign_frame" not in first_set(probe, gid),
            what="no foreign frame latched with the union off",
        )
    finally:
        foreigner.leave()
        assert waiting.stop() == 0, waiting.stderr()


def test_a_publisher_contending_for_many_frames_is_logged_ten_times_then_counted(
    probe: Probe, node: NodeUnderTest, hostile: rclpy.node.Node
) -> None:
    """30 frames given differently in one message: 10 WARN lines and one for the 20 more
    (one line each before), the report names 10 and counts 20."""
    sensors = StaticPublisher(probe, "sensors_h")
    try:
        sensors.send(*[transform("base_link", f"mark_{k}", 0.1) for k in range(30)])
        gid = writer_of(probe, "/union_h")
        wait_until(lambda: "mark_29" in first_set(probe, gid), what="the 30 marks in the union")
        rival = hostile.create_publisher(TFMessage, "/tf_static", tf_static_qos())
        rival.publish(
            TFMessage(transforms=[transform("base_link", f"mark_{k}", 0.5) for k in range(30)])
        )
        wait_until(
            lambda: union_status(probe).get(Key.UNION_CONFLICTS, "").endswith(" and 20 more"),
            what=lambda: f"20 more conflicts on /diagnostics, got {union_status(probe)}",
        )

        def log() -> str:
            return node.stderr() + node.stdout_path.read_text()

        wait_until(lambda: "20 more static frame(s) given differently" in log(), what="the log")
        lines = [line for line in log().splitlines() if "static frame 'mark_" in line]
        assert len(lines) == 10, lines
    finally:
        sensors.leave()


def test_a_global_trees_frames_are_their_owners_to_another_union(
    probe: Probe,
    node: NodeUnderTest,
    hostile: rclpy.node.Node,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A node with the union on and a global tree announced its global tree's writer as a
    union too: to another union its global frames were copies, and any publisher took one
    over without a conflict. Only the writer of the union's message is announced now."""
    owner = second_union(probe, tmp_path_factory, "/union_g", global_frame_prefix="g/")
    try:
        frame = "g/" + sorted(fixed_children())[0]
        gid = writer_of(probe, "/union_h")
        kept = wait_until(lambda: first_set(probe, gid).get(frame), what=f"{frame} in /union_h")
        rival = hostile.create_publisher(TFMessage, "/tf_static", tf_static_qos())
        rival.publish(TFMessage(transforms=[transform(kept.header.frame_id, frame, 5.0)]))
        conflict = f"{frame} (kept /union_g/joint_tf_publisher_global_tf, refused /evil)"
        wait_for_conflict(probe, conflict)
        assert first_set(probe, gid)[frame].transform.translation.x != 5.0
    finally:
        assert owner.stop() == 0, owner.stderr()


def test_a_node_that_turned_its_union_off_owns_its_frames_again(
    probe: Probe,
    node: NodeUnderTest,
    hostile: rclpy.node.Node,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Its announcement gone with its union, its writer is no copy any more to another union:
    its frames were still taken over by any publisher without a conflict."""
    owner = second_union(probe, tmp_path_factory, "/union_t", frame_prefix="t/")
    try:
        frame = "t/" + sorted(fixed_children())[0]
        gid = writer_of(probe, "/union_h")
        kept = wait_until(lambda: first_set(probe, gid).get(frame), what=f"{frame} in /union_h")
        assert all(r.successful for r in owner.set_parameters(static_union=False))
        wait_until(
            lambda: (
                not [
                    e
                    for e in probe.node.get_publishers_info_by_topic(UNION_WRITERS_TOPIC)
                    if e.node_namespace == "/union_t"
                ]
            ),
            what="/union_t's announcement gone",
        )
        statuses = len(union_diagnostics(probe))  # /union_h reads the graph every second
        wait_until(lambda: len(union_diagnostics(probe)) > statuses + 10, what="10 statuses")
        rival = hostile.create_publisher(TFMessage, "/tf_static", tf_static_qos())
        rival.publish(TFMessage(transforms=[transform(kept.header.frame_id, frame, 5.0)]))
        conflict = f"{frame} (kept /union_t/joint_tf_publisher, refused /evil)"
        wait_for_conflict(probe, conflict)
    finally:
        assert owner.stop() == 0, owner.stderr()
