"""``check`` and ``fk`` with attachments (``--attach``, ``--params``): a composed robot
checked without ROS, as the node composes it; what ``attach`` and ``detach`` send a running
node (their call over DDS: test/ros/test_node_attachments.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO_ROOT

from joint_tf_publisher import Robot
from joint_tf_publisher.cli.arguments import UsageError, parse_attach
from joint_tf_publisher.cli.attach import attach_values, detach_values
from joint_tf_publisher.cli.main import main
from joint_tf_publisher.description.compose import Attachment, compose

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
GRIPPER = REPO_ROOT / "urdf" / "gripper.urdf"
SUCTION = REPO_ROOT / "urdf" / "suction_tool.urdf"
ORIGIN = (0.0, 0.01, 0.02, 0.0, 0.0, 0.5)


def composed() -> Robot:
    attachments = [
        Attachment("gripper", "tool_flange", file=str(GRIPPER), origin=ORIGIN, prefix="g_"),
        Attachment("cup", "g_tcp", file=str(SUCTION), prefix="c_"),
    ]
    return Robot.from_xml_string(compose(ARM.read_text(), attachments))


ATTACH = [
    "--attach",
    f"gripper:{GRIPPER}@tool_flange:{','.join(map(str, ORIGIN))}:g_",
    "--attach",
    f"cup:{SUCTION}@g_tcp::c_",
]


def test_fk_of_an_attached_tool_is_the_composed_robot_s(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fk", str(ARM), *ATTACH, "g_finger_joint=0.02", "elbow_joint=0.3", "--json"]) == 0
    links = json.loads(capsys.readouterr().out)["links"]
    expected = composed().link_fk({"g_finger_joint": 0.02, "elbow_joint": 0.3})
    assert set(links) == set(expected)
    for name in ("g_left_finger", "c_cup", "g_tcp"):
        np.testing.assert_allclose(links[name]["xyz"], expected[name][:3, 3], atol=1e-6)


def test_check_prints_the_attached_tree(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(ARM), *ATTACH, "--ascii"]) == 0
    out = capsys.readouterr().out
    assert "g_base_link  <- g_gripper_mount (fixed)" in out
    assert "c_base_link  <- c_cup_mount (fixed)" in out
    assert f"{len(composed().links)} links" in out


def test_the_attachments_of_a_node_parameters_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(
        "joint_tf_publisher:\n  ros__parameters:\n    attachments:\n      names: [gripper]\n"
        f"      gripper: {{file: {GRIPPER}, parent: tool_flange, prefix: g_,\n"
        f"                origin: {list(ORIGIN)}}}\n"
        f"    attachments.cup.file: {SUCTION}\n    attachments.cup.parent: g_tcp\n"
    )
    assert main(["fk", str(ARM), "--params", str(params), "--link", "g_tcp", "--json"]) == 0
    pose = json.loads(capsys.readouterr().out)["links"]["g_tcp"]
    np.testing.assert_allclose(pose["xyz"], composed().link_fk(link="g_tcp")[:3, 3], atol=1e-6)
    # cup is given but not listed: not attached, as the node does.
    assert main(["check", str(ARM), "--params", str(params)]) == 0
    assert "cup_mount" not in capsys.readouterr().out
    # A FIFO or a device as --params: refused at once (was waited on, or read without end).
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        with pytest.raises(SystemExit) as exited:
            main(["check", str(ARM), "--params", str(path)])
        assert exited.value.code == 2
        assert f"--params {path}: cannot read file: not a regular file" in capsys.readouterr().err


def test_params_take_the_sections_rcl_gives_the_node_in_its_namespace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--params reads the file as the node's rcl would (was: the first section with any
    attachments, whatever node it named): another node's section is not the node's, each robot's
    namespace has its own, and ``/**`` applies to every node."""
    params = tmp_path / "params.yaml"
    params.write_text(
        "other_node:\n  ros__parameters:\n    attachments.names: [cup]\n"
        f"    attachments.cup.file: {SUCTION}\n    attachments.cup.parent: tool_flange\n"
        "/robot2/joint_tf_publisher:\n  ros__parameters:\n    attachments.names: [gripper]\n"
        f"    attachments.gripper.file: {GRIPPER}\n    attachments.gripper.parent: tool_flange\n"
        "    attachments.gripper.prefix: g_\n"
    )
    assert main(["check", str(ARM), "--params", str(params), "--ascii"]) == 0
    out = capsys.readouterr().out
    assert "cup_mount" not in out and "<- g_gripper_mount (fixed)" not in out, out
    command = ["check", str(ARM), "--params", str(params), "--params-namespace", "/robot2"]
    assert main([*command, "--ascii"]) == 0
    out = capsys.readouterr().out
    assert "<- g_gripper_mount (fixed)" in out and "cup_mount" not in out, out
    params.write_text(
        params.read_text() + f"/**:\n  ros__parameters:\n    attachments.names: [cup]\n"
        f"    attachments.cup.file: {SUCTION}\n    attachments.cup.parent: tool_flange\n"
        "    attachments.cup.prefix: c_\n"
    )
    assert main(["check", str(ARM), "--params", str(params), "--ascii"]) == 0
    assert "<- c_cup_mount (fixed)" in capsys.readouterr().out


def test_an_attachment_that_does_not_compose_exits_1_naming_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", str(ARM), "--attach", f"gripper:{GRIPPER}@tool_flang"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("attachments.gripper.parent: no link 'tool_flang'"), err


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gripper.urdf@tool_flange", "write NAME:FILE@PARENT"),
        ("g:gripper.urdf", "write NAME:FILE@PARENT"),
        ("g:gripper.urdf@tool_flange:1,2", "the origin is 6 comma-separated numbers"),
        ("g:gripper.urdf@tool_flange:::", "write NAME:FILE@PARENT"),
    ],
)
def test_a_malformed_attach_is_a_usage_error(
    spec: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["check", str(ARM), "--attach", spec])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_attach_sends_every_field_and_adds_the_name_once() -> None:
    attachment = parse_attach(f"cup:{SUCTION.name}@g_tcp:0,0,1,0,0,0:c_")
    values = attach_values(attachment, ("gripper",))
    assert values == {
        "attachments.names": ["gripper", "cup"],
        "attachments.cup.file": str(Path.cwd() / SUCTION.name),  # made absolute
        "attachments.cup.description": "",
        "attachments.cup.parent": "g_tcp",
        "attachments.cup.origin": [0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
        "attachments.cup.prefix": "c_",
    }
    # A name the node has: the same list, the tool swapped.
    assert attach_values(attachment, ("cup", "gripper"))["attachments.names"] == ["cup", "gripper"]


def test_detach_sends_the_list_without_the_name() -> None:
    assert detach_values("cup", ("gripper", "cup")) == {"attachments.names": ["gripper"]}
    with pytest.raises(UsageError, match=r"no attachment 'camera' \(it has: gripper, cup\)"):
        detach_values("camera", ("gripper", "cup"))


@pytest.mark.parametrize("command", [["attach", f"cup:{SUCTION}@tool_tcp"], ["detach", "cup"]])
def test_attach_and_detach_default_to_the_node_s_name_and_ten_seconds(command: list[str]) -> None:
    """cli.md: ``--node`` defaults to ``/joint_tf_publisher``, ``--timeout`` to 10 s; both
    taken as given (a float, as ``--timeout 2.5``)."""
    from joint_tf_publisher.cli.main import build_parser

    defaults = build_parser().parse_args(command)
    assert (defaults.node, defaults.timeout) == ("/joint_tf_publisher", 10.0)
    given = build_parser().parse_args([*command, "--node", "/arm/jtp", "--timeout", "2.5"])
    assert (given.node, given.timeout) == ("/arm/jtp", 2.5)
