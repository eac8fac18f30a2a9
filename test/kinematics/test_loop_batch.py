"""``Robot.link_fk_batch`` on robots with loops (issue #45): N configurations solved at once
by the compiled forms' own traces over arrays (``loop_batch.close_rows``,
``LoopSolver.solve_from_drawing_batch``), each as ``link_fk`` solves it, to 1e-12: on either
assembly, rows the forms leave to the general way, and an unclosable row named in the typed
error."""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import Iterator

import numpy as np
import pytest
from repo_paths import REPO_ROOT

from bench import loop_models
from bench.loop_models import CRANK_DRAWN, FOUR_BAR, LEGS, four_bar, legged, rssr, slider_crank
from joint_tf_publisher import Robot
from joint_tf_publisher.errors import LoopNotClosedError
from joint_tf_publisher.kinematics import kinematics, loop_program, loop_solver
from joint_tf_publisher.kinematics.float_trace import MISS
from joint_tf_publisher.kinematics.loop_batch import close_rows

EXACT = 1e-12


def _cfgs(names: list[str], count: int, spread: float, seed: int) -> dict[str, np.ndarray]:
    generator = np.random.default_rng(seed)
    return {name: generator.uniform(-spread, spread, count) for name in names}


def _agree_with_link_fk(robot: Robot, cfgs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The batch's poses, each row's within 1e-12 of link_fk's."""
    batch = robot.link_fk_batch(cfgs)
    count = len(next(iter(cfgs.values())))
    for row in range(count):
        single = robot.link_fk({name: float(values[row]) for name, values in cfgs.items()})
        for link, pose in single.items():
            assert np.max(np.abs(batch[link][row] - pose)) < EXACT, (row, link)
    return batch


@pytest.fixture
def one_by_one(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The crank values (the first value of a row) ``solve_from_drawing`` is called with:
    the rows the batch leaves to the general way, one at a time."""
    calls: list[float] = []
    original = loop_solver.LoopSolver.solve_from_drawing

    def counted(self: loop_solver.LoopSolver, values: np.ndarray, given: np.ndarray) -> object:
        calls.append(float(values[0]))
        return original(self, values, given)

    monkeypatch.setattr(loop_solver.LoopSolver, "solve_from_drawing", counted)
    yield calls


@pytest.fixture
def non_grashof(monkeypatch: pytest.MonkeyPatch) -> Robot:
    """A four-bar whose crank cannot turn round (crank 2.5, coupler 3, rocker 1, ground 3):
    it closes for crank values (from the drawing) in [-0.85, 0.05] and [-3.19, -2.29]."""
    monkeypatch.setitem(FOUR_BAR, "a", 2.5)
    monkeypatch.setitem(FOUR_BAR, "c", 1.0)
    return four_bar()


LEGGED_GIVEN = [f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "crank")]


@pytest.mark.parametrize(
    ("robot", "names", "spread"),
    [
        (four_bar(), ["crank_joint"], 7.0),  # beyond a turn: whole turns left out
        (slider_crank(), ["crank_joint"], 3.2),
        (rssr(), ["crank_joint"], 0.6),  # a spatial rod loop (ball joint)
        # The legged robot's rods hang on 5 cm levers (the universal joint's angles
        # ill-conditioned): the batch and link_fk run the same traces, so they agree to
        # round-off of numpy's functions against math's there too.
        (legged(), LEGGED_GIVEN, 0.3),
    ],
    ids=["four-bar", "slider-crank", "rssr", "legged"],
)
@pytest.mark.parametrize("count", [1, 5, 40])  # the three FK ways of a batch
def test_a_batch_solves_each_row_as_link_fk(
    robot: Robot,
    names: list[str],
    spread: float,
    count: int,
    one_by_one: list[float],
) -> None:
    """Every row as ``link_fk`` solves it, to 1e-12, by the compiled forms for the whole
    batch: the stateless solve (one row at a time) is not called once."""
    cfgs = _cfgs(names, count, spread, seed=count)
    robot.link_fk_batch(cfgs)
    assert not one_by_one, "a row was solved one by one"
    batch = _agree_with_link_fk(robot, cfgs)
    solver = robot.kinematics.loops
    assert solver is not None
    names_in_order = robot.kinematics.link_names
    for row in range(count):
        poses = np.array([batch[name][row] for name in names_in_order])
        position, angle = solver.errors(poses)
        assert float(position.max()) < EXACT and float(angle.max()) < EXACT


def test_rows_without_a_closed_form_are_solved_one_by_one_as_link_fk() -> None:
    """The four-bar given its rocker: the crank and coupler are passive, no closed form; the
    batch takes the stateless solve per row, the same poses as link_fk."""
    _agree_with_link_fk(four_bar(), {"rocker_joint": np.array([0.0, 0.05, -0.1])})


def test_an_unclosable_row_raises_naming_the_row_and_the_loop_joint() -> None:
    """A crank turned beyond a limited passive joint's reach, in row 2: the same error as
    link_fk's, its ``row`` 2 and said in the message."""
    robot = four_bar()
    with pytest.raises(LoopNotClosedError) as single:
        robot.link_fk({"rocker_joint": -2.0})
    with pytest.raises(LoopNotClosedError) as batch:
        robot.link_fk_batch({"rocker_joint": np.array([0.0, 0.1, -2.0, -2.0])})
    assert batch.value.row == 2
    assert batch.value.joint == single.value.joint == "closing"
    assert batch.value.position_error_m == single.value.position_error_m
    assert "configuration 2 of the batch" in str(batch.value)
    assert single.value.row is None and "configuration" not in str(single.value)


def test_a_large_batch_is_solved_in_blocks_of_bounded_memory() -> None:
    """#45 review: N rows were walked all at once, each step's link poses of every row held
    (about five times the result: 15 GB for a million configurations of the legged robot).
    Solved ``LOOP_BATCH_ROWS`` at a time, what the call allocates beyond its result stays
    a fraction of it; the rows as one call solves them."""
    robot = four_bar()
    count = 5 * kinematics.LOOP_BATCH_ROWS
    cfgs = _cfgs(["crank_joint"], count, 7.0, 45)
    robot.link_fk_batch({name: values[:2] for name, values in cfgs.items()})  # plans made
    tracemalloc.start()
    try:
        batch = robot.link_fk_batch(cfgs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    result = sum(poses.nbytes for poses in batch.values())
    assert peak < 2 * result, (peak, result)
    for row in (0, kinematics.LOOP_BATCH_ROWS, count - 1):  # a block's first and last rows
        single = robot.link_fk({"crank_joint": float(cfgs["crank_joint"][row])})
        for link, pose in single.items():
            assert np.max(np.abs(batch[link][row] - pose)) < EXACT, (row, link)


def test_an_unclosable_row_in_a_later_block_is_named_by_its_row_in_the_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The row a ``LoopNotClosedError`` names counts from the batch's start, not from its
    block's (a crank that cannot turn round: crank 2.5, coupler 3, rocker 1, ground 3)."""
    monkeypatch.setitem(FOUR_BAR, "a", 2.5)
    monkeypatch.setitem(FOUR_BAR, "c", 1.0)
    robot = four_bar()
    crank = np.full(kinematics.LOOP_BATCH_ROWS + 5, -0.3)  # within reach
    crank[kinematics.LOOP_BATCH_ROWS + 3 :] = 1.0  # beyond it
    with pytest.raises(LoopNotClosedError) as single:
        robot.link_fk({"crank_joint": 1.0})
    with pytest.raises(LoopNotClosedError) as batch:
        robot.link_fk_batch({"crank_joint": crank})
    assert batch.value.row == kinematics.LOOP_BATCH_ROWS + 3
    assert batch.value.joint == single.value.joint
    assert f"configuration {kinematics.LOOP_BATCH_ROWS + 3} of the batch" in str(batch.value)


@pytest.mark.parametrize(
    "robot", [four_bar(), Robot.load(REPO_ROOT / "urdf" / "demo_arm.urdf")], ids=["four-bar", "arm"]
)
def test_a_batch_of_no_configuration_is_no_pose(robot: Robot) -> None:
    """#45 review: N = 0 rows raised numpy's "cannot reshape array of size 0 into shape (0)"
    (any robot, loops or not); each link's poses are (0, 4, 4), as for any other N."""
    name = next(iter(robot.kinematics.layout.variable_lookup))
    for empty in (np.zeros(0), [], np.zeros(0, dtype=np.int64)):
        batch = robot.link_fk_batch({name: empty})
        assert set(batch) == set(robot.links)
        assert all(poses.shape == (0, 4, 4) for poses in batch.values())


def test_a_robot_drawn_on_the_other_assembly_stays_on_it(
    monkeypatch: pytest.MonkeyPatch, one_by_one: list[float]
) -> None:
    """The four-bar drawn crossed (its rocker on the other side of the line from the crank's
    end to the rocker's pivot): every row of a batch beyond a full turn on that assembly, at
    the analytic crossed point, as link_fk, all by the compiled forms."""
    drawn = loop_models.four_bar_end
    monkeypatch.setattr(
        loop_models, "four_bar_end", lambda crank, branch=1.0: drawn(crank, -branch)
    )
    robot = four_bar()
    cranks = np.linspace(-7.0, 7.0, 41)
    batch = robot.link_fk_batch({"crank_joint": cranks})
    assert not one_by_one, "a row was solved one by one"
    c = FOUR_BAR["c"]
    for row, crank in enumerate(cranks.tolist()):
        end = batch["rocker"][row] @ np.array([c, 0.0, 0.0, 1.0])
        np.testing.assert_allclose(end[:2], drawn(CRANK_DRAWN + crank, -1.0), atol=1e-12)
    monkeypatch.undo()  # link_fk's own solve, as the rows: the crossed robot built above
    _agree_with_link_fk(robot, {"crank_joint": cranks[::4]})


def test_a_row_the_forms_leave_on_the_way_is_solved_at_its_own_values(
    non_grashof: Robot, one_by_one: list[float]
) -> None:
    """Crank -2.5 is reached from the drawing through values where the loop cannot close: the
    forms leave that row at a middle step of its walk and the general way solves it at -2.5
    (not at the step's value), as link_fk; the rows within reach stay on the forms."""
    cranks = np.array([-0.5, -2.5, -0.2, -2.9, 0.0])
    robot = non_grashof
    batch = robot.link_fk_batch({"crank_joint": cranks})
    assert one_by_one == [-2.5, -2.9]
    one_by_one.clear()
    for row, crank in enumerate(cranks.tolist()):
        single = robot.link_fk({"crank_joint": crank})
        for link, pose in single.items():
            np.testing.assert_allclose(batch[link][row], pose, rtol=0.0, atol=EXACT)


def test_an_unclosable_row_of_the_forms_raises_naming_the_row(non_grashof: Robot) -> None:
    """Crank -1.5 is beyond the linkage's reach: the batch raises link_fk's error for it,
    naming row 1, though rows 0 and 2 close."""
    with pytest.raises(LoopNotClosedError) as single:
        non_grashof.link_fk({"crank_joint": -1.5})
    with pytest.raises(LoopNotClosedError) as batch:
        non_grashof.link_fk_batch({"crank_joint": np.array([-0.5, -1.5, -0.2])})
    assert batch.value.row == 1 and batch.value.joint == single.value.joint == "closing"
    assert batch.value.position_error_m == pytest.approx(single.value.position_error_m, abs=1e-12)


@pytest.mark.parametrize(
    ("robot", "reaches_all"),
    [(four_bar(), True), (slider_crank(), True), (rssr(), False)],
    ids=["four-bar", "slider-crank", "rssr"],
)
def test_close_rows_is_the_program_run_column_by_column(robot: Robot, reaches_all: bool) -> None:
    """Columns from warm starts on both assemblies (the drawing's solution and its passive
    joints turned half a turn) and cranks all round (the rod beyond its reach: the form does
    not apply): each column's values and errors those of ``FormProgram.run`` at it, to
    1e-12, covered exactly where run closes it."""
    solver = robot.kinematics.loops
    assert solver is not None
    layout = robot.kinematics.layout
    given = robot.kinematics.cfg.given_slots(["crank_joint"])
    plan = solver.plan_for(given)
    assert plan.program is not None
    drawn = solver.solve_from_drawing(layout.zero_values.copy(), given).values
    crank = int(layout.variable_lookup["crank_joint"][1])
    columns = []
    for start in np.linspace(-math.pi, math.pi, 25).tolist():
        for other in (0.0, math.pi):
            column = drawn.copy()
            column[crank] += start
            column[plan.slots] += other * solver._angle_slots[plan.slots]
            columns.append(column)
    values = np.array(columns).T.copy()
    rows = close_rows(plan.program, values)
    covered = 0
    for k, column in enumerate(columns):
        single = column.copy()
        outcome = plan.program.run(single)
        assert outcome is not MISS
        if outcome is None:
            assert not rows.covered[k]
            continue
        assert isinstance(outcome, tuple)
        assert rows.covered[k]
        covered += 1
        np.testing.assert_allclose(rows.values[:, k], single, rtol=0.0, atol=EXACT)
        np.testing.assert_allclose(rows.position_m[:, k], outcome[0], rtol=0.0, atol=EXACT)
        np.testing.assert_allclose(rows.angle_rad[:, k], outcome[1], rtol=0.0, atol=EXACT)
    assert covered == len(columns) if reaches_all else 0 < covered < len(columns)


def test_rows_no_trace_may_serve_are_solved_one_by_one(
    monkeypatch: pytest.MonkeyPatch, one_by_one: list[float]
) -> None:
    """No trace may be recorded (the plan's budget spent, here 0): every row of the batch
    goes the general way, one at a time, with link_fk's answer."""
    monkeypatch.setattr(loop_program, "MAX_TRACES", 0)
    robot = four_bar()
    cranks = np.array([0.3, -1.0, 2.0])
    batch = robot.link_fk_batch({"crank_joint": cranks})
    assert one_by_one == cranks.tolist()
    for row, crank in enumerate(cranks.tolist()):
        single = robot.link_fk({"crank_joint": crank})
        for link, pose in single.items():
            np.testing.assert_allclose(batch[link][row], pose, rtol=0.0, atol=EXACT)
