"""The remote output changed at runtime over DDS (issue #44): one node (the console script,
namespace ``/remote_runtime``) started without a remote output; the tests run in file order
on it: turned on by ``remote.frames`` (the rate unchanged), ``remote.rate`` set as ros2cli and
launch send a whole number and at both sides of its bounds, moved to another ``remote.topic``
(no publisher left on the old topics, so no stale latched statics), turned off by
``remote.frames: []``; every double parameter set to its maximum as an integer; last,
``diagnostic_period: 0`` turning the health report off and a period turning it on again (it
shares this node: one node for the runtime changes of #44). The policy (what a change asks)
is test/node_core/test_remote_output.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")
pytest.importorskip("diagnostic_msgs.msg", reason="needs diagnostic_msgs (run in .venv)")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from node_harness import (  # noqa: E402
    NodeUnderTest,
    Probe,
    Recorder,
    fresh_stamp,
    latched_qos,
    pause,
    started,
    wait_until,
)
from repo_paths import TEST_DIR  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

pytestmark = [pytest.mark.ros]

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
NAMESPACE = "/remote_runtime"
JOINTS = [f"joint_{i}" for i in range(1, 8)] + ["finger_joint"]
VALUES = [0.3, -0.7, 2.5, -1.2, 0.4, 1.1, -2.0, 0.5]
#: pedestal: a static chain from the root (remote statics); link_3: moving joints (remote/tf).
CHOSEN = ["pedestal", "link_3"]


@pytest.fixture(scope="module")
def node(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    params = {"robot_description": ARM_URDF.read_text(), "ignore_timestamp": True}
    node = started(probe, tmp_path_factory, NAMESPACE, params, ("joint_1", "link_1"))
    yield node
    assert node.stop() == 0, node.stderr()


def publishers(probe: Probe, topic: str) -> int:
    return int(probe.node.count_publishers(f"{NAMESPACE}/{topic}"))


def wait_publishers(probe: Probe, counts: dict[str, int]) -> None:
    """Wait until each topic (relative to the namespace) has that many publishers."""
    wait_until(
        lambda: all(publishers(probe, topic) == n for topic, n in counts.items()),
        what=lambda: f"publishers {counts} (now {[publishers(probe, t) for t in counts]})",
    )


def remote_outputs(node: NodeUnderTest, probe: Probe, topic: str) -> tuple[set[str], set[str]]:
    """The child frames of the latched statics on ``<topic>_static`` and of a message on
    ``topic`` (joint states sent until one comes)."""
    statics = Recorder()
    dynamic = Recorder()
    subscriptions = [
        probe.node.create_subscription(
            TFMessage, f"{NAMESPACE}/{topic}_static", statics, latched_qos()
        ),
        probe.node.create_subscription(TFMessage, f"{NAMESPACE}/{topic}", dynamic, 10),
    ]

    def both() -> bool:
        node.publish(JOINTS, VALUES, fresh_stamp())
        pause(0.05)
        return bool(statics.messages() and dynamic.messages())

    try:
        wait_until(both, what=f"{topic} and {topic}_static")
    finally:
        for subscription in subscriptions:
            probe.node.destroy_subscription(subscription)
    return (
        {t.child_frame_id for t in statics.messages()[-1].transforms},
        {t.child_frame_id for t in dynamic.messages()[-1].transforms},
    )


def test_turned_on_at_runtime_with_the_rate_unchanged(node: NodeUnderTest, probe: Probe) -> None:
    assert publishers(probe, "remote/tf") == 0
    (result,) = node.set_parameters(**{"remote.frames": CHOSEN})
    assert result.successful, result.reason
    wait_publishers(probe, {"remote/tf": 1, "remote/tf_static": 1})
    assert remote_outputs(node, probe, "remote/tf") == ({"pedestal"}, {"link_3"})


def test_remote_rate_takes_a_whole_number_and_holds_its_bounds(node: NodeUnderTest) -> None:
    """ros2cli and launch send ``remote.rate 5`` as an integer; (0, 1000] both sides."""
    for accepted in (5, 1000, 1000.0, 0.001):
        (result,) = node.set_parameters(**{"remote.rate": accepted})
        assert result.successful, (accepted, result.reason)
    for refused in (0, 0.0, -1.0, 1000.5, 1001):
        (result,) = node.set_parameters(**{"remote.rate": refused})
        assert not result.successful and "remote.rate" in result.reason, refused
    (result,) = node.set_parameters(**{"remote.rate": 20})
    assert result.successful, result.reason


def test_a_new_topic_leaves_no_publisher_on_the_old_ones(node: NodeUnderTest, probe: Probe) -> None:
    (result,) = node.set_parameters(**{"remote.topic": "viewer/tf"})
    assert result.successful, result.reason
    wait_publishers(
        probe,
        {"remote/tf": 0, "remote/tf_static": 0, "viewer/tf": 1, "viewer/tf_static": 1},
    )
    assert remote_outputs(node, probe, "viewer/tf") == ({"pedestal"}, {"link_3"})


def test_no_frames_turns_it_off_leaving_no_publisher(node: NodeUnderTest, probe: Probe) -> None:
    (result,) = node.set_parameters(**{"remote.frames": []})
    assert result.successful, result.reason
    wait_publishers(probe, {"viewer/tf": 0, "viewer/tf_static": 0})


def test_every_double_parameter_takes_its_maximum_as_an_integer(node: NodeUnderTest) -> None:
    """As ros2cli and launch send a whole number: the documented maximum taken, one more
    refused naming the parameter; each put back after (the defaults are in the docs)."""
    maxima = {
        "publish_frequency": (1000, 20.0),
        "diagnostic_period": (3600, 1.0),
        "joint_state_timeout": (3600, 1.0),
        "static_republish_period": (3600, 0.0),
        "time_offset": (2147483647, 0.0),
        "remote.rate": (1000, 20.0),
    }
    for name, (maximum, default) in maxima.items():
        (result,) = node.set_parameters(**{name: maximum})
        assert result.successful, (name, result.reason)
        (result,) = node.set_parameters(**{name: maximum + 1})
        assert not result.successful and name in result.reason, (name, result.reason)
        (result,) = node.set_parameters(**{name: default})
        assert result.successful, (name, result.reason)


def test_a_diagnostic_period_of_0_turns_the_report_off_and_a_period_on_again(
    node: NodeUnderTest, probe: Probe
) -> None:
    """node.md: ``diagnostic_period: 0`` turns the report (and its warnings) off; a runtime
    change to a period starts it again. Off is seen as no report over many of the old
    periods (a report in flight when it changed is let through first)."""
    reports: list[DiagnosticArray] = []

    def on_array(array: DiagnosticArray) -> None:
        if any(status.hardware_id == "arm_mimic_gripper" for status in array.status):
            reports.append(array)

    subscription = probe.node.create_subscription(DiagnosticArray, "/diagnostics", on_array, 10)
    try:
        assert node.set_parameters(diagnostic_period=0.2)[0].successful
        wait_until(lambda: len(reports) >= 2, what="health reports every 0.2 s")
        (result,) = node.set_parameters(diagnostic_period=0)
        assert result.successful, result.reason
        pause(0.5)
        before = len(reports)
        pause(2.0)  # ten of the old periods
        assert len(reports) == before, "a health report with diagnostic_period 0"
        assert node.set_parameters(diagnostic_period=1.0)[0].successful  # its default
        wait_until(lambda: len(reports) > before, what="the health report back")
    finally:
        probe.node.destroy_subscription(subscription)
