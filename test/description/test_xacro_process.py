"""xacro_process: a .xacro file expanded in a child process as the node would read it.

What the child must keep of the node (issue #44): a relative path is the node's, so a
relative ``description_file`` and the relative includes in it are read from the node's working
folder, whatever folder the child itself starts in. Real xacro in a real child; no rclpy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from joint_tf_publisher.description.loader import read_file

pytest.importorskip("xacro")


def test_a_relative_xacro_description_file_is_expanded_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "arm.xacro").write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="arm"/></robot>'
    )
    (tmp_path / "robot.urdf.xacro").write_text(
        '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<link name="base"/><xacro:include filename="parts/arm.xacro"/>'
        '<joint name="j" type="fixed"><parent link="base"/><child link="arm"/></joint>'
        "</robot>"
    )
    monkeypatch.chdir(tmp_path)
    description = read_file(Path("robot.urdf.xacro"))
    text = description.data if isinstance(description.data, str) else description.data.decode()
    assert '<link name="arm"' in text.replace("'", '"')
    assert any(path.name == "arm.xacro" for path in map(Path, description.files))
