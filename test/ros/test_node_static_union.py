"""The union of the graph's statics over real DDS (``static_union``, issue #46), with two of
the node's console scripts (union on, one republishing every ``PERIOD_S``) and the probe's own
``/tf_static`` publishers, each a node of its own in the probe's process:

- ``last_only``: latches only its last message (keep last 1), sent twice with one frame each,
  as rclpy's StaticTransformBroadcaster did before geometry2#585 (the kit's tf2_ros keeps its
  frames: a plain publisher stands in for the old one);
- ``calibration``: gives ``camera`` and later changes it (a recalibration);
- ``leaver``: gives ``leaver_frame`` and leaves the graph;
- ``rival``: gives ``camera`` with another value (the conflict), later leaves.

Nodes are shared by the module's tests, which run in file order; every wait is on a condition
with a generous timeout.

The module needs an rclpy that gives each message's publisher (Kilted and later):
test/conftest.py leaves it out elsewhere, where test_node_parameters.py checks that the node
refuses ``static_union`` with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import TransformStamped  # noqa: E402
from node_harness import (  # noqa: E402
    NodeUnderTest,
    Probe,
    Recorder,
    started,
    wait_until,
)
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from repo_paths import TEST_DIR  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402
from joint_tf_publisher.health.model import Key  # noqa: E402
from joint_tf_publisher.ros.qos import tf_static_qos  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
PERIOD_S = 0.5
B_PREFIX = "b/"
#: /union_b's global tree: its own frames again on /tf_static, from a writer of its own.
GLOBAL_PREFIX = "g/"
RELAY_TOPIC = "/relayed/tf_static"


def fixed_children(prefix: str = "") -> set[str]:
    robot = Robot.load(ARM_URDF)
    return {prefix + j.child for j in robot.joints.values() if j.joint_type == "fixed"}


def transform(parent: str, child: str, x: float) -> TransformStamped:
    message = TransformStamped()
    message.header.frame_id, message.child_frame_id = parent, child
    message.header.stamp.sec = 7
    message.transform.translation.x = x
    message.transform.rotation.w = 1.0
    return message


class StaticPublisher:
    """A ``/tf_static`` publisher of its own node in the probe's context (keep last 1,
    transient local: it latches only its last message)."""

    def __init__(self, probe: Probe, name: str) -> None:
        self.probe = probe
        self.node = rclpy.create_node(name, context=probe.context)
        probe.executor.add_node(self.node)
        self.publisher = self.node.create_publisher(TFMessage, "/tf_static", tf_static_qos())

    def send(self, *transforms: TransformStamped) -> None:
        self.publisher.publish(TFMessage(transforms=list(transforms)))

    def leave(self) -> None:
        self.probe.executor.remove_node(self.node)
        self.node.destroy_node()


class Union:
    """The two nodes under test and the probe's publishers."""

    def __init__(
        self, a: NodeUnderTest, b: NodeUnderTest, publishers: dict[str, StaticPublisher]
    ) -> None:
        self.a, self.b = a, b
        self.publishers = publishers


@pytest.fixture(scope="module")
def union(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Union]:
    union_diagnostics(probe)  # subscribed before the nodes start
    publishers = {
        name: StaticPublisher(probe, name) for name in ("last_only", "calibration", "leaver")
    }
    publishers["last_only"].send(transform("base_link", "first_mark", 1.0))
    publishers["calibration"].send(transform("base_link", "camera", 0.1))
    publishers["leaver"].send(transform("world", "leaver_frame", 3.0))
    common = {"robot_description": ARM_URDF.read_text(), "static_union": True}
    a = started(
        probe,
        tmp_path_factory,
        "/union_a",
        {**common, "static_republish_period": PERIOD_S, "diagnostic_period": 0.3},
        handshake=None,
    )
    try:
        b_params = {**common, "frame_prefix": B_PREFIX, "global_frame_prefix": GLOBAL_PREFIX}
        b = started(probe, tmp_path_factory, "/union_b", b_params, None)
    except BaseException:
        a.stop()
        raise
    yield Union(a, b, publishers)
    for node in (a, b):
        assert node.stop() == 0, node.stderr()


def writer_of(probe: Probe, namespace: str, node: str = "joint_tf_publisher") -> bytes:
    """The GID of the /tf_static writer of ``node`` in ``namespace`` (the node's own; its
    global tree's is ``joint_tf_publisher_global_tf``)."""
    endpoints = wait_until(
        lambda: [
            e
            for e in probe.node.get_publishers_info_by_topic("/tf_static")
            if e.node_namespace == namespace and e.node_name == node
        ],
        what=f"{namespace}'s /tf_static writer",
    )
    return bytes(endpoints[0].endpoint_gid).rstrip(b"\0")


class ByWriter:
    """Messages of one subscription, each with its writer's GID."""

    def __init__(
        self, probe: Probe, topic: str, qos: QoSProfile, message_type: Any = TFMessage
    ) -> None:
        self.messages: list[tuple[bytes, Any]] = []
        self.probe = probe
        self.subscription = probe.node.create_subscription(message_type, topic, self, qos)

    def __call__(self, message: Any, info: Any) -> None:
        gid = bytes(info["publisher_gid"]["data"]).rstrip(b"\0")
        self.messages.append((gid, message))

    def of(self, gid: bytes) -> list[dict[str, TransformStamped]]:
        return [{t.child_frame_id: t for t in m.transforms} for g, m in self.messages if g == gid]

    def close(self) -> None:
        self.probe.node.destroy_subscription(self.subscription)


def late(durability: DurabilityPolicy, depth: int = 100) -> QoSProfile:
    return QoSProfile(depth=depth, reliability=ReliabilityPolicy.RELIABLE, durability=durability)


def everything() -> set[str]:
    """The complete set as /union_a has it (/union_b's global tree among the others)."""
    return (
        fixed_children()
        | fixed_children(B_PREFIX)
        | fixed_children(GLOBAL_PREFIX)
        | {"first_mark", "second_mark", "camera", "leaver_frame"}
    )


def test_late_subscribers_get_the_complete_set_in_one_message(probe: Probe, union: Union) -> None:
    """A publisher that left and one that latched only its last message keep their frames;
    a late TRANSIENT_LOCAL reader gets them in the node's latched message, a late VOLATILE
    one in its next republication: one message each, complete."""
    gid_a = writer_of(probe, "/union_a")
    wait_until(lambda: "first_mark" in first_set(probe, gid_a), what="first_mark in the union")
    union.publishers["last_only"].send(transform("base_link", "second_mark", 2.0))  # only this
    union.publishers["leaver"].leave()
    wait_until(lambda: set(first_set(probe, gid_a)) >= everything(), what="the complete set")
    for durability in (DurabilityPolicy.TRANSIENT_LOCAL, DurabilityPolicy.VOLATILE):
        assert set(first_set(probe, gid_a, durability)) == everything(), durability.name


def first_set(
    probe: Probe, gid: bytes, durability: DurabilityPolicy = DurabilityPolicy.TRANSIENT_LOCAL
) -> dict[str, TransformStamped]:
    """The first message of writer ``gid`` a new /tf_static reader gets: with TRANSIENT_LOCAL,
    the latched one; with VOLATILE, the next one sent."""
    reader = ByWriter(probe, "/tf_static", late(durability))
    try:
        sets = wait_until(lambda: reader.of(gid), what=f"a {durability.name} message")
    finally:
        reader.close()
    return sets[0]


def test_the_global_tree_keeps_the_own_frames_and_is_no_foreign_publisher(
    probe: Probe, union: Union
) -> None:
    """/union_b's global tree, on /tf_static too: its message has /union_b's own frames with
    the global prefix, nothing foreign; /union_b's union ignores it (its own writer)."""
    gid_b = writer_of(probe, "/union_b")
    gid_global = writer_of(probe, "/union_b", "joint_tf_publisher_global_tf")
    assert set(first_set(probe, gid_global)) == fixed_children(GLOBAL_PREFIX)
    wait_until(
        lambda: set(first_set(probe, gid_b)) == everything() - fixed_children(GLOBAL_PREFIX),
        what=lambda: f"/union_b's set, got {sorted(first_set(probe, gid_b))}",
    )


def test_a_single_sample_relay_carries_everything(probe: Probe, union: Union) -> None:
    """A relay keeping one sample (keep last 1 both ways, as a bridge does) into another
    namespace: a late subscriber there gets one message, and it has everything."""
    relay_node = rclpy.create_node("relay", context=probe.context)
    probe.executor.add_node(relay_node)
    out = relay_node.create_publisher(TFMessage, RELAY_TOPIC, tf_static_qos())
    relay_node.create_subscription(
        TFMessage, "/tf_static", out.publish, late(DurabilityPolicy.TRANSIENT_LOCAL, 1)
    )
    try:

        def relayed_is_complete() -> bool:
            recorder = Recorder()
            subscription = probe.node.create_subscription(
                TFMessage, RELAY_TOPIC, recorder, late(DurabilityPolicy.TRANSIENT_LOCAL, 1)
            )
            try:
                messages = wait_until(lambda: recorder.messages(), what="the relay's sample")
            finally:
                probe.node.destroy_subscription(subscription)
            return {t.child_frame_id for t in messages[-1].transforms} >= everything()

        wait_until(relayed_is_complete, what="a complete sample behind the relay")
    finally:
        probe.executor.remove_node(relay_node)
        relay_node.destroy_node()


def test_a_recalibration_wins_and_no_union_echoes_the_stale_value(
    probe: Probe, union: Union
) -> None:
    """Two nodes with the union on, each reading the other's copy: after ``camera`` changes,
    both carry the new value, and the node's next messages never bring the old one back
    nor grow."""
    gid_a, gid_b = writer_of(probe, "/union_a"), writer_of(probe, "/union_b")
    reader = ByWriter(probe, "/tf_static", late(DurabilityPolicy.VOLATILE))
    try:
        union.publishers["calibration"].send(transform("base_link", "camera", 0.2))

        def camera_x(gid: bytes) -> float | None:
            sets = reader.of(gid)
            return (
                sets[-1]["camera"].transform.translation.x
                if sets and "camera" in sets[-1]
                else None
            )

        wait_until(lambda: camera_x(gid_a) == 0.2 and camera_x(gid_b) == 0.2, what="0.2 in both")
        seen = len(reader.of(gid_a))
        wait_until(lambda: len(reader.of(gid_a)) >= seen + 4, what="4 more republications")
        later = reader.of(gid_a)[seen:]
        assert all(m["camera"].transform.translation.x == 0.2 for m in later)
        assert {len(m) for m in later} == {len(everything())}
        statuses = len(union_diagnostics(probe).messages)
        wait_until(
            lambda: len(union_diagnostics(probe).messages) > statuses + 8, what="new statuses"
        )
        for namespace in ("/union_a", "/union_b"):
            status = union_status(probe, namespace)
            assert status[Key.UNION_CONFLICTS] == "", namespace  # other unions' copies: none
            # its own messages (its global tree's too) come back: not counted
            assert "own frames" not in status[Key.UNION_REFUSED], namespace
    finally:
        reader.close()


def statuses_of(probe: Probe, namespace: str) -> list[dict[str, str]]:
    """The values of every status of the node in ``namespace`` (by its /diagnostics writer)
    that has the union's keys, oldest first."""
    endpoints = probe.node.get_publishers_info_by_topic("/diagnostics")
    writers = {
        bytes(e.endpoint_gid).rstrip(b"\0") for e in endpoints if e.node_namespace == namespace
    }
    return [
        {v.key: v.value for v in status.values}
        for gid, array in union_diagnostics(probe).messages
        if gid in writers
        for status in array.status
        if any(v.key == Key.UNION_FRAMES for v in status.values)
    ]


def union_status(probe: Probe, namespace: str = "/union_a") -> dict[str, str]:
    """The values of the latest status of the node in ``namespace`` with the union's keys; {}
    before one came."""
    statuses = statuses_of(probe, namespace)
    return statuses[-1] if statuses else {}


_diagnostics: list[ByWriter] = []


def union_diagnostics(probe: Probe) -> ByWriter:
    """/diagnostics with each array's writer (one subscription for the module)."""
    if not _diagnostics:
        _diagnostics.append(
            ByWriter(probe, "/diagnostics", late(DurabilityPolicy.VOLATILE), DiagnosticArray)
        )
    return _diagnostics[0]


def test_a_conflict_is_reported_naming_the_frame_and_both_nodes(probe: Probe, union: Union) -> None:
    rival = StaticPublisher(probe, "rival")
    try:
        rival.send(transform("base_link", "camera", 0.9))
        wait_until(
            lambda: (
                "camera (kept /calibration, refused /rival)"
                in union_status(probe).get(Key.UNION_CONFLICTS, "")
            ),
            what=lambda: f"the conflict on /diagnostics, got {union_status(probe)}",
        )
        assert (
            first_set(probe, writer_of(probe, "/union_a"))["camera"].transform.translation.x == 0.2
        )
        assert "static frame 'camera' given differently by /calibration and /rival" in (
            union.a.stderr() + union.a.stdout_path.read_text()
        )
    finally:
        rival.leave()
    wait_until(
        lambda: union_status(probe).get(Key.UNION_CONFLICTS) == "",
        what="the conflict to end with the rival gone",
    )


def test_junk_and_hostile_transforms_are_counted_and_the_union_serves_on(
    probe: Probe, union: Union
) -> None:
    """Bytes that are no TFMessage, a NaN, a frame that is its own parent and a foreign value
    of one of /union_a's own frames: counted on /diagnostics, the set unchanged."""
    own_frame = sorted(fixed_children())[0]
    hostile = StaticPublisher(probe, "hostile")
    try:
        for junk in (b"\x00\x01\x00\x00\xff\xff\xff\x7f", b"\x00\x01"):
            hostile.publisher.publish(junk)
        hostile.send(
            transform("base_link", "nan_frame", float("nan")),
            transform("loop", "loop", 0.0),
            transform("elsewhere", own_frame, 5.0),
        )
        refused = ("value not finite", "frame is its own parent", "one of the node's own frames")
        wait_until(
            lambda: all(r in union_status(probe).get(Key.UNION_REFUSED, "") for r in refused),
            what=lambda: f"the refusals on /diagnostics, got {union_status(probe)}",
        )
        wait_until(
            lambda: any(
                "tf2_msgs/TFMessage (" in values.get(Key.UNDECODABLE, "")
                for values in statuses_of(probe, "/union_a")
            ),
            what="the undecodable TFMessages on /diagnostics",
        )
    finally:
        hostile.leave()
    latched = first_set(probe, writer_of(probe, "/union_a"))
    assert set(latched) == everything()
    assert latched[own_frame].header.frame_id != "elsewhere"


def test_turned_off_the_node_latches_its_own_statics_alone(probe: Probe, union: Union) -> None:
    assert all(r.successful for r in union.b.set_parameters(static_union=False))
    wait_until(
        lambda: set(first_set(probe, writer_of(probe, "/union_b"))) == fixed_children(B_PREFIX),
        what="/union_b's own statics alone",
    )


def test_a_lower_cap_at_runtime_drops_the_frames_beyond_it_counted(
    probe: Probe, union: Union
) -> None:
    assert all(r.successful for r in union.a.set_parameters(static_union_max_frames=2))
    gid_a = writer_of(probe, "/union_a")
    wait_until(
        lambda: len(set(first_set(probe, gid_a)) - fixed_children()) == 2,
        what="/union_a's latched set with 2 foreign frames",
    )
    wait_until(
        lambda: "beyond static_union_max_frames" in union_status(probe).get(Key.UNION_REFUSED, ""),
        what="the frames beyond the cap counted",
    )
