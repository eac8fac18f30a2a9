"""pipeline: the short way of the intake (``take_joint_state``) answers as ``joint_state`` does.

Two pipelines take the same random run of serialized JointStates (the RMW's own bytes, from
rclpy's ``serialize_message``): one as the node takes them (the short way first, ``joint_state``
with the name block where it declines), one through ``joint_state`` alone. Every message's
TFMessage bytes (the global tree's too), the joint values kept, the health report and the log
must be the same; and the short way must have served most messages, so the comparison is not
empty. The run mixes what the short way hands back: names changing shape, values to clamp or
reject, zero stamps, stamps jumping back, a second topic, and settings changed under way
(rate limit or none, time offsets, clamp mode, exclusions, prefixes, the global tree).
"""

from __future__ import annotations

import math
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from repo_paths import TEST_DIR
from test_pipeline import MS, T0, RecordingLogger

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")

from rclpy.serialization import serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402
from joint_tf_publisher.health.model import GraphFacts, JointStateHealth  # noqa: E402
from joint_tf_publisher.health.reporting import Reporter, Throttle  # noqa: E402
from joint_tf_publisher.node_core.cdr import JointStateReader  # noqa: E402
from joint_tf_publisher.node_core.parameters import Settings  # noqa: E402
from joint_tf_publisher.node_core.pipeline import JointStatePipeline, LoadedModel  # noqa: E402
from joint_tf_publisher.stamps import ns_to_stamp  # noqa: E402

pytestmark = pytest.mark.ros

#: Files in test/urdf; the closed loops' (issue #45) in test/data/loops: their passive
#: joints are solved on the short way too.
ROBOTS = (
    "arm_mimic_gripper.urdf",
    "humanoid.urdf",
    "all_joint_types.urdf",
    "../data/loops/four_bar_loop_joint.urdf",
    "../data/loops/slider_crank.urdf",
)
ONE_VALUE = ("revolute", "continuous", "prismatic")
SECOND_TOPIC = 2  # a source_list topic's number (joint_sources)


class Side:
    """One pipeline with its readers (one per topic), log and clocks (settable, shared
    by the two sides through ``now``)."""

    def __init__(self, robot: Robot, text: str, now: list[int], short_way: bool) -> None:
        self.log = RecordingLogger()
        self.short_way = short_way
        self.served = 0
        reporter = Reporter(self.log, Throttle(10.0, lambda: now[0] / 1e9))
        health = JointStateHealth(1.0, lambda: now[0])
        self.pipeline = JointStatePipeline(Settings(), reporter, lambda: now[0], health)
        self.pipeline.install(LoadedModel(robot, text))
        self.pipeline.short_way = short_way

    def take(self, data: bytes, source: int) -> tuple[bytes, bytes]:
        """The bytes to publish (own tree, global tree; b"" for none), through the intake."""
        publication = self.pipeline.take_joint_state(data, source)
        if isinstance(publication, bytes):
            assert self.short_way
            self.served += 1
            return publication, b""
        if publication is None:
            return b"", b""
        in_global = publication.in_global_tree()
        return publication.to_bytes(), b"" if in_global is None else in_global.to_bytes()


def serialized(names: list[str], values: list[float], stamp_ns: int) -> bytes:
    msg = JointState(name=names, position=values)
    msg.header.stamp.sec, msg.header.stamp.nanosec = ns_to_stamp(stamp_ns)
    return bytes(serialize_message(msg))


def values_of(rng: random.Random, limits: list[tuple[float, float]]) -> list[float]:
    """Inside the limits; in one message of ten, one value beyond its upper limit, NaN or
    infinite."""
    values = [rng.uniform(max(lower, -3.0), min(upper, 3.0)) for lower, upper in limits]
    if rng.random() < 0.1:
        index = rng.randrange(len(values))
        upper = limits[index][1]
        values[index] = rng.choice((math.nan, math.inf, upper + 0.5 if upper < 3.0 else 1e300))
    return values


def shapes(robot: Robot, rng: random.Random) -> list[list[str]]:
    """Name lists a publisher sends: every one-value joint in order, shuffled, a subset, one
    with a name the robot lacks (a loop robot's subset: its first joint, the crank, alone)."""
    names = [j.name for j in robot.kinematics.moving_joints if j.joint_type in ONE_VALUE]
    shuffled = names[:]
    rng.shuffle(shuffled)
    return [names, shuffled, names[: max(1, len(names) // 2)], [*names, "not_a_joint"]]


SETTINGS_CHANGES: tuple[dict[str, Any], ...] = (
    {"ignore_timestamp": True},
    {"ignore_timestamp": False, "publish_frequency": 200.0},
    {"time_offset": -0.25},
    {"time_offset": 0.0, "clamp": "none"},
    {"clamp": "hard", "frame_prefix": "r1/"},
    {"global_frame_prefix": "fleet/"},
    {"global_frame_prefix": ""},
)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("urdf", ROBOTS)
def test_short_way_answers_as_joint_state(urdf: str, seed: int) -> None:
    path = Path(TEST_DIR / "urdf" / urdf)
    rng = random.Random(f"{urdf}{seed}")
    robot = Robot.load(path)
    now = [5 * 10**9]
    short, general = (Side(robot, path.read_text(), now, way) for way in (True, False))
    limits = {
        j.name: (
            (j.limit.lower, j.limit.upper)
            if j.limit is not None and j.joint_type in ("revolute", "prismatic")
            else (-math.inf, math.inf)
        )
        for j in robot.kinematics.moving_joints
    }
    shape_list = shapes(robot, rng)
    shape, stamp_ns, settings = shape_list[0], T0, Settings()
    for step in range(600):
        now[0] += MS
        roll = rng.random()
        if roll < 0.05:
            shape = rng.choice(shape_list)
        elif roll < 0.06:
            settings = replace(settings, **rng.choice(SETTINGS_CHANGES))
            for side in (short, general):
                side.pipeline.configure(settings)
        stamp_ns += rng.choice((1, 2, 3, 5, 10)) * MS
        sent_ns = stamp_ns
        if rng.random() < 0.02:
            sent_ns = 0
        elif rng.random() < 0.02:
            sent_ns = stamp_ns - 50 * MS  # a jump back
        source = 1
        if step == 300:  # a second topic, rate limited: the newer stamp wins
            settings = replace(settings, ignore_timestamp=False, publish_frequency=1000.0)
            for side in (short, general):
                side.pipeline.configure(settings)
        if 300 <= step < 400 and rng.random() < 0.5:
            source = SECOND_TOPIC
            sent_ns = stamp_ns - rng.choice((0, 3, 20)) * MS  # now and then older
        values = values_of(rng, [limits.get(name, (-1.0, 1.0)) for name in shape])
        data = serialized(shape, values, sent_ns)
        assert short.take(data, source) == general.take(data, source), f"message {step}"
    for side in (short, general):
        model = side.pipeline.model
        assert model is not None
    assert np.array_equal(
        short.pipeline.model.positions.values,  # type: ignore[union-attr]
        general.pipeline.model.positions.values,  # type: ignore[union-attr]
        equal_nan=True,
    )
    graph = GraphFacts(publishers={1: ["driver"]}, node_clock_ns=now[0])
    assert short.pipeline.health.report(graph) == general.pipeline.health.report(graph)
    assert short.log.lines == general.log.lines
    assert general.served == 0
    # A loop robot's three joints: its shapes decline the short way more often (one of four
    # names a joint it lacks, each value of three out of range one message in ten).
    least = 50 if robot.loop_joints else 150
    assert short.served > least, f"the short way served only {short.served} of 600 messages"


def test_padding_that_differs_keeps_the_short_way() -> None:
    """A serializer may leave padding bytes uninitialised: a message whose name block differs
    from the last one in padding alone still takes the short way, with the same answer."""
    path = Path(TEST_DIR / "urdf" / "arm_mimic_gripper.urdf")
    robot = Robot.load(path)
    now = [5 * 10**9]
    short, general = (Side(robot, path.read_text(), now, way) for way in (True, False))
    names = shapes(robot, random.Random(0))[0]
    first = serialized(names, [0.1] * len(names), T0)
    assert short.take(first, 1) == general.take(first, 1)
    reader = JointStateReader()  # the block the pipeline's reader of topic 1 read
    assert reader.read(first) is not None
    block = reader.block
    assert block is not None
    padding = [block.start + i for i in np.flatnonzero(block.meaning == 0).tolist()]
    assert padding, "these names leave no padding: choose others"
    second = bytearray(serialized(names, [0.2] * len(names), T0 + 1000 * MS))
    for offset in padding:
        second[offset] ^= 0xA5
    served = short.served
    assert short.take(bytes(second), 1) == general.take(bytes(second), 1) != (b"", b"")
    assert short.served == served + 1
