"""The ROS side of ``joint-tf-publisher attach`` and ``detach``: a running node's
``attachments.names`` read, and its ``~/set_attachments`` service called, from an rclpy node
of its own context.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import rclpy
from rcl_interfaces.srv import GetParameters, SetParametersAtomically
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.signals import SignalHandlerOptions

from ..node_core.parameters import ATTACHMENTS

#: A request with no answer after this long is sent again, seconds (right after discovery a
#: reply can be lost before the service's writer matches the client's reader).
RESEND_S = 2.0


class AttachmentClient:
    """An rclpy node in a context of its own, talking to the node ``node_name`` (its full
    name, e.g. ``/joint_tf_publisher``); ``ros_args`` from ``--ros-args`` on (a remapped
    domain, a log level); a context manager."""

    def __init__(self, node_name: str, timeout_s: float, ros_args: Sequence[str] = ()) -> None:
        self.node_name = node_name.rstrip("/")
        self.timeout_s = timeout_s
        self.context = rclpy.Context()
        rclpy.init(
            args=["joint-tf-publisher", *ros_args],
            context=self.context,
            signal_handler_options=SignalHandlerOptions.NO,
        )
        self.node = Node("joint_tf_publisher_attach", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def __enter__(self) -> AttachmentClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    def names(self) -> tuple[str, ...]:
        """The node's ``attachments.names``."""
        request = GetParameters.Request(names=[ATTACHMENTS])
        response = self._call(GetParameters, "get_parameters", request)
        return tuple(str(name) for name in response.values[0].string_array_value)

    def set_attachments(self, values: Mapping[str, Any]) -> tuple[bool, str]:
        """Call ``~/set_attachments`` with ``values`` (parameter name -> value); (accepted,
        the node's reason when not)."""
        request = SetParametersAtomically.Request()
        request.parameters = [
            _parameter(name, value).to_parameter_msg() for name, value in values.items()
        ]
        result = self._call(SetParametersAtomically, "set_attachments", request).result
        return bool(result.successful), str(result.reason)

    def _call(self, service_type: Any, service: str, request: Any) -> Any:
        """The response of ``<node>/<service>``; TimeoutError naming it after ``timeout_s``."""
        name = f"{self.node_name}/{service}"
        client: Any = self.node.create_client(service_type, name)
        deadline = time.monotonic() + self.timeout_s
        if not client.wait_for_service(timeout_sec=self.timeout_s):
            raise TimeoutError(f"no service {name} (is the node running, with that name?)")
        futures = [client.call_async(request)]
        sent = time.monotonic()
        while not any(future.done() for future in futures):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} did not answer in {self.timeout_s:g} s")
            if time.monotonic() - sent > RESEND_S:
                futures.append(client.call_async(request))
                sent = time.monotonic()
            self.executor.spin_once(timeout_sec=0.05)
        return next(future for future in futures if future.done()).result()


def _parameter(name: str, value: Any) -> Parameter[Any]:
    """A parameter of ``value``'s type (a list of floats: a double array; of text: a string
    array)."""
    if isinstance(value, (list, tuple)):
        kind = (
            Parameter.Type.DOUBLE_ARRAY
            if value and all(isinstance(item, float) for item in value)
            else Parameter.Type.STRING_ARRAY
        )
        return Parameter(name, kind, list(value))
    return Parameter(name, value=value)
