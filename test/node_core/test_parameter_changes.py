"""parameter_changes: a parameter change planned and validated whole, then applied.

No rclpy: ``plan_change`` is driven with parameter values as ``ros2 param set`` gives them and
the test URDFs read by the package's parser; what the node does with a plan over DDS is in
test/ros/test_node_parameters.py.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT, TEST_DIR
from test_pipeline import ARM_URDF, T0, Rig, assert_pose

from joint_tf_publisher import Robot
from joint_tf_publisher.errors import ModelError
from joint_tf_publisher.node_core.description_source import DescriptionSource
from joint_tf_publisher.node_core.parameter_changes import (
    Described,
    load_description,
    plan_change,
)
from joint_tf_publisher.node_core.parameters import ParameterRejected, Settings
from joint_tf_publisher.node_core.pipeline import LoadedModel

HUMANOID_URDF = TEST_DIR / "urdf" / "humanoid.urdf"


class Loader:
    """Loads descriptions as the node does, and records which it was asked for."""

    def __init__(self) -> None:
        self.loaded: list[tuple[str, str]] = []

    def __call__(
        self, text: str, settings: Settings, source: str, path: Path | None = None
    ) -> LoadedModel:
        """The robot's own ``text`` with the attachments of ``settings`` composed in."""
        self.loaded.append((text, settings.model_name))
        return load_description(text, settings, source, path)


def arm_model() -> LoadedModel:
    return LoadedModel(Robot.load(ARM_URDF), Path(ARM_URDF).read_text())


def test_a_settings_change_keeps_the_model_and_its_topics() -> None:
    loader = Loader()
    change = plan_change(Settings(), arm_model(), {"publish_frequency": 50.0}, loader)
    assert change.settings == replace(Settings(), publish_frequency=50.0)
    assert change.model is None
    assert not change.sources_changed
    assert loader.loaded == []


def test_one_bad_value_refuses_the_whole_change_before_anything_loads() -> None:
    loader = Loader()
    values = {"robot_description": HUMANOID_URDF.read_text(), "publish_frequency": -1.0}
    with pytest.raises(ParameterRejected, match="publish_frequency"):
        plan_change(Settings(), arm_model(), values, loader)
    assert loader.loaded == []


def test_the_allowed_folders_cannot_change_at_runtime() -> None:
    """rclpy cannot declare a read-only empty array with a value: the plan refuses it."""
    loader = Loader()
    values = {"allowed_description_folders": ["/"], "publish_frequency": 50.0}
    with pytest.raises(
        ParameterRejected, match=r"^allowed_description_folders is read-only: give it at start"
    ):
        plan_change(Settings(), arm_model(), values, loader)


def test_a_new_description_is_loaded_and_keeps_only_the_zeros_it_takes() -> None:
    loader = Loader()
    settings = Settings.from_values({"zeros.finger_joint": 0.5})
    text = HUMANOID_URDF.read_text()
    change = plan_change(settings, arm_model(), {"robot_description": text}, loader)
    assert loader.loaded == [(text, "")]
    assert change.model is not None and change.model.robot.name != "arm_mimic_gripper"
    assert change.settings.zeros == ()  # the humanoid has no finger_joint


@pytest.mark.parametrize(
    ("settings", "text", "reason"),
    [
        (Settings(), "  ", "parameter robot_description is empty"),
        (
            Settings(description_from_topic=True),
            "<robot name='r'><link name='a'/></robot>",
            "robot_description and description_from_topic both give the robot description",
        ),
    ],
)
def test_a_description_the_node_cannot_take_is_refused(
    settings: Settings, text: str, reason: str
) -> None:
    with pytest.raises(ParameterRejected, match=reason):
        plan_change(settings, arm_model(), {"robot_description": text}, Loader())


def test_a_description_that_does_not_load_is_refused_with_its_line() -> None:
    with pytest.raises(ModelError, match="line"):
        plan_change(Settings(), arm_model(), {"robot_description": "<robot>"}, Loader())


def test_a_new_model_name_reloads_the_current_text() -> None:
    loader, model = Loader(), arm_model()
    change = plan_change(Settings(), model, {"model_name": "arm"}, loader)
    assert loader.loaded == [(model.text, "arm")]
    assert change.model is not None


def test_a_zero_the_current_model_refuses_is_refused_naming_it() -> None:
    with pytest.raises(ParameterRejected, match=r"zeros\.finger_joint = \[9\.0\] is outside"):
        plan_change(Settings(), arm_model(), {"zeros.finger_joint": 9.0}, Loader())


def test_a_new_source_list_is_said() -> None:
    change = plan_change(
        Settings(), arm_model(), {"source_list": ["gripper/joint_states"]}, Loader()
    )
    assert change.sources_changed
    assert change.settings.source_list == ("gripper/joint_states",)


def test_one_atomic_change_switches_from_the_text_to_a_file_and_back(tmp_path: Path) -> None:
    path = tmp_path / "arm.urdf"
    path.write_text(ARM_URDF.read_text())
    model, loader = arm_model(), Loader()
    values = {"robot_description": "", "description_file": str(path)}
    to_file = plan_change(Settings(), model, values, loader)
    assert to_file.described.source is DescriptionSource.FILE
    assert to_file.described.watch is not None and to_file.described.watch.files == (path,)
    assert to_file.model is not None and to_file.model.robot.source == str(path)
    text = HUMANOID_URDF.read_text()
    back = {"robot_description": text, "description_file": ""}
    to_text = plan_change(to_file.settings, to_file.model, back, loader, to_file.described)
    assert to_text.described == Described(DescriptionSource.PARAMETER, text)
    assert to_text.model is not None and to_text.model.text == text


def test_a_second_source_is_refused_before_anything_loads(tmp_path: Path) -> None:
    loader = Loader()
    values = {"description_file": str(tmp_path / "arm.urdf")}
    with pytest.raises(ParameterRejected, match="robot_description and description_file both"):
        plan_change(Settings(), arm_model(), values, loader)
    assert loader.loaded == []


def test_a_new_file_or_new_arguments_load_and_a_file_that_does_not_is_refused(
    tmp_path: Path,
) -> None:
    path, broken = tmp_path / "arm.urdf", tmp_path / "broken.urdf"
    path.write_text(ARM_URDF.read_text())
    broken.write_text(
        ARM_URDF.read_text().replace('<child link="link_3"/>', '<child link="nowhere"/>')
    )
    values = {"robot_description": "", "description_file": str(path)}
    running = plan_change(Settings(), arm_model(), values, Loader())
    settings = running.settings
    described, model = running.described, running.model
    assert model is not None
    loader = Loader()
    same = plan_change(settings, model, {"description_file": str(path)}, loader, described)
    assert same.model is None and loader.loaded == []  # the same file: nothing loads
    args = plan_change(settings, model, {"description_args": ["a:=b"]}, loader, described)
    assert args.model is not None and args.model.robot.source == f"{path} (expanded)"
    assert args.described.watch is not None and args.described.watch.mappings == {"a": "b"}
    with pytest.raises(
        ModelError, match=rf"^{re.escape(str(broken))} \(expanded\):\d+: joint 'joint_3'"
    ):
        plan_change(
            settings,
            model,
            {"description_file": str(broken), "description_args": ["a:=b"]},
            loader,
            described,
        )
    with pytest.raises(ModelError, match=rf"^{re.escape(str(broken))}:\d+: joint 'joint_3'"):
        plan_change(settings, model, {"description_file": str(broken)}, loader, described)


def test_a_change_of_zeros_alone_keeps_the_limiter_and_says_nothing_again() -> None:
    """Each zeros.<joint> the node declares is a change of its own: it must not restart the
    rate limiter nor repeat the warnings a full reconfiguration gives."""
    rig = Rig(ARM_URDF, exclude_joints=("no_such_joint",))
    assert len(rig.logger.containing("no_such_joint")) == 1
    assert rig.send(["joint_1"], [0.1], T0) is not None
    rig.pipeline.configure(replace(rig.pipeline.settings, zeros=(("joint_2", (0.5,)),)))
    assert rig.send(["joint_1"], [0.2], T0 + 1_000_000) is None  # 1 ms later: not yet due
    assert len(rig.logger.containing("no_such_joint")) == 1
    publication = rig.pipeline.default_positions()  # the new start value is taken
    assert publication is not None
    assert_pose(publication, rig.robot, "joint_2", 0.5)


GRIPPER = {
    "attachments.names": ["gripper"],
    "attachments.gripper.file": str(REPO_ROOT / "urdf" / "gripper.urdf"),
    "attachments.gripper.parent": "link_2",
    "attachments.gripper.prefix": "g_",
}


def test_an_attachment_change_composes_onto_the_robot_s_own_text() -> None:
    loader, model = Loader(), arm_model()
    added = plan_change(Settings(), model, GRIPPER, loader)
    assert added.model is not None and "g_tcp" in added.model.robot.links
    assert added.model.base_text == model.text  # the robot's own text, kept for the next
    swapped = plan_change(
        added.settings,
        added.model,
        {"attachments.gripper.file": str(REPO_ROOT / "urdf" / "suction_tool.urdf")},
        loader,
        declared_attachments=set(GRIPPER) - {"attachments.names"},
    )
    assert swapped.model is not None and "g_cup" in swapped.model.robot.links
    assert "g_tcp" not in swapped.model.robot.links
    assert [text for text, _ in loader.loaded] == [model.text, model.text]
    # Zeros of the tool's joints are kept while it stays, dropped when it goes.
    with_zero = replace(added.settings, zeros=(("g_finger_joint", (0.01,)),))
    removed = plan_change(with_zero, added.model, {"attachments.names": []}, loader)
    assert removed.model is not None and "g_tcp" not in removed.model.robot.links
    assert removed.settings.zeros == () and removed.settings.attachment_fields == ()


def test_a_bad_attachment_refuses_the_whole_change() -> None:
    bad = dict(GRIPPER, **{"attachments.gripper.parent": "link_22", "frame_prefix": "r/"})
    with pytest.raises(ModelError, match=r"^attachments\.gripper\.parent: no link 'link_22'"):
        plan_change(Settings(), arm_model(), bad, Loader())


def test_fields_of_unlisted_names_change_no_model() -> None:
    change = plan_change(Settings(), arm_model(), {"attachments.spare.file": "/x.urdf"}, Loader())
    assert change.model is None
