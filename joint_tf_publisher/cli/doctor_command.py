"""``joint-tf-publisher doctor``: listen to a running system, say what is wrong and what to do.

Joins the ROS listening (``ros.doctor_listener``, imported when the command runs) to the
rclpy-free analysis (``doctor``) and its report (``doctor_report``). Exit status: 0 when
healthy, 1 when a problem is found, 2 for a bad command line (``main``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..errors import ModelError
from ..model.elements import RobotModel
from ..robot import Robot
from .doctor import DiagnosticRecord, HeardTransform, Observation, diagnose, is_healthy
from .doctor_report import json_report, text_report

if TYPE_CHECKING:
    from ..ros.doctor_listener import Heard

#: Default of ``--seconds``: long enough for discovery and a few 1 Hz diagnostics reports.
DEFAULT_SECONDS = 3.0


def node_name(text: str) -> str:
    """A node name as given on the command line, fully qualified (``name`` -> ``/name``)."""
    name = text if text.startswith("/") else "/" + text
    if name.endswith("/") or "//" in name or " " in name:
        raise ValueError(f"not a node name: {text!r}")
    return name


def observation_of(
    heard: Heard, robot: RobotModel | None, source: str, frame_prefix: str | None
) -> Observation:
    """The analysis's view of what the listening heard, checked against ``robot`` (the
    description given, or else the state publisher's, or the topic's)."""
    setup = heard.setup
    if robot is None:
        text = setup.description if setup is not None and setup.description else heard.description
        source = f"{setup.node} robot_description" if setup is not None else "robot_description"
        robot = load_text(text, source) if text else None
    if frame_prefix is None:
        frame_prefix = setup.frame_prefix if setup is not None else ""
    return Observation(
        listened_s=round(heard.listened_s, 3),
        now_ns=heard.now_ns,
        transforms=[
            HeardTransform(parent, child, static, newest_ns, publisher, count)
            for (parent, child, static, publisher), (newest_ns, count) in heard.transforms.items()
        ],
        statuses=[
            DiagnosticRecord(name, level, message, hardware_id, values)
            for name, level, message, hardware_id, values in sorted(heard.statuses.values())
        ],
        clock_ns=heard.clock_ns,
        clock_publishers=heard.clock_publishers,
        robot=robot,
        description_source=source if robot is not None else "",
        frame_prefix=frame_prefix,
        excluded_joints=setup.excluded_joints if setup is not None else (),
        joint_state_topic=heard.joint_state_topic,
        joint_state_publishers=heard.joint_state_publishers,
        sim_time_nodes=heard.sim_time_nodes,
    )


def load_text(text: str, source: str) -> RobotModel | None:
    """The robot of a description heard; None with a warning on stderr if it does not load."""
    try:
        return Robot.from_xml_string(text, source=source)
    except ModelError as exc:
        print(f"warning: the description heard does not load: {exc}", file=sys.stderr)
        return None


def run_doctor(
    robot: RobotModel | None,
    source: str,
    node: str | None,
    seconds: float,
    lag_s: float,
    frame_prefix: str | None,
    as_json: bool,
    ros_args: list[str],
) -> int:
    """Listen, diagnose, print; 0 when healthy, 1 when a problem is found."""
    from ..ros.doctor_listener import DoctorTarget, listen

    target = DoctorTarget(node=node, description_given=robot is not None)
    heard = listen(seconds, target, ros_args)
    observation = observation_of(heard, robot, source, frame_prefix)
    findings = diagnose(observation, lag_s)
    report = json_report if as_json else text_report
    sys.stdout.write(report(observation, findings) + ("\n" if as_json else ""))
    return 0 if is_healthy(findings) else 1
