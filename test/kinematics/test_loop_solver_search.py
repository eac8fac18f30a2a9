"""Closed loops (issue #45): the loop solver's errors, its search and its walks, each checked
against the kinematics a test computes itself (the #44 rule's answers to ``make mutate``'s
survivors in ``_errors``, ``_residual``, ``_minimise``, ``solve_from_drawing`` and
``solve_from_drawing_batch``)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from bench.loop_models import CRANK_DRAWN, FOUR_BAR, four_bar, four_bar_end, legged, slider_crank
from joint_tf_publisher import Robot
from joint_tf_publisher.errors import LoopNotClosedError
from joint_tf_publisher.kinematics.loop_solver import CONTINUATION_STEP, LoopSolver
from joint_tf_publisher.model import Limit
from joint_tf_publisher.model.clamp_mode import ClampMode
from joint_tf_publisher.model.loops import LoopJoint, LoopJointType
from joint_tf_publisher.transforms import xyz_rpy_to_matrix


def _from_ground(
    like: LoopJoint,
    name: str,
    kind: LoopJointType,
    ground_to_joint: np.ndarray,
    link2: str,
    axis: np.ndarray,
) -> LoopJoint:
    """A loop joint ``name`` of type ``kind`` (axis ``axis``) from the ground's frame
    ``ground_to_joint`` to ``link2``'s own frame."""
    return replace(
        like,
        name=name,
        type=kind,
        link1="ground",
        link1_to_joint=ground_to_joint,
        link2=link2,
        link2_to_joint=np.eye(4),
        axis=axis,
    )


def test_the_errors_measure_each_loop_joint_by_its_own_type() -> None:
    """``LoopSolver.errors`` (docs/loops.md: the residual of each loop joint) measures each
    loop joint by its type alone, whatever the others are: at the four-bar's closed poses
    (crank 0.7 rad), its pin (revolute) closes; the same pin tilted 0.3 rad about x closes in
    position and stays 0.3 rad apart (the angle between the axes); as a ball it has no angle;
    a fixed joint locking the crank to the ground stays apart by the crank's turn (0.7 rad,
    the angle between the frames); a prismatic joint on the ground, its frames 0.4 m apart
    along its axis and 0.05 m across, is 0.05 m apart (the joint may slide); the pin moved
    0.02 m along its axis is 0.02 m apart; a fixed joint on the ground twisted 0.3 rad about x
    is 0.3 rad apart. (make mutate: position taking an angle row, the
    angles' sums over every loop joint, the frames' cosine misread, an angle for a ball,
    and the prismatic slide taken over every loop joint or divided, survived.)"""
    robot = four_bar()
    (pin,) = robot.loop_joints
    tilt_rad, crank_rad, along_m, across_m, gap_m = 0.3, 0.7, 0.4, 0.05, 0.02
    tilted = xyz_rpy_to_matrix([0.0, 0.0, 0.0], [tilt_rad, 0.0, 0.0])
    gap = xyz_rpy_to_matrix([0.0, 0.0, gap_m], [0.0, 0.0, 0.0])
    crank_pivot = robot.joints["crank_joint"].origin
    slide = xyz_rpy_to_matrix([along_m, across_m, 0.0], [0.0, 0.0, 0.0])
    loops = (
        pin,
        replace(pin, name="tilted", link1_to_joint=pin.link1_to_joint @ tilted),
        replace(pin, name="ball", type=LoopJointType.BALL, axis=np.zeros(3)),
        _from_ground(pin, "crank_lock", LoopJointType.FIXED, crank_pivot, "crank", np.zeros(3)),
        _from_ground(pin, "slide", LoopJointType.PRISMATIC, slide, "ground", np.eye(3)[0]),
        replace(pin, name="gap", link1_to_joint=pin.link1_to_joint @ gap),
        _from_ground(pin, "twisted", LoopJointType.FIXED, tilted, "ground", np.zeros(3)),
    )
    kinematics = robot.kinematics
    solver = LoopSolver(kinematics.layout, kinematics.single_fk, loops)
    closed = robot.link_fk({"crank_joint": crank_rad})
    poses = np.array([closed[name] for name in kinematics.layout.link_names])
    # The closed four-bar's pin: its ends meet where the circles do (b from the crank's end).
    a, b = FOUR_BAR["a"], FOUR_BAR["b"]
    crank_end = a * np.array([math.cos(CRANK_DRAWN + crank_rad), math.sin(CRANK_DRAWN + crank_rad)])
    pin_world = (closed["coupler"] @ pin.link1_to_joint)[:2, 3]
    assert math.isclose(float(np.linalg.norm(pin_world - crank_end)), b, rel_tol=1e-12)
    position_m, angle_rad = solver.errors(poses)
    assert np.allclose(position_m, [0.0, 0.0, 0.0, 0.0, across_m, gap_m, 0.0], atol=1e-12)
    assert np.allclose(angle_rad, [0.0, tilt_rad, 0.0, crank_rad, 0.0, 0.0, tilt_rad], atol=1e-12)
    # No loop joint moves the solver's reading of another: each alone, the same errors.
    for k, loop in enumerate(loops):
        alone = LoopSolver(kinematics.layout, kinematics.single_fk, (loop,))
        position_alone, angle_alone = alone.errors(poses)
        assert math.isclose(position_alone[0], position_m[k], abs_tol=1e-15), loop.name
        assert math.isclose(angle_alone[0], angle_rad[k], abs_tol=1e-15), loop.name


def test_a_rocker_given_near_the_end_of_its_reach_closes_the_four_bar() -> None:
    """The four-bar's rocker given (the crank passive) 2.3, 3.1 and -3.0 rad from the drawing,
    where the crank's end still reaches the rocker's (|R| within b - a and b + a of the crank's
    pivot): the stateless walk there closes the loop, the coupler's length b spanning the
    crank's end to the rocker's, which stays at its given angle. On the way the search keeps a
    step that cuts the residual a hundredfold (its Jacobian kept for the next), and that next
    step is rejected: the Jacobian is then computed anew (make mutate: it set to "" there, an
    AttributeError on its transpose in the next iteration, survived: no loop test reached it)."""
    robot = four_bar()
    a, b, c, d = (FOUR_BAR[k] for k in "abcd")
    drawn_end = four_bar_end(CRANK_DRAWN)
    drawn_rocker = math.atan2(drawn_end[1], drawn_end[0] - d)
    for rocker_rad in (2.3, 3.1, -3.0):
        rocker = drawn_rocker + rocker_rad
        rocker_end = np.array([d + c * math.cos(rocker), c * math.sin(rocker)])
        assert b - a < float(np.linalg.norm(rocker_end)) < b + a  # the loop can close
        poses = robot.link_fk({"rocker_joint": rocker_rad})
        crank_end = (poses["crank"] @ np.array([a, 0.0, 0.0, 1.0]))[:2]
        assert math.isclose(float(np.linalg.norm(rocker_end - crank_end)), b, abs_tol=1e-12)
        assert np.allclose((poses["rocker"] @ np.array([c, 0.0, 0.0, 1.0]))[:2], rocker_end)


def test_a_stateless_solve_counts_the_iterations_of_its_whole_walk() -> None:
    """``LoopSolution.iterations`` of ``solve_from_drawing`` counts the search's iterations
    over every continuation step, not the last one's: the ball four-bar (no closed form) with
    the crank given 1, 3 and -2 rad walks there in steps of at most 0.25 rad, each of which
    starts with the loop open (the crank moved, the rest not yet), so it takes at least one
    iteration per step (make mutate: the count set to the last step's, or subtracted,
    survived)."""
    robot = four_bar(LoopJointType.BALL)
    kinematics = robot.kinematics
    solver = kinematics.loops
    assert solver is not None
    given = kinematics.cfg.given_slots(["crank_joint"])
    for crank_rad in (1.0, 3.0, -2.0):
        values = kinematics.cfg.single({"crank_joint": crank_rad}, ClampMode.NONE)
        solution = solver.solve_from_drawing(values, given)
        assert solution.all_closed
        steps = math.ceil(abs(crank_rad) / CONTINUATION_STEP)
        assert solution.iterations >= steps, crank_rad


def test_a_batch_without_closed_forms_solves_every_row() -> None:
    """``link_fk_batch`` of the ball four-bar (no compiled closed forms: every row by the
    stateless search) for more configurations than the robot has values (5 rows, 3 values)
    places each row's coupler end where the circles meet for its crank, as ``link_fk`` does;
    the solver given no row (the revolute four-bar: compiled forms) solves none, without an
    error (make mutate: the rows counted by the values, and the compiled walk run for no
    row, a ValueError, survived)."""
    robot = four_bar(LoopJointType.BALL)
    assert robot.kinematics.layout.num_values < 5
    cranks = np.array([0.3, -0.6, 1.2, 2.0, -2.4])
    batch = robot.link_fk_batch({"crank_joint": cranks})
    for row, crank in enumerate(cranks.tolist()):
        end = four_bar_end(CRANK_DRAWN + crank)
        coupler_end = (batch["coupler"][row] @ np.array([FOUR_BAR["b"], 0.0, 0.0, 1.0]))[:2]
        assert np.allclose(coupler_end, end, atol=1e-12), crank
    # No row: nothing to walk (link_fk_batch's chunks never pass one; the solver's API may).
    kinematics = four_bar().kinematics
    solver = kinematics.loops
    assert solver is not None
    given = kinematics.cfg.given_slots(["crank_joint"])
    assert solver.plan_for(given).program is not None
    no_rows = np.empty((0, kinematics.layout.num_values))
    solver.solve_from_drawing_batch(no_rows, given)
    assert no_rows.shape == (0, kinematics.layout.num_values)


def test_a_warm_solve_from_frames_infinitely_apart_reports_no_iteration() -> None:
    """The slider-crank's slider given 1e308 m (no clamp) to the warm solve: its frames are
    infinitely far apart, no step is finite, so the search runs none (iterations 0, as a solve
    with nothing to iterate) and reports the loop open (make mutate: 1 iteration reported
    there survived)."""
    kinematics = slider_crank().kinematics
    solver = kinematics.loops
    assert solver is not None
    given = kinematics.cfg.given_slots(["slider_joint"])
    for travel_m in (1e308, -1e308):
        values = kinematics.cfg.single({"slider_joint": travel_m}, ClampMode.NONE)
        solution = solver.solve(values, given)
        assert solution.iterations == 0
        assert not solution.all_closed and solution.position_error_m[0] == math.inf


def test_a_loop_that_cannot_close_inside_a_limit_is_reported_apart_by_the_least_gap() -> None:
    """The four-bar's crank passive with limits of 0.3 rad either side of the drawing, the
    rocker given where the closing crank lies beyond them (0.25, -0.2 and 0.6 rad): the
    search holds the crank at its limit and turns the coupler alone, so the loop is reported
    apart by the least gap the limits allow, min over the crank in its limits of
    ||R - C| - b| (R the rocker's end, C the crank's, b the coupler's length), by the warm
    solve and by ``link_fk``'s error alike. (A bug that make mutate's damping survivor
    showed: each step was solved as if the crank could move, then clipped at its limit, so
    the coupler's part of it was wrong and the search crawled along the limit, 60 iterations
    ending 0.389 m apart for 0.201 m at 0.25 rad; another damping factor ended elsewhere.)"""
    a, b, c, d = (FOUR_BAR[k] for k in "abcd")
    limit_rad = 0.3
    robot = four_bar(crank_limits=(-limit_rad, limit_rad))
    kinematics = robot.kinematics
    solver = kinematics.loops
    assert solver is not None
    drawn_end = four_bar_end(CRANK_DRAWN)
    drawn_rocker = math.atan2(drawn_end[1], drawn_end[0] - d)
    cranks = CRANK_DRAWN + np.linspace(-limit_rad, limit_rad, 6001)
    crank_ends = a * np.stack((np.cos(cranks), np.sin(cranks)), axis=1)
    for rocker_rad in (0.25, -0.2, 0.6):
        rocker = drawn_rocker + rocker_rad
        rocker_end = np.array([d + c * math.cos(rocker), c * math.sin(rocker)])
        gaps = np.abs(np.linalg.norm(rocker_end - crank_ends, axis=1) - b)
        least_gap = float(gaps.min())
        assert least_gap > 0.1  # the loop cannot close inside the limits
        cfg = {"rocker_joint": rocker_rad}
        values = kinematics.cfg.single(cfg, ClampMode.NONE)
        warm = solver.solve(values, kinematics.cfg.given_slots(cfg))
        assert not warm.all_closed
        assert math.isclose(warm.position_error_m[0], least_gap, rel_tol=1e-6), rocker_rad
        with pytest.raises(LoopNotClosedError) as raised:
            robot.link_fk(cfg)
        assert raised.value.joint == "closing"
        assert math.isclose(raised.value.position_error_m, least_gap, rel_tol=1e-6), rocker_rad


def _generic_loops(
    like: LoopJoint, link1: str, link2: str, poses: dict[str, np.ndarray]
) -> tuple[LoopJoint, ...]:
    """Loop joints of every type from ``link1`` to ``link2`` (the frames of ``like`` moved off
    and turned about skew axes): no residual row or derivative is zero by symmetry. At the
    link ``poses`` the frames of the fixed and prismatic ones share their orientation (their
    orientation rows are the rotation vector at small angles, exact there)."""
    frame1 = like.link1_to_joint @ xyz_rpy_to_matrix([0.05, -0.03, 0.02], [0.2, -0.1, 0.3])
    frame2 = like.link2_to_joint @ xyz_rpy_to_matrix([-0.02, 0.04, -0.01], [-0.15, 0.25, 0.1])
    aligned = frame2.copy()
    aligned[:3, :3] = poses[link2][:3, :3].T @ poses[link1][:3, :3] @ frame1[:3, :3]
    axis = np.array([0.3, -0.2, 0.9]) / np.linalg.norm([0.3, -0.2, 0.9])
    oriented = (LoopJointType.FIXED, LoopJointType.PRISMATIC)
    with_axis = (LoopJointType.REVOLUTE, LoopJointType.PRISMATIC)
    return tuple(
        replace(
            like,
            name=kind.value,
            type=kind,
            link1=link1,
            link1_to_joint=frame1,
            link2=link2,
            link2_to_joint=aligned if kind in oriented else frame2,
            axis=axis if kind in with_axis else np.zeros(3),
        )
        for kind in (
            LoopJointType.REVOLUTE,
            LoopJointType.PRISMATIC,
            LoopJointType.FIXED,
            LoopJointType.BALL,
        )
    )


def _away_from_closure(robot: Robot) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Values of ``robot`` with its loops' candidate passive joints turned 0.2 to -0.3 rad (or
    m) from the drawing (mimic followers set), and the link poses there by name."""
    kinematics = robot.kinematics
    solver = kinematics.loops
    assert solver is not None
    values = kinematics.layout.zero_values.copy()
    values[solver.candidate_slots] += np.linspace(0.2, -0.3, solver.candidate_slots.size)
    solver._resolve(values)
    poses = kinematics.single_fk.link_poses(values)
    return values, dict(zip(kinematics.link_names, poses, strict=True))


def test_the_search_steps_by_the_derivative_of_the_residual() -> None:
    """The search's Jacobian (module docstring: the analytic derivative of every loop joint's
    residual rows by the passive values, from the cycle joints' twists) is that derivative:
    it agrees with central differences of the residual (1e-6 rad or m either side) to 1e-7,
    for loop joints of every type at skew frames (revolute, prismatic, fixed, ball), on the
    four-bar (passive revolute joints on both sides), the slider-crank (a passive prismatic
    tree joint) and the legged robot (four loops, each on its own joints), with the loops
    apart (the orientation rows aligned: the rotation vector is exact at small angles, as
    near closure, where the search's Newton rate rests on it: docs/loops.md, two iterations
    a JointState on a smooth stream). (make mutate: 51 survivors in _jacobian, and _map
    giving a loop the joints of another.)"""
    step = 1e-6
    four, slider, legs = four_bar(), slider_crank(), legged()
    cranks = [name for name in legs.kinematics.layout.variable_lookup if "crank" in name]
    for robot, ends, given_names in (
        (four, ("coupler", "rocker"), ["crank_joint"]),
        (slider, ("rod", "slider"), ["crank_joint"]),
        (legs, None, cranks),
    ):
        kinematics = robot.kinematics
        values, poses = _away_from_closure(robot)
        loops = robot.loop_joints
        if ends is not None:
            loops = _generic_loops(robot.loop_joints[0], *ends, poses)
        solver = LoopSolver(kinematics.layout, kinematics.single_fk, tuple(loops))
        plan = solver.plan_for(kinematics.cfg.given_slots(given_names))
        assert plan.slots.size >= 2
        link_poses = kinematics.single_fk.link_poses(values)
        rows, frames = solver._residual(link_poses)
        analytic = solver._jacobian(link_poses, frames, plan.sides)
        columns = []
        for slot in plan.slots.tolist():
            sides = []
            for sign in (1.0, -1.0):
                moved = values.copy()
                moved[slot] += sign * step
                solver._resolve(moved)
                moved_poses = kinematics.single_fk.link_poses(moved)
                sides.append(solver._residual(moved_poses)[0].reshape(-1))
            columns.append((sides[0] - sides[1]) / (2.0 * step))
        numeric = np.stack(columns, axis=1)
        assert np.abs(rows).max() > 1e-3  # away from closure
        assert np.abs(numeric).max() > 0.1
        assert np.allclose(analytic, numeric, atol=1e-7), robot.name


def test_a_limit_on_one_side_holds_a_passive_joint_as_a_limit_on_both() -> None:
    """A passive joint limited on one side only (the four-bar's rocker: ``<limit lower="-inf"
    upper="0.1">``, which a URDF may say) is kept inside that limit as one with both sides:
    the crank given 0.5 rad, the rocker's closed form (0.25 rad from the drawing) lies beyond
    0.1, so the warm solve keeps the rocker at or inside 0.1 and reports the loop open, and
    ``link_fk`` raises naming the loop joint (make mutate: a plan counted as limited only
    where some lower and some upper limit are finite survived: the form's 0.25 rad taken,
    the loop reported closed)."""
    free = four_bar()
    limited = Limit(lower=-math.inf, upper=0.1)
    rocker_joint = replace(free.joints["rocker_joint"], joint_type="revolute", limit=limited)
    robot = replace(free, joints={**free.joints, "rocker_joint": rocker_joint})
    kinematics = robot.kinematics
    solver = kinematics.loops
    assert solver is not None
    cfg = {"crank_joint": 0.5}
    values = kinematics.cfg.single(cfg, ClampMode.NONE)
    solution = solver.solve(values, kinematics.cfg.given_slots(cfg))
    rocker_slot = kinematics.layout.variable_lookup["rocker_joint"][1]
    assert solution.values[rocker_slot] <= 0.1
    assert not solution.all_closed
    with pytest.raises(LoopNotClosedError) as raised:
        robot.link_fk(cfg)
    assert raised.value.joint == "closing"
