"""JointState resolution (``apply``): values stored, clamped, rejected, quaternions normalised.

The mimic follower rule has its own file, test_mimic.py; names (MoveIt names, bare names,
MultiDOFJointState) are in test_joint_state_names.py."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kinematics_reference import (
    TOLERANCE,
    assert_poses_close,
    assert_transforms_match,
    chain_robot,
    in_range_cfg,
    load,
    moving_index,
    random_cfg,
    random_robot,
    reference_fk,
    reference_values,
    state_names_values,
)

from joint_tf_publisher import Joint, Robot
from joint_tf_publisher.kinematics import MAX_JOINT_VALUE, Update
from joint_tf_publisher.model.loops import LoopJointType


def test_new_positions_start_at_zero_with_identity_quaternions_and_mimic_offsets() -> None:
    robot = random_robot(2)
    kin = robot.kinematics
    positions = kin.new_positions()
    assert not positions.received.any()
    translations, quaternions = kin.transforms.transforms(
        positions.values, np.arange(len(kin.moving_joints))
    )
    zero = reference_values(robot, {})
    assert_transforms_match(kin, translations, quaternions, range(len(kin.moving_joints)), zero)
    assert kin.new_positions() is not positions


TWO_AXIS_SDF = """<sdf version="1.7">
<model name="two_axis">
<link name="base"/>
<link name="u_link"/>
<link name="r_link"><pose>0 0 0.3 0 0 0</pose></link>
<link name="open_link"/>
<joint name="u" type="universal">
<parent>base</parent><child>u_link</child>
<axis><xyz>1 0 0</xyz><limit><lower>-0.5</lower><upper>0.5</upper></limit></axis>
<axis2><xyz>0 1 0</xyz><limit><lower>-1</lower><upper>0.25</upper></limit></axis2>
</joint>
<joint name="r2" type="revolute2">
<parent>u_link</parent><child>r_link</child>
<axis><xyz>0 0 1</xyz></axis>
<axis2><xyz>1 0 0</xyz><limit><lower>0.1</lower><upper>0.4</upper></limit></axis2>
</joint>
<joint name="open" type="revolute2">
<parent>base</parent><child>open_link</child>
<axis><xyz>0 0 1</xyz><limit><lower>-0.2</lower></limit></axis>
<axis2><xyz>0 1 0</xyz><limit><lower>1</lower><upper>-1</upper></limit></axis2>
</joint>
</model>
</sdf>"""

#: Values beyond every written bound of TWO_AXIS_SDF, and those values clamped by hand: u into
#: [-0.5, 0.5] x [-1, 0.25]; r2's first axis unlimited, second into [0.1, 0.4]; open's first
#: axis above -0.2, second unlimited (lower > upper). SDFormat has no soft limits: soft = hard.
TWO_AXIS_GIVEN = {"u": (0.9, 0.7), "r2": (5.0, -0.3), "open": (-3.0, 9.0)}
TWO_AXIS_CLAMPED = {"u": (0.5, 0.25), "r2": (5.0, 0.1), "open": (-0.2, 9.0)}


@pytest.mark.parametrize("clamp", [None, "hard", "soft"])
def test_two_axis_joints_clamp_each_axis_into_its_own_limits(clamp: str | None) -> None:
    robot = Robot.from_xml_string(TWO_AXIS_SDF)
    kin = robot.kinematics
    positions = kin.new_positions()
    names = [f"{joint}/axis{k + 1}" for joint in TWO_AXIS_GIVEN for k in range(2)]
    values = [value for pair in TWO_AXIS_GIVEN.values() for value in pair]
    update = kin.apply(positions, names, values, clamp=clamp)
    expected = TWO_AXIS_GIVEN if clamp is None else TWO_AXIS_CLAMPED
    stored = kin.variable_values(positions)
    assert {joint: (stored[f"{joint}/axis1"], stored[f"{joint}/axis2"]) for joint in expected} == (
        expected
    )
    assert set(update.clamped) == (set() if clamp is None else {"u", "r2", "open"})
    reference = reference_fk(robot, {name: np.array(pair) for name, pair in expected.items()})
    cfg = {name: np.array(pair) for name, pair in TWO_AXIS_GIVEN.items()}
    assert_poses_close(robot.link_fk(cfg, clamp=clamp), reference)
    batch = robot.link_fk_batch({name: np.stack([v, v, v]) for name, v in cfg.items()}, clamp)
    for name, pose in reference.items():
        np.testing.assert_allclose(batch[name][2], pose, atol=TOLERANCE, rtol=0, err_msg=name)


def test_a_second_axis_alone_out_of_range_is_clamped_and_reported() -> None:
    kin = Robot.from_xml_string(TWO_AXIS_SDF).kinematics
    positions = kin.new_positions()
    kin.apply(positions, ["u/axis1"], [0.3])
    update = kin.apply(positions, ["u/axis2", "r2/axis2"], [-4.0, 0.2], clamp="hard")
    assert update.clamped == ["u"]
    stored = kin.variable_values(positions)
    assert (stored["u/axis1"], stored["u/axis2"], stored["r2/axis2"]) == (0.3, -1.0, 0.2)


def test_clamping_in_range_reports_nothing_and_bad_mode_raises() -> None:
    kin = chain_robot().kinematics
    positions = kin.new_positions()
    update = kin.apply(positions, ["j1", "j2"], [0.0, 0.1], clamp="hard")
    assert update.clamped == []
    with pytest.raises(ValueError, match="clamp must be one of"):
        kin.apply(positions, ["j1"], [0.0], clamp="firm")


def test_random_robot_clamps_into_range_per_mode() -> None:
    robot = random_robot(21, count=30, mimic_share=0.5)
    kin = robot.kinematics
    rng = np.random.default_rng(21)
    cfg = random_cfg(robot, rng, scale=4.0)
    for clamp in (None, "hard", "soft"):
        positions = kin.new_positions()
        names, values = state_names_values(kin, cfg)
        kin.apply(positions, names, values, clamp=clamp)
        expected = reference_values(robot, cfg, clamp)
        translations, quaternions = kin.transforms.transforms(
            positions.values, np.arange(len(kin.moving_joints))
        )
        assert_transforms_match(
            kin, translations, quaternions, range(len(kin.moving_joints)), expected
        )
        assert_poses_close(robot.link_fk(cfg, clamp=clamp), reference_fk(robot, expected))


def test_apply_by_names_gives_the_reference_transforms_for_every_type() -> None:
    robot = random_robot(31, count=30)
    kin = robot.kinematics
    rng = np.random.default_rng(31)
    positions = kin.new_positions()
    cfg = random_cfg(robot, rng)
    names, values = state_names_values(kin, cfg)
    update = kin.apply(positions, names, values, clamp=None)
    assert update.moved.tolist() == list(range(len(kin.moving_joints)))
    assert positions.received.all()
    expected = reference_values(robot, cfg)
    indices = rng.permutation(len(kin.moving_joints))[:9]
    translations, quaternions = kin.transforms.transforms(positions.values, indices)
    assert translations.shape == (9, 3) and quaternions.shape == (9, 4)
    assert_transforms_match(kin, translations, quaternions, indices, expected)


def test_non_finite_values_are_rejected_and_keep_the_last_good_value() -> None:
    robot = chain_robot()
    kin = robot.kinematics
    positions = kin.new_positions()
    kin.apply(positions, ["j1", "c1"], [0.3, 1.0], clamp=None)
    before = positions.values.copy()
    update = kin.apply(positions, ["j1", "c1", "j2"], [float("nan"), float("inf"), 0.1], clamp=None)
    assert update.rejected == ["j1", "c1"]
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    assert update.moved.tolist() == [index["j2"]]
    unchanged = [index[n] for n in ("j1", "m1", "m2", "m3", "c1")]
    translations, quaternions = kin.transforms.transforms(positions.values, unchanged)
    values = {"j1": 0.3, "m1": 0.6, "m2": -0.5, "m3": -0.25, "c1": 1.0}
    assert_transforms_match(kin, translations, quaternions, unchanged, values)
    assert np.isfinite(positions.values).all()
    assert positions.values[index["j2"]] != before[index["j2"]]


def test_values_beyond_the_maximum_are_rejected_like_nan() -> None:
    kin = chain_robot().kinematics
    positions = kin.new_positions()
    index = {j.name: i for i, j in enumerate(kin.moving_joints)}
    update = kin.apply(positions, ["j1", "c1"], [0.25, MAX_JOINT_VALUE], clamp=None)
    assert update.rejected == [] and positions.values[index["c1"]] == MAX_JOINT_VALUE
    update = kin.apply(positions, ["j1", "c1"], [1e308, -2 * MAX_JOINT_VALUE], clamp=None)
    assert update.rejected == ["j1", "c1"]
    assert positions.values[index["j1"]] == 0.25  # the last good value
    assert positions.values[index["m1"]] == 0.5  # its follower did not move either


@settings(max_examples=30, deadline=None)
@given(
    values=st.lists(
        st.one_of(st.floats(-1e6, 1e6), st.just(float("nan")), st.just(float("inf"))),
        min_size=4,
        max_size=4,
    ),
    clamp=st.sampled_from([None, "hard", "soft"]),
)
def test_apply_keeps_every_value_finite_property(values: list[float], clamp: str | None) -> None:
    kin = chain_robot().kinematics
    positions = kin.new_positions()
    update = kin.apply(positions, ["j1", "j2", "c1", "w1"], values, clamp=clamp)
    assert np.isfinite(positions.values).all()
    bad = {n for n, v in zip(["j1", "j2", "c1", "w1"], values, strict=True) if not np.isfinite(v)}
    assert set(update.rejected) == bad
    translations, quaternions = kin.transforms.transforms(positions.values, np.arange(7))
    assert np.isfinite(translations).all() and np.isfinite(quaternions).all()


def test_update_is_a_plain_report() -> None:
    update = Update(moved=np.array([1, 2], dtype=np.intp))
    assert update.clamped == update.rejected == update.unknown == update.first_value_only == []


@pytest.mark.parametrize("value", [1e308, -1.7e308, math.inf, math.nan, 5e-324])
def test_apply_with_extreme_values_raises_no_numpy_warning(value: float) -> None:
    # numpy warnings would reach the node's stderr as bare Python warnings.
    robot = load("test/urdf/all_joint_types.urdf")
    kin = robot.kinematics
    positions = kin.new_positions()
    names = list(kin.variable_names)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for clamp in (None, "hard", "soft"):
            kin.apply(positions, names, [value] * len(names), clamp=clamp)
        translations, quaternions = kin.transforms.transforms(
            positions.values, np.arange(len(kin.moving_joints))
        )
    assert np.isfinite(translations).all() and np.isfinite(quaternions).all()


def test_variable_values_name_every_variable_with_mimic_followers_resolved() -> None:
    kin = chain_robot().kinematics
    positions = kin.new_positions()
    kin.apply(positions, ["j1", "c1"], [0.25, -2.0], clamp=None)
    values = kin.variable_values(positions)
    assert set(values) == {name for j in kin.moving_joints for name in j.variable_names}
    # chain_robot: m1 = 2 j1, m2 = -m1 + 0.1, m3 = 0.5 m2 (its docstring).
    assert values["j1"] == 0.25 and values["c1"] == -2.0
    assert values["m1"] == pytest.approx(0.5)
    assert values["m2"] == pytest.approx(-0.4)
    assert values["m3"] == pytest.approx(-0.2)


def test_apply_normalises_every_quaternion_and_rejects_zero_ones_together() -> None:
    """apply normalises all written quaternions at once: huge, tiny and partly written ones;
    a zero quaternion rejects its joint, which keeps all its previous values."""
    robot = random_robot(5, count=6, types=("floating", "ball"), mimic_share=0.0)
    kin = robot.kinematics
    positions = kin.new_positions()
    rng = np.random.default_rng(5)
    cfg = random_cfg(robot, rng)
    names, values = state_names_values(kin, cfg)
    kin.apply(positions, names, values, clamp=None)
    before = kin.variable_values(positions)
    joints: dict[str, list[Joint]] = {"floating": [], "ball": []}
    for joint in kin.moving_joints:
        joints[joint.joint_type].append(joint)
    zero_floating, huge_floating = joints["floating"][:2]
    zero_ball, tiny_ball, partial_ball = joints["ball"][:3]
    message = {
        **dict(zip(zero_floating.variable_names, [5.0, 6.0, 7.0, 0.0, 0.0, 0.0, 0.0], strict=True)),
        **dict(
            zip(huge_floating.variable_names, [1.0, 2.0, 3.0, 1e100, 0.0, -1e100, 0.0], strict=True)
        ),
        **dict(zip(zero_ball.variable_names, [0.0] * 4, strict=True)),
        **dict(zip(tiny_ball.variable_names, [1e-300, 0.0, 0.0, 1e-300], strict=True)),
        partial_ball.variable_names[3]: 1e9,  # the other components stay as stored
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        update = kin.apply(positions, list(message), list(message.values()), clamp="hard")
    assert update.rejected == sorted([zero_floating.name, zero_ball.name])
    moved = {kin.moving_joints[i].name for i in update.moved}
    assert moved == {huge_floating.name, tiny_ball.name, partial_ball.name}
    after = kin.variable_values(positions)
    for joint in (zero_floating, zero_ball):
        assert [after[n] for n in joint.variable_names] == [before[n] for n in joint.variable_names]
    half = math.sqrt(0.5)
    expected = {
        huge_floating: [1.0, 2.0, 3.0, half, 0.0, -half, 0.0],
        tiny_ball: [half, 0.0, 0.0, half],
    }
    for joint, stored in expected.items():
        np.testing.assert_allclose(
            [after[n] for n in joint.variable_names], stored, atol=1e-15, rtol=0
        )
    quaternion = np.array([before[n] for n in partial_ball.variable_names[:3]] + [1e9])
    np.testing.assert_allclose(
        [after[n] for n in partial_ball.variable_names],
        quaternion / np.linalg.norm(quaternion),
        atol=1e-15,
        rtol=0,
    )


def _chain_urdf(kind: str, x: str) -> str:
    """Three links on two joints of ``kind``, each origin ``x`` metres along x."""
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>' if kind == "revolute" else ""
    joints = "".join(
        f'\n<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
        f'<child link="{child}"/><origin xyz="{x} 0 0"/><axis xyz="0 0 1"/>{limit}</joint>'
        for name, parent, child in (("j", "a", "b"), ("k", "b", "c"))
    )
    return f'<robot name="r"><link name="a"/><link name="b"/><link name="c"/>{joints}\n</robot>'


# -- the fast path (joint_state_names.FastApply, by StateResolver.plans) --------------------


def test_a_message_of_one_value_names_in_range_takes_the_fast_path() -> None:
    # chain_robot: j1 leads a three-level mimic chain m1 -> m2 -> m3.
    kin = chain_robot().kinematics
    names = ("j1", "j2", "c1", "w1")
    plan = kin.state.plans.plan(names)
    assert plan.fast is not None
    assert [level.slots.size for level in plan.fast.levels] == [1, 1, 1]
    positions = kin.new_positions()
    update = kin.apply(positions, names, [0.4, 0.1, 2.0, 7.0], clamp="hard")
    assert update.clamped == [] and update.rejected == []
    index = moving_index(kin)
    moved = ("j1", "j2", "c1", "w1", "m1", "m2", "m3")  # the names and j1's mimic chain
    assert update.moved.tolist() == sorted(index[name] for name in moved)
    stored = kin.variable_values(positions)
    assert stored["m1"] == 0.8 and stored["m2"] == pytest.approx(-0.7)
    assert stored["m3"] == pytest.approx(-0.35)
    assert positions.received.all()


def test_the_fast_path_gives_what_the_reference_gives_on_random_robots() -> None:
    for seed in range(5):
        robot = random_robot(40 + seed, count=30, types=("revolute", "prismatic", "continuous"))
        kin = robot.kinematics
        rng = np.random.default_rng(seed)
        for clamp in (None, "hard", "soft"):
            cfg = in_range_cfg(robot, clamp, rng)
            names, values = state_names_values(kin, cfg)
            assert kin.state.plans.plan(tuple(names)).fast is not None
            positions = kin.new_positions()
            update = kin.apply(positions, tuple(names), values, clamp=clamp)
            assert update.clamped == []
            expected = reference_values(robot, cfg, clamp)
            translations, quaternions = kin.transforms.transforms(
                positions.values, np.arange(len(kin.moving_joints))
            )
            assert_transforms_match(
                kin, translations, quaternions, range(len(kin.moving_joints)), expected
            )


def test_values_left_outside_by_a_clamp_mode_change_are_clamped_by_the_next_message() -> None:
    kin = chain_robot().kinematics
    positions = kin.new_positions()
    kin.apply(positions, ["j1", "j2"], [0.9, 5.0], clamp=None)  # j2 stored beyond [0, 0.2]
    update = kin.apply(positions, ["c1"], [1.0], clamp="hard")  # in range, j2 not given
    assert kin.state.plans.plan(("c1",)).fast is not None
    assert update.clamped == ["j2"]  # m1 = 1.8 is beyond its limits, but computed: kept
    stored = kin.variable_values(positions)
    assert (stored["j2"], stored["m1"], stored["c1"]) == (0.2, 1.8, 1.0)


# -- limits and multi-value joints, by example -----------------------------------------------

ONLY_LOWER_URDF = """<robot name="only_lower">
<link name="base"/><link name="arm"/><link name="wheel"/>
<joint name="shoulder" type="revolute">
  <parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
  <limit lower="-1.0" effort="1" velocity="1"/>
</joint>
<joint name="wheel" type="revolute">
  <parent link="arm"/><child link="wheel"/><axis xyz="0 0 1"/>
  <limit effort="1" velocity="1"/>
</joint>
</robot>"""


def test_a_limit_with_only_lower_written_clamps_to_the_default_upper_of_zero() -> None:
    """URDF's ``upper`` defaults to 0; only where neither bound is written is a joint left
    unclamped (docs/joint-semantics.md, "Limits in practice")."""
    robot = Robot.from_xml_string(ONLY_LOWER_URDF)
    kin = robot.kinematics
    positions = kin.new_positions()
    update = kin.apply(positions, ["shoulder", "wheel"], [0.5, 0.5], clamp="hard")
    assert update.clamped == ["shoulder"]
    assert kin.variable_values(positions) == {"shoulder": 0.0, "wheel": 0.5}
    update = kin.apply(positions, ["shoulder", "wheel"], [-3.0, -3.0], clamp="hard")
    assert update.clamped == ["shoulder"]
    assert kin.variable_values(positions) == {"shoulder": -1.0, "wheel": -3.0}


@pytest.mark.parametrize("joint_type", ["planar", "floating"])
def test_a_multi_value_joint_with_one_nan_component_keeps_all_its_previous_values(
    joint_type: str,
) -> None:
    robot = random_robot(7, count=3, types=(joint_type,), mimic_share=0.0)
    kin = robot.kinematics
    joint = kin.moving_joints[0]
    names = list(joint.variable_names)
    positions = kin.new_positions()
    good = [0.1 * (k + 1) for k in range(len(names))]
    kin.apply(positions, names, good, clamp="hard")
    before = kin.variable_values(positions)
    for broken in range(len(names)):
        values = list(good)
        values[broken] = math.nan
        values = [v if k == broken else v + 0.05 for k, v in enumerate(values)]
        update = kin.apply(positions, names, values, clamp="hard")
        assert update.rejected == [joint.name]
        assert update.moved.size == 0
        assert kin.variable_values(positions) == before


HUGE_MIMIC_URDF = """<robot name="huge_mimic">
  <link name="base"/><link name="wheel"/><link name="twin"/><link name="slide"/>
  <joint name="wheel_joint" type="continuous"><parent link="base"/><child link="wheel"/>
    <axis xyz="0 1 0"/></joint>
  <joint name="twin_joint" type="continuous"><parent link="base"/><child link="twin"/>
    <axis xyz="0 1 0"/><mimic joint="wheel_joint" multiplier="1e10"/></joint>
  <joint name="slide_joint" type="prismatic"><parent link="base"/><child link="slide"/>
    <limit effort="1" velocity="1"/></joint>
</robot>"""


@pytest.mark.parametrize("names", [("wheel_joint",), ("slide_joint", "wheel_joint")])
def test_a_follower_computed_beyond_the_largest_joint_value_keeps_its_value(
    names: tuple[str, ...],
) -> None:
    """multiplier 1e10 times a leader value just within MAX_JOINT_VALUE / 1e10 (hypothesis
    found 1.0000000000000002e90 for 1e10): the follower would exceed MAX_JOINT_VALUE, so it
    keeps its last value and is rejected, whichever path (fast or general) takes the message;
    the leader keeps the value given."""
    kin = Robot.from_xml_string(HUGE_MIMIC_URDF, source="huge_mimic.urdf").kinematics
    leader = MAX_JOINT_VALUE / 1e10 * (1 + 2**-52)
    positions = kin.new_positions()
    kin.apply(positions, list(names), [0.0] * (len(names) - 1) + [1.0], clamp=None)
    before = positions.values.copy()
    update = kin.apply(positions, list(names), [0.0] * (len(names) - 1) + [leader], clamp=None)
    assert update.rejected == ["twin_joint"]
    joints = [joint.name for joint in kin.moving_joints]  # one value each
    values = dict(zip(joints, positions.values, strict=True))
    assert values["wheel_joint"] == leader
    assert values["twin_joint"] == before[joints.index("twin_joint")] == 1e10
    assert np.all(np.abs(positions.values) <= MAX_JOINT_VALUE)
    # A leader value whose follower stays within MAX_JOINT_VALUE moves both.
    update = kin.apply(positions, list(names), [0.0] * (len(names) - 1) + [2.0], clamp=None)
    assert update.rejected == []
    values = dict(zip(joints, positions.values, strict=True))
    assert values["twin_joint"] == 2e10


def test_a_loop_joints_value_is_stored_apart_clamped_into_its_limit_or_rejected() -> None:
    """A JointState naming a loop joint (#45): its value is stored in ``loop_values`` (no
    unknown name, no fast path), clamped into the loop joint's limit (hard and soft), kept
    as given without clamping, and rejected (the last good value kept) when unusable."""
    from dataclasses import replace

    from bench.loop_models import four_bar
    from joint_tf_publisher.model import RobotModel

    base = four_bar()
    (closing,) = base.loop_joints
    limited = replace(closing, lower=-0.5, upper=0.5)
    robot = Robot.from_model(
        RobotModel(base.name, base.links, base.joints, base.root, loop_joints=(limited,))
    )
    kinematics = robot.kinematics
    positions = kinematics.new_positions()
    assert positions.loop_values.tolist() == [0.0] and not positions.loop_received.any()
    update = kinematics.apply(positions, ["crank_joint", "closing"], [0.1, 0.25])
    assert update.unknown == [] and update.clamped == [] and update.rejected == []
    assert positions.loop_values.tolist() == [0.25] and positions.loop_received.all()
    assert kinematics.state.plans.plan(("crank_joint", "closing")).fast is None
    for clamp in ("hard", "soft"):
        update = kinematics.apply(positions, ["closing"], [2.0], clamp=clamp)
        assert update.clamped == ["closing"] and positions.loop_values.tolist() == [0.5]
    update = kinematics.apply(positions, ["closing"], [-2.0], clamp=None)
    assert update.clamped == [] and positions.loop_values.tolist() == [-2.0]
    for bad in (math.nan, math.inf, 1e101):
        update = kinematics.apply(positions, ["closing"], [bad])
        assert update.rejected == ["closing"] and positions.loop_values.tolist() == [-2.0]
    # A ball loop joint has no value: its name is ignored, no unknown one, nothing stored.
    ball = Robot.from_model(
        RobotModel(
            base.name,
            base.links,
            base.joints,
            base.root,
            loop_joints=(replace(closing, type=LoopJointType.BALL),),
        )
    )
    ball_positions = ball.kinematics.new_positions()
    update = ball.kinematics.apply(ball_positions, ["closing"], [0.1])
    assert update.unknown == [] and update.moved.size == 0
    assert not ball_positions.loop_received.any() and not ball_positions.received.any()
