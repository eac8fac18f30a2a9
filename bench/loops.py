"""Section ``loops``: what solving closed loops costs per JointState and per ``link_fk``.

In-process, through the pipeline the node runs (``JointStatePipeline.joint_state`` with
``ignore_timestamp``, then the TFMessage's bytes), side by side in one run (the calls of
both variants interleaved, ``timing``): each loop robot (``loop_models``: a four-bar, and a
four-legged robot whose knees are driven by rods, four spatial loops) with only its actuated
joints given and the passive ones solved each message, against the same robot as a tree with
every joint given directly (the values of the solved run). The messages walk the actuators
along a smooth path at 1 kHz (a crank at 1 turn per second: 0.36 degrees a message, warm starts
as the node has them). Target: at most 1.3x. Also the stateless ``Robot.link_fk`` (loops
solved from the drawing, by continuation) in microseconds per call, against the tree's, and
``Robot.link_fk_batch`` of ``BATCH`` configurations (all solved at once) per configuration.
Results: docs/benchmarks.md, "Closed loops".
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .loop_models import LEGS, four_bar, legged
from .report import Table, micros, ratio
from .timing import seconds_per_call_interleaved

#: Messages of the path (one crank turn at 1 kHz and 1 turn/s).
PATH_LENGTH = 1000
#: Configurations of the ``link_fk_batch`` call timed (the path's, cycled).
BATCH = 1000


def _four_bar_path() -> tuple[Any, list[str], np.ndarray]:
    """The four-bar, its given joint and one crank turn."""
    crank = np.linspace(0.0, math.tau, PATH_LENGTH, endpoint=False)
    return four_bar(), ["crank_joint"], crank[:, None]


def _legged_path() -> tuple[Any, list[str], np.ndarray]:
    """The legged robot, its actuated joints, and a gait-like path: each leg's crank a quarter
    turn out of phase, hips and thighs swinging."""
    phase = np.linspace(0.0, math.tau, PATH_LENGTH, endpoint=False)
    names: list[str] = []
    columns = []
    for k, leg in enumerate(LEGS):
        shifted = phase + k * math.pi / 2
        names += [f"{leg}_hip_joint", f"{leg}_thigh_joint", f"{leg}_crank_joint"]
        columns += [0.1 * np.sin(shifted), 0.4 * np.sin(shifted), 0.5 * np.sin(shifted)]
    return legged(), names, np.array(columns).T


PATHS: dict[str, Callable[[], tuple[Any, list[str], np.ndarray]]] = {
    "four-bar": _four_bar_path,
    "legged (4 rod loops)": _legged_path,
}


def _pipeline(robot: Any) -> Any:
    from joint_tf_publisher.health.reporting import Reporter
    from joint_tf_publisher.node_core.parameters import Settings
    from joint_tf_publisher.node_core.pipeline import JointStatePipeline, LoadedModel

    pipeline = JointStatePipeline(
        Settings(ignore_timestamp=True), Reporter(logging.getLogger("bench")), time.time_ns
    )
    pipeline.install(LoadedModel(robot, ""))
    return pipeline


def _sender(pipeline: Any, names: list[str], rows: np.ndarray) -> Callable[[], object]:
    """A call that sends the path's next message and serializes the answer."""
    names_tuple = tuple(names)
    state = {"k": 0}

    def send() -> object:
        k = state["k"]
        state["k"] = (k + 1) % len(rows)
        publication = pipeline.joint_state(1, names_tuple, rows[k])
        return publication.to_bytes()

    return send


def measure(name: str, quick: bool) -> dict[str, Any]:
    """One loop robot: µs per JointState solved and given directly, and per link_fk."""
    from joint_tf_publisher import Robot
    from joint_tf_publisher.model import RobotModel

    robot, names, given = PATHS[name]()
    tree = Robot.from_model(
        RobotModel(robot.name, robot.links, robot.joints, robot.root, loop_joints=())
    )
    kin = robot.kinematics
    solved = _pipeline(robot)
    # The path once, solved: every joint's value at each message, for the tree.
    moving = [joint.name for joint in kin.moving_joints]
    full_rows = np.empty((len(given), len(moving)))
    for k, row in enumerate(given):
        solved.joint_state(1, tuple(names), row)
        values = kin.variable_values(solved.model.positions)
        full_rows[k] = [values[joint] for joint in moving]
    calls = {
        "given": _sender(_pipeline(tree), moving, full_rows),
        "solved": _sender(solved, names, given),
    }
    seconds = seconds_per_call_interleaved(calls, quick)
    cfg = dict(zip(names, given[len(given) // 3].tolist(), strict=True))
    fk = seconds_per_call_interleaved(
        {"tree": lambda: tree.link_fk(cfg), "loops": lambda: robot.link_fk(cfg)}, quick
    )
    # link_fk_batch of BATCH configurations of the path (cycled), all solved at once.
    cycled = given[np.arange(BATCH) % len(given)]
    cfgs = {joint: cycled[:, k] for k, joint in enumerate(names)}
    batch = seconds_per_call_interleaved({"batch": lambda: robot.link_fk_batch(cfgs)}, quick)
    return {
        "robot": name,
        "given_s": seconds["given"],
        "solved_s": seconds["solved"],
        "link_fk_tree_s": fk["tree"],
        "link_fk_loops_s": fk["loops"],
        "link_fk_batch_per_configuration_s": batch["batch"] / BATCH,
        "loops": len(robot.loop_joints),
    }


def run_loops(quick: bool) -> tuple[list[Table], dict[str, Any]]:
    """The section's table and record."""
    records = [measure(name, quick) for name in PATHS]
    table = Table(
        "Closed loops: CPU per JointState and per link_fk (µs)",
        [
            "robot",
            "loops",
            "joints given directly",
            "passive joints solved",
            "ratio",
            "link_fk tree",
            "link_fk loops solved",
            f"link_fk_batch N={BATCH}, per configuration",
        ],
    )
    for record in records:
        table.rows.append(
            [
                record["robot"],
                str(record["loops"]),
                micros(record["given_s"]),
                micros(record["solved_s"]),
                ratio(record["solved_s"], record["given_s"]),
                micros(record["link_fk_tree_s"]),
                micros(record["link_fk_loops_s"]),
                micros(record["link_fk_batch_per_configuration_s"]),
            ]
        )
    table.notes.append(
        "in-process: JointStatePipeline.joint_state and the TFMessage's bytes, every message "
        f"published; a path of {PATH_LENGTH} messages (a crank turn at 1 kHz), the two "
        "variants' calls interleaved; target: at most 1.3x"
    )
    table.notes.append(
        "link_fk with loops: passive joints solved from the drawing (continuation in steps of "
        "at most 0.25 rad, by the closed forms where they apply), the stateless rule"
    )
    return [table], {"loops": records}
