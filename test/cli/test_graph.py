"""``joint-tf-publisher graph``: DOT text with every link and joint, rendered pictures."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from joint_tf_publisher import Robot
from joint_tf_publisher.cli.graph import output_format, quote, robot_to_dot
from joint_tf_publisher.cli.main import main

MODELS = [
    *sorted((REPO_ROOT / "test" / "urdf").glob("*.urdf")),
    *sorted((REPO_ROOT / "test" / "sdf").glob("*.sdf")),
    *sorted((REPO_ROOT / "test" / "data" / "loops").glob("*.*")),
    REPO_ROOT / "urdf" / "demo_arm.urdf",
]
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")

EDGE = re.compile(
    r'^  "(?P<parent>[^"]+)" -> "(?P<child>[^"]+)" \[label="(?P<label>[^"]*)"', re.MULTILINE
)


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_dot_has_every_link_and_one_edge_per_joint(path: Path) -> None:
    robot = Robot.load(path)
    dot_text = robot_to_dot(robot)
    assert dot_text.startswith(f'digraph "{robot.name}" {{')
    for link in robot.links:
        assert f'  "{link}" [label="{link}"' in dot_text
    edges = {
        match["label"].split("\\n")[0]: (match["parent"], match["child"])
        for match in EDGE.finditer(dot_text)
    }
    assert edges == {
        **{name: (j.parent, j.child) for name, j in robot.joints.items()},
        **{loop.name: (loop.link1, loop.link2) for loop in robot.loop_joints},
    }


def test_loop_joints_are_drawn_apart() -> None:
    """A loop joint: link1 to link2, bold dashed, no arrow, out of the layout's ranking."""
    dot_text = robot_to_dot(Robot.load(REPO_ROOT / "test" / "sdf" / "four_bar.sdf"))
    assert 'label="four_bar: 5 links, 4 joints, 2 loop joint(s)"' in dot_text
    assert (
        '  "crank" -> "coupler" [label="crank_coupler\\nloop joint (continuous)\\naxis 0 1 0", '
        'color=darkviolet, fontcolor=darkviolet, style="dashed,bold", dir=none, '
        "constraint=false];\n"
    ) in dot_text
    assert (
        '  "coupler" -> "rod" [label="rod_coupler\\nloop joint (ball)", color=deeppink3, '
        'fontcolor=deeppink3, style="dashed,bold", dir=none, constraint=false];\n'
    ) in dot_text


def test_edge_labels_give_type_limits_soft_limits_and_mimic() -> None:
    dot_text = robot_to_dot(Robot.load(REPO_ROOT / "urdf" / "demo_arm.urdf"))
    labels = {
        m["label"].split("\\n")[0]: m["label"].split("\\n")[1:] for m in EDGE.finditer(dot_text)
    }
    assert labels["elbow_joint"] == [
        "revolute",
        "axis 0 1 0",
        "limits [-2.6, 2.6] rad",
        "soft [-2.5, 2.5] rad",
    ]
    assert labels["right_finger_joint"] == [
        "prismatic",
        "axis 0 -1 0",
        "limits [0, 0.04] m",
        "mimic left_finger_joint x 1 + 0",
    ]
    assert labels["tool_flange_joint"] == ["fixed"]
    assert '"base_link" [label="base_link", peripheries=2' in dot_text  # the root


def test_edge_labels_give_both_axes_and_limits_of_a_two_axis_joint() -> None:
    dot_text = robot_to_dot(Robot.load(REPO_ROOT / "test" / "sdf" / "all_joint_types.sdf"))
    labels = {
        m["label"].split("\\n")[0]: m["label"].split("\\n")[1:] for m in EDGE.finditer(dot_text)
    }
    assert labels["universal_joint"] == [
        "universal",
        "axis 1 0 0",
        "axis2 0 1 0",
        "limits [-1, 1] rad",
        "limits2 [-1.2, 0.6] rad",
    ]
    assert labels["revolute2_joint"] == ["revolute2", "axis 0 0 1", "axis2 1 0 0"]


def test_quote_escapes() -> None:
    assert quote('a"b\\c') == '"a\\"b\\\\c"'


def test_output_format_by_suffix() -> None:
    assert output_format(Path("tree.SVG")) == "svg"
    with pytest.raises(ValueError, match=r"cannot tell the format of 'tree.jpg'"):
        output_format(Path("tree.jpg"))


def test_cli_dot_to_stdout_and_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = str(REPO_ROOT / "test" / "urdf" / "all_joint_types.urdf")
    assert main(["graph", model]) == 0
    stdout_text = capsys.readouterr().out
    assert main(["graph", model, "-o", str(tmp_path / "tree.dot")]) == 0
    assert (tmp_path / "tree.dot").read_text() == stdout_text
    for joint in (
        "float_joint",
        "plane_joint",
        "slide_joint",
        "hinge_joint",
        "wheel_joint",
        "follower_joint",
        "sensor_joint",
    ):
        assert f'[label="{joint}\\n' in stdout_text


@needs_dot
def test_cli_png_is_a_picture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image = pytest.importorskip("matplotlib.image")
    out = tmp_path / "tree.png"
    assert main(["graph", str(REPO_ROOT / "urdf" / "demo_arm.urdf"), "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    pixels = image.imread(str(out))
    height, width = pixels.shape[:2]
    assert height > 500 and width > 200  # a tall tree of 11 links
    assert (pixels[..., :3] < 0.5).any() and (pixels[..., :3] > 0.9).any()


@needs_dot
@pytest.mark.parametrize(("suffix", "magic"), [("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_cli_svg_and_pdf(tmp_path: Path, suffix: str, magic: bytes) -> None:
    out = tmp_path / f"tree.{suffix}"
    assert main(["graph", str(REPO_ROOT / "urdf" / "demo_arm.urdf"), "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data.startswith(magic)
    if suffix == "svg":
        assert b"left_finger_joint" in data


def test_cli_graph_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = str(REPO_ROOT / "urdf" / "demo_arm.urdf")
    assert main(["graph", model, "-o", str(tmp_path / "tree.jpg")]) == 1
    assert "graph: error: cannot tell the format" in capsys.readouterr().err
    bad = tmp_path / "bad.urdf"
    bad.write_text(
        '<robot name="r">\n  <link name="a"/>\n  <joint name="j" type="hinge"/>\n</robot>\n'
    )
    assert main(["graph", str(bad)]) == 1
    assert capsys.readouterr().err.startswith(f"{bad}:3: ")


def test_missing_dot_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert (
        main(["graph", str(REPO_ROOT / "urdf" / "demo_arm.urdf"), "-o", str(tmp_path / "t.png")])
        == 1
    )
    assert "'dot' program is not installed" in capsys.readouterr().err
