"""Benchmark robots, generated at run time: an arm, a PR2-sized tree and a humanoid.

Each generator returns a ``ModelSpec``: the joints as plain data (so peers can be driven
without trusting our own parser) and ``to_urdf()`` for the text every library reads.
Origins carry small deterministic rotations so that a wrong convention shows up in the
pose check. Lengths in metres, angles in radians.

| model    | joints | moving | independent | mimic | fixed |
| -------- | ------ | ------ | ----------- | ----- | ----- |
| arm      | 9      | 7      | 7           | 0     | 2     |
| pr2_like | 90     | 47     | 37          | 10    | 43    |
| humanoid | 93     | 73     | 63          | 10    | 20    |
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

Xyz = tuple[float, float, float]

#: Limits given to continuous joints when sampling (radians); they are not clamped.
CONTINUOUS_RANGE = (-math.pi, math.pi)


@dataclass(frozen=True)
class MimicSpec:
    """value = multiplier * value(leader) + offset."""

    leader: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class JointSpec:
    """One URDF joint: type, links, origin (m, rad), unit axis, limits (rad or m), mimic."""

    name: str
    kind: str
    parent: str
    child: str
    xyz: Xyz = (0.0, 0.0, 0.0)
    rpy: Xyz = (0.0, 0.0, 0.0)
    axis: Xyz = (0.0, 0.0, 1.0)
    lower: float = -1.0
    upper: float = 1.0
    mimic: MimicSpec | None = None

    @property
    def is_moving(self) -> bool:
        """True for every joint type but fixed."""
        return self.kind != "fixed"

    @property
    def is_independent(self) -> bool:
        """True for moving joints that are not mimics: the ones a JointState carries."""
        return self.is_moving and self.mimic is None


@dataclass
class ModelSpec:
    """A generated robot: name, root link, joints in file (and topological) order."""

    name: str
    root: str
    joints: list[JointSpec] = field(default_factory=list)

    @property
    def independent_joints(self) -> list[JointSpec]:
        """Moving, non-mimic joints in file order."""
        return [joint for joint in self.joints if joint.is_independent]

    @property
    def link_names(self) -> list[str]:
        """Every link: the root, then each joint's child."""
        return [self.root] + [joint.child for joint in self.joints]

    def counts(self) -> dict[str, int]:
        """Joint counts by role, for tables and the JSON record."""
        moving = [joint for joint in self.joints if joint.is_moving]
        mimic = [joint for joint in moving if joint.mimic is not None]
        return {
            "joints": len(self.joints),
            "moving": len(moving),
            "independent": len(moving) - len(mimic),
            "mimic": len(mimic),
            "fixed": len(self.joints) - len(moving),
            "links": len(self.joints) + 1,
        }

    def to_urdf(self) -> str:
        """URDF 1.0 text; numbers written with full precision so every parser reads the same."""
        lines = ['<?xml version="1.0"?>', f'<robot name="{self.name}">']
        lines.extend(f'  <link name="{name}"/>' for name in self.link_names)
        for joint in self.joints:
            lines.extend(_joint_lines(joint))
        lines.append("</robot>")
        return "\n".join(lines) + "\n"

    def write(self, directory: Path) -> Path:
        """Write ``<name>.urdf`` into ``directory`` and return its path."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.name}.urdf"
        path.write_text(self.to_urdf())
        return path

    def sample_independent(self, rng: np.random.Generator, count: int) -> dict[str, np.ndarray]:
        """``count`` random values per independent joint, inside its limits (float64 arrays)."""
        values: dict[str, np.ndarray] = {}
        for joint in self.independent_joints:
            lower, upper = _sampling_range(joint)
            values[joint.name] = rng.uniform(lower, upper, size=count)
        return values

    def full_values(self, independent: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Values of every moving joint: mimic joints follow their leader (chains in order)."""
        values = dict(independent)
        for joint in self.joints:  # file order is topological for mimic chains built here
            if joint.mimic is not None:
                leader = values[joint.mimic.leader]
                values[joint.name] = joint.mimic.multiplier * leader + joint.mimic.offset
        return values


def _fmt(values: Xyz) -> str:
    return " ".join(repr(float(value)) for value in values)


def _joint_lines(joint: JointSpec) -> list[str]:
    lines = [
        f'  <joint name="{joint.name}" type="{joint.kind}">',
        f'    <parent link="{joint.parent}"/>',
        f'    <child link="{joint.child}"/>',
        f'    <origin xyz="{_fmt(joint.xyz)}" rpy="{_fmt(joint.rpy)}"/>',
    ]
    if joint.is_moving:
        lines.append(f'    <axis xyz="{_fmt(joint.axis)}"/>')
    if joint.kind in ("revolute", "prismatic"):
        lines.append(
            f'    <limit lower="{joint.lower!r}" upper="{joint.upper!r}" effort="10" velocity="2"/>'
        )
    elif joint.kind == "continuous":
        lines.append('    <limit effort="10" velocity="2"/>')
    if joint.mimic is not None:
        mimic = joint.mimic
        lines.append(
            f'    <mimic joint="{mimic.leader}" multiplier="{mimic.multiplier!r}" '
            f'offset="{mimic.offset!r}"/>'
        )
    lines.append("  </joint>")
    return lines


def _sampling_range(joint: JointSpec) -> tuple[float, float]:
    if joint.kind == "continuous":
        return CONTINUOUS_RANGE
    return joint.lower, joint.upper


class _Builder:
    """Appends joints whose origins get a small deterministic tilt (so rotations matter)."""

    def __init__(self, name: str, root: str) -> None:
        self.spec = ModelSpec(name=name, root=root)
        self._rng = np.random.default_rng(sum(name.encode()))

    def add(
        self,
        name: str,
        kind: str,
        parent: str,
        child: str,
        xyz: Xyz = (0.0, 0.0, 0.0),
        axis: Xyz = (0.0, 0.0, 1.0),
        limits: tuple[float, float] = (-1.0, 1.0),
        mimic: MimicSpec | None = None,
    ) -> str:
        tilt = tuple(float(round(value, 6)) for value in self._rng.uniform(-0.2, 0.2, size=3))
        self.spec.joints.append(
            JointSpec(
                name=name,
                kind=kind,
                parent=parent,
                child=child,
                xyz=xyz,
                rpy=(tilt[0], tilt[1], tilt[2]),
                axis=axis,
                lower=limits[0],
                upper=limits[1],
                mimic=mimic,
            )
        )
        return child


X_AXIS: Xyz = (1.0, 0.0, 0.0)
Y_AXIS: Xyz = (0.0, 1.0, 0.0)
Z_AXIS: Xyz = (0.0, 0.0, 1.0)
SKEW_AXIS: Xyz = (0.6, 0.0, 0.8)


def arm() -> ModelSpec:
    """A 7-DOF arm: six revolute joints and a continuous wrist, then flange and tool frames."""
    b = _Builder("arm", "base_link")
    axes = [Z_AXIS, Y_AXIS, Z_AXIS, Y_AXIS, Z_AXIS, SKEW_AXIS]
    parent = "base_link"
    for index, axis in enumerate(axes, start=1):
        parent = b.add(
            f"joint{index}", "revolute", parent, f"link{index}", (0.0, 0.0, 0.3), axis, (-2.8, 2.8)
        )
    parent = b.add("joint7", "continuous", parent, "link7", (0.0, 0.0, 0.1), X_AXIS)
    flange = b.add("flange_joint", "fixed", parent, "flange", (0.0, 0.0, 0.08))
    b.add("tool_joint", "fixed", flange, "tool0", (0.0, 0.0, 0.12))
    return b.spec


def pr2_like() -> ModelSpec:
    """A PR2-sized tree: 90 joints, 37 independent moving, 10 mimic (gripper chains), 43 fixed."""
    b = _Builder("pr2_like", "base_footprint")
    base = b.add("base_footprint_joint", "fixed", "base_footprint", "base_link", (0.0, 0.0, 0.05))
    for sensor in ("base_laser", "base_bellow", "base_cliff_sensor"):
        b.add(f"{sensor}_joint", "fixed", base, f"{sensor}_link", (0.27, 0.0, 0.25))
    for caster, (x, y) in {
        "fl": (0.22, 0.22),
        "fr": (0.22, -0.22),
        "bl": (-0.22, 0.22),
        "br": (-0.22, -0.22),
    }.items():
        rotation = b.add(
            f"{caster}_caster_rotation_joint",
            "continuous",
            base,
            f"{caster}_caster_rotation_link",
            (x, y, 0.03),
            Z_AXIS,
        )
        for wheel, offset in (("l", 0.05), ("r", -0.05)):
            b.add(
                f"{caster}_caster_{wheel}_wheel_joint",
                "continuous",
                rotation,
                f"{caster}_caster_{wheel}_wheel_link",
                (0.0, offset, 0.0),
                Y_AXIS,
            )
    torso = b.add(
        "torso_lift_joint",
        "prismatic",
        base,
        "torso_lift_link",
        (-0.05, 0.0, 0.74),
        Z_AXIS,
        (0.0, 0.33),
    )
    b.add(
        "torso_lift_motor_screw_joint",
        "continuous",
        base,
        "torso_lift_motor_screw_link",
        (-0.15, 0.0, 0.7),
        Z_AXIS,
    )
    b.add(
        "torso_counterweight_joint",
        "prismatic",
        base,
        "torso_counterweight_link",
        (-0.2, 0.0, 0.5),
        Z_AXIS,
        (-1.0, 1.0),
        MimicSpec("torso_lift_joint", -0.5),
    )
    b.add("imu_joint", "fixed", torso, "imu_link", (-0.02, 0.0, 0.1))
    _pr2_head(b, torso)
    tilt = b.add(
        "laser_tilt_mount_joint",
        "revolute",
        torso,
        "laser_tilt_mount_link",
        (0.1, 0.0, 0.23),
        Y_AXIS,
        (-0.8, 1.4),
    )
    b.add("laser_tilt_joint", "fixed", tilt, "laser_tilt_link", (0.0, 0.0, 0.03))
    for side, sign in (("l", 1.0), ("r", -1.0)):
        _pr2_arm(b, torso, side, sign)
    return b.spec


def _pr2_head(b: _Builder, torso: str) -> None:
    pan = b.add(
        "head_pan_joint",
        "revolute",
        torso,
        "head_pan_link",
        (-0.01, 0.0, 0.38),
        Z_AXIS,
        (-2.8, 2.8),
    )
    b.add(
        "head_pan_cable_joint",
        "revolute",
        torso,
        "head_cable_link",
        (-0.01, 0.0, 0.36),
        Z_AXIS,
        (-2.0, 2.0),
        MimicSpec("head_pan_joint", 0.5),
    )
    head = b.add(
        "head_tilt_joint", "revolute", pan, "head_tilt_link", (0.07, 0.0, 0.0), Y_AXIS, (-0.4, 1.3)
    )
    plate = b.add("head_plate_frame_joint", "fixed", head, "head_plate_frame", (0.23, 0.0, 0.05))
    mount = b.add("sensor_mount_joint", "fixed", plate, "sensor_mount_link")
    stereo = b.add("double_stereo_joint", "fixed", mount, "double_stereo_link", (0.0, 0.0, 0.003))
    for camera, y in (
        ("narrow_stereo_l", 0.03),
        ("narrow_stereo_r", -0.06),
        ("wide_stereo_l", 0.06),
        ("wide_stereo_r", -0.09),
        ("high_def", -0.11),
    ):
        frame = b.add(f"{camera}_frame_joint", "fixed", stereo, f"{camera}_frame", (0.05, y, 0.0))
        b.add(f"{camera}_optical_frame_joint", "fixed", frame, f"{camera}_optical_frame")
    b.add("projector_frame_joint", "fixed", head, "projector_frame", (0.0, 0.11, 0.05))
    kinect = b.add("head_mount_joint", "fixed", head, "head_mount_link", (-0.14, 0.0, 0.23))
    for camera in ("kinect_ir", "kinect_rgb"):
        frame = b.add(f"{camera}_joint", "fixed", kinect, f"{camera}_link", (0.03, -0.02, 0.06))
        b.add(f"{camera}_optical_frame_joint", "fixed", frame, f"{camera}_optical_frame")


def _pr2_arm(b: _Builder, torso: str, side: str, sign: float) -> None:
    s = side
    pan = b.add(
        f"{s}_shoulder_pan_joint",
        "revolute",
        torso,
        f"{s}_shoulder_pan_link",
        (0.0, 0.188 * sign, 0.0),
        Z_AXIS,
        (-0.7, 2.1),
    )
    lift = b.add(
        f"{s}_shoulder_lift_joint",
        "revolute",
        pan,
        f"{s}_shoulder_lift_link",
        (0.1, 0.0, 0.0),
        Y_AXIS,
        (-0.35, 1.29),
    )
    roll = b.add(
        f"{s}_upper_arm_roll_joint",
        "revolute",
        lift,
        f"{s}_upper_arm_roll_link",
        axis=X_AXIS,
        limits=(-0.65, 3.75),
    )
    upper = b.add(f"{s}_upper_arm_joint", "fixed", roll, f"{s}_upper_arm_link")
    elbow = b.add(
        f"{s}_elbow_flex_joint",
        "revolute",
        upper,
        f"{s}_elbow_flex_link",
        (0.4, 0.0, 0.0),
        Y_AXIS,
        (-2.1, 0.0),
    )
    b.add(f"{s}_elbow_flex_frame_joint", "fixed", elbow, f"{s}_elbow_flex_frame")
    forearm_roll = b.add(
        f"{s}_forearm_roll_joint", "continuous", elbow, f"{s}_forearm_roll_link", axis=X_AXIS
    )
    forearm = b.add(f"{s}_forearm_joint", "fixed", forearm_roll, f"{s}_forearm_link")
    camera = b.add(
        f"{s}_forearm_cam_frame_joint",
        "fixed",
        forearm,
        f"{s}_forearm_cam_frame",
        (0.13, 0.0, 0.04),
    )
    b.add(f"{s}_forearm_cam_optical_frame_joint", "fixed", camera, f"{s}_forearm_cam_optical_frame")
    flex = b.add(
        f"{s}_wrist_flex_joint",
        "revolute",
        forearm,
        f"{s}_wrist_flex_link",
        (0.321, 0.0, 0.0),
        Y_AXIS,
        (-2.0, 0.0),
    )
    wrist = b.add(f"{s}_wrist_roll_joint", "continuous", flex, f"{s}_wrist_roll_link", axis=X_AXIS)
    palm = b.add(f"{s}_gripper_palm_joint", "fixed", wrist, f"{s}_gripper_palm_link")
    for frame, x in (("tool", 0.18), ("led", 0.05), ("motor_accelerometer", 0.0)):
        b.add(
            f"{s}_gripper_{frame}_joint", "fixed", palm, f"{s}_gripper_{frame}_frame", (x, 0.0, 0.0)
        )
    _pr2_gripper(b, palm, s)


def _pr2_gripper(b: _Builder, palm: str, s: str) -> None:
    leader = f"{s}_gripper_l_finger_joint"
    l_finger = b.add(
        leader,
        "revolute",
        palm,
        f"{s}_gripper_l_finger_link",
        (0.077, 0.01, 0.0),
        Z_AXIS,
        (0.0, 0.548),
    )
    r_finger = b.add(
        f"{s}_gripper_r_finger_joint",
        "revolute",
        palm,
        f"{s}_gripper_r_finger_link",
        (0.077, -0.01, 0.0),
        Z_AXIS,
        (-0.6, 0.6),
        MimicSpec(leader),
    )
    b.add(
        f"{s}_gripper_l_finger_tip_joint",
        "revolute",
        l_finger,
        f"{s}_gripper_l_finger_tip_link",
        (0.091, 0.005, 0.0),
        Z_AXIS,
        (-0.6, 0.6),
        MimicSpec(leader, -1.0),
    )
    b.add(
        f"{s}_gripper_r_finger_tip_joint",
        "revolute",
        r_finger,
        f"{s}_gripper_r_finger_tip_link",
        (0.091, -0.005, 0.0),
        Z_AXIS,
        (-0.6, 0.6),
        MimicSpec(leader, -1.0),
    )  # as on PR2: yourdfpy and urchin do not resolve mimic chains
    b.add(
        f"{s}_gripper_joint",
        "prismatic",
        palm,
        f"{s}_gripper_float_link",
        (0.05, 0.0, 0.0),
        Y_AXIS,
        (-0.01, 0.09),
        MimicSpec(leader, 0.15, 0.002),
    )
    slider = b.add(
        f"{s}_gripper_motor_slider_joint",
        "prismatic",
        palm,
        f"{s}_gripper_motor_slider_link",
        (0.16, 0.0, 0.0),
        X_AXIS,
        (-0.1, 0.1),
    )
    b.add(
        f"{s}_gripper_motor_screw_joint",
        "continuous",
        slider,
        f"{s}_gripper_motor_screw_link",
        axis=Y_AXIS,
    )


FINGERS = {"thumb": -0.03, "index": -0.015, "middle": 0.0, "ring": 0.015, "little": 0.03}


def humanoid() -> ModelSpec:
    """A fixed-base humanoid: 93 joints, 63 independent moving, 10 mimic (distal phalanges)."""
    b = _Builder("humanoid", "pelvis")
    waist = "pelvis"
    for name, axis in (("waist_yaw", Z_AXIS), ("waist_roll", X_AXIS), ("waist_pitch", Y_AXIS)):
        waist = b.add(
            f"{name}_joint", "revolute", waist, f"{name}_link", (0.0, 0.0, 0.08), axis, (-0.8, 0.8)
        )
    neck = b.add(
        "neck_yaw_joint", "revolute", waist, "neck_link", (0.0, 0.0, 0.45), Z_AXIS, (-1.5, 1.5)
    )
    head = b.add(
        "neck_pitch_joint", "revolute", neck, "head", (0.0, 0.0, 0.08), Y_AXIS, (-0.7, 0.9)
    )
    b.add("lidar_joint", "fixed", head, "lidar_link", (0.0, 0.0, 0.15))
    for camera, y in (("left_camera", 0.035), ("right_camera", -0.035)):
        frame = b.add(f"{camera}_joint", "fixed", head, f"{camera}_link", (0.09, y, 0.05))
        b.add(f"{camera}_optical_joint", "fixed", frame, f"{camera}_optical_frame")
    b.add("imu_joint", "fixed", waist, "imu_link", (0.0, 0.0, 0.2))
    for side, sign in (("l", 1.0), ("r", -1.0)):
        hand = _humanoid_arm(b, waist, side, sign)
        for finger, offset in FINGERS.items():
            _humanoid_finger(b, hand, side, finger, offset * sign)
    for side, sign in (("l", 1.0), ("r", -1.0)):
        _humanoid_leg(b, side, sign)
    return b.spec


def _humanoid_arm(b: _Builder, torso: str, side: str, sign: float) -> str:
    chain = (
        ("shoulder_pitch", Y_AXIS, (0.0, 0.2 * sign, 0.4)),
        ("shoulder_roll", X_AXIS, (0.0, 0.02 * sign, 0.0)),
        ("shoulder_yaw", Z_AXIS, (0.0, 0.0, -0.05)),
        ("elbow", Y_AXIS, (0.0, 0.0, -0.25)),
        ("wrist_yaw", Z_AXIS, (0.0, 0.0, -0.1)),
        ("wrist_pitch", Y_AXIS, (0.0, 0.0, -0.12)),
        ("wrist_roll", SKEW_AXIS, (0.0, 0.0, -0.03)),
    )
    parent = torso
    for name, axis, xyz in chain:
        parent = b.add(
            f"{side}_{name}_joint",
            "revolute",
            parent,
            f"{side}_{name}_link",
            xyz,
            axis,
            (-2.0, 2.0),
        )
    return b.add(f"{side}_palm_joint", "fixed", parent, f"{side}_palm", (0.0, 0.0, -0.05))


def _humanoid_finger(b: _Builder, hand: str, side: str, finger: str, y: float) -> None:
    prefix = f"{side}_{finger}"
    parent = b.add(
        f"{prefix}_abduct_joint",
        "revolute",
        hand,
        f"{prefix}_base",
        (0.0, y, -0.07),
        X_AXIS,
        (-0.3, 0.3),
    )
    for phalanx, length in (("proximal", -0.01), ("middle", -0.035)):
        parent = b.add(
            f"{prefix}_{phalanx}_joint",
            "revolute",
            parent,
            f"{prefix}_{phalanx}",
            (0.0, 0.0, length),
            Y_AXIS,
            (0.0, 1.6),
        )
    distal = b.add(
        f"{prefix}_distal_joint",
        "revolute",
        parent,
        f"{prefix}_distal",
        (0.0, 0.0, -0.025),
        Y_AXIS,
        (0.0, 1.6),
        MimicSpec(f"{prefix}_middle_joint", 0.8),
    )
    b.add(f"{prefix}_tip_joint", "fixed", distal, f"{prefix}_tip", (0.0, 0.0, -0.02))


def _humanoid_leg(b: _Builder, side: str, sign: float) -> None:
    chain = (
        ("hip_yaw", Z_AXIS, (0.0, 0.1 * sign, -0.1)),
        ("hip_roll", X_AXIS, (0.0, 0.0, -0.05)),
        ("hip_pitch", Y_AXIS, (0.0, 0.0, 0.0)),
        ("knee", Y_AXIS, (0.0, 0.0, -0.4)),
        ("ankle_pitch", Y_AXIS, (0.0, 0.0, -0.4)),
        ("ankle_roll", X_AXIS, (0.0, 0.0, 0.0)),
        ("toe", Y_AXIS, (0.12, 0.0, -0.06)),
    )
    parent = "pelvis"
    for name, axis, xyz in chain:
        limits = (0.0, 2.4) if name == "knee" else (-1.2, 1.2)
        parent = b.add(
            f"{side}_{name}_joint", "revolute", parent, f"{side}_{name}_link", xyz, axis, limits
        )
    b.add(
        f"{side}_sole_joint", "fixed", f"{side}_ankle_roll_link", f"{side}_sole", (0.02, 0.0, -0.06)
    )


#: Every benchmark model by name, smallest first.
MODELS = {"arm": arm, "pr2_like": pr2_like, "humanoid": humanoid}


def all_models() -> list[ModelSpec]:
    """The three benchmark models, smallest first."""
    return [make() for make in MODELS.values()]
