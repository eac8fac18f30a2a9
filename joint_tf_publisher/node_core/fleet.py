"""The fleet's policy without rclpy: which robots to start, stop and retry, and its report.

The fleet (``ros.fleet``, the executable ``joint_tf_fleet``) runs one complete
``joint_tf_publisher`` node per namespace of its ``robots`` parameter, in one process. What it
decides is here, driven by tests without DDS:

- ``wanted_robots``: the ``robots`` parameter as namespaces (``/robot1``), validated whole.
- ``FleetState``: the robots wanted, those serving and those refused (with the reason and
  when); ``plan`` says which to stop (no longer wanted) and which to start: wanted robots not
  serving that never tried, or refused ones due for a retry. A refused robot is retried when
  the parameters files changed since its refusal (``file_stamps``: checked every
  ``CHECK_PERIOD_S``) and every ``retry_period`` seconds (0: only on such a change).
- ``FleetState.report``: the fleet's own /diagnostics status (level, message, one value per
  robot), diagnostic_updater's levels as ``health.model.Level``.
- ``params_files``: the ``--params-file`` paths of a command line (read again for a robot
  started after they changed).
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from ..health.model import Level
from .names import absolute_namespace
from .parameters import MAX_PERIOD_S, ParameterRejected, parse_seconds

#: The fleet's parameters: the robots' namespaces, and seconds between two retries of a
#: refused robot.
ROBOTS = "robots"
RETRY_PERIOD = "retry_period"
#: Default ``retry_period``, seconds: a retry makes the robot's node (its services and
#: publishers appear on the graph, then leave), so not more often than this.
DEFAULT_RETRY_PERIOD_S = 10.0
#: Largest ``retry_period``, seconds (the node's periods' bound).
MAX_RETRY_PERIOD_S = MAX_PERIOD_S
#: ``retry_period`` as seconds in [0, MAX_RETRY_PERIOD_S] from any number (an integer as
#: ros2cli and launch send ``retry_period 5``), else ParameterRejected naming it.
parse_retry_period = parse_seconds(RETRY_PERIOD, zero_allowed=True)
#: Seconds between two looks at the parameters files (and two fleet reports on /diagnostics).
CHECK_PERIOD_S = 1.0
#: The task part of the fleet's status name (diagnostic_updater's "node: task").
FLEET_TASK = "robots"


def robot_namespace(text: str) -> str:
    """``text`` (``robot1``, ``/robot1``, ``/site/robot1/``) as an absolute namespace
    (``/robot1``); ParameterRejected naming it unless it is one (``names``) other than the
    root."""
    namespace = absolute_namespace(text)
    if namespace is None:
        msg = (
            f"{ROBOTS}: {text!r} is no robot namespace (tokens of letters, digits and _, "
            "not starting with a digit, separated by /; not the root namespace)"
        )
        raise ParameterRejected(msg)
    return namespace


def wanted_robots(values: object) -> tuple[str, ...]:
    """The ``robots`` parameter as absolute namespaces, in the order given; ParameterRejected
    for anything but an array of strings, a value that is no namespace (``robot_namespace``)
    or a robot given twice. None (not given) and an empty array of any type are no robot
    (ros2cli sends ``"[]"`` as booleans)."""
    if values is None:
        return ()
    if not isinstance(values, list | tuple):
        raise ParameterRejected(f"{ROBOTS}: {values!r} is no array: give a list of namespaces")
    robots: list[str] = []
    for value in values:
        if not isinstance(value, str):
            raise ParameterRejected(f"{ROBOTS}: {value!r} is no namespace: give strings")
        namespace = robot_namespace(value)
        if namespace in robots:
            raise ParameterRejected(f"{ROBOTS}: {namespace} is listed twice")
        robots.append(namespace)
    return tuple(robots)


def params_files(argv: Sequence[str]) -> tuple[Path, ...]:
    """The ``--params-file`` paths of command line ``argv``, in order: those inside its
    ``--ros-args`` blocks (each ends at ``--`` or at the next ``--ros-args``)."""
    paths: list[Path] = []
    inside = False
    tokens = list(argv)
    for index, token in enumerate(tokens):
        if token == "--ros-args":
            inside = True
        elif token == "--":
            inside = False
        elif inside and token == "--params-file" and index + 1 < len(tokens):
            paths.append(Path(tokens[index + 1]))
    return tuple(paths)


#: What a file looked like: its path, modification time (ns) and size (bytes); -1 if absent.
FileStamp = tuple[str, int, int]


def file_stamps(paths: Iterable[Path]) -> tuple[FileStamp, ...]:
    """Each path's ``FileStamp`` (a changed, created or removed file changes it)."""
    stamps: list[FileStamp] = []
    for path in paths:
        try:
            status = os.stat(path)
        except OSError:
            stamps.append((str(path), -1, -1))
        else:
            stamps.append((str(path), status.st_mtime_ns, status.st_size))
    return tuple(stamps)


class RobotStatus(str, Enum):
    """Where a wanted robot stands (its value: the word the fleet's status shows)."""

    SERVING = "serving"
    REFUSED = "refused"
    WAITING = "starting"


@dataclass(frozen=True)
class Refusal:
    """Why a robot's node did not start (``reason``, naming file and line where the
    description is at fault), when (``at_s``, steady clock) and what its inputs were then
    (``inputs``: the parameters files' stamps)."""

    reason: str
    at_s: float
    inputs: Hashable


@dataclass(frozen=True)
class FleetPlan:
    """What the fleet does next: ``stop`` these robots (their nodes destroyed), then
    ``start`` these (made, or retried), in the order of ``robots``."""

    stop: tuple[str, ...] = ()
    start: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.stop or self.start)


@dataclass(frozen=True)
class FleetReport:
    """The fleet's status: the worst ``level``, a sentence, and one (namespace, status)
    value per wanted robot, in the order of ``robots``."""

    level: Level
    message: str
    values: tuple[tuple[str, str], ...]


@dataclass
class FleetState:
    """The robots wanted, serving and refused; ``plan`` says what to do about them."""

    wanted: tuple[str, ...] = ()
    retry_period_s: float = DEFAULT_RETRY_PERIOD_S
    serving: set[str] = field(default_factory=set)
    refused: dict[str, Refusal] = field(default_factory=dict)

    def want(self, robots: tuple[str, ...]) -> None:
        """From now on the fleet serves ``robots`` (``wanted_robots``'s result); refusals of
        robots no longer wanted are forgotten (listed again, a robot tries afresh)."""
        self.wanted = robots
        for namespace in [name for name in self.refused if name not in robots]:
            del self.refused[namespace]

    def plan(self, now_s: float, inputs: Hashable) -> FleetPlan:
        """Stop the serving robots no longer wanted; start the wanted ones not serving that
        never tried, or were refused with other ``inputs`` or ``retry_period_s`` or more
        before ``now_s`` (steady clock, seconds)."""
        stop = tuple(sorted(name for name in self.serving if name not in self.wanted))
        start = tuple(
            name
            for name in self.wanted
            if name not in self.serving and self._due(name, now_s, inputs)
        )
        return FleetPlan(stop, start)

    def _due(self, namespace: str, now_s: float, inputs: Hashable) -> bool:
        refusal = self.refused.get(namespace)
        if refusal is None:
            return True
        if refusal.inputs != inputs:
            return True
        period = self.retry_period_s
        return period > 0.0 and now_s - refusal.at_s >= period

    def started(self, namespace: str) -> None:
        """``namespace``'s node serves."""
        self.serving.add(namespace)
        self.refused.pop(namespace, None)

    def stopped(self, namespace: str) -> None:
        """``namespace``'s node was destroyed."""
        self.serving.discard(namespace)

    def refuse(self, namespace: str, reason: str, now_s: float, inputs: Hashable) -> bool:
        """``namespace``'s node did not start for ``reason``; True if that is news to log (a
        robot refused for the first time, or for another reason than last time)."""
        previous = self.refused.get(namespace)
        self.refused[namespace] = Refusal(reason, now_s, inputs)
        self.serving.discard(namespace)
        return previous is None or previous.reason != reason

    def status(self, namespace: str) -> RobotStatus:
        """Where the wanted robot ``namespace`` stands."""
        if namespace in self.serving:
            return RobotStatus.SERVING
        if namespace in self.refused:
            return RobotStatus.REFUSED
        return RobotStatus.WAITING

    def report(self) -> FleetReport:
        """The fleet's status: OK while every wanted robot serves (or none is wanted), WARN
        while one is starting, ERROR while one is refused (named with its reason)."""
        values = tuple((name, self._value(name)) for name in self.wanted)
        refused = [name for name in self.wanted if name in self.refused]
        serving = sum(1 for name in self.wanted if name in self.serving)
        total = len(self.wanted)
        if refused:
            first = refused[0]
            others = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
            message = (
                f"{len(refused)} of {total} robots refused: {first}: "
                f"{self.refused[first].reason}{others}; {serving} serving"
            )
            return FleetReport(Level.ERROR, message, values)
        if serving < total:
            return FleetReport(Level.WARN, f"{total - serving} of {total} robots starting", values)
        return FleetReport(Level.OK, f"{total} robots serving", values)

    def _value(self, namespace: str) -> str:
        status = self.status(namespace)
        if status is RobotStatus.REFUSED:
            return f"{status.value}: {self.refused[namespace].reason}"
        return str(status.value)


def refused_log(namespace: str, reason: str, retry_period_s: float) -> str:
    """The one log line of a robot refused for ``reason``: who, why and when it is tried
    again."""
    when = "when the parameters files change"
    if retry_period_s > 0.0:
        when += f" and every {retry_period_s:g} s"
    reason = " ".join(reason.split())
    return f"robot {namespace} refused: {reason} (the others serve on; tried again {when})"
