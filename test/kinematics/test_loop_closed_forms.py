"""The loops' closed forms (issue #45's speed: ``loop_dyad``, ``loop_rod``) against the
iterative solver: from the same warm start both reach the same solution, to 1e-12, on both
branches of a linkage and near where its two branches meet."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from bench.loop_models import (
    CRANK_DRAWN,
    LEGS,
    SLIDER,
    four_bar,
    legged,
    rssr,
    slider_crank,
    slider_position,
)
from joint_tf_publisher import Robot
from joint_tf_publisher.kinematics.loop_dyad import CrankSlider, Dyad
from joint_tf_publisher.kinematics.loop_rod import BallRod
from joint_tf_publisher.kinematics.loop_solver import LoopSolver, PassivePlan
from joint_tf_publisher.model import RobotModel

#: Closed form and iterative solver agree to this (rad): round-off, not the tolerance.
EXACT = 1e-12
LEGGED_GIVEN = [f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "crank")]


def _setup(robot: Robot, given_names: list[str]) -> tuple[LoopSolver, np.ndarray, PassivePlan]:
    solver = robot.kinematics.loops
    assert solver is not None
    given = robot.kinematics.cfg.given_slots(given_names)
    return solver, given, solver.plan(solver.passive_slots(given).tobytes())


def _slot(robot: Robot, joint: str) -> int:
    return int(robot.kinematics.layout.variable_lookup[joint][1])


def _agree(
    solver: LoopSolver, plan: PassivePlan, start: np.ndarray, given: np.ndarray
) -> np.ndarray:
    """The closed form's solution from ``start``, checked against Levenberg-Marquardt's from
    the same start: closed (1e-12) and the same values (1e-12)."""
    closed_form = solver.solve(start, given)
    assert closed_form.iterations == 0, "the closed form was not taken"
    assert float(np.max(closed_form.position_error_m)) < EXACT
    assert float(np.max(closed_form.angle_error_rad)) < EXACT
    iterative = start.copy()
    solver._minimise(iterative, plan, goal=0.0)  # on to round-off, past the usual stop
    # Values to 1e-12 where the loops are well conditioned; where the passive joints'
    # Jacobian has a small singular value, round-off in the residual (1e-13) moves them by
    # that much over it (the legged robot's 5 cm levers: 1e-4, so 1e-11 apart).
    poses = solver.single_fk.link_poses(iterative)
    jacobian = solver._jacobian(poses, solver._frames(poses), plan.sides)
    smallest = float(np.linalg.svd(jacobian, compute_uv=False).min())
    assert np.max(np.abs(closed_form.values - iterative)) < EXACT / min(1.0, 100.0 * smallest)
    position, angle = solver.errors(solver.single_fk.link_poses(closed_form.values))
    assert float(np.max(position)) < EXACT and float(np.max(angle)) < EXACT
    return closed_form.values


@pytest.mark.parametrize(
    ("robot", "given_names", "kinds"),
    [
        (four_bar(), ["crank_joint"], [Dyad]),
        (slider_crank(), ["crank_joint"], [CrankSlider]),
        (rssr(), ["crank_joint"], [BallRod]),
        (legged(), LEGGED_GIVEN, [BallRod] * 4),
    ],
    ids=["four-bar", "slider-crank", "rssr", "legged"],
)
def test_each_loop_takes_its_closed_form(
    robot: Robot, given_names: list[str], kinds: list[type]
) -> None:
    """A planar dyad and a ball-ended rod on a universal joint each have a closed form, one
    a loop (the legged robot's four rods each its own), solved without iteration."""
    solver, given, plan = _setup(robot, given_names)
    assert [type(form) for form in plan.forms] == kinds
    values = robot.kinematics.layout.zero_values.copy()
    for name in given_names:
        values[_slot(robot, name)] += 0.2
    _agree(solver, plan, values, given)


@pytest.mark.parametrize("crank", [0.0, 0.5, 1.0, -0.8])
def test_the_rod_form_agrees_on_both_branches(crank: float) -> None:
    """RSSR: the rocker's two assemblies for one crank angle (the circle meets the sphere
    twice), each reached from a start near it, by the closed form as by the solver."""
    robot = rssr()
    solver, given, plan = _setup(robot, ["crank_joint"])
    rocker = _slot(robot, "rocker_joint")
    start = robot.kinematics.layout.zero_values.copy()
    start[_slot(robot, "crank_joint")] = crank
    start = solver.solve_from_drawing(start, given).values
    first = _agree(solver, plan, start + _nudge(plan, start.size), given)
    # The other assembly: the solver from starts with the rocker turned further and further.
    for turn in np.linspace(0.5, 6.0, 12):
        other = first.copy()
        other[rocker] += turn
        solver._minimise(other, plan, goal=0.0)
        if abs(np.angle(np.exp(1j * (other[rocker] - first[rocker])))) > 0.1:
            break
    else:
        pytest.fail("no second assembly found")
    second = _agree(solver, plan, other + _nudge(plan, other.size), given)
    assert abs(second[rocker] - other[rocker]) < EXACT


def _nudge(plan: PassivePlan, size: int) -> np.ndarray:
    """A warm start's offset: 0.01 rad on every passive slot."""
    offset = np.zeros(size)
    offset[plan.slots] = 0.01
    return offset


@pytest.mark.parametrize("crank", [0.0, 0.7, -1.2, 2.5])
def test_the_slider_form_agrees_on_both_branches(crank: float) -> None:
    """A slider-crank without the slider's limits: the slider on either side of the crank
    (the line meets the rod's circle twice), each reached from a start near it, by the
    closed form as by the solver. With the limits, a closed-form result beyond one is left to
    the solver's projected search."""
    base = slider_crank()
    joints = dict(base.joints)
    joints["slider_joint"] = replace(joints["slider_joint"], limit=None)
    robot = Robot.from_model(
        RobotModel(base.name, base.links, joints, base.root, loop_joints=base.loop_joints)
    )
    solver, given, plan = _setup(robot, ["crank_joint"])
    assert not plan.limited
    slider = _slot(robot, "slider_joint")
    start = robot.kinematics.layout.zero_values.copy()
    start[_slot(robot, "crank_joint")] = crank
    first = _agree(solver, plan, solver.solve_from_drawing(start, given).values, given)
    # The other assembly: the slider beyond the crank's pivot (x = a cos - sqrt(...)), the
    # rod turned to it by the solver with the slider held there.
    angle = CRANK_DRAWN + crank
    a, rod = SLIDER["a"], SLIDER["l"]
    other = first.copy()
    other[slider] = (
        a * math.cos(angle) - math.sqrt(rod * rod - (a * math.sin(angle)) ** 2)
    ) - slider_position(CRANK_DRAWN)
    held = robot.kinematics.cfg.given_slots(["crank_joint", "slider_joint"])
    solver._minimise(other, solver.plan(solver.passive_slots(held).tobytes()), goal=0.0)
    assert abs(other[slider] - first[slider]) > 1.0
    second = _agree(solver, plan, other + _nudge(plan, other.size), given)
    assert abs(second[slider] - other[slider]) < EXACT
    limited = slider_crank()
    limited_solver, limited_given, limited_plan = _setup(limited, ["crank_joint"])
    assert limited_plan.limited
    beyond = limited_solver.solve(other + _nudge(plan, other.size), limited_given)
    assert beyond.iterations > 0  # -2.7 m is beyond the limit of -2: not the closed form


def test_the_rod_form_agrees_near_where_the_branches_meet() -> None:
    """RSSR near the crank angle past which the rod cannot reach (the two assemblies about to
    merge): the closed form still closes to round-off and agrees with the solver; beyond, it
    does not apply and the solver reports the loop open."""
    robot = rssr()
    solver, given, plan = _setup(robot, ["crank_joint"])
    crank = _slot(robot, "crank_joint")
    values = robot.kinematics.layout.zero_values.copy()
    reach, beyond = 1.0, 2.0
    for _ in range(40):  # the reach limit, by bisection
        middle = (reach + beyond) / 2
        trial = values.copy()
        trial[crank] = middle
        if solver.solve(trial, given).iterations == 0:
            reach = middle
        else:
            beyond = middle
    for gap in (1e-2, 1e-3):
        start = values.copy()
        start[crank] = reach - gap
        start = solver.solve_from_drawing(start, given).values
        start[plan.slots] += 1e-4
        _agree(solver, plan, start, given)
    past = values.copy()
    past[crank] = reach + 1e-3
    assert not solver.solve(past, given).all_closed


def test_the_legged_robot_form_agrees_along_a_gait() -> None:
    """The legged robot's four rod loops, solved together from one FK, along a path of small
    steps (the node's warm starts) and from starts a little off it."""
    robot = legged()
    solver, given, plan = _setup(robot, LEGGED_GIVEN)
    generator = np.random.default_rng(45)
    values = robot.kinematics.layout.zero_values.copy()
    driven = np.flatnonzero(given)
    for _ in range(10):
        values[driven] += generator.uniform(-0.05, 0.05, driven.size)
        start = values.copy()
        start[plan.slots] += generator.uniform(-0.02, 0.02, plan.slots.size)
        values = _agree(solver, plan, start, given)


def test_the_slider_form_takes_any_slide_direction_and_axis_length() -> None:
    """The slider-crank turned under a world link (its slide no longer along an axis of the
    root frame: every component of it counts), its slider's axis written 2 long
    (a unit of its value moves it 2 m) and its pin above the plane: the form agrees with
    Levenberg-Marquardt, and the slider's value is its travel over the axis' length."""
    from joint_tf_publisher import Joint, Link
    from joint_tf_publisher.transforms import xyz_rpy_to_matrix

    base = slider_crank()
    joints = dict(base.joints)
    slider = joints["slider_joint"]
    joints["slider_joint"] = replace(slider, axis=np.array([2.0, 0.0, 0.0]))
    joints["mount"] = Joint(
        "mount",
        "fixed",
        "world",
        "ground",
        origin=xyz_rpy_to_matrix([0.1, 0.2, 0.3], [0.4, 0.3, 0.6]),
    )
    links = {**base.links, "world": Link("world")}
    # The pin 0.1 m above the plane of the crank's and rod's axes on both sides: the loop
    # points' offsets along the axis are left out of the circle's and the line's radii.
    (pin,) = base.loop_joints
    raised = [frame.copy() for frame in (pin.link1_to_joint, pin.link2_to_joint)]
    for frame in raised:
        frame[2, 3] += 0.1
    pin = replace(pin, link1_to_joint=raised[0], link2_to_joint=raised[1])
    robot = Robot.from_model(RobotModel("turned", links, joints, "world", loop_joints=(pin,)))
    solver, given, plan = _setup(robot, ["crank_joint"])
    assert [type(form) for form in plan.forms] == [CrankSlider]
    for crank in (0.2, -0.3, 0.35):  # from the drawing: LM stays on its branch
        values = robot.kinematics.layout.zero_values.copy()
        values[_slot(robot, "crank_joint")] = crank
        solved = _agree(solver, plan, values, given)
        travel = slider_position(CRANK_DRAWN + crank) - slider_position(CRANK_DRAWN)
        assert math.isclose(solved[_slot(robot, "slider_joint")], travel / 2.0, abs_tol=EXACT)
