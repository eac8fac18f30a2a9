"""allowed_folders: the folders a running node may read description files from (no rclpy).

Real folders, a real ament index (``share/ament_index/resource_index/packages/NAME``) under a
prefix on AMENT_PREFIX_PATH, the real safe reader under the rules the node applies.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from joint_tf_publisher.description.files import FileRefused, read_regular_file, reading_under
from joint_tf_publisher.description.xacro_process import check_arguments
from joint_tf_publisher.errors import ModelError
from joint_tf_publisher.node_core.allowed_folders import (
    package_names,
    runtime_rules,
    start_folders,
    start_rules,
)
from joint_tf_publisher.node_core.parameters import Settings


def never() -> bool:
    return False


@pytest.fixture
def prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An install prefix indexing the packages ``arm_description`` and ``tools``."""
    root = tmp_path / "install"
    for package in ("arm_description", "tools"):
        index = root / "share" / "ament_index" / "resource_index" / "packages"
        index.mkdir(parents=True, exist_ok=True)
        (index / package).write_text("")
        (root / "share" / package / "urdf").mkdir(parents=True)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(root))
    return root


def test_package_names_of_uris_and_find() -> None:
    text = '<mesh filename="package://arm_description/meshes/a.stl"/> $(find tools)/x.xacro'
    assert package_names(text) == {"arm_description", "tools"}


def test_the_start_files_folders_their_packages_and_the_parameters_folders(
    tmp_path: Path, prefix: Path
) -> None:
    robot = tmp_path / "robot" / "robot.urdf.xacro"
    robot.parent.mkdir()
    robot.write_text('<robot><xacro:include filename="$(find tools)/urdf/t.xacro"/></robot>')
    gripper = tmp_path / "grippers" / "g.urdf"
    gripper.parent.mkdir()
    extra = tmp_path / "extra"
    settings = Settings.from_values(
        {
            "attachments.names": ["g"],
            "attachments.g.file": str(gripper),
            "allowed_description_folders": [str(extra)],
        }
    )
    folders = start_folders(
        settings, (robot,), ('<mesh filename="package://arm_description/m.stl"/>',)
    )
    assert folders == (
        extra,
        robot.parent,
        gripper.parent,
        prefix / "share" / "arm_description",
        prefix / "share" / "tools",
    )


def test_a_runtime_swap_within_the_start_folder_reads_and_elsewhere_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "robot").mkdir()
    (tmp_path / "elsewhere").mkdir()
    start, other, outside = (
        tmp_path / "robot" / "a.urdf",
        tmp_path / "robot" / "b.urdf",
        tmp_path / "elsewhere" / "c.urdf",
    )
    for path in (start, other, outside):
        path.write_text("<robot/>")
    rules = runtime_rules(start_folders(Settings(), (start,), ()), never, Settings())
    with reading_under(rules):
        assert read_regular_file(other, 100) == b"<robot/>"
        with pytest.raises(FileRefused, match="allowed_description_folders"):
            read_regular_file(outside, 100)


def test_a_running_node_passes_its_starts_xacro_arguments_and_checks_others(
    tmp_path: Path,
) -> None:
    """#43.1: the start's ``description_args`` are the operator's (passed as they are); a
    value given at runtime must be plain."""
    settings = Settings(description_args=(" mode :=it's (v2)",))
    rules = runtime_rules((tmp_path,), never, settings)
    assert rules.start_arguments == {("mode", "it's (v2)")}
    check_arguments({"mode": "it's (v2)", "prefix": "left_"}, rules)
    with pytest.raises(
        ModelError, match=r"^description_args: the value of 'mode' given at runtime"
    ):
        check_arguments({"mode": "it's (v3)"}, rules)
    check_arguments({"mode": "it's (v3)"}, start_rules(never))  # the start: the operator's


def test_a_node_started_from_text_naming_no_file_package_or_folder_reads_nothing(
    tmp_path: Path,
) -> None:
    """robot_description text, no description_file, no package:// or $(find), no
    allowed_description_folders: no folder is allowed at runtime (not every folder)."""
    text = '<robot name="r"><link name="a"/></robot>'
    folders = start_folders(Settings(), (), (text,))
    assert folders == ()
    anywhere = tmp_path / "a.urdf"
    anywhere.write_text(text)
    with reading_under(runtime_rules(folders, never, Settings())), pytest.raises(FileRefused):
        read_regular_file(anywhere, 100)
