"""Link poses from ``link_fk`` against pinocchio's frame placements (an independent FK).

URDF text is written here, parsed by both the package and pinocchio (urdfdom). Pinocchio is
built without mimic support (``mimic=False``), so mimic joints are ordinary joints there and
are driven with multiplier * leader + offset computed in this file. Configuration layouts in
pinocchio: continuous (cos, sin), floating (x y z qx qy qz qw), planar (x y cos sin).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from repo_paths import TEST_DIR
from scipy.spatial.transform import Rotation

from joint_tf_publisher import Robot

pin = pytest.importorskip("pinocchio")

TOLERANCE = 1e-9


def random_urdf(seed: int, count: int = 40) -> str:
    """A random tree of URDF joints of every URDF type (planar about z, which is the only
    normal pinocchio takes), with tilted origins and axes and mimic chains."""
    rng = np.random.default_rng(seed)
    links = ["root"]
    scalar: list[str] = []
    joints: list[str] = []
    kinds = ["revolute", "continuous", "prismatic", "fixed", "floating", "planar"]
    for k in range(count):
        kind = (
            kinds[k]
            if k < len(kinds)
            else str(rng.choice(kinds, p=[0.3, 0.2, 0.2, 0.2, 0.05, 0.05]))
        )
        parent = str(rng.choice(links))
        child = f"link_{k}"
        xyz = " ".join(repr(float(v)) for v in rng.uniform(-0.5, 0.5, 3))
        rpy = " ".join(repr(float(v)) for v in rng.uniform(-3.0, 3.0, 3))
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        axis_text = "0 0 1" if kind == "planar" else " ".join(repr(float(v)) for v in axis)
        body = [
            f'<parent link="{parent}"/>',
            f'<child link="{child}"/>',
            f'<origin xyz="{xyz}" rpy="{rpy}"/>',
            f'<axis xyz="{axis_text}"/>',
        ]
        if kind in ("revolute", "prismatic"):
            body.append('<limit lower="-3" upper="3" effort="1" velocity="1"/>')
        if kind in ("revolute", "continuous", "prismatic") and scalar and rng.random() < 0.3:
            leader = str(rng.choice(scalar))
            multiplier, offset = rng.uniform(-2, 2), rng.uniform(-0.3, 0.3)
            body.append(
                f'<mimic joint="{leader}" multiplier="{multiplier!r}" offset="{offset!r}"/>'
            )
        name = f"joint_{k}"
        joints.append(f'<joint name="{name}" type="{kind}">{"".join(body)}</joint>')
        if kind in ("revolute", "continuous", "prismatic"):
            scalar.append(name)
        links.append(child)
    link_text = "".join(f'<link name="{name}"/>' for name in links)
    return f'<robot name="random_{seed}">{link_text}{"".join(joints)}</robot>'


def random_cfg(robot: Robot, rng: np.random.Generator) -> dict[str, Any]:
    """Values for the non-mimic moving joints (floating as x y z qx qy qz qw)."""
    cfg: dict[str, Any] = {}
    for joint in robot.joints.values():
        if joint.mimic is not None or joint.joint_type == "fixed":
            continue
        if joint.joint_type == "floating":
            quaternion = Rotation.random(random_state=rng).as_quat()
            cfg[joint.name] = np.concatenate([rng.uniform(-1, 1, 3), quaternion])
        elif joint.joint_type == "planar":
            cfg[joint.name] = rng.uniform(-2, 2, 3)
        else:
            cfg[joint.name] = float(rng.uniform(-2.5, 2.5))
    return cfg


def pinocchio_configuration(model: Any, robot: Robot, cfg: dict[str, Any]) -> Any:
    """pinocchio's q for cfg; mimic followers get multiplier * leader + offset (chains too)."""

    def value_of(name: str) -> Any:
        mimic = robot.joints[name].mimic
        if mimic is None:
            return cfg.get(name, 0.0)
        return mimic.multiplier * value_of(mimic.joint) + mimic.offset

    q = pin.neutral(model)
    for index in range(1, model.njoints):
        name = model.names[index]
        start, size = model.joints[index].idx_q, model.joints[index].nq
        kind = robot.joints[name].joint_type
        value = value_of(name)
        if kind == "floating":
            q[start : start + 7] = value
        elif kind == "planar":
            x, y, theta = np.asarray(value, dtype=float)
            q[start : start + 4] = [x, y, math.cos(theta), math.sin(theta)]
        elif kind == "continuous" and size == 2:
            q[start : start + 2] = [math.cos(value), math.sin(value)]
        else:
            q[start] = value
    return q


def assert_matches_pinocchio(text: str, robot: Robot, configurations: int, seed: int) -> None:
    model = pin.buildModelFromXML(text, mimic=False)
    data = model.createData()
    rng = np.random.default_rng(seed)
    for _ in range(configurations):
        cfg = random_cfg(robot, rng)
        pin.framesForwardKinematics(model, data, pinocchio_configuration(model, robot, cfg))
        poses = robot.link_fk(cfg)
        batch = robot.link_fk_batch({n: np.asarray(v)[None] for n, v in cfg.items()})
        for name in robot.links:
            expected = data.oMf[model.getFrameId(name, pin.BODY)].homogeneous
            np.testing.assert_allclose(poses[name], expected, atol=TOLERANCE, rtol=0, err_msg=name)
            np.testing.assert_allclose(batch[name][0], expected, atol=TOLERANCE, rtol=0)


@pytest.mark.parametrize("seed", range(6))
def test_link_fk_matches_pinocchio_on_random_urdf_trees(seed: int) -> None:
    text = random_urdf(seed)
    robot = Robot.from_xml_string(text)
    assert {j.joint_type for j in robot.joints.values()} >= {"floating", "planar", "prismatic"}
    assert any(j.mimic is not None for j in robot.joints.values())
    assert_matches_pinocchio(text, robot, configurations=4, seed=seed)


@pytest.mark.parametrize(
    "relative",
    [
        "test/urdf/arm_mimic_gripper.urdf",
        "test/urdf/humanoid.urdf",
        "test/urdf/mobile_base_planar.urdf",
        "urdf/demo_arm.urdf",
    ],
)
def test_link_fk_matches_pinocchio_on_test_robots(relative: str) -> None:
    path = TEST_DIR.parent / relative
    if not path.exists():
        pytest.skip(f"{relative} not present")
    robot = Robot.load(path)
    planar_normals = [j.axis for j in robot.joints.values() if j.joint_type == "planar"]
    if any(not np.allclose(axis, [0, 0, 1]) for axis in planar_normals):
        pytest.skip("pinocchio's planar joint moves in the joint frame's xy plane only")
    assert_matches_pinocchio(path.read_text(), robot, configurations=3, seed=7)
