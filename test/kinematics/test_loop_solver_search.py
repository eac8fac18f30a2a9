"""Closed loops (issue #45): the loop solver's errors, its search and its walks, each checked
against the kinematics a test computes itself (the #44 rule's answers to ``make mutate``'s
survivors in ``_errors``, ``_residual``, ``_minimise``, ``solve_from_drawing`` and
``solve_from_drawing_batch``)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from bench.loop_models import CRANK_DRAWN, FOUR_BAR, four_bar
from joint_tf_publisher.kinematics.loop_solver import LoopSolver
from joint_tf_publisher.model.loops import LoopJointType
from joint_tf_publisher.transforms import xyz_rpy_to_matrix


def test_the_errors_measure_each_loop_joint_by_its_own_type() -> None:
    """``LoopSolver.errors`` (docs/loops.md: the residual of each loop joint) measures each
    loop joint by its type alone, whatever the others are: at the four-bar's closed poses
    (crank 0.7 rad), its pin (revolute) closes; the same pin tilted 0.3 rad about x closes in
    position and stays 0.3 rad apart (the angle between the axes); as a ball it has no angle;
    a fixed joint locking the crank to the ground stays apart by the crank's turn (0.7 rad,
    the angle between the frames); a prismatic joint on the ground, its frames 0.4 m apart
    along its axis and 0.05 m across, is 0.05 m apart (the joint may slide); the pin moved
    0.02 m along its axis is 0.02 m apart. (make mutate: position taking an angle row, the
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
        replace(
            pin,
            name="crank_lock",
            type=LoopJointType.FIXED,
            link1="ground",
            link1_to_joint=crank_pivot,
            link2="crank",
            link2_to_joint=np.eye(4),
            axis=np.zeros(3),
        ),
        replace(
            pin,
            name="slide",
            type=LoopJointType.PRISMATIC,
            link1="ground",
            link1_to_joint=slide,
            link2="ground",
            link2_to_joint=np.eye(4),
            axis=np.array([1.0, 0.0, 0.0]),
        ),
        replace(pin, name="gap", link1_to_joint=pin.link1_to_joint @ gap),
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
    assert np.allclose(position_m, [0.0, 0.0, 0.0, 0.0, across_m, gap_m], atol=1e-12)
    assert np.allclose(angle_rad, [0.0, tilt_rad, 0.0, crank_rad, 0.0, 0.0], atol=1e-12)
    # No loop joint moves the solver's reading of another: each alone, the same errors.
    for k, loop in enumerate(loops):
        alone = LoopSolver(kinematics.layout, kinematics.single_fk, (loop,))
        position_alone, angle_alone = alone.errors(poses)
        assert math.isclose(position_alone[0], position_m[k], abs_tol=1e-15), loop.name
        assert math.isclose(angle_alone[0], angle_rad[k], abs_tol=1e-15), loop.name
