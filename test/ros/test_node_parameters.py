"""The console script's parameters over DDS, through rclpy's parameter services (what
``ros2 param list/get/describe/dump`` call); its log of description warnings. The module
runs once per executor the node can spin with (``probe`` below).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

yaml = pytest.importorskip("yaml")

from node_harness import (  # noqa: E402
    NodeUnderTest,
    Probe,
    fresh_stamp,
    matrix_of,
    probe_per_executor,  # noqa: F401 (the module's probe: each executor in turn)
    started,
    wait_until,
)
from rcl_interfaces.msg import ParameterType  # noqa: E402
from rclpy.parameter import parameter_value_to_python  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from repo_paths import TEST_DIR  # noqa: E402
from test_user_errors import NODE  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402
from joint_tf_publisher.node_core.parameters import PARAMETERS  # noqa: E402
from joint_tf_publisher.ros import runtime  # noqa: E402
from joint_tf_publisher.ros.static_union import union_supported  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
NODE_NAME = "joint_tf_publisher"


#: A request with no answer after this long is sent again, seconds.
RESEND_S = 2.0


def call(probe: Probe, request: Callable[[], Any]) -> Any:
    """The answer to ``request()`` (a read-only parameter service call, so safe to repeat).

    Sent again while unanswered: right after discovery the node's reply can be dropped,
    before its response writer has matched the probe's reader (rmw_fastrtps gives up after
    100 ms and logs "failed to send response (timeout): client will not receive response").
    """
    futures = [request()]
    last_sent = [time.monotonic()]

    def answered() -> bool:
        probe.spin_for(0.01)
        done = any(future.done() for future in futures)
        if not done and time.monotonic() - last_sent[0] > RESEND_S:
            futures.append(request())
            last_sent[0] = time.monotonic()
        return done

    wait_until(answered, what="a parameter service")
    return next(future for future in futures if future.done()).result()


def client(probe: Probe, namespace: str) -> AsyncParameterClient:
    parameters = AsyncParameterClient(probe.node, f"{namespace}/{NODE_NAME}")
    wait_until(
        lambda: (probe.spin_for(0.01), parameters.services_are_ready())[1],
        what="the parameter services",
    )
    return parameters


def dump(probe: Probe, namespace: str) -> dict[str, Any]:
    """What ``ros2 param dump`` writes: every parameter, nested at the dots, under the node's
    full name."""
    parameters = client(probe, namespace)
    names = sorted(call(probe, lambda: parameters.list_parameters()).result.names)
    values = call(probe, lambda: parameters.get_parameters(names)).values
    tree: dict[str, Any] = {}
    for name, value in zip(names, values, strict=True):
        assert value.type != ParameterType.PARAMETER_NOT_SET, f"{name} has no value"
        *parents, leaf = name.split(".")
        branch = tree
        for part in parents:
            branch = branch.setdefault(part, {})
        branch[leaf] = parameter_value_to_python(value)
    return {f"{namespace}/{NODE_NAME}": {"ros__parameters": tree}}


@pytest.fixture(scope="module")
def defaults(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    node = started(
        probe, tmp_path_factory, "/defaults", {"robot_description": ARM_URDF.read_text()}, None
    )
    yield node
    node.stop()


def test_every_parameter_has_a_value_and_a_description(
    probe: Probe, defaults: NodeUnderTest
) -> None:
    parameters = client(probe, "/defaults")
    names = [spec.name for spec in PARAMETERS]
    listed = call(probe, lambda: parameters.list_parameters()).result.names
    assert set(names) <= set(listed)
    values = call(probe, lambda: parameters.get_parameters(names)).values
    by_name = dict(zip(names, values, strict=True))
    # "Parameter not set" was the answer for exclude_joints (declared typed, without a value).
    assert by_name["exclude_joints"].type == ParameterType.PARAMETER_STRING_ARRAY
    assert list(by_name["exclude_joints"].string_array_value) == []
    for spec in PARAMETERS:
        if spec.name != "robot_description":
            expected = list(spec.default) if isinstance(spec.default, tuple) else spec.default
            assert parameter_value_to_python(by_name[spec.name]) == expected, spec.name
    descriptors = call(probe, lambda: parameters.describe_parameters(names)).descriptors
    for spec, descriptor in zip(PARAMETERS, descriptors, strict=True):
        assert descriptor.description == spec.description
        assert descriptor.read_only == spec.declared_read_only
    (frequency_range,) = descriptors[names.index("publish_frequency")].floating_point_range
    assert (frequency_range.from_value, frequency_range.to_value) == (0.001, 1000.0)


#: Values a running node is sent that no parameter takes (issue 43): (parameter, value,
#: words of the reason). rclpy's range refuses NaN and the infinities of a ranged double
#: before the node's callback, naming the parameter; the others reach the node's table. (An
#: integer beyond int64 cannot be sent: rclpy's message refuses it in the caller.)
HOSTILE_AT_RUNTIME: list[tuple[str, Any, str]] = [
    ("publish_frequency", float("nan"), "publish_frequency"),
    ("remote.rate", float("inf"), "remote.rate"),
    ("time_offset", -float("inf"), "time_offset"),
    ("diagnostic_period", True, "diagnostic_period must be a number of seconds, got True"),
    ("publish_frequency", "1e400", "publish_frequency must be a number, got '1e400'"),
    ("zeros.joint_1", float("nan"), "zeros.joint_1 must be finite"),
    ("source_time_offsets", [float("nan")], "source_time_offsets[0] must be finite"),
    ("remote.frames", [f"l{i}" for i in range(5000)], "remote.frames holds 5000 items"),
    ("exclude_joints", ["j"] * 50_000, "exclude_joints holds 50000 items: at most 4096"),
    # Above 0 but under the rates' 0.001 Hz (1e-300 Hz: a period no int64 of nanoseconds
    # holds, an OverflowError per state): rclpy's range refuses them first, naming them.
    ("publish_frequency", 1e-300, "publish_frequency"),
    ("remote.rate", 5e-324, "remote.rate"),
]


def test_hostile_numbers_and_sizes_at_runtime_are_refused_by_name(
    defaults: NodeUnderTest,
) -> None:
    for name, value, words in HOSTILE_AT_RUNTIME:
        (result,) = defaults.set_parameters(**{name: value})
        assert not result.successful and words in result.reason, (name, result.reason)
    (result,) = defaults.set_parameters(publish_frequency=50.0)  # and it serves on
    assert result.successful


def test_static_union_is_taken_where_rclpy_gives_each_messages_publisher(
    defaults: NodeUnderTest,
) -> None:
    """Taken (and turned off again) on rclpy 9 and later; refused with the reason where rclpy
    gives no publisher with a message (Jazzy, Humble); its cap refused beyond its range."""
    (result,) = defaults.set_parameters(static_union=True)
    if union_supported():
        assert result.successful, result.reason
        (result,) = defaults.set_parameters(static_union=False)
        assert result.successful, result.reason
    else:
        assert not result.successful and "publisher_gid" in result.reason, result.reason
    for frames in (0, 100_001):
        (result,) = defaults.set_parameters(static_union_max_frames=frames)
        assert not result.successful and "static_union_max_frames" in result.reason
    (result,) = defaults.set_parameters(static_union_max_frames=100_000)
    assert result.successful, result.reason


def test_a_dump_starts_the_node_again_unchanged(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory
) -> None:
    params = {"robot_description": ARM_URDF.read_text(), "frame_prefix": "d/", "clamp": "soft"}
    first = started(probe, tmp_path_factory, "/dumped", params, None)
    try:
        dumped = dump(probe, "/dumped")
    finally:
        assert first.stop() == 0
    path = tmp_path_factory.mktemp("dump") / "dump.yaml"
    path.write_text(yaml.safe_dump(dumped))
    process = subprocess.Popen(
        [*NODE, "--ros-args", "-r", "__ns:=/dumped", "--params-file", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
    )
    try:
        assert dump(probe, "/dumped") == dumped
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr.decode()[-2000:]


def test_description_warnings_are_logged_once_through_the_node_logger(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory
) -> None:
    text = ARM_URDF.read_text().replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 2"/>', 1)
    assert text != ARM_URDF.read_text()
    node = started(probe, tmp_path_factory, "/warned", {"robot_description": text}, None)
    try:
        wait_until(lambda: "moving joints" in node.stderr(), what="the node's start")
    finally:
        assert node.stop() == 0
    lines = [line for line in node.stderr().splitlines() if "is not a unit vector" in line]
    assert len(lines) == 1, node.stderr()  # not also bare, through Python logging
    assert re.match(
        r"^\[WARN\] \[[\d.]+\] \[[\w.]*joint_tf_publisher\]: robot_description:\d+: ", lines[0]
    )


def test_each_executor_serves_the_node_and_is_named_in_its_log(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Joint states and a parameter change, with the executor of this round of the module
    (``JOINT_TF_PUBLISHER_EXECUTOR=rclpy``: rclpy's own executor, the same behaviour)."""
    executor = os.environ[runtime.EXECUTOR_VARIABLE]
    robot = Robot.load(ARM_URDF)
    node = started(
        probe,
        tmp_path_factory,
        f"/served_{executor}",
        {"robot_description": ARM_URDF.read_text(), "ignore_timestamp": True},
        handshake=("joint_1", "link_1"),
    )
    try:
        msg = node.publish_and_wait(["joint_2"], [0.4], fresh_stamp(), "link_2")
        (t,) = msg.transforms
        assert matrix_of(t.transform) == pytest.approx(robot.joints["joint_2"].child_pose(0.4))
        (result,) = node.set_parameters(frame_prefix="f/")
        assert result.successful
        assert f"spinning with {runtime.SPINNING_WITH[executor]}" in node.stderr()
    finally:
        assert node.stop() == 0
    assert "Traceback" not in node.stderr()
