"""Robots with closed loops, built as models by hand: classic linkages with their closed-form
solutions (the tests check the solver against them) and a legged robot with spatial rod loops
(the bench's ``loops`` section).

Each builder returns a ``Robot`` whose loop joints close in the drawing (all tree joints at
zero). Metres and radians.
"""

from __future__ import annotations

import math

import numpy as np

from joint_tf_publisher import Robot
from joint_tf_publisher.model import Joint, Limit, Link, RobotModel
from joint_tf_publisher.model.loops import LoopJoint, LoopJointType
from joint_tf_publisher.transforms import xyz_rpy_to_matrix

Z_AXIS = np.array([0.0, 0.0, 1.0])

#: Four-bar (crank-rocker, Grashof): crank a, coupler b, rocker c, ground d (metres).
FOUR_BAR = {"a": 1.0, "b": 3.0, "c": 2.0, "d": 3.0}
#: The drawing's crank angle (rad, from the ground line).
CRANK_DRAWN = math.pi / 2


def _loop(
    name: str,
    kind: LoopJointType,
    side1: tuple[str, np.ndarray],
    side2: tuple[str, np.ndarray],
    where: str,
    axis: np.ndarray | None = None,
) -> LoopJoint:
    """A loop joint without limits: ``side1`` and ``side2`` each a link and the joint frame in
    it; ``axis`` zeros where not given (ball, fixed)."""
    return LoopJoint(
        name=name,
        type=kind,
        link1=side1[0],
        link1_to_joint=side1[1],
        link2=side2[0],
        link2_to_joint=side2[1],
        axis=np.zeros(3) if axis is None else axis,
        lower=None,
        upper=None,
        where=where,
    )


def _pose(x: float = 0.0, y: float = 0.0, z: float = 0.0, yaw: float = 0.0) -> np.ndarray:
    return xyz_rpy_to_matrix([x, y, z], [0.0, 0.0, yaw])


def four_bar_end(crank: float, branch: float = 1.0) -> np.ndarray:
    """Where the coupler meets the rocker for the absolute crank angle ``crank`` (rad): the
    intersection of the circle of radius b about the crank's end and of radius c about the
    rocker's pivot, on the side ``branch`` (+1: the drawing's) of the line between them."""
    a, b, c, d = (FOUR_BAR[k] for k in "abcd")
    start = np.array([a * math.cos(crank), a * math.sin(crank)])
    pivot = np.array([d, 0.0])
    span = pivot - start
    distance = float(np.linalg.norm(span))
    along = (b * b - c * c + distance * distance) / (2 * distance)
    height = math.sqrt(max(b * b - along * along, 0.0))
    unit = span / distance
    normal = np.array([-unit[1], unit[0]])
    return start + along * unit + branch * height * normal


def four_bar(
    loop_type: LoopJointType = LoopJointType.REVOLUTE,
    crank_limits: tuple[float, float] | None = None,
) -> Robot:
    """ground -> crank -> coupler, ground -> rocker; the loop joint joins coupler and rocker
    ends (axis z). Drawn at ``CRANK_DRAWN``. ``crank_limits``: the crank a revolute joint
    with these limits (rad, from the drawing), else continuous."""
    a, b, c, d = (FOUR_BAR[k] for k in "abcd")
    end = four_bar_end(CRANK_DRAWN)
    start = np.array([a * math.cos(CRANK_DRAWN), a * math.sin(CRANK_DRAWN)])
    coupler = math.atan2(*(end - start)[::-1])
    rocker = math.atan2(end[1], end[0] - d)
    links = {name: Link(name) for name in ("ground", "crank", "coupler", "rocker")}
    joints = {
        "crank_joint": Joint(
            "crank_joint",
            "continuous" if crank_limits is None else "revolute",
            "ground",
            "crank",
            Z_AXIS,
            _pose(yaw=CRANK_DRAWN),
            limit=None
            if crank_limits is None
            else Limit(lower=crank_limits[0], upper=crank_limits[1]),
        ),
        "coupler_joint": Joint(
            "coupler_joint",
            "continuous",
            "crank",
            "coupler",
            Z_AXIS,
            _pose(a, yaw=coupler - CRANK_DRAWN),
        ),
        "rocker_joint": Joint(
            "rocker_joint", "continuous", "ground", "rocker", Z_AXIS, _pose(d, yaw=rocker)
        ),
    }
    loop = _loop(
        "closing",
        loop_type,
        ("coupler", _pose(b)),
        ("rocker", _pose(c)),
        "four_bar.urdf:9: <loop_joint name='closing'>",
        Z_AXIS if loop_type is not LoopJointType.BALL else np.zeros(3),
    )
    model = RobotModel("four_bar", links, joints, "ground", loop_joints=(loop,))
    return Robot.from_model(model)


#: Slider-crank: crank a, rod l (metres); the drawing's crank angle.
SLIDER = {"a": 0.5, "l": 1.5}


def slider_position(crank: float) -> float:
    """x (m) of the slider pin for the absolute crank angle (rad): a cos + sqrt(l^2 - a^2 sin^2)."""
    a, rod = SLIDER["a"], SLIDER["l"]
    return a * math.cos(crank) + math.sqrt(rod * rod - (a * math.sin(crank)) ** 2)


def slider_crank() -> Robot:
    """ground -> crank -> rod, ground -> slider (prismatic along x); the loop joint joins the
    rod's end and the slider (axis z). Drawn at ``CRANK_DRAWN``; the slider's joint value is
    its x minus the drawing's."""
    a, rod = SLIDER["a"], SLIDER["l"]
    x0 = slider_position(CRANK_DRAWN)
    rod_angle = math.atan2(-a, x0)
    links = {name: Link(name) for name in ("ground", "crank", "rod", "slider")}
    joints = {
        "crank_joint": Joint(
            "crank_joint", "continuous", "ground", "crank", Z_AXIS, _pose(yaw=CRANK_DRAWN)
        ),
        "rod_joint": Joint(
            "rod_joint", "continuous", "crank", "rod", Z_AXIS, _pose(a, yaw=rod_angle - CRANK_DRAWN)
        ),
        "slider_joint": Joint(
            "slider_joint",
            "prismatic",
            "ground",
            "slider",
            np.array([1.0, 0.0, 0.0]),
            _pose(x0),
            limit=Limit(lower=-2.0, upper=2.0),
        ),
    }
    loop = _loop(
        "pin",
        LoopJointType.REVOLUTE,
        ("rod", _pose(rod)),
        ("slider", _pose(yaw=-rod_angle)),
        "slider_crank.urdf:7: <loop_joint name='pin'>",
        Z_AXIS,
    )
    return Robot.from_model(
        RobotModel("slider_crank", links, joints, "ground", loop_joints=(loop,))
    )


#: RSSR: crank a about z at the origin, rocker c about x at (d, 0, h), rod length L (m).
RSSR = {"a": 0.3, "c": 0.5, "d": 1.0, "h": 0.2}


def rssr() -> Robot:
    """A spatial RSSR linkage: crank (revolute z) -> universal joint (two revolutes) -> rod,
    ground -> rocker (revolute x); the rod's far end meets the rocker's end in a ball loop
    joint. The rod's length is the drawing's distance between those ends."""
    a, c, d, h = (RSSR[k] for k in "acdh")
    crank_end = np.array([a, 0.0, 0.0])
    rocker_end = np.array([d, c, h])
    span = rocker_end - crank_end
    length = float(np.linalg.norm(span))
    yaw = math.atan2(span[1], span[0])
    pitch = -math.atan2(span[2], math.hypot(span[0], span[1]))
    x_axis = np.array([1.0, 0.0, 0.0])
    links = {name: Link(name) for name in ("ground", "crank", "cross", "rod", "rocker")}
    joints = {
        "crank_joint": Joint("crank_joint", "continuous", "ground", "crank", Z_AXIS),
        "u1": Joint("u1", "continuous", "crank", "cross", Z_AXIS, _pose(a, yaw=yaw)),
        "u2": Joint(
            "u2",
            "continuous",
            "cross",
            "rod",
            np.array([0.0, 1.0, 0.0]),
            xyz_rpy_to_matrix([0, 0, 0], [0, pitch, 0]),
        ),
        "rocker_joint": Joint(
            "rocker_joint", "continuous", "ground", "rocker", x_axis, _pose(d, z=h)
        ),
    }
    RSSR["L"] = length
    loop = _loop(
        "ball_end",
        LoopJointType.BALL,
        ("rod", _pose(length)),
        ("rocker", _pose(y=c)),
        "rssr.urdf:12: <loop_joint name='ball_end'>",
    )
    return Robot.from_model(RobotModel("rssr", links, joints, "ground", loop_joints=(loop,)))


def _rod_mount(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """A rod from ``start`` to ``end`` (points in one link's frame) hung from that link by a
    universal joint at ``start`` (z, then y): the first joint's origin (at ``start``, x yawed
    towards ``end``), the second's (pitched so x points at ``end``) and the rod's length."""
    span = end - start
    yaw = math.atan2(span[1], span[0])
    pitch = -math.atan2(span[2], math.hypot(span[0], span[1]))
    first = xyz_rpy_to_matrix(start, [0.0, 0.0, yaw])
    second = xyz_rpy_to_matrix([0.0, 0.0, 0.0], [0.0, pitch, 0.0])
    return first, second, float(np.linalg.norm(span))


#: The legged robot's legs: name and hip position on the body (m).
LEGS = {"fl": (0.3, 0.2), "fr": (0.3, -0.2), "hl": (-0.3, 0.2), "hr": (-0.3, -0.2)}


def legged() -> Robot:
    """A four-legged robot whose knees are driven by rods: per leg a hip (about x) and thigh
    (about y) joint, and on the thigh a knee actuator's crank (about y) whose rod, hung from
    the crank's end by a universal joint, meets a lever on the shank in a ball loop joint.
    Given: hip, thigh and crank of each leg (12); passive: knee and the rod's two universal
    joints (12), in four spatial loops."""
    y_axis = np.array([0.0, 1.0, 0.0])
    x_axis = np.array([1.0, 0.0, 0.0])
    links = {"body": Link("body")}
    joints: dict[str, Joint] = {}
    loops = []
    crank_end = np.array([0.06, 0.05, -0.05])  # in the thigh, at zero crank angle
    lever = np.array([0.05, 0.05, 0.0])  # the rod's end on the shank, in the shank's frame
    knee = np.array([0.0, 0.0, -0.3])  # the knee in the thigh
    for leg, (x, y) in LEGS.items():
        names = {
            part: f"{leg}_{part}" for part in ("hip", "thigh", "shank", "crank", "cross", "rod")
        }
        links.update({name: Link(name) for name in names.values()})
        first, second, length = _rod_mount(crank_end - [0.0, 0.0, 0.0], knee + lever)
        crank_origin = _pose(0.0, 0.05, -0.05)
        joints.update(
            {
                f"{leg}_hip_joint": Joint(
                    f"{leg}_hip_joint",
                    "revolute",
                    "body",
                    names["hip"],
                    x_axis,
                    _pose(x, y),
                    limit=Limit(lower=-1.0, upper=1.0),
                ),
                f"{leg}_thigh_joint": Joint(
                    f"{leg}_thigh_joint",
                    "revolute",
                    names["hip"],
                    names["thigh"],
                    y_axis,
                    limit=Limit(lower=-1.5, upper=1.5),
                ),
                f"{leg}_knee_joint": Joint(
                    f"{leg}_knee_joint",
                    "continuous",
                    names["thigh"],
                    names["shank"],
                    y_axis,
                    _pose(*knee),
                ),
                f"{leg}_crank_joint": Joint(
                    f"{leg}_crank_joint",
                    "continuous",
                    names["thigh"],
                    names["crank"],
                    y_axis,
                    crank_origin,
                ),
                f"{leg}_rod_u1": Joint(
                    f"{leg}_rod_u1",
                    "continuous",
                    names["crank"],
                    names["cross"],
                    Z_AXIS,
                    np.linalg.inv(crank_origin) @ first,
                ),
                f"{leg}_rod_u2": Joint(
                    f"{leg}_rod_u2", "continuous", names["cross"], names["rod"], y_axis, second
                ),
            }
        )
        loops.append(
            _loop(
                f"{leg}_rod_end",
                LoopJointType.BALL,
                (names["rod"], _pose(length)),
                (names["shank"], _pose(*lever)),
                f"legged.urdf: <loop_joint name='{leg}_rod_end'>",
            )
        )
    return Robot.from_model(RobotModel("legged", links, joints, "body", loop_joints=tuple(loops)))
