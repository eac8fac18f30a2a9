"""A parameter change as a plan: validated whole first, then applied (no rclpy here).

``plan_change`` reads what one ``ros2 param set`` (or ``set_parameters_atomically``, or the
declaration of a ``zeros.<joint>``) asks of the node: the settings after it, the description
to load when the text, ``model_name`` or the attachments changed (the robot's own text, the
attachments composed onto it by the loader), and every ``zeros.<joint>`` checked against the
model that will be current. It raises ``ParameterRejected`` or ``ModelError`` with the
reason before anything changed; the node (``ros.node``) then applies the ``ParameterChange``
as a whole, so a refused change leaves nothing half applied.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from typing import Any

from .attachments import with_attachment_change
from .parameters import ParameterRejected, Settings
from .pipeline import LoadedModel
from .zeros import check_zero, declared_zeros, start_positions

#: Loads a description: (the robot's own text, the settings: model_name, attachments) -> the
#: model with the attachments composed in; ModelError naming the part and line.
LoadDescription = Callable[[str, Settings], LoadedModel]


@dataclass(frozen=True)
class ParameterChange:
    """A validated change: the settings to run under, the model to install (None: keep the
    current one) and whether the joint-state topics to subscribe to changed."""

    settings: Settings
    model: LoadedModel | None
    sources_changed: bool


def plan_change(
    settings: Settings,
    model: LoadedModel | None,
    values: Mapping[str, Any],
    load: LoadDescription,
    declared_attachments: AbstractSet[str] = frozenset(),
) -> ParameterChange:
    """The change ``values`` (parameter name -> new value) asks of a node running ``model``
    under ``settings`` (``declared_attachments``: its ``attachments.<name>.<field>``
    parameters); ParameterRejected or ModelError, naming the reason, if any part of it is
    refused."""
    new_settings = with_attachment_change(
        settings, settings.changed(values), values, declared_attachments
    )
    text = _description_to_load(settings, new_settings, model, values)
    new_model = None
    if text is not None:
        new_model = load(text, new_settings)
        new_settings = replace(new_settings, zeros=zeros_for(new_model, new_settings))
        start_positions(new_model.kin, new_settings.zeros, new_settings.clamp_mode)
    elif model is not None:
        current = dict(settings.zeros)
        for joint, joint_values in new_settings.zeros:
            if joint_values != current.get(joint):
                check_zero(model.kin, joint, joint_values)
    return ParameterChange(
        new_settings, new_model, new_settings.source_list != settings.source_list
    )


def zeros_for(model: LoadedModel, settings: Settings) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """The ``zeros`` of ``settings`` for joints that take one in ``model`` (a new description:
    those of the others, gone or now mimic followers, are dropped, and the node undeclares
    their parameters)."""
    taking = declared_zeros(model.kin)
    return tuple((name, values) for name, values in settings.zeros if name in taking)


def _description_to_load(
    old: Settings, new: Settings, model: LoadedModel | None, values: Mapping[str, Any]
) -> str | None:
    """The robot's own description text the change asks to load: a new
    ``robot_description``, or the current one again under a new ``model_name`` or other
    attachments; None when the model stays."""
    if "robot_description" in values:
        if new.description_from_topic:
            raise ParameterRejected(
                "robot_description comes from the topic (description_from_topic is true)"
            )
        text = str(values["robot_description"] or "")
        if not text.strip():
            raise ParameterRejected("robot_description must not be empty")
        return text
    if model is not None and (
        new.model_name != old.model_name or new.attachment_list != old.attachment_list
    ):
        return model.base_text
    return None
