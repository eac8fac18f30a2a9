"""Console-script entry points that stay quiet when stopped while still starting.

Importing the node or the command line tool (rclpy, numpy, lxml) takes about half a second;
a SIGINT (Ctrl-C) or SIGTERM in that window would print Python's KeyboardInterrupt
traceback. The node installs its stop signals (``ros.stop_signals``: they only set a flag)
before importing anything else, and exits 0 once started if one came. For the command line
tool, while the module loads, these signals end the process quietly with exit code 0; then
the usual handlers are back and ``run`` handles them by stopping its node and demo.
"""

from __future__ import annotations

import importlib
import signal
from types import FrameType, ModuleType

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _stop_quietly(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def _import_quietly(module_name: str) -> ModuleType:
    """Import ``module_name`` with SIGINT/SIGTERM ending the process quietly (exit 0)."""
    previous = {number: signal.signal(number, _stop_quietly) for number in _STOP_SIGNALS}
    try:
        return importlib.import_module(module_name)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def node_main() -> int:
    """``joint_tf_publisher``: the ROS node (``joint_tf_publisher.ros.runtime.main``), with
    its stop signals installed before anything heavy is imported."""
    from .ros.stop_signals import StopSignals

    stop = StopSignals()
    main: int = importlib.import_module("joint_tf_publisher.ros.runtime").main(stop=stop)
    return main


def cli_main() -> int:
    """``joint-tf-publisher``: the command line tool (``joint_tf_publisher.cli.main.main``)."""
    main: int = _import_quietly("joint_tf_publisher.cli.main").main()
    return main
