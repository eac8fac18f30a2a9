"""Delayed joint states: ``time_offset`` and ``source_time_offsets`` shift the stamps the
pipeline uses (rate limiting, the stamps on /tf), checked against what a stamp holds. No
rclpy: topics are the pipeline's source numbers. The same over DDS: test/ros/test_node_statics.py.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from test_pipeline import MS, PLANAR_URDF, T0, Rig

from joint_tf_publisher.health.model import GraphFacts, Key, Level
from joint_tf_publisher.node_core.joint_sources import (
    FIRST_LISTED_SOURCE,
    JOINT_STATES_SOURCE,
)
from joint_tf_publisher.node_core.parameters import (
    ParameterRejected,
    Settings,
    parse_time_offset,
    parse_time_offsets,
)
from joint_tf_publisher.node_core.pipeline import Publication
from joint_tf_publisher.stamps import MAX_STAMP_NS

S = 1_000_000_000
GRIPPER = FIRST_LISTED_SOURCE


def send(
    rig: Rig, names: Sequence[str], values: Sequence[float], stamp_ns: int, source: int
) -> Publication | None:
    return rig.pipeline.joint_state(stamp_ns, tuple(names), np.array(values, dtype=float), source)


def offset_rig(**settings: Any) -> Rig:
    rig = Rig(**settings)
    rig.pipeline.number_sources({"gripper/joint_states": GRIPPER})
    return rig


def test_time_offset_shifts_every_stamp_by_exactly_the_offset() -> None:
    rig = offset_rig(time_offset=-0.008)
    publication = send(rig, ["joint_4"], [0.1], T0, JOINT_STATES_SOURCE)
    assert publication is not None and publication.stamp_ns == T0 - 8 * MS


def test_the_rate_limiter_sees_the_shifted_stamps() -> None:
    rig = offset_rig(time_offset=0.5, publish_frequency=10.0)
    stamps = [T0, T0 + 50 * MS, T0 + 100 * MS, T0 + 130 * MS, T0 + 200 * MS]
    published = [send(rig, ["joint_4"], [0.1], stamp, JOINT_STATES_SOURCE) for stamp in stamps]
    assert [p.stamp_ns for p in published if p is not None] == [
        T0 + 500 * MS,
        T0 + 600 * MS,
        T0 + 700 * MS,
    ]


def test_a_source_list_topic_adds_its_own_offset_to_time_offset() -> None:
    rig = offset_rig(
        time_offset=0.25,
        source_list=("gripper/joint_states",),
        source_time_offsets=(-0.008,),
    )
    arm = send(rig, ["joint_4"], [0.1], T0, JOINT_STATES_SOURCE)
    gripper = send(rig, ["finger_joint"], [0.01], T0, GRIPPER)
    assert arm is not None and arm.stamp_ns == T0 + 250 * MS
    assert gripper is not None and gripper.stamp_ns == T0 + 242 * MS


def test_a_multi_dof_joint_state_is_shifted_too() -> None:
    rig = Rig(PLANAR_URDF, time_offset=1.5)
    joint = next(j.name for j in rig.robot.joints.values() if j.joint_type == "planar")
    publication = rig.pipeline.multi_dof_joint_state(
        T0, (joint,), np.array([[1.0, 2.0, 0.0]]), np.array([[0.0, 0.0, 0.0, 1.0]])
    )
    assert publication is not None and publication.stamp_ns == T0 + 1500 * MS


def test_a_zero_stamp_takes_the_node_clock_and_then_the_offset() -> None:
    rig = offset_rig(time_offset=-0.5)
    publication = send(rig, ["joint_4"], [0.1], 0, JOINT_STATES_SOURCE)
    assert publication is not None and publication.stamp_ns == rig.clock.now_ns - 500 * MS


def test_a_runtime_change_applies_from_the_next_message() -> None:
    rig = offset_rig()
    first = send(rig, ["joint_4"], [0.1], T0, JOINT_STATES_SOURCE)
    assert first is not None and first.stamp_ns == T0
    rig.pipeline.configure(rig.pipeline.settings.changed({"time_offset": 2.0}))
    publication = send(rig, ["joint_4"], [0.2], T0 + S, JOINT_STATES_SOURCE)
    assert publication is not None and publication.stamp_ns == T0 + 3 * S


@pytest.mark.parametrize(("offset_s", "stamp_ns"), [(-2.0, S), (1.0, MAX_STAMP_NS - S // 2)])
def test_a_shifted_stamp_out_of_range_is_dropped_counted_and_logged(
    offset_s: float, stamp_ns: int
) -> None:
    rig = offset_rig(time_offset=offset_s)
    assert send(rig, ["joint_4"], [0.1], stamp_ns, JOINT_STATES_SOURCE) is None
    assert len(rig.logger.containing("outside what a stamp holds (0 to 2147483647 s)")) == 1
    report = rig.pipeline.health.report(GraphFacts({}, T0))
    assert dict(report.values)[Key.OUT_OF_RANGE] == "1"
    assert Level.WARN in [condition.level for condition in report.conditions]
    assert any("stamp + time offset" in condition.message for condition in report.conditions)


def test_the_last_stamp_in_range_is_kept() -> None:
    rig = offset_rig(time_offset=1.0)
    publication = send(rig, ["joint_4"], [0.1], MAX_STAMP_NS - S, JOINT_STATES_SOURCE)
    assert publication is not None and publication.stamp_ns == MAX_STAMP_NS


def test_the_health_report_shows_each_topic_s_offset() -> None:
    rig = offset_rig(
        time_offset=-0.01,
        source_list=("gripper/joint_states",),
        source_time_offsets=(0.002,),
    )
    shown = dict(rig.pipeline.health.report(GraphFacts({}, T0)).values)[Key.TIME_OFFSETS]
    assert shown == (
        "joint_states: -0.01, multi_dof_joint_states: -0.01, gripper/joint_states: -0.008"
    )


# -- the parameters ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 2.2e9, -2.2e9, "late", True])
def test_a_time_offset_no_stamp_can_take_is_refused(value: Any) -> None:
    with pytest.raises(ParameterRejected, match="time_offset must be"):
        parse_time_offset(value)


def test_time_offsets_accept_integers_and_none() -> None:
    assert parse_time_offset(-1) == -1.0
    assert parse_time_offsets(None) == ()
    assert parse_time_offsets([0, -0.008]) == (0.0, -0.008)
    assert parse_time_offsets(array("d", [0.5])) == (0.5,)  # how rclpy gives a double array
    with pytest.raises(ParameterRejected, match=r"source_time_offsets\[1\] must be finite"):
        parse_time_offsets([0.0, float("nan")])
    with pytest.raises(ParameterRejected, match="source_time_offsets must be a double array"):
        parse_time_offsets("0.1")


def test_one_offset_per_source_list_topic_or_none() -> None:
    two = Settings.from_values({"source_list": ["a", "b"], "source_time_offsets": [0.1, 0.2]})
    assert two.time_offsets_s() == {"a": 0.1, "b": 0.2}
    assert Settings.from_values({"source_list": ["a"], "time_offset": 1.0}).time_offsets_s() == {
        "a": 1.0
    }
    with pytest.raises(ParameterRejected, match="source_time_offsets has 2 value.s. but"):
        two.changed({"source_list": ["a"]})  # alone: refused, naming the way to change both
    both = two.changed({"source_list": ["a"], "source_time_offsets": [0.3]})
    assert both.time_offsets_s() == {"a": 0.3}


def test_static_republish_period_is_0_or_from_a_tenth_of_a_second_to_an_hour() -> None:
    assert Settings.from_values({"static_republish_period": 2}).static_republish_period == 2.0
    for value in (0, 0.0, 0.1, 3600):  # both sides of each bound
        assert Settings.from_values({"static_republish_period": value}).static_republish_period == (
            value
        )
        assert Settings().changed({"static_republish_period": value}).static_republish_period == (
            value
        )
    for value in (1e-300, 1e-9, 1e-6, 0.0999):  # a busy timer, and a flood of /tf_static
        with pytest.raises(ParameterRejected, match=r"must be 0 \(off\) or >= 0.1 s"):
            Settings.from_values({"static_republish_period": value})
        with pytest.raises(ParameterRejected, match=r"must be 0 \(off\) or >= 0.1 s"):
            Settings().changed({"static_republish_period": value})
    for value in (-1.0, float("nan"), float("inf"), 3601.0):
        with pytest.raises(ParameterRejected, match="static_republish_period must be >= 0"):
            Settings.from_values({"static_republish_period": value})
