"""Fuzzing the JointState resolver: ``robot.kinematics.apply`` on whatever a driver sends.

Names are drawn from the robot's variables (mimic and fixed joints included), bare names of
multi-value joints, unknown strings, with duplicates; values from every float (NaN, +-inf,
+-1e308, subnormals). After any ``apply`` the stored joint vector is finite, quaternions are
unit, values given are inside their clamp range, followers not given follow their leader
(unclamped), rejected joints kept their last good value, unknown names are reported, and the
transforms the node would publish are finite. Mismatched lengths raise ValueError and change
nothing; 10,000 unknown names cost little time and no lasting memory.
"""

from __future__ import annotations

import time
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from repo_paths import TEST_DIR

from joint_tf_publisher import Robot
from joint_tf_publisher.kinematics import MAX_JOINT_VALUE, JointPositions, Kinematics

#: A robot whose unclamped joints let huge values through: a continuous joint driving a
#: continuous mimic with a large multiplier, an unlimited prismatic joint, a floating base.
OVERFLOW_URDF = """<robot name="overflow">
  <link name="world"/><link name="base"/><link name="wheel"/><link name="twin"/>
  <link name="slide"/>
  <joint name="base_joint" type="floating"><parent link="world"/><child link="base"/>
    <origin xyz="0 0 1" rpy="0.3 0.2 0.1"/></joint>
  <joint name="wheel_joint" type="continuous"><parent link="base"/><child link="wheel"/>
    <origin xyz="1 0 0"/><axis xyz="0 1 0"/></joint>
  <joint name="twin_joint" type="continuous"><parent link="base"/><child link="twin"/>
    <origin xyz="-1 0 0"/><axis xyz="0 1 0"/><mimic joint="wheel_joint" multiplier="1e10"/>
  </joint>
  <joint name="slide_joint" type="prismatic"><parent link="base"/><child link="slide"/>
    <origin xyz="0 0 0.5" rpy="0 0.7 0.7"/><axis xyz="1 0 0"/>
    <limit effort="1" velocity="1"/></joint>
</robot>"""

ROBOTS = {
    "humanoid": lambda: Robot.load(TEST_DIR / "urdf" / "humanoid.urdf"),
    "all_joint_types_urdf": lambda: Robot.load(TEST_DIR / "urdf" / "all_joint_types.urdf"),
    "all_joint_types_sdf": lambda: Robot.load(TEST_DIR / "sdf" / "all_joint_types.sdf"),
    "overflow": lambda: Robot.from_xml_string(OVERFLOW_URDF, source="overflow.urdf"),
}

FUZZ_SETTINGS = settings(max_examples=100, deadline=None)

ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True)
EXTREME_FLOAT = st.sampled_from(
    [np.nan, np.inf, -np.inf, 1e308, -1e308, 1.7976931348623157e308, 5e-324, -0.0, 0.0]
)


@cache
def kinematics_of(robot_name: str) -> Kinematics:
    """The compiled kinematics of one of ROBOTS (loaded once per session)."""
    return ROBOTS[robot_name]().kinematics


def variable_layout(kin: Kinematics) -> list[str]:
    """The name of each slot of ``JointPositions.values``: moving joints' variables in order."""
    return [name for joint in kin.moving_joints for name in joint.variable_names]


def bare_multi_value_names(kin: Kinematics) -> list[str]:
    """Bare names that set a multi-value joint's first value (Gazebo's bridge)."""
    return [
        joint.name
        for joint in kin.moving_joints
        if joint.joint_type in ("revolute2", "universal", "ball")
    ]


def clamp_range(
    kin: Kinematics, clamp: str | None, joint_name: str, value: int = 0
) -> tuple[float, float]:
    """The [lower, upper] value ``value`` of a joint (its first by default; both axes of a
    two-axis joint) is clamped to in mode ``clamp`` (+-inf if none)."""
    joint = kin.robot.joints[joint_name]
    limits = None if clamp is None else joint.variable_limits(clamp)[value]
    return limits if limits is not None else (-np.inf, np.inf)


@st.composite
def joint_state(draw: st.DrawFn, kin: Kinematics) -> tuple[list[str], list[float]]:
    """A JointState's names and positions (equal lengths): known, mimic, fixed, unknown names."""
    known = variable_layout(kin) + bare_multi_value_names(kin)
    fixed = [joint.name for joint in kin.fixed_joints] or ["no_fixed_joint"]
    name = st.one_of(
        st.sampled_from(known),
        st.sampled_from(fixed),
        st.text(min_size=0, max_size=10),
        st.sampled_from(["", "/", "world", "base_joint/", "base_joint/rot_v", "x" * 200]),
    )
    names: list[str] = draw(st.lists(name, max_size=40))
    add_duplicates: bool = draw(st.booleans())
    if names and add_duplicates:
        names += draw(st.lists(st.sampled_from(names), max_size=5))
    values = draw(
        st.lists(st.one_of(ANY_FLOAT, EXTREME_FLOAT), min_size=len(names), max_size=len(names))
    )
    return names, values


def usable(value: float) -> bool:
    """A value apply must take: finite and within +-MAX_JOINT_VALUE (else it is rejected)."""
    return bool(abs(value) <= MAX_JOINT_VALUE)


def check_positions_sane(kin: Kinematics, positions: JointPositions) -> None:
    """The stored vector is usable (finite, within +-MAX_JOINT_VALUE), quaternions unit, and
    every transform to publish finite (values that could overflow one are rejected by apply).
    """
    assert all(usable(value) for value in positions.values), positions.values
    layout = variable_layout(kin)
    for joint in kin.moving_joints:
        if joint.joint_type in ("floating", "ball"):
            start = layout.index(f"{joint.name}/rot_x")
            norm = np.linalg.norm(positions.values[start : start + 4])
            assert abs(norm - 1.0) < 1e-9, (joint.name, positions.values[start : start + 4])
    translations, quaternions = kin.transforms.transforms(
        positions.values, np.arange(len(kin.moving_joints))
    )
    assert np.all(np.isfinite(translations)), translations
    assert np.all(np.isfinite(quaternions)), quaternions
    assert np.allclose(np.linalg.norm(quaternions, axis=1), 1.0, atol=1e-9), quaternions


@pytest.mark.parametrize("robot_name", sorted(ROBOTS))
@FUZZ_SETTINGS
@given(data=st.data(), clamp=st.sampled_from([None, "hard", "soft"]))
def test_apply_keeps_state_finite_and_reports_what_it_did(
    robot_name: str, data: st.DataObject, clamp: str | None
) -> None:
    kin = kinematics_of(robot_name)
    positions = kin.new_positions()
    layout = variable_layout(kin)
    bare = bare_multi_value_names(kin)
    for _ in range(data.draw(st.integers(1, 3), label="messages")):
        names, values = data.draw(joint_state(kin), label="joint_state")
        previous = positions.values.copy()
        update = kin.apply(positions, names, values, clamp=clamp)
        check_positions_sane(kin, positions)
        assert update.unknown == [name for name in names if name not in layout + bare]
        assert update.first_value_only == [name for name in names if name in bare]
        rejected = set(update.rejected)
        for joint in kin.moving_joints:
            slots = [layout.index(name) for name in joint.variable_names]
            given = [
                (n, v)
                for n, v in zip(names, values, strict=True)
                if n in joint.variable_names or n == joint.name
            ]
            if joint.name in rejected:
                # Given a bad value, or a mimic follower whose computed value overflowed.
                assert given or joint.mimic is not None, f"{joint.name} rejected, not given"
                np.testing.assert_array_equal(positions.values[slots], previous[slots])
                continue
            if given and not all(usable(v) for _, v in given):
                pytest.fail(f"{joint.name} was given an unusable value but not rejected")
            if len(given) == 1 and len(slots) == 1:
                lower, upper = clamp_range(kin, clamp, joint.name)
                expected = min(max(given[0][1], lower), upper)
                assert positions.values[slots[0]] == expected, (joint.name, given, clamp)
            if joint.mimic is not None and not given:
                # Not given: multiplier * leader + offset whenever the leader moved (not
                # clamped to its own limits), else as it was.
                leader = kin.moving_joints.index(kin.robot.joints[joint.mimic.joint])
                expected = (
                    joint.mimic.multiplier * positions.values[layout.index(joint.mimic.joint)]
                    + joint.mimic.offset
                )
                if leader not in update.moved:
                    expected = previous[slots[0]]
                assert positions.values[slots[0]] == expected, (joint.name, clamp)
                continue
            for k, slot in enumerate(slots if clamp is not None else []):
                lower, upper = clamp_range(kin, clamp, joint.name, k)
                value = positions.values[slot]
                assert lower <= value <= upper, (joint.name, k, value, clamp)


@pytest.mark.parametrize("robot_name", sorted(ROBOTS))
@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_mismatched_lengths_raise_value_error_and_change_nothing(
    robot_name: str, data: st.DataObject
) -> None:
    kin = kinematics_of(robot_name)
    positions = kin.new_positions()
    kin.apply(positions, kin.variable_names, [0.1] * len(kin.variable_names))
    before = positions.values.copy()
    names = data.draw(st.lists(st.sampled_from(kin.variable_names), max_size=10))
    extra = data.draw(st.integers(1, 5)) * data.draw(st.sampled_from([-1, 1]))
    count = max(0, len(names) + extra)
    if count == len(names):
        count += 1
    with pytest.raises(ValueError, match="names but values"):
        kin.apply(positions, names, [0.2] * count)
    np.testing.assert_array_equal(positions.values, before)


@pytest.mark.parametrize("robot_name", sorted(ROBOTS))
@pytest.mark.parametrize("extreme", [np.nan, np.inf, -np.inf, 1e308, -1e308, 5e-324])
def test_every_variable_at_an_extreme_value(robot_name: str, extreme: float) -> None:
    """A whole message of one extreme value: state stays usable, transforms finite; an
    unusable value (non-finite or beyond +-MAX_JOINT_VALUE) is rejected and changes nothing."""
    kin = kinematics_of(robot_name)
    positions = kin.new_positions()
    names = variable_layout(kin)
    update = kin.apply(positions, names, [extreme] * len(names), clamp=None)
    check_positions_sane(kin, positions)
    if not usable(extreme):
        assert update.rejected, "unusable values must be reported as rejected"
        np.testing.assert_array_equal(positions.values, kin.new_positions().values)


def test_ten_thousand_unknown_names_are_ignored_quickly() -> None:
    kin = kinematics_of("humanoid")
    positions = kin.new_positions()
    known = kin.variable_names
    unknown = [f"not_a_joint_{i}" for i in range(10_000)]
    names = unknown[:5_000] + known + unknown[5_000:]
    values = [0.1] * len(names)
    start = time.perf_counter()
    update = kin.apply(positions, names, values)
    first_call = time.perf_counter() - start
    assert update.unknown == unknown
    assert set(kin.moving_joints[i].name for i in update.moved) >= {
        joint.name for joint in kin.moving_joints if joint.mimic is None
    }
    assert first_call < 2.0, first_call  # generous: about 10 ms on a quiet machine
    check_positions_sane(kin, positions)


def test_many_distinct_name_lists_do_not_grow_memory_without_bound() -> None:
    """Each distinct name list is planned once and cached; the cache must stay bounded."""
    import tracemalloc

    kin = kinematics_of("all_joint_types_urdf")
    positions = kin.new_positions()

    def send(batch: int) -> None:
        for k in range(100):  # more distinct lists than the plan cache holds
            names = [f"noise_{batch}_{k}_{i}" for i in range(200)] + kin.variable_names[:1]
            kin.apply(positions, names, [0.0] * len(names))

    send(0)  # warm the cache to its steady state
    tracemalloc.start()
    try:
        baseline = tracemalloc.take_snapshot()
        for batch in range(1, 4):
            send(batch)
        grown = tracemalloc.take_snapshot().compare_to(baseline, "filename")
    finally:
        tracemalloc.stop()
    growth_bytes = sum(stat.size_diff for stat in grown)
    assert growth_bytes < 2 * 1024 * 1024, growth_bytes


@pytest.mark.parametrize("robot_name", ["all_joint_types_urdf", "all_joint_types_sdf", "overflow"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_apply_multi_dof_keeps_state_finite(robot_name: str, data: st.DataObject) -> None:
    """MultiDOFJointState contents: any names, any translations and quaternions."""
    kin = kinematics_of(robot_name)
    multi_dof = [
        j.name for j in kin.moving_joints if j.joint_type in ("floating", "ball", "planar")
    ]
    names = data.draw(
        st.lists(st.one_of(st.sampled_from(multi_dof + ["nope"]), st.text(max_size=5)), max_size=4)
    )
    number = st.one_of(ANY_FLOAT, EXTREME_FLOAT)
    translations = data.draw(
        st.lists(st.lists(number, min_size=3, max_size=3), min_size=len(names), max_size=len(names))
    )
    quaternions = data.draw(
        st.lists(st.lists(number, min_size=4, max_size=4), min_size=len(names), max_size=len(names))
    )
    positions = kin.new_positions()
    update = kin.apply_multi_dof(
        positions, names, np.reshape(translations, (-1, 3)), np.reshape(quaternions, (-1, 4))
    )
    check_positions_sane(kin, positions)
    assert set(update.unknown) == {name for name in names if name not in multi_dof}


@pytest.mark.parametrize("counts", [(2, 1, 2), (2, 2, 1), (0, 1, 1), (1, 0, 0)])
def test_apply_multi_dof_mismatched_lengths_raise(counts: tuple[int, int, int]) -> None:
    kin = kinematics_of("all_joint_types_urdf")
    positions = kin.new_positions()
    before = positions.values.copy()
    names, translations, quaternions = counts
    with pytest.raises(ValueError, match="joint names but"):
        kin.apply_multi_dof(
            positions,
            ["float_joint"] * names,
            np.zeros((translations, 3)),
            np.tile([0.0, 0.0, 0.0, 1.0], (quaternions, 1)),
        )
    np.testing.assert_array_equal(positions.values, before)
