"""parameter_changes: a parameter change planned and validated whole, then applied.

No rclpy: ``plan_change`` is driven with parameter values as ``ros2 param set`` gives them and
the test URDFs read by the package's parser; what the node does with a plan over DDS is in
test/ros/test_node_parameters.py.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT, TEST_DIR
from test_pipeline import ARM_URDF, T0, Rig, assert_pose

from joint_tf_publisher import Robot
from joint_tf_publisher.description.compose import compose
from joint_tf_publisher.errors import ModelError
from joint_tf_publisher.node_core.parameter_changes import plan_change
from joint_tf_publisher.node_core.parameters import ParameterRejected, Settings
from joint_tf_publisher.node_core.pipeline import LoadedModel

HUMANOID_URDF = TEST_DIR / "urdf" / "humanoid.urdf"


class Loader:
    """Loads descriptions as the node does, and records which it was asked for."""

    def __init__(self) -> None:
        self.loaded: list[tuple[str, str]] = []

    def __call__(self, text: str, settings: Settings) -> LoadedModel:
        """The robot's own ``text`` with the attachments of ``settings`` composed in."""
        self.loaded.append((text, settings.model_name))
        composed = compose(text, settings.attachment_list, "robot_description")
        return LoadedModel(
            Robot.from_xml_string(composed, source="robot_description"), composed, text
        )


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
        (Settings(), "  ", "robot_description must not be empty"),
        (
            Settings(description_from_topic=True),
            "<robot name='r'><link name='a'/></robot>",
            "robot_description comes from the topic",
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
        set(GRIPPER) - {"attachments.names"},
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
