"""The attachment parameters (``attachments.names``, ``attachments.<name>.<field>``) read into
settings, and the steps of a change asked of ``~/set_attachments``, without ROS."""

from __future__ import annotations

import array

import pytest

from joint_tf_publisher.description.compose import Attachment
from joint_tf_publisher.node_core.attachments import plan_attachment_request, with_attachment_change
from joint_tf_publisher.node_core.parameters import ParameterRejected, Settings


def test_the_listed_attachments_are_read_in_order_with_defaults() -> None:
    settings = Settings.from_values(
        {
            "attachments.names": ["gripper", "camera"],
            "attachments.camera.file": "/tools/camera.urdf",
            "attachments.camera.parent": "tool_flange",
            "attachments.camera.origin": [0, 0, 1, 0, 0, 0.5],  # integers as doubles
            "attachments.gripper.description": "<robot/>",
            "attachments.gripper.parent": "wrist",
            "attachments.gripper.prefix": "g_",
            "attachments.spare.file": "/tools/spare.urdf",  # not listed: unused
        }
    )
    assert settings.attachment_list == (
        Attachment("gripper", "wrist", description="<robot/>", prefix="g_"),
        Attachment("camera", "tool_flange", file="/tools/camera.urdf", origin=(0, 0, 1, 0, 0, 0.5)),
    )
    from_service = settings.changed({"attachments.camera.origin": array.array("d", [1.0] * 6)})
    assert from_service.attachment_list[1].origin == (1.0,) * 6  # as rclpy hands a double array
    unset = settings.changed(
        {"attachments.camera.origin": None, "attachments.gripper.prefix": None}
    )
    assert [a.origin for a in unset.attachment_list] == [(0.0,) * 6] * 2
    assert unset.attachment_list[0].prefix == ""


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"attachments.g.origin": [0.0, 1.0]}, r"attachments\.g\.origin must be 6 numbers"),
        ({"attachments.g.origin": "0 0 0 0 0 0"}, r"attachments\.g\.origin must be 6 numbers"),
        ({"attachments.g.file": 3}, r"attachments\.g\.file must be a string"),
        ({"attachments.g.colour": "red"}, r"attachments\.g\.colour: an attachment parameter is"),
        ({"attachments.names": ["a.b"]}, r"attachments\.names: 'a\.b' cannot name an attachment"),
        ({"attachments.names": ["names"]}, r"attachments\.names: 'names' cannot name"),
    ],
)
def test_a_bad_attachment_parameter_is_refused_naming_it(
    values: dict[str, object], message: str
) -> None:
    with pytest.raises(ParameterRejected, match=message):
        Settings.from_values(values)


def test_adding_a_name_declares_its_parameters_then_sets_the_list() -> None:
    declared = {f"attachments.gripper.{field}" for field in ("description", "file", "parent")}
    declared |= {"attachments.gripper.origin", "attachments.gripper.prefix"}
    change = plan_attachment_request(
        {
            "attachments.names": ["gripper", "camera"],
            "attachments.camera.file": "/tools/camera.urdf",
            "attachments.camera.parent": "tool_flange",
            "attachments.gripper.prefix": "g_",
        },
        ("gripper",),
        declared,
    )
    assert change.declare == {
        "attachments.camera.file": "/tools/camera.urdf",
        "attachments.camera.parent": "tool_flange",
        "attachments.camera.description": None,
        "attachments.camera.origin": None,
        "attachments.camera.prefix": None,
    }
    assert change.set_atomically == {
        "attachments.names": ["gripper", "camera"],
        "attachments.gripper.prefix": "g_",
    }


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"frame_prefix": "x/"}, r"frame_prefix: set_attachments takes attachments\.names"),
        ({"attachments.camera.file": "/c.urdf"}, r"'camera' is not in attachments\.names"),
        ({"attachments.names": ["g"], "attachments.g.origin": [1.0]}, r"must be 6 numbers"),
    ],
)
def test_a_change_beyond_attachments_or_of_an_unlisted_name_is_refused(
    values: dict[str, object], message: str
) -> None:
    with pytest.raises(ParameterRejected, match=message):
        plan_attachment_request(values, (), set())


def test_a_name_removed_takes_its_fields_a_new_name_needs_its_own() -> None:
    old = Settings.from_values(
        {
            "attachments.names": ["gripper", "cup"],
            "attachments.cup.file": "/tools/cup.urdf",
            "attachments.gripper.file": "/tools/gripper.urdf",
        }
    )
    values = {"attachments.names": ["gripper"]}
    new = with_attachment_change(old, old.changed(values), values, set())
    assert new.attachment_fields == ((("gripper", "file"), "/tools/gripper.urdf"),)
    values = {"attachments.names": ["gripper", "cup", "camera"]}
    with pytest.raises(ParameterRejected, match=r"'camera' is new: add it together with its"):
        with_attachment_change(old, old.changed(values), values, set())
    values["attachments.camera.file"] = "/tools/camera.urdf"
    added = with_attachment_change(old, old.changed(values), values, set())
    assert [a.name for a in added.attachment_list] == ["gripper", "cup", "camera"]
    values = {"attachments.names": ["gripper", "cup", "camera"]}  # declared by the service
    declared = {"attachments.camera.file"}
    assert with_attachment_change(old, old.changed(values), values, declared).attachments == (
        "gripper",
        "cup",
        "camera",
    )
