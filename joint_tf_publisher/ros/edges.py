"""The adapter's edge: every callback rclpy calls into the node, guarded.

What a guard does with an exception is ``node_core.callback_edge``'s policy (counted in the
health report, logged once per cause, then throttled); here is only how each kind of
callback serves on: a subscription or timer callback returns, a parameter change is refused
with the reason, a service request gets a failed result with the reason. While the node's
context shuts down, what a callback raises (rclpy's handles destroyed under it) goes on to
the spin loop as before (``runtime.spin`` ends quietly).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from rcl_interfaces.msg import SetParametersResult
from rclpy.context import Context

from ..node_core.callback_edge import CallbackEdge

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
        self,
        name: str,
        function: Callable[[Request, Response], Response],
        refuse: Callable[[Response, str], Response],
    ) -> Callable[[Request, Response], Response]:
        """``function`` (a service callback): when it raises, ``refuse`` (the response, the
        reason) answers the request."""

        def guarded(request: Request, response: Response) -> Response:
            try:
                return function(request, response)
            except Exception as error:  # the edge: anything a callback raises
                return refuse(response, self.failed(name, error))

        return guarded
