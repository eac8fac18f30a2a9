"""Generate test/urdf/humanoid.urdf: a humanoid-sized tree for load and speed tests.

Run ``python3 test/make_humanoid_urdf.py`` to rewrite the file. The robot: a floating pelvis,
a 2-joint waist, a 2-joint neck, two 7-joint arms with five-fingered hands (three joints per
finger, the distal one a mimic of the middle one), two 6-joint legs, and fixed sensor frames.
"""

from __future__ import annotations

from pathlib import Path

OUT = Path(__file__).parent / "urdf" / "humanoid.urdf"


class Writer:
    """Collects links and joints as URDF text, in the order they are added."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def link(self, name: str) -> None:
        self.lines.append(f'  <link name="{name}"/>')

    def joint(
        self,
        name: str,
        kind: str,
        parent: str,
        child: str,
        xyz: str,
        rpy: str = "0 0 0",
        axis: str | None = None,
        limits: tuple[float, float] | None = None,
        mimic: tuple[str, float] | None = None,
    ) -> None:
        self.link(child)
        body = [
            f'  <joint name="{name}" type="{kind}">',
            f'    <parent link="{parent}"/>',
            f'    <child link="{child}"/>',
            f'    <origin xyz="{xyz}" rpy="{rpy}"/>',
        ]
        if axis is not None:
            body.append(f'    <axis xyz="{axis}"/>')
        if limits is not None:
            body.append(
                f'    <limit lower="{limits[0]}" upper="{limits[1]}" effort="50" velocity="3"/>'
            )
        if mimic is not None:
            body.append(f'    <mimic joint="{mimic[0]}" multiplier="{mimic[1]}"/>')
        body.append("  </joint>")
        self.lines.extend(body)


def arm(w: Writer, side: str, sign: int) -> None:
    s = side[0]
    chain = [
        ("shoulder_pitch", "0 1 0", "0 {y} 0.45"),
        ("shoulder_roll", "1 0 0", "0 {y} 0"),
        ("shoulder_yaw", "0 0 1", "0 0 -0.05"),
        ("elbow", "0 1 0", "0 0 -0.25"),
        ("wrist_yaw", "0 0 1", "0 0 -0.1"),
        ("wrist_pitch", "0 1 0", "0 0 -0.12"),
        ("wrist_roll", "1 0 0", "0 0 -0.03"),
    ]
    parent = "torso"
    for index, (joint, axis, xyz) in enumerate(chain):
        child = f"{s}_{joint}_link"
        y = 0.18 * sign if index == 0 else 0.02 * sign
        w.joint(
            f"{s}_{joint}_joint",
            "revolute",
            parent,
            child,
            xyz.format(y=y),
            axis=axis,
            limits=(-2.0, 2.0),
        )
        parent = child
    w.joint(f"{s}_hand_joint", "fixed", parent, f"{s}_hand", "0 0 -0.05")
    for finger, offset in (
        ("thumb", -0.03),
        ("index", -0.02),
        ("middle", 0.0),
        ("ring", 0.02),
        ("little", 0.035),
    ):
        base = f"{s}_hand"
        lengths = (("proximal", "0 {y} -0.08"), ("middle", "0 0 -0.035"), ("distal", "0 0 -0.025"))
        for phalanx, xyz in lengths:
            child = f"{s}_{finger}_{phalanx}"
            mimic = (f"{s}_{finger}_middle_joint", 0.8) if phalanx == "distal" else None
            rpy = f"0 0 {0.6 * sign}" if finger == "thumb" and phalanx == "proximal" else "0 0 0"
            w.joint(
                f"{child}_joint",
                "revolute",
                base,
                child,
                xyz.format(y=offset * sign),
                rpy,
                axis="0 1 0",
                limits=(0.0, 1.6),
                mimic=mimic,
            )
            base = child
    w.joint(
        f"{s}_palm_camera_joint",
        "fixed",
        f"{s}_hand",
        f"{s}_palm_camera",
        "0.03 0 -0.04",
        "0 1.5708 0",
    )


def leg(w: Writer, side: str, sign: int) -> None:
    s = side[0]
    chain = [
        ("hip_yaw", "0 0 1", "0 {y} -0.1"),
        ("hip_roll", "1 0 0", "0 0 -0.05"),
        ("hip_pitch", "0 1 0", "0 0 0"),
        ("knee", "0 1 0", "0 0 -0.4"),
        ("ankle_pitch", "0 1 0", "0 0 -0.4"),
        ("ankle_roll", "1 0 0", "0 0 0"),
    ]
    parent = "pelvis"
    for joint, axis, xyz in chain:
        child = f"{s}_{joint}_link"
        limits = (0.0, 2.4) if joint == "knee" else (-1.2, 1.2)
        w.joint(
            f"{s}_{joint}_joint",
            "revolute",
            parent,
            child,
            xyz.format(y=0.1 * sign),
            axis=axis,
            limits=limits,
        )
        parent = child
    w.joint(f"{s}_sole_joint", "fixed", parent, f"{s}_sole", "0.02 0 -0.06")
    w.joint(f"{s}_foot_ft_joint", "fixed", parent, f"{s}_foot_ft_sensor", "0 0 -0.03")


def humanoid_urdf() -> str:
    """The whole humanoid as URDF text."""
    w = Writer()
    w.link("world")
    w.joint("floating_base", "floating", "world", "pelvis", "0 0 0.95")
    w.joint(
        "waist_yaw_joint",
        "revolute",
        "pelvis",
        "waist",
        "0 0 0.1",
        axis="0 0 1",
        limits=(-1.0, 1.0),
    )
    w.joint(
        "waist_pitch_joint",
        "revolute",
        "waist",
        "torso",
        "0 0 0.05",
        axis="0 1 0",
        limits=(-0.5, 1.2),
    )
    w.joint(
        "neck_yaw_joint", "revolute", "torso", "neck", "0 0 0.55", axis="0 0 1", limits=(-1.5, 1.5)
    )
    w.joint(
        "neck_pitch_joint", "revolute", "neck", "head", "0 0 0.08", axis="0 1 0", limits=(-0.7, 0.9)
    )
    w.joint("head_camera_joint", "fixed", "head", "head_camera", "0.1 0 0.08")
    w.joint(
        "head_camera_optical_joint",
        "fixed",
        "head_camera",
        "head_camera_optical",
        "0 0 0",
        "-1.5708 0 -1.5708",
    )
    w.joint("imu_joint", "fixed", "torso", "imu_link", "0 0 0.2")
    for side, sign in (("left", 1), ("right", -1)):
        arm(w, side, sign)
    for side, sign in (("left", 1), ("right", -1)):
        leg(w, side, sign)
    body = "\n".join(w.lines)
    header = (
        '<?xml version="1.0"?>\n'
        "<!-- Generated by test/make_humanoid_urdf.py; do not edit by hand. -->\n"
    )
    return f'{header}<robot name="humanoid">\n{body}\n</robot>\n'


if __name__ == "__main__":
    OUT.write_text(humanoid_urdf())
    print(f"wrote {OUT}")
