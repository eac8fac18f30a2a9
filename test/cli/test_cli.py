"""The ``joint-tf-publisher`` command line: check and fk, errors and exit codes.

Poses are compared with explicit formulas for a planar two-joint arm written in the test.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO_ROOT
from scipy.spatial.transform import Rotation

from joint_tf_publisher.cli.main import main

DEMO_ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
ALL_TYPES = REPO_ROOT / "test" / "urdf" / "all_joint_types.urdf"

# Two revolute joints about z, 0.5 m and 0.3 m segments along x: a textbook planar arm.
PLANAR_ARM = """<?xml version="1.0"?>
<robot name="planar_arm">
  <link name="base"/>
  <link name="upper"/>
  <link name="lower"/>
  <link name="tool"/>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.1"/>
    <axis xyz="0 0 1"/>
    <limit lower="-1.5" upper="1.5" effort="1" velocity="1"/>
    <safety_controller k_velocity="1" soft_lower_limit="-1.0" soft_upper_limit="1.0"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="upper"/><child link="lower"/>
    <origin xyz="0.5 0 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/>
  </joint>
  <joint name="tool_joint" type="fixed">
    <parent link="lower"/><child link="tool"/>
    <origin xyz="0.3 0 0"/>
  </joint>
</robot>
"""

# Line 7 names a child link that does not exist.
BROKEN = """<?xml version="1.0"?>
<robot name="broken">
  <link name="a"/>
  <link name="b"/>
  <joint name="j" type="fixed">
    <parent link="a"/>
    <child link="nowhere"/>
  </joint>
</robot>
"""


@pytest.fixture
def planar_arm(tmp_path: Path) -> Path:
    path = tmp_path / "planar_arm.urdf"
    path.write_text(PLANAR_ARM)
    return path


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    path = tmp_path / "broken.urdf"
    path.write_text(BROKEN)
    return path


def tool_pose(q1: float, q2: float) -> tuple[np.ndarray, float]:
    """The planar arm's tool position (m) and yaw (rad), by hand."""
    xyz = np.array(
        [
            0.5 * math.cos(q1) + 0.3 * math.cos(q1 + q2),
            0.5 * math.sin(q1) + 0.3 * math.sin(q1 + q2),
            0.1,
        ]
    )
    return xyz, q1 + q2


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


# -- check ---------------------------------------------------------------------------------


def test_check_prints_tree_limits_mimic_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(DEMO_ARM)]) == 0
    out = capsys.readouterr().out
    assert "robot 'demo_arm'" in out and "valid" in out
    assert "root link: base_link" in out
    assert (
        "shoulder_link  <- shoulder_pan_joint (revolute; axis 0 0 1; limits [-3.1416, 3.1416]"
        " rad; soft [-3, 3] rad)" in out
    )
    assert "mimic left_finger_joint x 1 + 0" in out
    assert "limits [0, 0.04] m" in out
    assert "11 links, 10 joints (2 fixed, 2 prismatic, 6 revolute)" in out
    assert "1 mimic, 4 with safety limits, 8 degrees of freedom (7 independent)" in out
    assert "no warnings" in out
    # The tree draws the gripper's two fingers as siblings.
    assert "├── left_finger_link" in out and "└── right_finger_link" in out


def test_check_ascii_tree(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--ascii", str(DEMO_ARM)]) == 0
    out = capsys.readouterr().out
    assert "|-- left_finger_link" in out and "`-- right_finger_link" in out
    assert "└" not in out


def test_check_lists_warnings_and_strict_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(ALL_TYPES)]) == 0
    out = capsys.readouterr().out
    assert "1 warning(s):" in out
    assert "all_joint_types.urdf:44: joint 'hinge_joint'" in out
    assert main(["check", "--strict", str(ALL_TYPES)]) == 1


# A PR2-style gripper: the follower mirrors the leader's [0, 0.548] onto [-0.548, 0], outside
# its own limits (line 14); a third joint mimics a joint that does not exist (line 20).
GRIPPER = """<?xml version="1.0"?>
<robot name="gripper">
  <link name="palm"/>
  <link name="l_finger"/>
  <link name="r_finger"/>
  <link name="thumb"/>
  <joint name="l_finger_joint" type="revolute">
    <parent link="palm"/><child link="l_finger"/>
    <limit effort="1000" velocity="0.5" lower="0" upper="0.548"/>
  </joint>
  <joint name="r_finger_joint" type="revolute">
    <parent link="palm"/><child link="r_finger"/>
    <limit effort="1000" velocity="0.5" lower="0" upper="0.548"/>
    <mimic joint="l_finger_joint" multiplier="-1"/>
  </joint>
  <joint name="thumb_joint" type="revolute">
    <parent link="palm"/><child link="thumb"/>
    <limit effort="1000" velocity="0.5" lower="0" upper="0.548"/>
    <drake:gear_ratio value="100"/>
    <mimic joint="ghost_joint"/>
  </joint>
</robot>
"""


def test_check_shows_mimic_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "gripper.urdf"
    path.write_text(GRIPPER)
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "thumb  <- thumb_joint (revolute; axis 1 0 0; limits [0, 0.548] rad)\n" in out
    assert "1 mimic, 0 with safety limits, 3 degrees of freedom (2 independent)" in out
    assert out.endswith(
        "2 warning(s):\n"
        f"  warning: {path}:20: joint 'thumb_joint': <mimic> names joint 'ghost_joint', which"
        " does not exist; the mimic is ignored and the joint moves on its own\n"
        f"  warning: {path}:14: joint 'r_finger_joint': <mimic> moves the joint over"
        " [-0.548, 0] (-1 * 'l_finger_joint' + 0), outside its own limits [0, 0.548];"
        " a mimic joint is not clamped to its own limits\n"
    )
    assert main(["check", "--strict", str(path)]) == 1


def test_main_leaves_logging_as_it_was(capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    logger = logging.getLogger("joint_tf_publisher")
    before = logger.level
    assert main(["check", str(ALL_TYPES)]) == 0
    assert logger.level == before


def test_check_reads_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    class Stdin:
        buffer = io.BytesIO(PLANAR_ARM.encode())

    monkeypatch.setattr(sys, "stdin", Stdin)
    assert main(["check", "-"]) == 0
    assert "robot 'planar_arm' from <stdin>: valid" in capsys.readouterr().out


def test_check_invalid_model_one_line_with_line_number(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(broken)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"{broken}:5: joint 'j'")
    assert "'nowhere'" in lines[0]


def test_check_sdf_with_closed_chain(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(REPO_ROOT / "test" / "sdf" / "four_bar.sdf")]) == 0
    out = capsys.readouterr().out
    assert "rod  <- rod_ground (ball)" in out
    # The four-bar is planar (every axis the model's y); the rod on two ball joints is not.
    assert out.endswith(
        "2 closed loop(s), each closed by a loop joint:\n"
        "  crank_coupler (continuous; axis 0 1 0): crank -> coupler\n"
        "    tree joints on the loop: ground_crank, ground_rocker, rocker_coupler\n"
        "    mobility 1 (planar): 1 of its tree joints' 3 values to be given (joint states), "
        "2 passive (solved)\n"
        "    its own value may be given too (a joint state naming it): held as one of "
        "the values given, not on /tf\n"
        "  rod_coupler (ball): coupler -> rod\n"
        "    tree joints on the loop: rocker_coupler, ground_rocker, rod_ground\n"
        "    mobility 2 (spatial): 2 of its tree joints' 5 values to be given (joint states), "
        "3 passive (solved)\n"
        "no warnings\n"
    )


LOOPS_DIR = REPO_ROOT / "test" / "data" / "loops"


@pytest.mark.parametrize(
    "name", ["four_bar.sdf", "four_bar_loop_joint.urdf", "four_bar_gazebo.urdf"]
)
def test_check_lists_the_four_bar_alike_in_each_spelling(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--strict", str(LOOPS_DIR / name)]) == 0
    out = capsys.readouterr().out
    assert (
        "1 closed loop(s), each closed by a loop joint:\n"
        "  coupler_rocker (continuous; axis 0 0 1): coupler -> rocker\n"
        "    tree joints on the loop: crank_coupler, ground_crank, ground_rocker\n"
        "    mobility 1 (planar): 1 of its tree joints' 3 values to be given (joint states), "
        "2 passive (solved)\n"
        "    its own value may be given too (a joint state naming it): held as one of "
        "the values given, not on /tf\n"
    ) in out


def test_check_planar_slider_crank(capsys: pytest.CaptureFixture[str]) -> None:
    """A prismatic joint perpendicular to the revolute axes keeps a loop planar; the limits of
    a loop joint are listed."""
    assert main(["check", str(LOOPS_DIR / "slider_crank.urdf")]) == 0
    out = capsys.readouterr().out
    assert "  rs (revolute; axis 0 1 0; limits [-2, 2]): rod -> slider\n" in out
    assert "    tree joints on the loop: cr, gc, gs\n" in out
    assert "    mobility 1 (planar): 1 of its tree joints' 3 values to be given" in out


def test_check_warns_of_an_over_determined_loop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The four-bar with one pivot turned 90 degrees is a spatial 4R loop: mobility
    4 - 6 = -2, over-determined by its own joints; --strict fails on it."""
    text = (LOOPS_DIR / "four_bar_loop_joint.urdf").read_text()
    turned = text.replace(
        '<origin xyz="0.5 0 0"/>\n    <axis xyz="0 1 0"/>',
        '<origin xyz="0.5 0 0"/>\n    <axis xyz="1 0 0"/>',
    )
    assert turned != text
    path = tmp_path / "turned.urdf"
    path.write_text(turned)
    assert main(["check", "--strict", str(path)]) == 1
    out = capsys.readouterr().out
    line = turned.splitlines().index('  <loop_joint name="coupler_rocker" type="continuous">') + 1
    assert "    mobility -2 (spatial): over-determined by its own joints\n" in out
    assert out.endswith(
        "1 warning(s):\n"
        f"  warning: {path}:{line}: loop_joint 'coupler_rocker': the loop it closes is "
        "over-determined by its own joints (mobility -2): it closes only where the geometry "
        "is exact; the passive joints are then a least-squares fit\n"
    )


def test_check_invalid_sdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.sdf"
    bad.write_text(
        '<?xml version="1.0"?>\n<sdf version="1.9">\n  <model name="m">\n'
        '    <link name="a"/>\n    <joint name="j" type="revolute">\n'
        "      <parent>a</parent><child>missing</child>\n    </joint>\n"
        "  </model>\n</sdf>\n"
    )
    assert main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:") and "'missing'" in err and err.count("\n") == 1


def test_check_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "absent.urdf")]) == 1
    assert "absent.urdf: cannot read file" in capsys.readouterr().err


def test_console_script_has_no_traceback(broken: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "joint_tf_publisher.cli.main", "check", str(broken)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=60,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and f"{broken}:5:" in result.stderr


def test_fk_into_a_reader_that_stopped_is_quiet() -> None:
    """``fk MODEL | head`` stops quietly (cli.md), as Unix tools do: the reader gone before
    the first line, no error and no traceback on stderr; its output buffered (as Python
    buffers a pipe: the error comes at the last flush) or not (PYTHONUNBUFFERED)."""
    plain = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    for environ in (plain, {**plain, "PYTHONUNBUFFERED": "1"}):
        process = subprocess.Popen(
            [sys.executable, "-m", "joint_tf_publisher.cli.main", "fk", str(DEMO_ARM)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=REPO_ROOT,
            env=environ,
        )
        assert process.stdout is not None
        process.stdout.close()  # every write of the command meets a closed pipe
        _, err = process.communicate(timeout=60)
        assert (err.decode(), process.returncode) == ("", 1), environ.get("PYTHONUNBUFFERED")


def test_model_name_picks_a_model_of_a_world_for_check_and_fk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--model-name`` picks one ``<model>`` of a multi-model SDF file (cli.md); without
    it the one with joints; a name that is none is exit 1 naming the models."""
    world = tmp_path / "world.sdf"
    world.write_text(
        '<sdf version="1.8"><world name="w"><model name="first"><link name="x"/></model>'
        '<model name="second"><link name="y"/><link name="z"/><joint name="j" '
        'type="revolute"><parent>y</parent><child>z</child></joint></model></world></sdf>'
    )
    assert main(["check", str(world)]) == 0
    assert f"robot 'second' from {world}: valid" in capsys.readouterr().out
    assert main(["check", str(world), "--model-name", "first"]) == 0
    assert f"robot 'first' from {world}: valid" in capsys.readouterr().out
    assert main(["fk", str(world), "--model-name", "first", "--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["links"]) == ["x"]
    assert main(["check", str(world), "--model-name", "third"]) == 1
    assert "no <model> named 'third' (models: 'first', 'second')" in capsys.readouterr().err


def test_ros_commands_without_rclpy(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "rclpy", None)  # import rclpy now raises ImportError
    # ...also where another test module imported the demo's ROS side already.
    monkeypatch.delitem(sys.modules, "joint_tf_publisher.ros.demo_source", raising=False)
    assert main(["demo", str(DEMO_ARM), "--duration", "0.1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("joint-tf-publisher demo: error: cannot import rclpy: ")
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["check", "fk", "graph", "plot", "demo", "run"])
def test_every_subcommand_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    assert "MODEL" in capsys.readouterr().out


# -- fk ------------------------------------------------------------------------------------


def test_fk_json_matches_planar_formula(
    planar_arm: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q1, q2 = 0.4, -1.1
    document = run_json(capsys, "fk", str(planar_arm), f"shoulder={q1}", f"elbow={q2}", "--json")
    assert document["frame"] == "base"
    tool = document["links"]["tool"]
    xyz, yaw = tool_pose(q1, q2)
    np.testing.assert_allclose(tool["xyz"], xyz, atol=1e-12)
    np.testing.assert_allclose(tool["rpy"], [0.0, 0.0, yaw], atol=1e-12)
    expected_quat = Rotation.from_euler("z", yaw).as_quat()
    np.testing.assert_allclose(
        tool["quaternion_xyzw"], expected_quat * np.sign(expected_quat[3]), atol=1e-12
    )
    assert set(document["links"]) == {"base", "upper", "lower", "tool"}


def test_fk_degrees_and_single_link_table(
    planar_arm: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fk", str(planar_arm), "shoulder=90deg", "--link", "tool"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("poses in frame 'base'")
    assert out[1].split() == ["link", "x", "y", "z", "roll", "pitch", "yaw", "qx", "qy", "qz", "qw"]
    assert len(out) == 3
    row = out[2].split()
    assert row[0] == "tool"
    xyz, yaw = tool_pose(math.pi / 2, 0.0)
    np.testing.assert_allclose([float(v) for v in row[1:4]], xyz, atol=1e-4)
    assert float(row[6]) == pytest.approx(yaw, abs=1e-4)


@pytest.mark.parametrize(("clamp", "limit"), [("hard", 1.5), ("soft", 1.0)])
def test_fk_clamp(
    planar_arm: Path, capsys: pytest.CaptureFixture[str], clamp: str, limit: float
) -> None:
    document = run_json(capsys, "fk", str(planar_arm), "shoulder=3", "--clamp", clamp, "--json")
    np.testing.assert_allclose(
        document["links"]["tool"]["xyz"], tool_pose(limit, 0.0)[0], atol=1e-12
    )


def test_fk_reports_clamped_joints(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "fk",
                str(DEMO_ARM),
                "elbow_joint=2.55",
                "left_finger_joint=0.05",
                "--clamp",
                "soft",
                "--json",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    # elbow 2.55 is inside the hard range but beyond the soft 2.5; the finger beyond both.
    assert {"elbow_joint", "left_finger_joint"} <= set(document["clamped"])
    assert "shoulder_pan_joint" not in document["clamped"]
    assert "note: clamped to soft limits: " in captured.err
    assert main(["fk", str(DEMO_ARM), "elbow_joint=2.55", "--clamp", "hard", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["clamped"] == []


def test_fk_without_clamp_goes_beyond_limits(
    planar_arm: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = run_json(capsys, "fk", str(planar_arm), "shoulder=3", "--json")
    np.testing.assert_allclose(document["links"]["tool"]["xyz"], tool_pose(3.0, 0.0)[0], atol=1e-12)


def test_fk_mimic_follows_leader(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["fk", str(DEMO_ARM), "left_finger_joint=0.03", "right_finger_joint=0.01", "--json"])
        == 0
    )
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    left = np.array(document["links"]["left_finger_link"]["xyz"])
    right = np.array(document["links"]["right_finger_link"]["xyz"])
    # Fingers start 0.02 m apart and each opens 0.03 m (the mimic's own value is ignored).
    assert np.linalg.norm(left - right) == pytest.approx(0.02 + 2 * 0.03, abs=1e-9)
    assert "'right_finger_joint' mimics 'left_finger_joint'" in captured.err


def test_fk_values_after_options(planar_arm: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = run_json(
        capsys, "fk", str(planar_arm), "--json", "shoulder=0.3", "--link", "tool", "elbow=0.2"
    )
    np.testing.assert_allclose(document["links"]["tool"]["xyz"], tool_pose(0.3, 0.2)[0], atol=1e-12)
    with pytest.raises(SystemExit) as exited:
        main(["check", str(planar_arm), "elbow=1"])
    assert exited.value.code == 2
    assert "unrecognized arguments: elbow=1" in capsys.readouterr().err


def test_fk_multi_dof_values(capsys: pytest.CaptureFixture[str]) -> None:
    document = run_json(
        capsys, "fk", str(ALL_TYPES), "float_joint=1,2,3,0,0,0", "--link", "body", "--json"
    )
    # float_joint's origin is z=1, yaw=pi (rounded 3.1416): x and y flip sign.
    yaw = 3.1416
    expected = [math.cos(yaw) * 1 - math.sin(yaw) * 2, math.sin(yaw) * 1 + math.cos(yaw) * 2, 4]
    np.testing.assert_allclose(document["links"]["body"]["xyz"], expected, atol=1e-12)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["shoulder_pan=1"],
            r"unknown joint 'shoulder_pan' in robot 'demo_arm'; "
            r"did you mean 'shoulder_pan_joint'",
        ),
        (["elbow_joint"], r"'elbow_joint': joint values are written name=value"),
        (["elbow_joint=abc"], r"'abc' is not a number"),
        (["elbow_joint=nan"], r"'nan' is not a finite number"),
        (["elbow_joint=1,2"], r"'elbow_joint=1,2': .*takes one number"),
        (["--link", "hand"], r"unknown link 'hand'"),
    ],
)
def test_fk_usage_errors_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["fk", str(DEMO_ARM), *argv])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("joint-tf-publisher fk: error: ")
    assert re.search(message, err)


def test_fk_invalid_model(broken: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fk", str(broken)]) == 1
    assert capsys.readouterr().err.startswith(f"{broken}:5: ")


def test_fk_xacro(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("xacro")
    document = run_json(
        capsys,
        "fk",
        str(REPO_ROOT / "test" / "urdf" / "small_arm.urdf.xacro"),
        "--link",
        "link_3",
        "--json",
    )
    np.testing.assert_allclose(document["links"]["link_3"]["xyz"], [0, 0, 0.75], atol=1e-12)
