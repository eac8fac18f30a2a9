"""The node's parameters declared in rclpy from the table (``node_core.parameters``): each
with its descriptor (description, read-only, dynamic typing, range), unset ones at their
defaults; and why rclpy refused a value given at start, in the table's words."""

from __future__ import annotations

from typing import Any

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import InvalidParameterValueException, ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter

from ..node_core.parameters import (
    PARAMETERS,
    PARAMETERS_BY_NAME,
    ParameterRejected,
    ParameterSpec,
    Settings,
    takes_any_empty_array,
)


class StartupError(Exception):
    """A reason the node cannot start (bad parameters or description); reported in one line."""


def declare_parameters(node: Node) -> dict[str, Any]:
    """Declare every parameter of ``PARAMETERS`` with its descriptor; return their values.

    A parameter left without a value (``-p name:=`` or ``name: []`` in a parameters file,
    which rcl reads as "not set") gets its default, so every parameter has a value. Settable
    array parameters take any type (``takes_any_empty_array``: ``"[]"`` from ros2cli clears
    them); the node checks their type itself (``check_array_type``).
    """
    values: dict[str, Any] = {}
    for spec in PARAMETERS:
        any_empty_array = takes_any_empty_array(spec)
        descriptor = ParameterDescriptor(
            description=spec.description,
            read_only=spec.declared_read_only,
            dynamic_typing=spec.dynamic_typing or any_empty_array,
        )
        _set_range(descriptor, spec)
        default: Any = spec.default
        try:
            if any_empty_array:  # unset for now: set to its typed default below unless given
                node.declare_parameter(spec.name, None, descriptor)
            elif isinstance(default, tuple):  # an empty list would be typed as a byte array
                node.declare_parameter(spec.name, _array_type(spec.name), descriptor)
            else:
                node.declare_parameter(spec.name, default, descriptor)
        except InvalidParameterValueException as err:
            raise StartupError(_start_refusal(node, spec.name, err)) from None
        try:
            values[spec.name] = node.get_parameter(spec.name).value
        except ParameterUninitializedException:
            values[spec.name] = None
        if values[spec.name] is None:
            values[spec.name] = default
            if not descriptor.read_only:
                node.set_parameters([typed_parameter(spec.name, default)])
    return values


def _array_type(name: str) -> Parameter.Type:
    """The ROS type of the array parameter ``name``."""
    if PARAMETERS_BY_NAME[name].double_array:
        return Parameter.Type.DOUBLE_ARRAY
    return Parameter.Type.STRING_ARRAY


def typed_parameter(name: str, value: Any) -> Parameter[Any]:
    """``value`` as parameter ``name``, an array of the table's typed as the table says."""
    if isinstance(value, (tuple, list)) and name in PARAMETERS_BY_NAME:
        return Parameter(name, _array_type(name), list(value))
    return Parameter(name, value=value)


def _set_range(descriptor: ParameterDescriptor, spec: ParameterSpec) -> None:
    """The descriptor's range (``ros2 param describe`` shows it; rclpy refuses beyond it)."""
    if spec.float_range is not None:
        low, high = spec.float_range
        descriptor.floating_point_range = [FloatingPointRange(from_value=low, to_value=high)]
    if spec.int_range is not None:
        low_int, high_int = spec.int_range
        descriptor.integer_range = [IntegerRange(from_value=low_int, to_value=high_int, step=0)]


def _start_refusal(node: Node, name: str, err: InvalidParameterValueException) -> str:
    """Why the value given at start for ``name`` is refused, in the table's words (rclpy
    refused it first, by the descriptor's range, in its own: ``Parameter publish_frequency
    out of range Min: 0.0, Max: 1000.0, value: nan``); else rclpy's reason."""
    given = getattr(node, "_parameter_overrides", {}).get(name)
    if given is not None:
        try:
            Settings.from_values({name: given.value})
        except ParameterRejected as rejected:
            return str(rejected)
    return f"{name}: {rclpy_reason(err)}"


def rclpy_reason(err: InvalidParameterValueException) -> str:
    """The reason our callback gave for refusing a parameter, from rclpy's exception."""
    return str(err.args[0]).split("Reason: ", 1)[-1]
