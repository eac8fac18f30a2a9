"""A parameter change as a plan: validated whole first, then applied (no rclpy here).

``plan_change`` reads what one ``ros2 param set`` (or ``set_parameters_atomically``, or the
declaration of a ``zeros.<joint>``) asks of the node: the settings after it, the description
to load when the text or ``model_name`` changed, every ``zeros.<joint>`` checked against the
model that will be current, and where the node's trees would go (``tf_outputs``). It raises
``ParameterRejected`` or ``ModelError`` with the reason before anything changed; the node
(``ros.node``) then applies the ``ParameterChange`` as a whole, so a refused change leaves
nothing half applied.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .parameters import ParameterRejected, Settings
from .pipeline import LoadedModel
from .tf_outputs import NOT_REMAPPED, TfTopics
from .zeros import check_zero, declared_zeros, start_positions

#: Loads a description: (text, model_name) -> the model; ModelError naming the line.
LoadDescription = Callable[[str, str], LoadedModel]


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
    *,
    tf_topics: TfTopics = NOT_REMAPPED,
) -> ParameterChange:
    """The change ``values`` (parameter name -> new value) asks of a node running ``model``
    under ``settings`` whose own tf topics resolve to ``tf_topics``; ParameterRejected or
    ModelError, naming the reason, if any part of it is refused."""
    new_settings = settings.changed(values)
    tf_topics.check(new_settings)
    text = _description_to_load(settings, new_settings, model, values)
    new_model = None
    if text is not None:
        new_model = load(text, new_settings.model_name)
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
    """The description text the change asks to load: a new ``robot_description``, or the
    current text again under a new ``model_name``; None when the model stays."""
    if "robot_description" in values:
        if new.description_from_topic:
            raise ParameterRejected(
                "robot_description comes from the topic (description_from_topic is true)"
            )
        text = str(values["robot_description"] or "")
        if not text.strip():
            raise ParameterRejected("robot_description must not be empty")
        return text
    if new.model_name != old.model_name and model is not None:
        return model.text
    return None
