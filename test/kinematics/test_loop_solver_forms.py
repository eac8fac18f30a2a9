"""Closed loops' closed forms, walks and held loop joints (issue #44's mutation rule over
``loop_solver``: each test names the survivors of ``make mutate`` it answers). Every number
checked is the test's own geometry (``bench.loop_models``: circle intersections, a slider's
position, a rod's length), not the solver's output."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from bench.loop_models import (
    CRANK_DRAWN,
    FOUR_BAR,
    LEGS,
    RSSR,
    SLIDER,
    four_bar,
    four_bar_end,
    legged,
    rssr,
    slider_crank,
    slider_position,
)
from joint_tf_publisher import Robot
from joint_tf_publisher.errors import LoopNotClosedError
from joint_tf_publisher.kinematics.loop_solver import (
    CONTINUATION_STEP,
    MAX_CONTINUATION_STEPS,
    LoopSolver,
    LoopTolerance,
    PassivePlan,
)
from joint_tf_publisher.model import Joint, Limit, Link, Mimic, RobotModel
from joint_tf_publisher.model.clamp_mode import ClampMode
from joint_tf_publisher.model.loops import LoopJoint, LoopJointType

#: Where a closed form closes a loop, it does so to round-off (m, rad).
EXACT = 1e-12
LEGGED_GIVEN = [f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "crank")]


def _rebuilt(
    robot: Robot,
    joints: dict[str, Joint] | None = None,
    links: tuple[str, ...] = (),
    loop_joints: tuple[LoopJoint, ...] | None = None,
) -> Robot:
    """``robot`` with ``joints`` replaced or added (their new child ``links`` added) and its
    loop joints replaced by ``loop_joints``."""
    return Robot.from_model(
        RobotModel(
            robot.name,
            {**robot.links, **{name: Link(name) for name in links}},
            {**robot.joints, **(joints or {})},
            robot.root,
            loop_joints=robot.loop_joints if loop_joints is None else loop_joints,
        )
    )


def _mounted(robot: Robot, joint: str) -> Robot:
    """``robot`` with ``joint`` hung from a floating mount joint (at identity) between it and
    its parent: a joint of a type the compiled forms do not move, on a loop's way, so the
    forms run from the link poses (``close_in_closed_form``)."""
    original = robot.joints[joint]
    mount = Joint(f"{joint}_mount", "floating", original.parent, f"{joint}_mount_link")
    return _rebuilt(
        robot,
        {mount.name: mount, joint: replace(original, parent=mount.child)},
        links=(mount.child,),
    )


def _sides_swapped(robot: Robot) -> Robot:
    """``robot`` with its one loop joint's link1 and link2 (and their frames) exchanged: the
    same joint described from its other side."""
    (loop,) = robot.loop_joints
    swapped = replace(
        loop,
        link1=loop.link2,
        link2=loop.link1,
        link1_to_joint=loop.link2_to_joint,
        link2_to_joint=loop.link1_to_joint,
    )
    return _rebuilt(robot, loop_joints=(swapped,))


def _pin_offset(robot: Robot, offset_m: float) -> Robot:
    """``robot`` with its loop joint's frame on link1 moved ``offset_m`` along z (the pin's
    axis, normal to the plane every joint turns in): a gap no joint value takes away."""
    (loop,) = robot.loop_joints
    moved = loop.link1_to_joint.copy()
    moved[2, 3] += offset_m
    return _rebuilt(robot, loop_joints=(replace(loop, link1_to_joint=moved),))


def _point(pose: np.ndarray, x: float = 0.0, y: float = 0.0) -> np.ndarray:
    return (pose @ np.array([x, y, 0.0, 1.0]))[:3]


def _gaps_m(robot: Robot, poses: dict[str, np.ndarray]) -> list[float]:
    """Per loop joint, the distance (m) between its frame's origin on link1 and on link2."""
    return [
        float(
            np.linalg.norm(
                (poses[loop.link1] @ loop.link1_to_joint)[:3, 3]
                - (poses[loop.link2] @ loop.link2_to_joint)[:3, 3]
            )
        )
        for loop in robot.loop_joints
    ]


def _solver(robot: Robot) -> LoopSolver:
    solver = robot.kinematics.loops
    assert solver is not None
    return solver


def _crank_plan(robot: Robot) -> PassivePlan:
    """``robot``'s passive plan with its crank given."""
    return _solver(robot).plan_for(robot.kinematics.cfg.given_slots(["crank_joint"]))


def _slot(robot: Robot, joint: str) -> int:
    return int(robot.kinematics.layout.variable_lookup[joint][1])


def _solved_in_closed_form(robot: Robot, crank: float) -> dict[str, np.ndarray]:
    """The link poses of ``robot``'s warm solve from the drawing with its crank given
    ``crank`` (rad), checked to be closed, by a closed form (no iteration)."""
    solver = _solver(robot)
    given = robot.kinematics.cfg.given_slots(["crank_joint"])
    values = robot.kinematics.cfg.single({"crank_joint": crank}, ClampMode.NONE)
    solution = solver.solve(values, given)
    assert solution.iterations == 0 and solution.all_closed, crank
    poses = solver.single_fk.link_poses(solution.values)
    return dict(zip(robot.kinematics.link_names, poses, strict=True))


def _four_bar_closes_at(robot: Robot, poses: dict[str, np.ndarray], crank: float) -> None:
    """The coupler's end and the rocker's meet where the circles do, for ``crank`` (rad from
    the drawing)."""
    end = four_bar_end(CRANK_DRAWN + crank)
    assert np.allclose(_point(poses["coupler"], FOUR_BAR["b"])[:2], end, atol=EXACT), crank
    assert np.allclose(_point(poses["rocker"], FOUR_BAR["c"])[:2], end, atol=EXACT), crank


# -- the closed forms from the link poses (``close_in_closed_form``) -------------------------


def test_a_four_bar_whose_rocker_hangs_on_a_floating_mount_is_solved_in_closed_form() -> None:
    """A floating joint on the loop's way (a calibrated mount): no compiled program, the forms
    run from one FK (``close_in_closed_form``), still without iteration and to round-off, for
    the warm solve and the stateless one; the cycle's columns are not the variables' slots
    here (the mount's six values come first). With the pin 1 mm apart along its axis, the
    solution reports that gap as the position error (not the angle's 0) and not closed.
    (make mutate: ``close_by_forms`` running a missing program, the forms' poses taken along
    the wrong axis, their errors dropped or inverted, a dyad's slots its columns, the
    position errors the angle ones: all survived.)"""
    robot = _mounted(four_bar(), "rocker_joint")
    solver = _solver(robot)
    given = robot.kinematics.cfg.given_slots(["crank_joint"])
    plan = solver.plan_for(given)
    assert plan.forms and plan.program is None
    for crank in (0.3, -1.2, 2.5):
        _four_bar_closes_at(robot, _solved_in_closed_form(robot, crank), crank)
        _four_bar_closes_at(robot, robot.link_fk({"crank_joint": crank}), crank)
    gap_m = 1e-3
    apart = _pin_offset(robot, gap_m)
    apart_solver = _solver(apart)
    values = apart.kinematics.cfg.single({"crank_joint": 0.3}, ClampMode.NONE)
    solution = apart_solver.solve(values, given)
    assert solution.iterations == 0
    assert solution.position_error_m.tolist() == pytest.approx([gap_m], rel=1e-9)
    assert solution.angle_error_rad.tolist() == pytest.approx([0.0], abs=EXACT)
    assert not solution.all_closed


def test_four_rod_loops_off_the_compiled_forms_each_close_by_their_own_form() -> None:
    """The legged robot with a floating mount above one knee: its four rod loops' forms run
    from one FK, each reading its own points of the one product (``placing_links``): every
    rod end meets its lever, without iteration (make mutate: every form after the first
    reading the first's points, or none, survived)."""
    robot = _mounted(legged(), "fl_knee_joint")
    solver = _solver(robot)
    given = robot.kinematics.cfg.given_slots(LEGGED_GIVEN)
    plan = solver.plan_for(given)
    assert len(plan.forms) == 4 and plan.program is None
    values = robot.kinematics.layout.zero_values.copy()
    for offset, name in enumerate(LEGGED_GIVEN):
        values[_slot(robot, name)] += 0.05 + 0.01 * offset
    solution = solver.solve(values, given)
    assert solution.iterations == 0 and solution.all_closed
    poses = solver.single_fk.link_poses(solution.values)
    gaps = _gaps_m(robot, dict(zip(robot.kinematics.link_names, poses, strict=True)))
    assert max(gaps) < 1e-9


def _rocker_limited(robot: Robot, lower: float, upper: float) -> Robot:
    """``robot`` (a four-bar) with its rocker a revolute joint of these limits (rad)."""
    rocker = replace(
        robot.joints["rocker_joint"], joint_type="revolute", limit=Limit(lower=lower, upper=upper)
    )
    return _rebuilt(robot, {"rocker_joint": rocker})


def test_close_in_closed_form_moves_values_only_where_its_form_applies() -> None:
    """``close_in_closed_form``'s contract: where the forms apply within the passive limits,
    the values move so the loop closes and the errors come back; where the result lies beyond
    a limit (the rocker held within 0.1 rad, the crank given 0.5 rad) or the form does not
    apply (the RSSR's rod cannot reach the rocker's circle at crank 2 rad), None, and the
    values are exactly as given (make mutate: the values set to nothing (NaN) on the way back,
    the errors or the values dropped before the limit check: all survived)."""
    robot = _rocker_limited(four_bar(), -0.1, 0.1)
    solver = _solver(robot)
    given = robot.kinematics.cfg.given_slots(["crank_joint"])
    plan = solver.plan_for(given)
    assert plan.limited
    names = robot.kinematics.link_names
    inside = robot.kinematics.cfg.single({"crank_joint": 0.05}, ClampMode.NONE)
    errors = solver.close_in_closed_form(inside, plan, solver.single_fk.link_poses(inside))
    assert errors is not None
    assert max(errors[0]) < EXACT and max(errors[1]) < EXACT
    poses = dict(zip(names, solver.single_fk.link_poses(inside), strict=True))
    _four_bar_closes_at(robot, poses, 0.05)
    beyond = robot.kinematics.cfg.single({"crank_joint": 0.5}, ClampMode.NONE)
    start = beyond.copy()
    assert solver.close_in_closed_form(beyond, plan, solver.single_fk.link_poses(beyond)) is None
    assert np.array_equal(beyond, start)
    spatial = rssr()
    rod_solver = _solver(spatial)
    rod_plan = rod_solver.plan_for(spatial.kinematics.cfg.given_slots(["crank_joint"]))
    out_of_reach = spatial.kinematics.cfg.single({"crank_joint": 2.0}, ClampMode.NONE)
    start = out_of_reach.copy()
    poses_at = rod_solver.single_fk.link_poses(out_of_reach)
    assert rod_solver.close_in_closed_form(out_of_reach, rod_plan, poses_at) is None
    assert np.array_equal(out_of_reach, start)


# -- which side a form is read from (``_closed_form_of``) ------------------------------------


def test_a_slider_crank_described_from_the_sliders_side_takes_its_closed_form() -> None:
    """The slider-crank's pin with link1 the slider and link2 the rod (the same joint, read
    from its other side): the crank-slider form still applies, rod first, and the slider
    stands where a cos + sqrt(l^2 - a^2 sin^2) puts it, without iteration (make mutate: the
    sides not exchanged, or exchanged wrongly, for a slider on link1's side survived)."""
    robot = _sides_swapped(slider_crank())
    assert _crank_plan(robot).forms
    for crank in (0.3, 2.0, -2.5):
        poses = _solved_in_closed_form(robot, crank)
        expected = slider_position(CRANK_DRAWN + crank)
        assert math.isclose(poses["slider"][0, 3], expected, abs_tol=EXACT), crank
        assert np.allclose(_point(poses["rod"], SLIDER["l"]), poses["slider"][:3, 3], atol=EXACT)


def test_a_ball_rod_described_from_the_rockers_side_takes_its_closed_form() -> None:
    """The RSSR's ball joint with link1 the rocker and link2 the rod: the rod's two universal
    joints are on link2's side, and the rod form still applies, without iteration: the rod
    keeps its length L between the crank's end and the rocker's (make mutate: the branch for
    a rod on link2's side, its sides or its single joint, survived)."""
    robot = _sides_swapped(rssr())
    assert _crank_plan(robot).forms
    for crank in (0.4, -0.6, 1.0):
        poses = _solved_in_closed_form(robot, crank)
        crank_end = _point(poses["crank"], RSSR["a"])
        rocker_end = _point(poses["rocker"], 0.0, RSSR["c"])
        assert math.isclose(float(np.linalg.norm(rocker_end - crank_end)), RSSR["L"], abs_tol=EXACT)
        assert max(_gaps_m(robot, poses)) < EXACT


def test_a_ball_rod_meeting_a_slider_is_closed_by_the_search() -> None:
    """The RSSR with its rocker a slider (prismatic along x): the rod form is for three
    turning joints, so the search closes the loop; every rod end meets the slider's (make
    mutate: the form taken with the slider as a turning joint, 0.26 m apart, survived)."""
    base = rssr()
    slider = replace(
        base.joints["rocker_joint"], joint_type="prismatic", limit=Limit(lower=-1.0, upper=1.0)
    )
    robot = _rebuilt(base, {"rocker_joint": slider})
    assert not _crank_plan(robot).forms
    for crank in (0.2, 0.4):
        assert max(_gaps_m(robot, robot.link_fk({"crank_joint": crank}))) < 1e-9, crank


def test_a_rod_ending_in_a_revolute_loop_joint_reports_its_axes_apart() -> None:
    """The RSSR with its ball joint made a revolute one (axis z): the rod's end can meet the
    rocker's but the two z axes cannot line up (over-determined: the least-squares fit). The
    solution reports the angle between those axes, as the poses have it (about 0.1 rad), and
    not closed: the rod form, which ignores axes, is not taken (make mutate: it taken, all
    closed at 0 rad, survived)."""
    base = rssr()
    (loop,) = base.loop_joints
    revolute = replace(loop, type=LoopJointType.REVOLUTE, axis=np.array([0.0, 0.0, 1.0]))
    robot = _rebuilt(base, loop_joints=(revolute,))
    solver = _solver(robot)
    given = robot.kinematics.cfg.given_slots(["crank_joint"])
    names = robot.kinematics.link_names
    for crank in (0.2, 0.4):
        values = robot.kinematics.cfg.single({"crank_joint": crank}, ClampMode.NONE)
        fit = solver.solve(values, given)
        assert fit.over_determined and not fit.all_closed, crank
        poses = dict(zip(names, solver.single_fk.link_poses(fit.values), strict=True))
        axis1 = (poses[revolute.link1] @ revolute.link1_to_joint)[:3, 2]
        axis2 = (poses[revolute.link2] @ revolute.link2_to_joint)[:3, 2]
        apart_rad = math.acos(min(1.0, float(axis1 @ axis2)))
        assert apart_rad > 0.05, crank
        assert fit.angle_error_rad[0] == pytest.approx(apart_rad, abs=1e-9), crank


# -- mimic followers and the batch's walk (``_within_limits``, ``_walk_in_closed_form``) ----


def _with_dial(robot: Robot) -> Robot:
    """``robot`` (a four-bar) with a dial off the loop, a mimic follower of the crank
    (2 crank + 0.1 rad): the robot has a follower level, the loop's forms still apply."""
    dial = Joint(
        "dial_joint",
        "continuous",
        robot.root,
        "dial",
        np.array([0.0, 0.0, 1.0]),
        mimic=Mimic("crank_joint", multiplier=2.0, offset=0.1),
    )
    return _rebuilt(robot, {"dial_joint": dial}, links=("dial",))


def _yaw(pose: np.ndarray) -> float:
    return math.atan2(pose[1, 0], pose[0, 0])


def test_a_mimic_follower_off_the_loop_follows_its_leader_through_the_closed_forms() -> None:
    """A dial mimicking the crank (2 crank + 0.1 rad) beside a four-bar solved in closed form:
    link_fk and link_fk_batch both set the dial from the crank and close the loop (make
    mutate: the followers of a form's result, or of the batch's rows, set from nothing, or
    as multiplier / leader, or minus the offset: all survived)."""
    robot = _with_dial(four_bar())
    cranks = [0.3, -1.2, 2.5]
    for crank in cranks:
        poses = robot.link_fk({"crank_joint": crank})
        _four_bar_closes_at(robot, poses, crank)
        dial = _yaw(poses["dial"]) - (2.0 * crank + 0.1)
        assert math.isclose(math.remainder(dial, math.tau), 0.0, abs_tol=EXACT), crank
    batch = robot.link_fk_batch({"crank_joint": np.array(cranks)})
    for row, crank in enumerate(cranks):
        poses = {link: batch[link][row] for link in batch}
        _four_bar_closes_at(robot, poses, crank)
        dial = _yaw(poses["dial"]) - (2.0 * crank + 0.1)
        assert math.isclose(math.remainder(dial, math.tau), 0.0, abs_tol=EXACT), crank
    solver = _solver(robot)
    given = robot.kinematics.cfg.given_slots(["crank_joint"])
    values = robot.kinematics.cfg.single({"crank_joint": 0.3}, ClampMode.NONE)
    solution = solver.solve(values, given)
    assert solution.iterations == 0 and solution.all_closed
    assert math.isclose(solution.values[_slot(robot, "dial_joint")], 0.7, abs_tol=EXACT)


def test_a_batch_holds_a_crank_given_whole_turns_away_exactly() -> None:
    """The batch walks a crank given 1000 rad only 0.97 rad (whole turns left out), but its
    last step is the value given: the rows keep 1000 rad exactly, as the given joints are held
    exactly (docs/loops.md), and the loop closes where 1000 rad puts the crank (make mutate:
    the last step the walk's end, not the value given, survived)."""
    robot = four_bar()
    solver = _solver(robot)
    given = robot.kinematics.cfg.given_slots(["crank_joint"])
    crank_slot = _slot(robot, "crank_joint")
    cranks = np.array([1000.0, -1000.0, 0.3])
    rows = np.tile(robot.kinematics.layout.zero_values, (cranks.size, 1))
    rows[:, crank_slot] = cranks
    solver.solve_from_drawing_batch(rows, given)
    assert rows[:, crank_slot].tolist() == cranks.tolist()
    names = robot.kinematics.link_names
    for row, crank in enumerate(cranks.tolist()):
        poses = dict(zip(names, solver.single_fk.link_poses(rows[row]), strict=True))
        near = math.remainder(crank, math.tau)
        end = four_bar_end(CRANK_DRAWN + near)
        assert np.allclose(_point(poses["rocker"], FOUR_BAR["c"])[:2], end, atol=1e-9), crank


def test_a_batch_row_beyond_a_passive_limit_raises_as_link_fk() -> None:
    """The batch's forms keep a row only where its passive values lie within their limits:
    the rocker held within 0.1 rad and the crank given 0.5 rad (the form's rocker beyond), the
    batch raises link_fk's error naming row 1, though row 0 closes (make mutate: the limit
    test and-ed, not or-ed, survived)."""
    limited = _rocker_limited(four_bar(), -0.1, 0.1)
    with pytest.raises(LoopNotClosedError) as raised:
        limited.link_fk_batch({"crank_joint": np.array([0.05, 0.5])})
    assert raised.value.row == 1 and raised.value.joint == "closing"


def test_a_non_grashof_batch_row_out_of_reach_raises_with_its_rocker_limited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A four-bar whose crank cannot turn round (crank 2.5, coupler 3, rocker 1, ground 3; it
    closes for crank values in [-0.85, 0.05] from the drawing) with its rocker limited to
    3 rad either side: crank -1.5 rad is out of reach, and the batch raises naming row 1,
    though rows 0 and 2 close (make mutate: the limit test replacing the closure test, or
    or-ed with it, survived)."""
    monkeypatch.setitem(FOUR_BAR, "a", 2.5)
    monkeypatch.setitem(FOUR_BAR, "c", 1.0)
    robot = _rocker_limited(four_bar(), -3.0, 3.0)
    assert _crank_plan(robot).limited
    with pytest.raises(LoopNotClosedError) as raised:
        robot.link_fk_batch({"crank_joint": np.array([-0.5, -1.5, -0.2])})
    assert raised.value.row == 1 and raised.value.joint == "closing"


# -- loop joints held at a value (``holding``) -------------------------------------------------


def _closing_value(poses: dict[str, np.ndarray], loop: LoopJoint) -> float:
    """A four-bar pin's value (rad about z) at link ``poses``: from its frame on link1 to its
    frame on link2."""
    frame1 = poses[loop.link1] @ loop.link1_to_joint
    frame2 = poses[loop.link2] @ loop.link2_to_joint
    return _yaw(np.linalg.inv(frame1) @ frame2)


def _two_four_bars() -> Robot:
    """Two four-bars on one ground: the bench's, and a copy whose names start with ``b_``."""
    robot = four_bar()
    (closing,) = robot.loop_joints

    def renamed(link: str) -> str:
        return link if link == robot.root else f"b_{link}"

    copies = {
        f"b_{name}": replace(
            joint, name=f"b_{name}", parent=renamed(joint.parent), child=renamed(joint.child)
        )
        for name, joint in robot.joints.items()
    }
    copy = replace(
        closing, name="b_closing", link1=renamed(closing.link1), link2=renamed(closing.link2)
    )
    links = tuple(renamed(link) for link in robot.links if link != robot.root)
    return _rebuilt(robot, copies, links=links, loop_joints=(closing, copy))


def test_a_held_loop_joint_leaves_the_other_loops_joints_free() -> None:
    """Two four-bars, the first's pin given its value (held, docs/loops.md), the second's
    crank given: the first closes where that pin value puts it, and the second, whose pin is
    not held, still closes as a revolute joint where the circles meet (make mutate: every loop
    joint made a fixed one once any is held survived)."""
    robot = _two_four_bars()
    first, _ = robot.loop_joints
    expected = four_bar().link_fk({"crank_joint": 0.3})
    value = _closing_value(expected, first)
    poses = robot.link_fk({"closing": value, "b_crank_joint": 0.4})
    _four_bar_closes_at(robot, poses, 0.3)
    end = four_bar_end(CRANK_DRAWN + 0.4)
    assert np.allclose(_point(poses["b_coupler"], FOUR_BAR["b"])[:2], end, atol=EXACT)
    assert np.allclose(_point(poses["b_rocker"], FOUR_BAR["c"])[:2], end, atol=EXACT)


def test_a_held_loop_joints_solver_keeps_the_tolerance_it_was_given() -> None:
    """A solver given a tolerance of 0.5 m and rad (the node's ``loop_tolerance``) holding the
    pin 0.1 rad from where the crank puts it (over-determined: the least-squares fit, some
    millimetres apart): the fit counts as closed within that tolerance, not the default
    1e-6 (make mutate: the held solver built with the default tolerance survived)."""
    robot = four_bar()
    kinematics = robot.kinematics
    (closing,) = robot.loop_joints
    loose = LoopSolver(
        kinematics.layout,
        kinematics.single_fk,
        robot.loop_joints,
        LoopTolerance(position_m=0.5, angle_rad=0.5),
    )
    value = _closing_value(robot.link_fk({"crank_joint": 0.3}), closing)
    held = loose.holding(np.array([True]))
    held.hold_values(np.array([value + 0.1]))
    given = kinematics.cfg.given_slots(["crank_joint"])
    start = kinematics.cfg.single({"crank_joint": 0.3}, ClampMode.NONE)
    fit = held.solve(start, given)
    assert fit.over_determined
    apart = max(float(fit.position_error_m[0]), float(fit.angle_error_rad[0]))
    assert 1e-6 < apart < 0.5
    assert fit.all_closed


# -- the stateless solve's walk (``_walk``, ``_without_whole_turns``) --------------------------


def _expected_change(change: float, angle: bool) -> float:
    """The walk's change (rad or m): an angle beyond a turn with its whole turns left out
    (``math.fmod`` keeps the sign: the direction), anything else as given."""
    return math.fmod(change, math.tau) if angle and abs(change) > math.tau else change


def test_a_stateless_solve_walks_the_given_change_without_whole_turns() -> None:
    """The slider-crank's crank (an angle) and slider (metres) both given: the stateless
    solve walks from the drawing by each one's change, an angle's whole turns beyond one left
    out with its direction kept (1000 rad walks 0.97 rad, 1000 + pi rad 4.1 rad, -8 rad -1.7
    rad, 6 rad 6 rad), the slider's 10 m walks 10 m; in steps of at most 0.25 (rad or m), at
    least one and at most 64 (make mutate: the turns' correction dropped, reversed, or
    nudged, the slider wrapped as an angle, 8 rad not wrapped, one step made four or two:
    all survived)."""
    robot = slider_crank()
    solver = _solver(robot)
    crank, slider = _slot(robot, "crank_joint"), _slot(robot, "slider_joint")
    moving = np.array([crank, slider], dtype=np.intp)
    pairs = [
        (1000.0, 0.0),
        (1000.0 + math.pi, 0.0),
        (-1000.0 - math.pi, 0.0),
        (-8.0, 0.0),
        (6.0, 0.0),
        (0.1, 0.0),
        (0.0, 0.0),
        (0.0, 10.0),
        (0.0, 0.05),
        (0.0, 1e9),
    ]
    target = np.tile(robot.kinematics.layout.zero_values, (len(pairs), 1))
    target[:, moving] = pairs
    change, steps = solver._walk(target, moving)
    for row, (angle, travel) in enumerate(pairs):
        expected = [_expected_change(angle, True), _expected_change(travel, False)]
        assert np.allclose(change[row], expected, rtol=1e-12, atol=1e-9), (angle, travel)
        longest = max(abs(value) for value in expected)
        walk = max(1, math.ceil(min(longest / CONTINUATION_STEP, MAX_CONTINUATION_STEPS)))
        assert int(steps[row]) == walk, (angle, travel)
