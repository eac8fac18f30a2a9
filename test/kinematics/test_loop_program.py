"""The closed forms compiled to straight-line float code (``loop_program``, issue #45's
speed) against the same forms the general way (the FK of the whole robot, the forms on plain
floats): the same passive values and errors, to 1e-12, message by message along a crank's
full circle (the node's warm starts), on both assemblies, and where a loop cannot close."""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
import pytest

from bench.loop_models import FOUR_BAR, LEGS, four_bar, legged, rssr, slider_crank
from joint_tf_publisher import Robot
from joint_tf_publisher.health.reporting import Reporter
from joint_tf_publisher.kinematics import loop_program
from joint_tf_publisher.kinematics.float_trace import MISS
from joint_tf_publisher.kinematics.loop_program import MAX_TRACES, FormProgram
from joint_tf_publisher.kinematics.loop_solver import LoopSolver, PassivePlan
from joint_tf_publisher.node_core.parameters import Settings
from joint_tf_publisher.node_core.pipeline import JointStatePipeline, LoadedModel

#: The compiled and the general way agree to this (rad, m): round-off, not the tolerance.
EXACT = 1e-12
LEGGED_GIVEN = [f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "crank")]
#: Messages of one crank turn (1 degree each).
TURN = 360


def _setup(robot: Robot, given_names: list[str]) -> tuple[LoopSolver, np.ndarray, PassivePlan]:
    solver = robot.kinematics.loops
    assert solver is not None
    given = robot.kinematics.cfg.given_slots(given_names)
    return solver, given, solver.plan(solver.passive_slots(given).tobytes())


def _program(plan: PassivePlan) -> FormProgram:
    assert plan.program is not None, "the forms were not compiled"
    return plan.program


def _both_ways(
    solver: LoopSolver, plan: PassivePlan, start: np.ndarray
) -> tuple[np.ndarray, object]:
    """One message from ``start``: the compiled forms' result, checked against the general
    way's from the same start (values and errors to 1e-12, or both not applying)."""
    general = start.copy()
    expected = solver.close_in_closed_form(general, plan, solver.single_fk.link_poses(general))
    compiled = start.copy()
    outcome = _program(plan).run(compiled)
    assert outcome is not MISS, "no trace covered the message (the general way was taken)"
    if expected is None:
        assert outcome is None
        np.testing.assert_array_equal(compiled, start)  # untouched, as the general way
        return compiled, outcome
    assert isinstance(outcome, tuple)
    # Values to 1e-12 where the loops are well conditioned; where the passive joints'
    # Jacobian has a small singular value (a rod's universal joint near its straight
    # position), round-off at the solution (1e-14) moves them by that much over it.
    poses = solver.single_fk.link_poses(general)
    jacobian = solver._jacobian(poses, solver._frames(poses), plan.sides)
    smallest = float(np.linalg.svd(jacobian, compute_uv=False).min())
    within = EXACT / min(1.0, 100.0 * smallest)
    assert np.max(np.abs(compiled - general)) < within
    np.testing.assert_allclose(solver.single_fk.link_poses(compiled), poses, atol=within)
    for got, want in zip(outcome, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=0.0, atol=EXACT)
    return compiled, outcome


def _turn(
    robot: Robot, given_names: list[str], turns: float = 1.0, crank_swing: float | None = None
) -> tuple[PassivePlan, int]:
    """The given joints driven along ``turns`` full turns of the crank(s) in 1 degree steps
    (``crank_swing``: each crank swung that far (rad) to and fro instead; the other given
    joints swinging 0.2 rad), each message from the last one's solution as the node starts
    it; the plan and how many messages closed."""
    solver, given, plan = _setup(robot, given_names)
    layout = robot.kinematics.layout
    slots = [int(layout.variable_lookup[name][1]) for name in given_names]
    values = solver.solve_from_drawing(layout.zero_values.copy(), given).values
    closed = 0
    for step in range(1, int(TURN * turns) + 1):
        angle = math.radians(step)
        start = values.copy()
        for k, (name, slot) in enumerate(zip(given_names, slots, strict=True)):
            # Each crank a turn (phases apart), the legged robot's hips and thighs swinging.
            swing = 0.2 if not name.endswith("crank_joint") else crank_swing
            start[slot] = angle + k if swing is None else swing * math.sin(angle + k)
        result, outcome = _both_ways(solver, plan, start)
        if outcome is not None:
            values = result
            closed += 1
    return plan, closed


@pytest.mark.parametrize(
    ("robot", "given_names", "crank_swing"),
    [
        (four_bar(), ["crank_joint"], None),
        (slider_crank(), ["crank_joint"], None),
        (legged(), LEGGED_GIVEN, 0.6),
    ],
    ids=["four-bar", "slider-crank", "legged"],
)
def test_the_compiled_forms_agree_along_full_turns(
    robot: Robot, given_names: list[str], crank_swing: float | None
) -> None:
    """Two full turns of each crank (the legged robot's knee cranks swung +-0.6 rad, its
    hips and thighs with them: its gait), message by message: every message taken by the
    compiled forms (no trace missing), with the general way's values and errors, and every
    one closed; the two solutions of a form changing places along the way are a choice
    inside one trace, not new traces."""
    plan, closed = _turn(robot, given_names, 2.0, crank_swing)
    assert closed == 2 * TURN
    assert len(_program(plan).traces) <= 2


def test_the_compiled_forms_agree_on_the_other_assembly() -> None:
    """The four-bar crossed (the other assembly): the compiled forms follow it, as the general
    way does, for a full turn."""
    robot = four_bar()
    solver, given, plan = _setup(robot, ["crank_joint"])
    layout = robot.kinematics.layout
    crank = int(layout.variable_lookup["crank_joint"][1])
    values = solver.solve_from_drawing(layout.zero_values.copy(), given).values
    # The crossed assembly: the coupler and rocker mirrored about the line from the crank's
    # end to the rocker's pivot, found by the solver from a start near it.
    crossed = values.copy()
    crossed[plan.slots] += [1.2, -1.6]
    solver._minimise(crossed, plan, goal=0.0)
    assert np.max(np.abs(np.angle(np.exp(1j * (crossed - values)[plan.slots])))) > 0.5
    for step in range(TURN):
        start = crossed.copy()
        start[crank] += math.radians(1.0)
        crossed, outcome = _both_ways(solver, plan, start)
        assert isinstance(outcome, tuple)
        assert step < 2 or np.max(np.abs(crossed[plan.slots] - start[plan.slots])) < 0.2


def test_the_compiled_forms_agree_where_a_loop_cannot_close(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A four-bar whose crank cannot turn round (crank 2.5, coupler 3, rocker 1, ground 3):
    past its reach the forms do not apply, compiled as the general way, values untouched
    (the node then holds the loop open); back within reach both close it again alike."""
    monkeypatch.setitem(FOUR_BAR, "a", 2.5)
    monkeypatch.setitem(FOUR_BAR, "c", 1.0)
    plan, closed = _turn(four_bar(), ["crank_joint"])
    assert 0 < closed < TURN  # some messages held open, some closed
    assert len(_program(plan).traces) <= MAX_TRACES


def test_the_compiled_rod_form_agrees_where_the_rod_cannot_reach() -> None:
    """RSSR: a full crank turn goes past the rod's reach (the circle and the sphere part):
    there the compiled form does not apply, as the general way; within reach it closes
    alike."""
    plan, closed = _turn(rssr(), ["crank_joint"])
    assert 0 < closed < TURN


@pytest.mark.parametrize(
    ("robot", "given_names"),
    [(four_bar(), ["crank_joint"]), (legged(), LEGGED_GIVEN)],
    ids=["four-bar", "legged"],
)
def test_the_node_pipeline_takes_the_compiled_forms(
    robot: Robot, given_names: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The node's pipeline (``JointStatePipeline.joint_state``, as the node, the fleet and
    bag repair run it) along a crank turn: the general way (the whole robot's FK) is never
    taken (the first message records the trace and runs it), and every loop stays closed."""
    pipeline = JointStatePipeline(
        Settings(ignore_timestamp=True), Reporter(logging.getLogger("test")), lambda: 1
    )
    pipeline.install(LoadedModel(robot, ""))
    general_calls = []
    general = LoopSolver.close_in_closed_form

    def counted(self: LoopSolver, values: np.ndarray, plan: PassivePlan, poses: np.ndarray) -> Any:
        general_calls.append(1)
        return general(self, values, plan, poses)

    monkeypatch.setattr(LoopSolver, "close_in_closed_form", counted)
    for step in range(TURN):
        angle = math.radians(step)
        values = [
            (angle if robot.name == "four_bar" else 0.5 * math.sin(angle + k))
            if name.endswith("crank_joint")
            else 0.2 * math.sin(angle + k)
            for k, name in enumerate(given_names)
        ]
        assert pipeline.joint_state(1 + step, tuple(given_names), np.array(values)) is not None
        assert pipeline.health.loops is not None
        assert not pipeline.health.loops.not_closed_since_ns
    assert general_calls == []


def test_traces_of_passing_branches_give_way_to_the_branch_the_stream_takes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """#45 review: the first ``MAX_TRACES`` traces were kept for good, so a plan whose first
    messages took passing branches (a stand-up, an encoder glitch, a hostile publisher's
    eight messages) left every later message to the general way for the node's life (the
    legged robot: 3-4x the CPU). The four-bar that cannot turn round, its traces made full
    by a message out of reach: once ``REPLACE_AFTER`` messages no trace covers have passed,
    the branch they take is recorded in place of the least used one and covers them, with
    the general way's results; compiling stays bounded (one per ``REPLACE_AFTER``)."""
    monkeypatch.setitem(FOUR_BAR, "a", 2.5)
    monkeypatch.setitem(FOUR_BAR, "c", 1.0)
    monkeypatch.setattr(loop_program, "MAX_TRACES", 1)
    robot = four_bar()
    solver, given, plan = _setup(robot, ["crank_joint"])
    program = _program(plan)
    crank = int(robot.kinematics.layout.variable_lookup["crank_joint"][1])
    start = robot.kinematics.layout.zero_values.copy()  # the plan's program yet unrun
    recorded = []
    record = program._record
    monkeypatch.setattr(program, "_record", lambda listed: recorded.append(1) or record(listed))
    out_of_reach = start.copy()
    out_of_reach[crank] = 1.0
    assert program.run(out_of_reach.copy()) is None  # the one trace: "does not apply"
    within = start.copy()
    within[crank] = -0.3
    misses = 0
    while program.run(within.copy()) is MISS:
        misses += 1
        assert misses <= loop_program.REPLACE_AFTER, "the branch taken was never recorded"
    assert misses == loop_program.REPLACE_AFTER - 1
    for angle in np.linspace(-0.6, -0.2, 50):  # now the compiled way, as the general way
        message = start.copy()
        message[crank] = angle
        _both_ways(solver, plan, message)
    assert len(program.traces) == 1 and len(recorded) == 2
    # A stream alternating between the two branches compiles once per REPLACE_AFTER misses.
    for _ in range(2 * loop_program.REPLACE_AFTER):
        program.run(out_of_reach.copy())
        program.run(within.copy())
    assert len(recorded) <= 2 + 4


@pytest.mark.parametrize(
    ("robot", "given_names"),
    [(four_bar(), ["crank_joint"]), (legged(), LEGGED_GIVEN)],
    ids=["four-bar", "legged"],
)
def test_a_program_folds_the_round_off_of_the_description(
    robot: Robot, given_names: list[str]
) -> None:
    """A rotation's round-off in the description (cos(pi / 2) is 6.1e-17, sin(pi) 1.2e-16:
    the four-bar's drawn crank, the legged robot's rod mounts) is no constant of the
    compiled forms (``loop_program.ROUND_OFF``): a term times it would cost a product and a
    sum every message. The results stay the general way's (the other tests here)."""
    solver, given, plan = _setup(robot, given_names)
    values = robot.kinematics.layout.zero_values.copy()
    solver.close_by_forms(values, plan)
    (trace,) = _program(plan).traces
    constants = [c for c in trace.floats.__code__.co_consts if isinstance(c, float)]
    assert constants, "the trace's constants were not read"
    assert all(c == 0.0 or abs(c) >= loop_program.ROUND_OFF for c in constants)
