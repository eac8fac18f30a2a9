"""A parameter change as a plan: validated whole first, then applied (no rclpy here).

``plan_change`` reads what one ``ros2 param set`` (or ``set_parameters_atomically``, or the
declaration of a ``zeros.<joint>``) asks of the node: the settings after it, where the
description comes from after it (``description_source``: exactly one of
``robot_description``, ``description_file`` and ``description_from_topic``), the description
to load when its text, file, xacro arguments, source, ``model_name`` or attachments changed
(the robot's own description, the attachments composed onto it by the loader), and every
``zeros.<joint>`` checked against the model that will be current, as are ``remote.frames``
where it or ``exclude_joints`` changes (``remote_output.check_choice``), and where the node's
trees would go (``tf_outputs``). It raises ``ParameterRejected`` or ``ModelError`` with the reason
before anything changed; the node (``ros.node``) then applies the ``ParameterChange`` as a
whole, so a refused change leaves nothing half applied.

``prepared_model`` is the one way from a description (whatever gave it: the parameter, the
file, the topic) to the model the node installs, with the ``zeros`` that model takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from ..description.compose import COMPOSED_SOURCE, compose
from ..description.loader import FileDescription
from ..robot import Robot
from .attachments import with_attachment_change
from .description_source import (
    DescriptionFileWatch,
    DescriptionSource,
    description_source,
    loads_again,
)
from .parameters import PARAMETERS_BY_NAME, ParameterRejected, Settings
from .pipeline import LoadedModel
from .remote_output import check_choice, remote_on
from .tf_outputs import NOT_REMAPPED, TfTopics
from .zeros import check_zero, declared_zeros, start_positions

#: The name errors in the ``robot_description`` parameter's text give as their source.
PARAMETER_SOURCE = "robot_description"
#: The name errors in a description from the topic give as their source.
TOPIC_SOURCE = "robot_description topic"


class LoadDescription(Protocol):
    """Loads a description: the robot's own text, the ``settings`` it runs under (the
    SDFormat ``model_name``, the attachments composed onto it), the ``source`` its errors
    name, and the ``path`` of the file it was read from (SDFormat ``<include>``s start from
    its folder); ModelError naming the line."""

    def __call__(
        self, text: str, settings: Settings, source: str, path: Path | None = None
    ) -> LoadedModel: ...


def load_description(
    text: str, settings: Settings, source: str, path: Path | None = None
) -> LoadedModel:
    """``LoadDescription`` by the package's parsers (the node adds where its warnings go):
    the attachments of ``settings`` composed onto ``text`` (``description.compose``), the
    model of the composed text, which is what the node publishes."""
    model_name = settings.model_name or None
    composed = compose(text, settings.attachment_list, source, model_name, path)
    where = COMPOSED_SOURCE if settings.attachments else source
    robot = Robot.from_xml_string(composed, source=where, model_name=model_name, path=path)
    return LoadedModel(robot, composed, text)


@dataclass(frozen=True)
class Described:
    """Where the running description comes from: ``source``, the ``robot_description``
    parameter's text (``text``, "" unless that is the source) and the file watched
    (``watch``, with ``description_file`` only)."""

    source: DescriptionSource
    text: str = ""
    watch: DescriptionFileWatch | None = None

    @classmethod
    def of(cls, settings: Settings, model: LoadedModel | None) -> Described:
        """A running text or topic description, as ``settings`` and ``model`` tell it."""
        if settings.description_from_topic:
            return cls(DescriptionSource.TOPIC)
        return cls(DescriptionSource.PARAMETER, model.base_text if model is not None else "")


@dataclass(frozen=True)
class ParameterChange:
    """A validated change: the settings to run under, the model to install (None: keep the
    current one), whether the joint-state topics to subscribe to changed, and where the
    description comes from after it."""

    settings: Settings
    model: LoadedModel | None
    sources_changed: bool
    described: Described


def plan_change(
    settings: Settings,
    model: LoadedModel | None,
    values: Mapping[str, Any],
    load: LoadDescription,
    described: Described | None = None,
    declared_attachments: AbstractSet[str] = frozenset(),
    *,
    tf_topics: TfTopics = NOT_REMAPPED,
) -> ParameterChange:
    """The change ``values`` (parameter name -> new value) asks of a node running ``model``
    under ``settings``, its description as ``described`` (default: ``Described.of``), its
    ``attachments.<name>.<field>`` parameters ``declared_attachments``, its own tf topics
    resolving to ``tf_topics``; ParameterRejected or ModelError, naming the reason, if any
    part of it is refused."""
    for name in values:
        spec = PARAMETERS_BY_NAME.get(name)
        if spec is not None and spec.read_only:  # what rclpy does not refuse itself
            raise ParameterRejected(
                f"{name} is read-only: give it at start (command line, launch or parameters file)"
            )
    new_settings = with_attachment_change(
        settings, settings.changed(values), values, declared_attachments
    )
    tf_topics.check(new_settings)
    old = described or Described.of(settings, model)
    text = str(values.get("robot_description", old.text) or "")
    source = description_source(
        text, new_settings.description_file, new_settings.description_from_topic
    )
    new = Described(
        source,
        text if source is DescriptionSource.PARAMETER else "",
        old.watch if source is DescriptionSource.FILE else None,
    )
    new_model = None
    if loads_again(old.source, source, settings, new_settings, "robot_description" in values):
        if source is DescriptionSource.FILE:
            watch = DescriptionFileWatch(
                new_settings.description_file, new_settings.description_args
            )
            new_model, new_settings = watch.load(partial(file_model, load, new_settings))
            new = replace(new, watch=watch)
        elif source is DescriptionSource.PARAMETER:
            new_model, new_settings = prepared_model(load, text, PARAMETER_SOURCE, new_settings)
        elif model is not None:  # the topic's text again, under a new model_name or attachments
            new_model, new_settings = prepared_model(
                load, model.base_text, TOPIC_SOURCE, new_settings
            )
    target = new_model or model
    if (
        ("remote.frames" in values or "exclude_joints" in values)
        and target is not None
        and remote_on(new_settings)
    ):
        check_choice(target, new_settings)
    if new_model is None and model is not None:
        current = dict(settings.zeros)
        for joint, joint_values in new_settings.zeros:
            if joint_values != current.get(joint):
                check_zero(model.kin, joint, joint_values)
    return ParameterChange(
        new_settings, new_model, new_settings.source_list != settings.source_list, new
    )


def prepared_model(
    load: LoadDescription,
    text: str,
    source: str,
    settings: Settings,
    path: Path | None = None,
) -> tuple[LoadedModel, Settings]:
    """The model ``load`` makes of ``text`` (``source``, ``path``: as ``LoadDescription``
    takes them) under ``settings``'s ``model_name``, with ``settings`` for it: ``zeros``
    only for joints that take one in it (``zeros_for``), checked against its limits.
    ModelError or ParameterRejected for a description or zeros it refuses."""
    model = load(text, settings, source, path)
    settings = replace(settings, zeros=zeros_for(model, settings))
    start_positions(model.kin, settings.zeros, settings.clamp_mode)
    return model, settings


def file_model(
    load: LoadDescription, settings: Settings, read: FileDescription
) -> tuple[LoadedModel, Settings]:
    """``prepared_model`` of a description read from ``description_file``."""
    return prepared_model(load, read.text(), read.source, settings, read.path)


def zeros_for(model: LoadedModel, settings: Settings) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """The ``zeros`` of ``settings`` for joints that take one in ``model`` (a new description:
    those of the others, gone or now mimic followers, are dropped, and the node undeclares
    their parameters)."""
    taking = declared_zeros(model.kin)
    return tuple((name, values) for name, values in settings.zeros if name in taking)
