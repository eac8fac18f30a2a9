"""The package's Python logging (the description's warnings) sent to a node's ROS logger
while the node loads a description (``description_input`` loads inside
``package_logs_to``; a fleet's robots load in its start thread and its spin loop at once, each
thread's records go to its own robot's logger).

It imports the package's logger (``errors.LOGGER``) and the ROS logger's protocol
(``health.reporting.Logger``), no rclpy: the adapter's modules give it their node's logger.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import LOGGER
from ..health.reporting import Logger


class RosLogHandler(logging.Handler):
    """Python logging records of the thread that made it, sent to a ROS logger instead
    (once, with its node's name): the fleet loads one robot's description in its start
    thread while another's file watch loads in the spin loop."""

    def __init__(self, logger: Logger) -> None:
        super().__init__()
        self.logger = logger
        self._thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread != self._thread:
            return
        text = self.format(record)
        if record.levelno >= logging.ERROR:
            self.logger.error(text)
        elif record.levelno >= logging.WARNING:
            self.logger.warning(text)
        else:
            self.logger.info(text)


#: Guards the package logger's routing (``package_logs_to`` in several threads at once).
_ROUTING = threading.Lock()
#: How many ``package_logs_to`` blocks are open, and the logger's ``propagate`` before the
#: first.
_routing: dict[str, Any] = {"open": 0, "propagate": True}


@contextmanager
def package_logs_to(logger: Logger) -> Iterator[None]:
    """While inside, the package's Python logging (description warnings) of this thread goes
    to ``logger`` only, not also bare to stderr. Blocks may overlap in several threads: the
    logger's ``propagate`` is restored when the last one ends."""
    handler = RosLogHandler(logger)
    with _ROUTING:
        if _routing["open"] == 0:
            _routing["propagate"] = LOGGER.propagate
            LOGGER.propagate = False
        _routing["open"] += 1
        LOGGER.addHandler(handler)
    try:
        yield
    finally:
        with _ROUTING:
            LOGGER.removeHandler(handler)
            _routing["open"] -= 1
            if _routing["open"] == 0:
                LOGGER.propagate = _routing["propagate"]
