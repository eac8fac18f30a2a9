"""What a change of attachments asked in one request declares and sets (``~/set_attachments``).

``attachments.names`` lists the names of descriptions hung from the robot (``description.compose``);
per name N, ``attachments.N.description`` or ``attachments.N.file``, ``attachments.N.parent``,
``attachments.N.origin`` and ``attachments.N.prefix`` give it (``ATTACHMENT_PARAMETERS``).
Their parsing is ``parameters``' (the node's one table). The node declares the per-name
parameters of every listed name (their values given at start are read then), so ``ros2 param
set`` of one of them (a tool change) is one step; adding a name needs its per-name parameters
in the same change, which rclpy cannot set undeclared: the node's ``~/set_attachments``
service takes such a change (``plan_attachment_request``). No rclpy here.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from typing import Any

from ..description.compose import ATTACHMENT_FIELDS
from .parameters import (
    ATTACHMENT_PREFIX,
    ATTACHMENTS,
    ParameterRejected,
    Settings,
    parameter_name,
    parse_attachment_field,
    parse_attachment_names,
    split_attachment_parameter,
)


@dataclass(frozen=True)
class AttachmentChange:
    """What the node does for a change of attachments asked in one request: the per-name
    parameters to declare first (of names new to the node, with their values; None: the
    field's default), then the parameters to set in one atomic step (the per-name parameters
    of names no longer listed are undeclared as that step is applied)."""

    declare: dict[str, Any]
    set_atomically: dict[str, Any]


def plan_attachment_request(
    values: Mapping[str, Any], listed: tuple[str, ...], declared: AbstractSet[str]
) -> AttachmentChange:
    """The steps for ``values`` (parameter name -> value: ``attachments.names`` and per-name
    parameters only), given the names ``listed`` now and the parameters ``declared``.

    ParameterRejected for any other parameter, or a per-name parameter of a name the
    change does not list.
    """
    new_listed = listed
    if ATTACHMENTS in values:
        new_listed = parse_attachment_names(values[ATTACHMENTS])
    declare: dict[str, Any] = {}
    set_atomically: dict[str, Any] = {}
    for parameter, value in values.items():
        if parameter == ATTACHMENTS:
            set_atomically[parameter] = value
            continue
        if not parameter.startswith(ATTACHMENT_PREFIX):
            raise ParameterRejected(
                f"{parameter}: set_attachments takes {ATTACHMENTS} and "
                "attachments.<name>.<field> only (set other parameters with set_parameters)"
            )
        name, _ = split_attachment_parameter(parameter)
        parse_attachment_field(parameter, value)
        if name not in new_listed:
            raise ParameterRejected(f"{parameter}: {name!r} is not in {ATTACHMENTS}")
        (set_atomically if parameter in declared else declare)[parameter] = value
    for name in new_listed:
        for field in ATTACHMENT_FIELDS:
            parameter = parameter_name(name, field)
            if parameter not in declared and parameter not in declare:
                declare[parameter] = None  # declared at its default
    return AttachmentChange(declare, set_atomically)


def with_attachment_change(
    old: Settings, new: Settings, values: Mapping[str, Any], declared: AbstractSet[str]
) -> Settings:
    """``new`` (``old`` changed by ``values``) without the fields of names it no longer lists
    (their parameters are undeclared with the change). ParameterRejected for a name new to
    the list whose parameters neither ``values`` nor the ``declared`` ones give: ``ros2
    param set`` of the list alone cannot add an attachment, ``~/set_attachments`` can."""
    removed = set(old.attachments) - set(new.attachments)
    if removed:
        kept = tuple(item for item in new.attachment_fields if item[0][0] not in removed)
        new = replace(new, attachment_fields=kept)
    for name in new.attachments:
        parameters = {parameter_name(name, field) for field in ATTACHMENT_FIELDS}
        if name not in old.attachments and not parameters & (set(values) | declared):
            raise ParameterRejected(
                f"{ATTACHMENTS}: {name!r} is new: add it together with its "
                f"attachments.{name}.* parameters in one call of the node's "
                "~/set_attachments service"
            )
    return new
