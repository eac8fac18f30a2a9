"""Console-script entry points that stay quiet when stopped while still starting.

Importing the node or the command line tool (rclpy, numpy, lxml) takes about half a second;
a SIGINT (Ctrl-C) or SIGTERM in that window would print Python's KeyboardInterrupt
traceback. The node installs its stop signals (``node_core.stop_signals``: they only set a flag)
before importing anything else, and exits 0 once started if one came. For the command line
tool, while the module loads, these signals end the process quietly with exit code 0; then
the usual handlers are back and ``run`` handles them by stopping its node and demo; once the
command has returned (or a signal ended the import), late ones are ignored so that they
cannot kill the exiting process (a terminal's Ctrl-C and ``ros2 launch`` each send one).

Each console script's process ends within ``END_DEADLINE_S`` once it began to end
(``stop_signals.END_DEADLINE``): the node and the fleet from their teardown on, the command
line tool from its ROS session's end (``demo``, ``run``) or its command's end (a return, an
exception, argparse's exit).
"""

from __future__ import annotations

import importlib
import signal
import sys
from types import FrameType, ModuleType

from .node_core.stop_signals import (
    END_DEADLINE,
    END_DEADLINE_S,
    STOP_SIGNALS,
    ignore_stop_signals,
)


def _stop_quietly(signum: int, frame: FrameType | None) -> None:
    ignore_stop_signals()
    END_DEADLINE.start()
    raise SystemExit(0)


def _import_quietly(module_name: str) -> ModuleType:
    """Import ``module_name`` with SIGINT/SIGTERM ending the process quietly (exit 0)."""
    previous = {number: signal.signal(number, _stop_quietly) for number in STOP_SIGNALS}
    module = importlib.import_module(module_name)  # a stop signal: SystemExit, signals ignored
    for number, handler in previous.items():
        signal.signal(number, handler)
    return module


def node_main() -> int:
    """``joint_tf_publisher``: the ROS node (``joint_tf_publisher.ros.runtime.main``), with
    its stop signals installed before anything heavy is imported."""
    from .node_core.stop_signals import StopSignals

    END_DEADLINE.seconds = END_DEADLINE_S
    stop = StopSignals()
    main: int = importlib.import_module("joint_tf_publisher.ros.runtime").main(stop=stop)
    return main


def fleet_main() -> int:
    """``joint_tf_fleet``: many robots' nodes in one process
    (``joint_tf_publisher.ros.fleet.main``), its stop signals installed first as the node's."""
    from .node_core.stop_signals import StopSignals

    END_DEADLINE.seconds = END_DEADLINE_S
    stop = StopSignals()
    main: int = importlib.import_module("joint_tf_publisher.ros.fleet").main(stop=stop)
    return main


def cli_main() -> int:
    """``joint-tf-publisher``: the command line tool (``joint_tf_publisher.cli.main.main``)."""
    END_DEADLINE.seconds = END_DEADLINE_S
    try:
        main: int = _import_quietly("joint_tf_publisher.cli.main").main()
    finally:  # also an error out of the command (its traceback follows) or argparse's exit
        ignore_stop_signals()
        END_DEADLINE.start()
    return main


if __name__ == "__main__":  # python -m joint_tf_publisher.entry: the node, as its console script
    sys.exit(node_main())
