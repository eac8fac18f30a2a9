"""Closed loops (issue #45): how the loop solver compiles a robot's loops (the cycle joints,
their mimic leaders, the over-determined verdict) and its limit-bounded step, each checked
against the kinematics a test computes itself (the #44 rule's answers to ``make mutate``'s
survivors in ``_compile_cycles``, ``_rank`` and ``_bounded_step``)."""

from __future__ import annotations

import logging
import math
from dataclasses import replace

import numpy as np
import pytest

from bench.loop_models import CRANK_DRAWN, FOUR_BAR, four_bar, four_bar_end
from joint_tf_publisher import Robot
from joint_tf_publisher.errors import LoopNotClosedError
from joint_tf_publisher.health.reporting import Reporter
from joint_tf_publisher.kinematics.loop_solver import LoopSolver
from joint_tf_publisher.model import Joint, Link, Mimic, RobotModel
from joint_tf_publisher.model.clamp_mode import ClampMode
from joint_tf_publisher.model.loops import LoopJoint, LoopJointType
from joint_tf_publisher.node_core.parameters import Settings
from joint_tf_publisher.node_core.pipeline import JointStatePipeline, LoadedModel
from joint_tf_publisher.transforms import xyz_rpy_to_matrix

#: Where the search closes a loop, it does so to round-off (m).
EXACT_M = 1e-9
Z_AXIS = np.array([0.0, 0.0, 1.0])


def _rebuilt(
    robot: Robot,
    joints: dict[str, Joint],
    links: tuple[str, ...],
    loop_joints: tuple[LoopJoint, ...] | None = None,
) -> Robot:
    """``robot`` with ``joints`` replaced or added (their new child ``links`` added), its loop
    joints replaced by ``loop_joints`` where given."""
    return Robot.from_model(
        RobotModel(
            robot.name,
            {**robot.links, **{name: Link(name) for name in links}},
            {**robot.joints, **joints},
            robot.root,
            loop_joints=robot.loop_joints if loop_joints is None else loop_joints,
        )
    )


def _point(pose: np.ndarray, x: float) -> np.ndarray:
    """The point ``x`` m along the link's x axis, in the plane (m)."""
    return (pose @ np.array([x, 0.0, 0.0, 1.0]))[:2]


def _crank_end_closes(poses: dict[str, np.ndarray], crank_rad: float) -> None:
    """The coupler's end and the rocker's meet where the circles do for the crank ``crank_rad``
    (rad from the drawing)."""
    end = four_bar_end(CRANK_DRAWN + crank_rad)
    assert np.allclose(_point(poses["coupler"], FOUR_BAR["b"]), end, atol=EXACT_M), crank_rad
    assert np.allclose(_point(poses["rocker"], FOUR_BAR["c"]), end, atol=EXACT_M), crank_rad


def test_a_fixed_joint_on_a_loops_way_leaves_the_joints_beyond_it_passive() -> None:
    """The four-bar's crank hung from a fixed mount joint (a bracket between the ground and
    the crank's pivot): the mount is on the loop's way, the coupler and the rocker beyond it
    still are the passive joints, and the loop closes for the crank given 0.4 and -0.9 rad,
    by the closed form and by the search alike (make mutate: the walk along the loop's way
    stopping at the first fixed joint, so no joint beyond it was passive, survived)."""
    for loop_type in (LoopJointType.REVOLUTE, LoopJointType.BALL):
        robot = four_bar(loop_type)
        crank = robot.joints["crank_joint"]
        mount = Joint("crank_mount", "fixed", "ground", "bracket")
        robot = _rebuilt(
            robot,
            {"crank_mount": mount, "crank_joint": replace(crank, parent="bracket")},
            ("bracket",),
        )
        for crank_rad in (0.4, -0.9):
            _crank_end_closes(robot.link_fk({"crank_joint": crank_rad}), crank_rad)


def _rocker_for(crank_rad: float) -> float:
    """The rocker's value (rad from the drawing) that closes the four-bar at ``crank_rad``."""
    d = FOUR_BAR["d"]
    drawn, end = four_bar_end(CRANK_DRAWN), four_bar_end(CRANK_DRAWN + crank_rad)
    return math.atan2(end[1], end[0] - d) - math.atan2(drawn[1], drawn[0] - d)


def test_a_passive_joint_warm_started_at_its_upper_limit_leaves_it_to_close_the_loop() -> None:
    """The ball four-bar (solved by the search) with its crank limited to [-1, 0.3] rad and
    passive, the rocker given where the crank closes the loop at 0.1 rad, warm-started with
    the crank at its upper limit: the step that moves the crank down, into its range, is not
    held (docs/loops.md: only a value a step pushes beyond its limit is), and the loop
    closes with the crank at 0.1 rad (make mutate: a crank at its upper limit held for any
    step below 1 rad, survived)."""
    robot = four_bar(LoopJointType.BALL, crank_limits=(-1.0, 0.3))
    solver = robot.kinematics.loops
    assert solver is not None
    cfg = robot.kinematics.cfg
    crank_rad = 0.1
    values = cfg.single(
        {"rocker_joint": _rocker_for(crank_rad), "crank_joint": 0.3}, ClampMode.NONE
    )
    solution = solver.solve(values, cfg.given_slots(["rocker_joint"]))
    assert solution.all_closed
    poses = dict(
        zip(robot.kinematics.link_names, solver.single_fk.link_poses(solution.values), strict=True)
    )
    _crank_end_closes(poses, crank_rad)


def _crank_pin(lever_m: float) -> LoopJoint:
    """A ball joint pinning the four-bar crank's point ``lever_m`` m from its pivot to the
    ground where the drawing puts that point."""
    drawn = lever_m * np.array([math.cos(CRANK_DRAWN), math.sin(CRANK_DRAWN), 0.0])
    return LoopJoint(
        name="crank_pin",
        type=LoopJointType.BALL,
        link1="crank",
        link1_to_joint=xyz_rpy_to_matrix([lever_m, 0.0, 0.0], [0.0, 0.0, 0.0]),
        link2="ground",
        link2_to_joint=xyz_rpy_to_matrix(drawn.tolist(), [0.0, 0.0, 0.0]),
        axis=np.zeros(3),
        lower=None,
        upper=None,
        where="crank_pin.urdf:1: <loop_joint name='crank_pin'>",
    )


def test_a_loop_its_given_joints_already_fix_is_over_determined() -> None:
    """A ball joint pinning a point of the four-bar's crank to the ground (at the crank's end,
    1 m from its pivot, and 10 um from it: a micromechanism): the crank is that loop's only
    cycle joint. Given the crank, no passive joint is left while the loop constrains it
    (docs/loops.md: over-determined, the least-squares fit), so the stateless solve at
    0.5 rad returns the crank as given, the point a chord of 2 lever sin(0.25) from the pin,
    instead of raising; with the crank passive it is not over-determined (make mutate: the
    rank of no passive joint's empty Jacobian counted as 1, equal to the crank's own, and
    the rank's threshold 1e-9 divided by the largest singular value, so a 10 um lever's
    column counted as rank 0: both read the loop as not over-determined, survived)."""
    robot = four_bar()
    kinematics = robot.kinematics
    cfg = kinematics.cfg
    given = cfg.given_slots(["crank_joint"])
    crank_rad = 0.5
    for lever_m in (FOUR_BAR["a"], 1e-5):
        solver = LoopSolver(kinematics.layout, kinematics.single_fk, (_crank_pin(lever_m),))
        assert not solver.plan_for(np.zeros_like(given)).over_determined
        solution = solver.solve_from_drawing(
            cfg.single({"crank_joint": crank_rad}, ClampMode.NONE), given
        )
        assert solution.over_determined, lever_m
        chord_m = 2.0 * lever_m * math.sin(crank_rad / 2.0)
        assert math.isclose(float(solution.position_error_m[0]), chord_m, rel_tol=1e-9)


def test_a_loop_joint_following_its_leader_through_two_mimics_closes_the_loop() -> None:
    """The ball four-bar's coupler a mimic follower (multiplier -1) of a dial that follows
    (multiplier -8) a lead dial off the loop: the coupler turns 8 times the lead, which is
    the passive value the search moves. With the crank given 0.3 and -0.5 rad the loop
    closes (make mutate: the multiplier from the lead to the coupler taken as the last
    mimic's alone, -8, or divided, 1/8, not their product: the search stepped the lead the
    wrong way or 64 times too far and the loop stayed open, survived)."""
    robot = four_bar(LoopJointType.BALL)
    lead = Joint("lead_joint", "continuous", "ground", "lead", Z_AXIS)
    middle = Joint(
        "middle_joint", "continuous", "ground", "middle", Z_AXIS, mimic=Mimic("lead_joint", -8.0)
    )
    coupler = replace(robot.joints["coupler_joint"], mimic=Mimic("middle_joint", -1.0))
    robot = _rebuilt(
        robot,
        {"lead_joint": lead, "middle_joint": middle, "coupler_joint": coupler},
        ("lead", "middle"),
    )
    for crank_rad in (0.3, -0.5):
        _crank_end_closes(robot.link_fk({"crank_joint": crank_rad}), crank_rad)


def _bracket_pinned(gap_m: float, kind: LoopJointType = LoopJointType.FIXED) -> Robot:
    """The four-bar with a bracket bolted to the ground (a fixed tree joint) and its one loop
    joint (of type ``kind``, axis z) from the ground to the bracket, ``gap_m`` m off along x:
    a loop whose way has no joint the solver moves."""
    robot = four_bar()
    (like,) = robot.loop_joints
    pin = replace(
        like,
        name="bracket_pin",
        type=kind,
        link1="ground",
        link1_to_joint=xyz_rpy_to_matrix([gap_m, 0.0, 0.0], [0.0, 0.0, 0.0]),
        link2="bracket",
        link2_to_joint=np.eye(4),
        axis=Z_AXIS if kind is LoopJointType.REVOLUTE else np.zeros(3),
        where="bracket.urdf:7: <loop_joint name='bracket_pin'>",
    )
    bracket = Joint("bracket_joint", "fixed", "ground", "bracket")
    return _rebuilt(robot, {"bracket_joint": bracket}, ("bracket",), loop_joints=(pin,))


def test_a_loop_no_joint_moves_is_checked_at_the_values_given() -> None:
    """A loop whose way has only a fixed joint (docs/loops.md: passive joints are revolute,
    continuous and prismatic ones, others on a cycle are held): nothing is passive, the
    crank's link_fk and link_fk_batch place the links as the tree does where the loop
    closes, and where it stays 1 mm apart link_fk raises LoopNotClosedError naming the
    loop joint and where it is written (make mutate: the candidate slots, or the cycle's
    child links, of an empty cycle an array of floats, an IndexError or TypeError at the
    first solve, survived)."""
    crank_rad = 0.4
    a = FOUR_BAR["a"]
    crank_end = a * np.array([math.cos(CRANK_DRAWN + crank_rad), math.sin(CRANK_DRAWN + crank_rad)])
    closed = _bracket_pinned(0.0)
    assert np.allclose(_point(closed.link_fk({"crank_joint": crank_rad})["crank"], a), crank_end)
    batch = closed.link_fk_batch({"crank_joint": np.array([crank_rad])})
    assert np.allclose(_point(batch["crank"][0], a), crank_end)
    with pytest.raises(LoopNotClosedError, match=r"bracket\.urdf:7: .*'bracket_pin'"):
        _bracket_pinned(1e-3).link_fk({"crank_joint": crank_rad})


def test_a_loop_joint_given_on_a_loop_no_joint_moves_is_published_with_its_value() -> None:
    """The bracket's loop joint a revolute one, its own value given in a JointState with the
    crank's (docs/loops.md: a loop joint whose value is given is held at it): the pipeline
    publishes the message, and ``loop_joint_state`` (the loop_joint_states topic) names no
    passive joint and that loop joint at its value (make mutate: the plan's joints of an
    empty cycle an array of floats, which indexed the slots there, an IndexError, survived)."""
    robot = _bracket_pinned(0.0, LoopJointType.REVOLUTE)
    pipeline = JointStatePipeline(Settings(), Reporter(logging.getLogger(__name__)), lambda: 0)
    pipeline.install(LoadedModel(robot, ""))
    pin_rad = 0.0  # where the bracket's frames coincide: the loop closed
    stamp_ns = 1_700_000_000 * 1_000_000_000
    published = pipeline.joint_state(
        stamp_ns, ("crank_joint", "bracket_pin"), np.array([0.4, pin_rad])
    )
    assert published is not None
    assert pipeline.loop_joint_state() == (["bracket_pin"], [pin_rad])
