"""Closed loops solved (issue #45): against closed-form solutions of classic linkages."""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np
import pytest

from bench.loop_models import (
    CRANK_DRAWN,
    FOUR_BAR,
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
    MAX_ITERATIONS,
    LoopSolution,
    LoopSolver,
    LoopTolerance,
)
from joint_tf_publisher.model import Joint, Limit, Link, Mimic, RobotModel
from joint_tf_publisher.model.clamp_mode import ClampMode
from joint_tf_publisher.model.loops import LoopJoint, LoopJointType

#: Where a loop can close, the solver gets there to about machine precision (m, rad).
EXACT = 1e-12


def _point(pose: np.ndarray, x: float = 0.0, y: float = 0.0) -> np.ndarray:
    return (pose @ np.array([x, y, 0.0, 1.0]))[:3]


@pytest.mark.parametrize("loop_type", [LoopJointType.REVOLUTE, LoopJointType.BALL])
@pytest.mark.parametrize("crank", [0.3, 1.4, -1.0, 2.9, -3.0])
def test_four_bar_matches_the_circle_intersection(loop_type: LoopJointType, crank: float) -> None:
    robot = four_bar(loop_type)
    poses = robot.link_fk({"crank_joint": crank})
    end = four_bar_end(CRANK_DRAWN + crank)
    assert np.allclose(_point(poses["coupler"], FOUR_BAR["b"])[:2], end, atol=EXACT)
    assert np.allclose(_point(poses["rocker"], FOUR_BAR["c"])[:2], end, atol=EXACT)
    # The crank is given: held exactly.
    angle = math.atan2(poses["crank"][1, 0], poses["crank"][0, 0])
    assert math.isclose(math.remainder(angle - CRANK_DRAWN - crank, math.tau), 0.0, abs_tol=1e-15)


def test_four_bar_rocker_angle_by_freudenstein() -> None:
    """Freudenstein: K1 cos(psi) - K2 cos(theta) + K3 = cos(theta - psi), K1 = d/a, K2 = d/c,
    K3 = (a^2 - b^2 + c^2 + d^2) / (2 a c); the solved rocker angle psi satisfies it."""
    a, b, c, d = (FOUR_BAR[k] for k in "abcd")
    robot = four_bar()
    for crank in np.linspace(-3.0, 3.0, 13):
        poses = robot.link_fk({"crank_joint": float(crank)})
        theta = CRANK_DRAWN + float(crank)
        psi = math.atan2(poses["rocker"][1, 0], poses["rocker"][0, 0])
        k1, k2, k3 = d / a, d / c, (a * a - b * b + c * c + d * d) / (2 * a * c)
        assert math.isclose(
            k1 * math.cos(psi) - k2 * math.cos(theta) + k3, math.cos(theta - psi), abs_tol=1e-11
        )


@pytest.mark.parametrize("crank", [0.3, 0.7, 2.0, -2.5, 3.1])
def test_slider_crank_prismatic_passive(crank: float) -> None:
    robot = slider_crank()
    poses = robot.link_fk({"crank_joint": crank})
    expected = slider_position(CRANK_DRAWN + crank)
    assert math.isclose(poses["slider"][0, 3], expected, abs_tol=EXACT)
    assert np.allclose(_point(poses["rod"], SLIDER["l"]), poses["slider"][:3, 3], atol=EXACT)


@pytest.mark.parametrize("crank", [0.4, 1.0, -0.6, -1.0])
def test_rssr_ball_end_keeps_the_rod_length(crank: float) -> None:
    robot = rssr()
    poses = robot.link_fk({"crank_joint": crank})
    a, c = RSSR["a"], RSSR["c"]
    crank_end = _point(poses["crank"], a)
    rocker_end = _point(poses["rocker"], 0.0, c)
    assert math.isclose(float(np.linalg.norm(rocker_end - crank_end)), RSSR["L"], abs_tol=EXACT)
    assert np.allclose(_point(poses["rod"], RSSR["L"]), rocker_end, atol=EXACT)
    # The rocker turns about x through its pivot: its end stays on that circle.
    assert math.isclose(math.hypot(rocker_end[1], rocker_end[2] - RSSR["h"]), c, abs_tol=EXACT)
    # |crank end - rocker end| = L in closed form: A cos(psi) + B sin(psi) = C.
    d, h, length = RSSR["d"], RSSR["h"], RSSR["L"]
    psi = math.atan2(poses["rocker"][2, 1], poses["rocker"][1, 1])
    left = -2 * a * c * math.sin(crank) * math.cos(psi) + 2 * h * c * math.sin(psi)
    right = length**2 - (d - a * math.cos(crank)) ** 2 - (a * math.sin(crank)) ** 2 - c * c - h * h
    assert math.isclose(left, right, abs_tol=1e-11)


def test_rssr_out_of_reach_raises() -> None:
    with pytest.raises(LoopNotClosedError, match="ball_end"):
        rssr().link_fk({"crank_joint": 2.0})


def test_unclosable_raises_naming_the_loop_joint() -> None:
    """The rocker of a crank-rocker swings through part of a turn: given it beyond, the loop
    cannot close."""
    robot = four_bar()
    with pytest.raises(LoopNotClosedError) as caught:
        robot.link_fk({"rocker_joint": -2.0})
    assert caught.value.joint == "closing"
    assert "four_bar.urdf:9" in str(caught.value)
    assert caught.value.position_error_m > 1e-3
    assert math.isfinite(caught.value.position_error_m)


def _over_determined_four_bar() -> tuple[Robot, dict[str, float]]:
    """The four-bar and a cfg giving its crank 0.5 rad and its rocker 0.01 rad apart from
    where the crank puts it: over-determined, the loop cannot close."""
    robot = four_bar()
    closed = robot.link_fk({"crank_joint": 0.5})
    rocker = math.atan2(closed["rocker"][1, 0], closed["rocker"][0, 0])
    drawn_rocker = math.atan2(*(four_bar_end(CRANK_DRAWN) - [FOUR_BAR["d"], 0.0])[::-1])
    return robot, {"crank_joint": 0.5, "rocker_joint": rocker - drawn_rocker + 0.01}


def test_over_determined_least_squares_with_given_held() -> None:
    """Crank and rocker both given, a little apart from a closing pair: the coupler takes the
    least-squares fit, the given joints stay, the residual is reported."""
    robot, cfg = _over_determined_four_bar()
    kinematics = robot.kinematics
    solver = kinematics.loops
    assert solver is not None
    values = kinematics.cfg.single(cfg, ClampMode.NONE)
    solution = solver.solve_from_drawing(values, kinematics.cfg.given_slots(cfg))
    assert solution.over_determined
    assert not solution.all_closed
    assert 1e-4 < solution.position_error_m[0] < 0.05
    lookup = kinematics.layout.variable_lookup
    held = [lookup[name][1] for name in cfg]
    assert np.array_equal(solution.values[held], values[held])  # given held
    # Least squares: no coupler angle brings the two ends nearer.
    slot = lookup["coupler_joint"][1]
    for delta in (-1e-4, 1e-4):
        nudged = solution.values.copy()
        nudged[slot] += delta
        position, _ = solver.errors(kinematics.single_fk.link_poses(nudged))
        assert position[0] > solution.position_error_m[0]


def test_passive_limits_are_respected() -> None:
    """The rocker given, the crank passive with limits: where the closing crank angle lies
    inside them it is found; where it lies beyond, the crank stays inside its limits and the
    loop is reported as not closed (never a value outside the limits)."""
    free = four_bar()
    limited = four_bar(crank_limits=(-0.3, 0.3))
    solver = limited.kinematics.loops
    assert solver is not None
    lookup = limited.kinematics.layout.variable_lookup
    crank_slot = lookup["crank_joint"][1]
    for rocker, inside in ((0.05, True), (-0.1, True), (0.2, False), (-0.3, False)):
        unlimited = free.kinematics.loops
        assert unlimited is not None
        cfg = {"rocker_joint": rocker}
        values = free.kinematics.cfg.single(cfg, ClampMode.NONE)
        given = free.kinematics.cfg.given_slots(cfg)
        crank = unlimited.solve_from_drawing(values, given).values[crank_slot]
        assert bool(-0.3 <= crank <= 0.3) is inside
        solution = solver.solve(values, given)
        assert -0.3 <= solution.values[crank_slot] <= 0.3
        assert solution.all_closed is inside
        if inside:
            assert math.isclose(solution.values[crank_slot], crank, abs_tol=1e-10)


@pytest.mark.parametrize("loop_type", [LoopJointType.REVOLUTE, LoopJointType.BALL])
def test_crank_turns_three_full_circles_without_jumping(loop_type: LoopJointType) -> None:
    """Warm-started from the previous solution, the crank goes round three times; every step is
    on the drawing's branch and no passive joint jumps. (Revolute: the closed form; ball: the
    iterative solver.)"""
    robot = four_bar(loop_type)
    kinematics = robot.kinematics
    solver = kinematics.loops
    assert solver is not None
    given = kinematics.cfg.given_slots(["crank_joint"])
    values = kinematics.layout.zero_values.copy()
    previous = values.copy()
    for crank in np.linspace(0.0, 3 * math.tau, 3 * 90 + 1):
        values[kinematics.layout.variable_lookup["crank_joint"][1]] = crank
        solution = solver.solve(values, given)
        assert solution.all_closed
        assert solution.position_error_m[0] < EXACT
        end = four_bar_end(CRANK_DRAWN + crank)
        poses = kinematics.single_fk.link_poses(solution.values)
        coupler = kinematics.link_names.index("coupler")
        assert np.allclose(_point(poses[coupler], FOUR_BAR["b"])[:2], end, atol=EXACT)
        assert np.max(np.abs(solution.values - previous)) < 0.2
        previous = values = solution.values.copy()


def test_a_tree_has_no_solver() -> None:
    robot = four_bar()
    assert robot.kinematics.loops is not None
    from joint_tf_publisher import Robot
    from joint_tf_publisher.model import RobotModel

    tree = Robot.from_model(
        RobotModel(robot.name, robot.links, robot.joints, robot.root, loop_joints=())
    )
    assert tree.kinematics.loops is None


def test_link_fk_batch_solves_each_configuration_as_link_fk() -> None:
    robot = slider_crank()
    cranks = np.array([0.0, 0.7, 2.0, -2.5, 3.1])
    batch = robot.link_fk_batch({"crank_joint": cranks})
    for k, crank in enumerate(cranks.tolist()):
        assert math.isclose(
            batch["slider"][k, 0, 3], slider_position(CRANK_DRAWN + crank), abs_tol=EXACT
        )
    with pytest.raises(LoopNotClosedError, match="closing"):
        four_bar().link_fk_batch({"rocker_joint": np.array([0.0, -2.0])})


def test_the_four_bar_closed_form_agrees_with_the_iterative_solver() -> None:
    """A four-bar's coupler and rocker are a planar dyad: solved in closed form (no
    iteration), to what Levenberg-Marquardt finds from the same start."""
    robot = four_bar()
    kinematics = robot.kinematics
    solver = kinematics.loops
    assert solver is not None
    given = kinematics.cfg.given_slots(["crank_joint"])
    plan = solver.plan(solver.passive_slots(given).tobytes())
    assert plan.forms
    values = kinematics.layout.zero_values.copy()
    for crank in (0.2, 0.4, 0.6):
        values[kinematics.layout.variable_lookup["crank_joint"][1]] = crank
        closed_form = solver.solve(values, given)
        assert closed_form.iterations == 0 and closed_form.all_closed
        iterative = values.copy()
        solver._minimise(iterative, plan)
        assert np.allclose(closed_form.values, iterative, atol=1e-12)
        values = closed_form.values


# -- hostile values (review of #45) -----------------------------------------------------------


@pytest.mark.parametrize("turns", [1000.0, 1e6, -1e5, 1e300])
def test_a_crank_far_from_the_drawing_walks_no_more_than_a_turn(turns: float) -> None:
    """A stateless solve walked 0.25 rad a step from the drawing: a crank given 1000 rad took
    4000 solves (6 s), 1e6 rad hours. Whole turns change no pose: they are left out, and the
    poses are those of the value given."""
    robot = four_bar()
    kinematics = robot.kinematics
    assert kinematics.loops is not None
    values = kinematics.cfg.single({"crank_joint": turns}, ClampMode.NONE)
    given = kinematics.cfg.given_slots(["crank_joint"])
    solution = kinematics.loops.solve_from_drawing(values, given)
    assert solution.iterations <= 100
    assert solution.values[given].tolist() == [turns]
    near = math.remainder(turns, math.tau)
    assert np.allclose(
        robot.link_fk({"crank_joint": turns})["rocker"],
        robot.link_fk({"crank_joint": near})["rocker"],
        atol=1e-9 * max(1.0, abs(turns) * 1e-15),
    )


@pytest.mark.parametrize("travel", [1e9, 1e308, -1e308])
def test_a_huge_prismatic_value_is_a_loop_not_closed_not_an_overflow(travel: float) -> None:
    """The slider given 1e308 m (no clamp): the walk's step count was ceil(inf), an
    OverflowError; it is bounded (``MAX_CONTINUATION_STEPS``) and the loop reported open,
    without numpy's overflow warnings on the way (the frames 1e308 m apart are expected)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(LoopNotClosedError, match="pin"):
            slider_crank().link_fk({"slider_joint": travel})


def _closing_value(poses: dict[str, np.ndarray], loop: LoopJoint) -> float:
    """The four-bar's loop joint value (rad about z) at link ``poses``: from its frame on the
    coupler to its frame on the rocker."""
    frame1 = poses[loop.link1] @ loop.link1_to_joint
    frame2 = poses[loop.link2] @ loop.link2_to_joint
    relative = np.linalg.inv(frame1) @ frame2
    return math.atan2(relative[1, 0], relative[0, 0])


def test_link_fk_holds_a_loop_joints_own_value_as_the_node_does() -> None:
    """A cfg naming the four-bar's closing pin (#45: "a value given for a loop joint itself
    is held", docs/loops.md): alone, it pins the loop, the crank solved to where it puts it;
    with the crank and consistent, the same poses; 0.1 rad off, the least-squares fit (not an
    error); clamped into its limit; NaN refused naming it. ``link_fk_batch`` row by row alike.
    A ball loop joint's name gives nothing."""
    robot = four_bar()
    (closing,) = robot.loop_joints
    for crank in (0.3, -0.6, 1.2):
        expected = robot.link_fk({"crank_joint": crank})
        value = _closing_value(expected, closing)
        for cfg in ({"closing": value}, {"crank_joint": crank, "closing": value}):
            poses = robot.link_fk(cfg)
            for link, pose in expected.items():
                assert np.allclose(poses[link], pose, atol=1e-9), (cfg, link)
    crank = 0.3
    value = _closing_value(robot.link_fk({"crank_joint": crank}), closing)
    fit = robot.link_fk({"crank_joint": crank, "closing": value + 0.1})
    assert math.isclose(_closing_value(fit, closing), value + 0.1, abs_tol=0.1)
    assert not np.allclose(fit["rocker"], robot.link_fk({"crank_joint": crank})["rocker"])
    batch = robot.link_fk_batch({"closing": np.array([value, value + 0.2])})
    for row, given in enumerate((value, value + 0.2)):
        single = robot.link_fk({"closing": given})
        for link, pose in single.items():
            assert np.allclose(batch[link][row], pose, atol=1e-12), link
    with pytest.raises(ValueError, match="'closing'"):
        robot.link_fk({"closing": math.nan})
    limited = Robot.from_model(
        RobotModel(
            robot.name,
            robot.links,
            robot.joints,
            robot.root,
            loop_joints=(replace(closing, lower=1.0, upper=1.5),),
        )
    )
    assert np.allclose(
        limited.link_fk({"closing": 2.5}, clamp="hard")["crank"],
        limited.link_fk({"closing": 1.5})["crank"],
        atol=1e-12,
    )
    ball = four_bar(LoopJointType.BALL)
    for link, pose in ball.link_fk({"crank_joint": crank}).items():
        assert np.array_equal(ball.link_fk({"crank_joint": crank, "closing": 0.7})[link], pose)


def test_the_error_names_the_loop_joint_that_stays_apart_of_several() -> None:
    """Of the legged robot's four rod loops, the front right one given a crank angle its rod
    cannot follow (2 rad): ``LoopNotClosedError`` names that leg's loop joint and its
    residual, not one of the three that close (make mutate: argmin survived)."""
    with pytest.raises(LoopNotClosedError) as raised:
        legged().link_fk({"fr_crank_joint": 2.0})
    assert raised.value.joint == "fr_rod_end"
    assert raised.value.position_error_m > 1e-3


def _offset_four_bar(offset_m: float, loop_type: LoopJointType = LoopJointType.REVOLUTE) -> Robot:
    """The four-bar with its closing pin's frame on the coupler moved ``offset_m`` along the
    pin's axis (z, normal to the plane every joint turns in): no joint value can take that
    gap away, so the loop's frames stay exactly ``offset_m`` apart where it closes otherwise."""
    robot = four_bar(loop_type)
    (closing,) = robot.loop_joints
    moved = closing.link1_to_joint.copy()
    moved[2, 3] += offset_m
    model = RobotModel(
        robot.name,
        robot.links,
        robot.joints,
        robot.root,
        loop_joints=(replace(closing, link1_to_joint=moved),),
    )
    return Robot.from_model(model)


def test_a_loop_exactly_the_tolerance_apart_counts_as_closed() -> None:
    """``loop_tolerance`` (1e-6 m and rad by default) is how far apart a loop joint's frames
    may stay and still count as closed (docs/loops.md; the node's test is ``<=`` too): frames
    exactly 1e-6 m apart (a gap along the pin's axis that no joint can take away) close, by
    the closed forms (the crank given: no iteration) and by the iterative solver (the rocker
    given, a ball loop joint) alike; 2e-6 m apart they do not (the error names the pin and
    that gap), and the warm solve says so too. Both parts of the bound are inclusive: a solver
    given 0 rad counts axes exactly on one line as closed."""
    tolerance_m = 1e-6
    for loop_type in (LoopJointType.REVOLUTE, LoopJointType.BALL):
        at_bound = _offset_four_bar(tolerance_m, loop_type)
        kinematics = at_bound.kinematics
        # Both parts of the bound at once: 1e-6 m, and 0 rad for axes exactly on one line.
        solver = LoopSolver(
            kinematics.layout,
            kinematics.single_fk,
            at_bound.loop_joints,
            LoopTolerance(position_m=tolerance_m, angle_rad=0.0),
        )
        for cfg in ({"crank_joint": 0.3}, {"rocker_joint": 0.05}):
            values = kinematics.cfg.single(cfg, ClampMode.NONE)
            given = kinematics.cfg.given_slots(cfg)
            solution = solver.solve_from_drawing(values, given)
            assert solution.all_closed, (loop_type, cfg)
            assert solution.position_error_m.tolist() == [tolerance_m]
            assert solution.angle_error_rad.tolist() == [0.0]
            closed_form = loop_type is LoopJointType.REVOLUTE and "crank_joint" in cfg
            assert (solution.iterations == 0) is closed_form, (loop_type, cfg)
            warm = solver.solve(solution.values, given)
            assert warm.all_closed and warm.position_error_m.tolist() == [tolerance_m]
        beyond = _offset_four_bar(2 * tolerance_m, loop_type)
        for cfg in ({"crank_joint": 0.3}, {"rocker_joint": 0.05}):
            with pytest.raises(LoopNotClosedError) as raised:
                beyond.link_fk(cfg)
            assert raised.value.joint == "closing"
            assert math.isclose(raised.value.position_error_m, 2 * tolerance_m, rel_tol=1e-6)
        beyond_solver = beyond.kinematics.loops
        assert beyond_solver is not None
        given = beyond.kinematics.cfg.given_slots(["crank_joint"])
        start = beyond.kinematics.cfg.single({"crank_joint": 0.3}, ClampMode.NONE)
        warm = beyond_solver.solve(start, given)
        assert not warm.all_closed and not warm.closed[0]
        assert math.isclose(warm.position_error_m[0], 2 * tolerance_m, rel_tol=1e-6)


def test_the_error_names_the_loop_joint_apart_the_most_in_metres_or_radians() -> None:
    """ "Stays apart the most" weighs a loop joint's position (m) and angle (rad) errors each
    against its tolerance (1e-6 m, 1e-6 rad): of two loops, one 0.5 rad apart and one 0.01 m,
    the error names the first; one 0.5 m apart and one 0.01 rad, again the first; and it
    carries that loop joint's own two errors (make mutate: a tolerance multiplied, not divided,
    survived)."""
    robot = legged()
    solver = robot.kinematics.loops
    assert solver is not None
    names = [joint.name for joint in solver.loop_joints]
    values = robot.kinematics.layout.zero_values.copy()
    for position_m, angle_rad, worst in (
        ([0.0, 0.01, 0.0, 0.0], [0.0, 0.0, 0.5, 0.0], 2),
        ([0.0, 0.5, 0.0, 0.0], [0.0, 0.0, 0.01, 0.0], 1),
    ):
        position, angle = np.array(position_m), np.array(angle_rad)
        solution = LoopSolution(values, position, angle, np.zeros(4, dtype=bool), False, 1)
        error = solver.not_closed_error(solution)
        assert error.joint == names[worst]
        assert error.where == solver.loop_joints[worst].where
        assert (error.position_error_m, error.angle_error_rad) == (
            position_m[worst],
            angle_rad[worst],
        )


def test_a_closed_form_beyond_a_passive_limit_gives_way_to_the_projected_search() -> None:
    """The four-bar's rocker passive with limits 0.1 rad either side of the drawing, the crank
    given 0.5 rad: the closed form's rocker (0.25 rad) lies beyond, so the search projected
    onto the limits takes over (docs/loops.md, "Closed forms"); the rocker stays at its limit
    and the coupler turns its end as near the rocker's as it reaches, so the loop stays apart
    by the circles' gap, ||R - C| - b| (R the rocker's end at its limit, C the crank's end, b
    the coupler's length), and the error says so: that gap, within 1% (the least gap the
    limit allows: the rocker held there, the coupler's step solved without it).
    (make mutate: a form that does not apply taken as closed survived: 1.71 m.)"""
    a, b, c, d = (FOUR_BAR[k] for k in "abcd")
    free = four_bar()
    rocker_joint = replace(
        free.joints["rocker_joint"], joint_type="revolute", limit=Limit(lower=-0.1, upper=0.1)
    )
    robot = Robot.from_model(
        RobotModel(
            free.name,
            free.links,
            {**free.joints, "rocker_joint": rocker_joint},
            free.root,
            loop_joints=free.loop_joints,
        )
    )
    crank = 0.5
    with pytest.raises(LoopNotClosedError) as raised:
        robot.link_fk({"crank_joint": crank})
    drawn = four_bar_end(CRANK_DRAWN)
    rocker = math.atan2(drawn[1], drawn[0] - d) + 0.1
    rocker_end = np.array([d + c * math.cos(rocker), c * math.sin(rocker)])
    crank_end = a * np.array([math.cos(CRANK_DRAWN + crank), math.sin(CRANK_DRAWN + crank)])
    gap = abs(float(np.linalg.norm(rocker_end - crank_end)) - b)
    assert gap > 0.05  # the closed form's rocker is well beyond the limit
    assert raised.value.joint == "closing"
    assert gap <= raised.value.position_error_m < 1.01 * gap


def test_a_solve_runs_at_most_the_iterations_it_is_given() -> None:
    """``solve``'s ``max_iterations`` bounds the search (the node's 8 a message while a loop is
    held open, docs/loops.md): the ball four-bar (no closed form) started at the drawing with
    the crank given 0.5 rad takes exactly 1, 2, 3 iterations when given those, each nearer
    than the last (the first nearer than the start), and closes within 8; given 1 rad, 8
    iterations leave it open and the default bound closes it (make mutate: the count started
    at 1, counted by 2, compared with <=, or the bound or-ed with the cost, survived)."""
    robot = four_bar(LoopJointType.BALL)
    kinematics = robot.kinematics
    solver = kinematics.loops
    assert solver is not None
    given = kinematics.cfg.given_slots(["crank_joint"])
    start = kinematics.cfg.single({"crank_joint": 0.5}, ClampMode.NONE)
    nearer = float(solver.errors(kinematics.single_fk.link_poses(start))[0][0])
    for bound in (1, 2, 3):
        solution = solver.solve(start, given, bound)
        assert solution.iterations == bound
        assert solution.position_error_m[0] < nearer
        nearer = float(solution.position_error_m[0])
    bounded = solver.solve(start, given, 8)
    assert bounded.all_closed and bounded.iterations <= 8
    far = kinematics.cfg.single({"crank_joint": 1.0}, ClampMode.NONE)
    held = solver.solve(far, given, 8)
    assert held.iterations == 8 and not held.all_closed
    unbounded = solver.solve(far, given)
    assert unbounded.all_closed and 8 < unbounded.iterations <= MAX_ITERATIONS
    # Every joint of the loop given: no passive joint, nothing to iterate.
    every = kinematics.cfg.given_slots(["crank_joint", "coupler_joint", "rocker_joint"])
    assert solver.solve(start, every).iterations == 0


def test_a_least_squares_fit_ends_the_search_once_found() -> None:
    """Crank and rocker both given 0.01 rad apart from a closing pair (over-determined): the
    search stops where a step no longer lowers the residual by a millionth of it (the
    least-squares minimum, ``_minimise``), not at the iteration bound: from the given values
    within 8 iterations, and started at the fit again (the node's next identical message
    starts where the last fit ended) within 2, the same fit (make mutate: the stall test
    disabled, 29 and 20 iterations, survived)."""
    robot, cfg = _over_determined_four_bar()
    kinematics = robot.kinematics
    solver = kinematics.loops
    assert solver is not None
    values = kinematics.cfg.single(cfg, ClampMode.NONE)
    given = kinematics.cfg.given_slots(cfg)
    fit = solver.solve(values, given)
    assert fit.over_determined and not fit.all_closed
    assert fit.iterations <= 8
    again = solver.solve(fit.values, given)
    assert again.iterations <= 2
    assert math.isclose(again.position_error_m[0], fit.position_error_m[0], rel_tol=1e-9)


def test_a_passive_leader_moves_its_mimic_follower_on_the_loop() -> None:
    """The four-bar's rocker a mimic follower (multiplier -1) of a dial joint off the loop:
    the dial is the passive value (docs/loops.md: a passive follower moves with its leader),
    solved by the iterative search (no closed form serves a follower), so that the coupler's
    end and the rocker's meet where the circles do; the dial stands at minus the rocker's
    angle. Every other loop test has no follower (make mutate: the search's trial values
    left without their followers set survived)."""
    base = four_bar()
    rocker = replace(base.joints["rocker_joint"], mimic=Mimic("dial_joint", multiplier=-1.0))
    dial = Joint("dial_joint", "continuous", "ground", "dial", np.array([0.0, 0.0, 1.0]))
    robot = Robot.from_model(
        RobotModel(
            base.name,
            {**base.links, "dial": Link("dial")},
            {**base.joints, "rocker_joint": rocker, "dial_joint": dial},
            base.root,
            loop_joints=base.loop_joints,
        )
    )
    drawn_rocker = math.atan2(*(four_bar_end(CRANK_DRAWN) - [FOUR_BAR["d"], 0.0])[::-1])
    for crank in (0.3, -0.6, 1.2):
        poses = robot.link_fk({"crank_joint": crank})
        end = four_bar_end(CRANK_DRAWN + crank)
        assert np.allclose(_point(poses["coupler"], FOUR_BAR["b"])[:2], end, atol=EXACT)
        assert np.allclose(_point(poses["rocker"], FOUR_BAR["c"])[:2], end, atol=EXACT)
        rocker_turn = math.atan2(poses["rocker"][1, 0], poses["rocker"][0, 0]) - drawn_rocker
        dial_turn = math.atan2(poses["dial"][1, 0], poses["dial"][0, 0])
        assert math.isclose(math.remainder(dial_turn + rocker_turn, math.tau), 0.0, abs_tol=1e-12)


def test_a_solve_started_at_its_own_solution_returns_it() -> None:
    """A JointState repeated: the ball four-bar (the iterative search) solved for crank angles
    across a turn, then again from each solution, whose residual is round-off (1e-15 to
    1e-13 m), where a step can no longer lower it: the same values, closed (make mutate: the
    search ending there without its result, a TypeError in the caller, survived)."""
    robot = four_bar(LoopJointType.BALL)
    kinematics = robot.kinematics
    solver = kinematics.loops
    assert solver is not None
    given = kinematics.cfg.given_slots(["crank_joint"])
    for crank in np.linspace(-3.0, 3.0, 61).tolist():
        start = kinematics.cfg.single({"crank_joint": crank}, ClampMode.NONE)
        solution = solver.solve(start, given)
        again = solver.solve(solution.values, given)
        assert again.all_closed, crank
        assert np.allclose(again.values, solution.values, atol=1e-12), crank
