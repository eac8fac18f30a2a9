"""The adapter's edge: every callback rclpy calls into the node, guarded.

What a guard does with an exception is ``node_core.callback_edge``'s policy (counted in the
health report, logged once per cause, then throttled); here is only how each kind of
callback serves on: a subscription or timer callback returns, a parameter change is refused
with the reason, a service request gets a failed result with the reason (``refused``). The
services rclpy makes for the node (its parameter services) are guarded too
(``rclpy_services``): a request rclpy cannot read, such as a parameter of an unknown type,
raised out of them. While the node's
context shuts down, what a callback raises (rclpy's handles destroyed under it) goes on to
the spin loop as before (``runtime.spin`` ends quietly). ``decoded`` is the edge of bytes
a callback takes itself: what the RMW cannot decode is counted, never raised.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from rcl_interfaces.msg import SetParametersResult
from rcl_interfaces.srv import SetParameters, SetParametersAtomically
from rclpy.context import Context
from rclpy.node import Node
from rclpy.serialization import deserialize_message

from ..node_core.callback_edge import CallbackEdge
from ..node_core.pipeline import JointStatePipeline

Request = TypeVar("Request")
Response = TypeVar("Response")


class Edges:
    """The guards of one node: ``edge`` its policy, ``context`` its rclpy context."""

    def __init__(self, edge: CallbackEdge, context: Context) -> None:
        self.edge = edge
        self.context = context

    def failed(self, callback: str, error: Exception) -> str:
        """``callback`` raised ``error``: re-raised while the context shuts down, else the
        policy's (counted, logged) and the reason."""
        if not self.context.ok():
            raise error
        return self.edge.failed(callback, error)

    def callback(self, name: str, function: Callable[[Any], Any]) -> Callable[[Any], None]:
        """``function`` (a subscription or clock-jump callback: one argument) serving on."""

        def guarded(message: Any) -> None:
            try:
                function(message)
            except Exception as error:  # the edge: anything a callback raises
                self.failed(name, error)

        return guarded

    def timer(self, name: str, function: Callable[[], Any]) -> Callable[[], None]:
        """``function`` (a timer callback: no argument, so that rclpy passes it none)
        serving on."""

        def guarded() -> None:
            try:
                function()
            except Exception as error:  # the edge: anything a callback raises
                self.failed(name, error)

        return guarded

    def parameters(
        self, function: Callable[[list[Any]], SetParametersResult]
    ) -> Callable[[list[Any]], SetParametersResult]:
        """``function`` (the parameter callback), refusing the change when it raises."""

        def guarded(parameters: list[Any]) -> SetParametersResult:
            try:
                return function(parameters)
            except Exception as error:  # the edge: anything a callback raises
                reason = self.failed("parameter change", error)
                return SetParametersResult(successful=False, reason=reason)

        return guarded

    def service(
        self, name: str, function: Callable[[Request, Response], Response]
    ) -> Callable[[Request, Response], Response]:
        """``function`` (a service callback): when it raises, ``refused`` answers."""

        def guarded(request: Request, response: Response) -> Response:
            try:
                return function(request, response)
            except Exception as error:  # the edge: anything a callback raises
                answer: Response = refused(request, response, self.failed(name, error))
                return answer

        return guarded

    def rclpy_services(self, node: Node) -> None:
        """Guard the services ``node`` has now: those rclpy made for it (call it before the
        node makes its own)."""
        for service in node.services:
            service.callback = self.service(service.srv_name, service.callback)


def decoded(pipeline: JointStatePipeline, data: bytes, message_type: Any) -> Any:
    """``data`` deserialized as ``message_type`` by the RMW; None (counted in ``pipeline``'s
    health as undecodable, a throttled warning) for bytes it cannot decode."""
    try:
        return deserialize_message(data, message_type)
    except Exception:  # rclpy raises its RMWError (a RuntimeError), or others
        package = message_type.__module__.split(".")[0]
        pipeline.undecodable(f"{package}/{message_type.__name__}")
        return None


def refused(request: Any, response: Any, reason: str) -> Any:
    """The answer to ``request`` refused for ``reason``: a failed result per parameter of a
    SetParameters request, a failed result for SetParametersAtomically (``~/set_attachments``
    too), else an empty response of its type."""
    if isinstance(response, SetParameters.Response):
        count = max(1, len(getattr(request, "parameters", ())))
        response.results = [SetParametersResult(successful=False, reason=reason)] * count
        return response
    if isinstance(response, SetParametersAtomically.Response):
        response.result = SetParametersResult(successful=False, reason=reason)
        return response
    return type(response)()
