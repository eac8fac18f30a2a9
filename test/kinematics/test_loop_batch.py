"""``Robot.link_fk_batch`` on robots with loops (issue #45): N configurations solved at once
(``loop_batch``, ``LoopSolver.solve_from_drawing_batch``), each as ``link_fk`` solves it, to
1e-12, and an unclosable row named in the typed error."""

from __future__ import annotations

import numpy as np
import pytest

from bench.loop_models import LEGS, four_bar, legged, rssr, slider_crank
from joint_tf_publisher import Robot
from joint_tf_publisher.errors import LoopNotClosedError
from joint_tf_publisher.kinematics import loop_solver

EXACT = 1e-12


def _cfgs(names: list[str], count: int, spread: float, seed: int) -> dict[str, np.ndarray]:
    generator = np.random.default_rng(seed)
    return {name: generator.uniform(-spread, spread, count) for name in names}


def _agree_with_link_fk(
    robot: Robot, cfgs: dict[str, np.ndarray], apart: float = EXACT
) -> dict[str, np.ndarray]:
    """The batch's poses, each row's within ``apart`` of link_fk's."""
    batch = robot.link_fk_batch(cfgs)
    count = len(next(iter(cfgs.values())))
    for row in range(count):
        single = robot.link_fk({name: float(values[row]) for name, values in cfgs.items()})
        for link, pose in single.items():
            assert np.max(np.abs(batch[link][row] - pose)) < apart, (row, link)
    return batch


LEGGED_GIVEN = [f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "crank")]


@pytest.mark.parametrize(
    ("robot", "names", "spread", "apart"),
    [
        (four_bar(), ["crank_joint"], 7.0, EXACT),  # beyond a turn: whole turns left out
        (slider_crank(), ["crank_joint"], 3.2, EXACT),
        (rssr(), ["crank_joint"], 0.6, EXACT),  # a spatial rod loop (ball joint)
        # The legged robot's rods hang on 5 cm levers: the universal joint's angles are
        # ill-conditioned (smallest singular value 1e-4), so two solves that each close the
        # loops to round-off, one in floats and one in numpy, differ by up to 1e-10 there
        # (test_loop_closed_forms's bound); each closes every loop to 1e-12 (below).
        (legged(), LEGGED_GIVEN, 0.3, 1e-9),
    ],
    ids=["four-bar", "slider-crank", "rssr", "legged"],
)
@pytest.mark.parametrize("count", [1, 5, 40])  # the three FK ways of a batch
def test_a_batch_solves_each_row_as_link_fk(
    robot: Robot,
    names: list[str],
    spread: float,
    apart: float,
    count: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every row as ``link_fk`` solves it, by the closed forms for the whole batch: the
    stateless solve (one row at a time) is not called once."""
    cfgs = _cfgs(names, count, spread, seed=count)
    calls: list[int] = []
    original = loop_solver.LoopSolver.solve_from_drawing

    def counted(self: loop_solver.LoopSolver, values: np.ndarray, given: np.ndarray) -> object:
        calls.append(1)
        return original(self, values, given)

    monkeypatch.setattr(loop_solver.LoopSolver, "solve_from_drawing", counted)
    robot.link_fk_batch(cfgs)
    assert not calls, "a row was solved one by one"
    monkeypatch.undo()
    batch = _agree_with_link_fk(robot, cfgs, apart)
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
