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
- ``params_files``: the ``--params-file`` paths of a command line (their stamps say when a
  refused robot is due again); ``params_copies``: a command line whose parameters files are
  copies read now through the package's safe reader (what rcl reads, at the process's start
  and for each robot's node); ``robot_arguments``: the ROS arguments a robot's node is made
  with (the process's, but the rules that name a node or its namespace), ``named_as_given``:
  rcl's refusal of such a copy naming the file as given, and
  ``robot_node_namespace``: a robot's namespace nested under the fleet's.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from ..description.files import read_regular_file
from ..description.xmlio import MAX_DESCRIPTION_BYTES
from ..health.model import Level
from .description_source import FileStamp, stamp_of
from .names import NODE_NAME, absolute_namespace, namespace_refusal
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
#: rcl's flag of a parameters file, and of a remapping rule.
PARAMS_FILE_FLAG = "--params-file"
_REMAP_FLAGS = ("-r", "--remap")
#: What a remapping rule names to rename a node or move its namespace (rcl).
_NODE_NAME_RULES = ("__node", "__name", "__ns")
#: Most bytes a parameters file the fleet reads may hold: room for descriptions given
#: inline (``MAX_DESCRIPTION_BYTES`` each) beside the robots' other parameters.
MAX_PARAMS_FILE_BYTES = 2 * MAX_DESCRIPTION_BYTES


def robot_namespace(text: str) -> str:
    """``text`` (``robot1``, ``/robot1``, ``/site/robot1/``) as an absolute namespace
    (``/robot1``); ParameterRejected naming it unless it is one (``names``) other than the
    root."""
    namespace = absolute_namespace(text)
    if namespace is None:
        raise ParameterRejected(f"{ROBOTS}: {namespace_refusal(text, 'robot namespace')}")
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


def _ros_tokens(argv: Sequence[str]) -> Iterator[tuple[int, str]]:
    """(index, token) of each token of command line ``argv`` inside its ``--ros-args``
    blocks (each ends at ``--`` or at the next ``--ros-args``), the flags themselves left
    out."""
    inside = False
    for index, token in enumerate(argv):
        if token == "--ros-args":
            inside = True
        elif token == "--":
            inside = False
        elif inside:
            yield index, token


def params_files(argv: Sequence[str]) -> tuple[Path, ...]:
    """The ``--params-file`` paths of command line ``argv``, in order: those inside its
    ``--ros-args`` blocks."""
    tokens = list(argv)
    return tuple(
        Path(tokens[index + 1])
        for index, token in _ros_tokens(tokens)
        if token == PARAMS_FILE_FLAG and index + 1 < len(tokens)
    )


def names_a_node(rule: str) -> bool:
    """Whether remapping rule ``rule`` renames a node or moves its namespace (rcl's
    ``__node:=``, ``__name:=``, ``__ns:=``, for every node or, ``name:__ns:=``, one)."""
    left = rule.split(":=", 1)[0]
    return left.rsplit(":", 1)[-1] in _NODE_NAME_RULES


def merging_rule(argv: Sequence[str]) -> str | None:
    """The first remapping rule of ``robot_arguments(argv)`` that would send a name of every
    robot to one absolute name (``joint_states:=/shared``: a relative or private name,
    for every node or for ``joint_tf_publisher``, onto ``/...``), as the one-line refusal
    naming it; None if there is none. Every robot would then read one robot's joint
    states, or publish and serve on one name: silently wrong /tf, or a clash. Rules that
    keep each robot apart pass: a relative target (``joint_states:=js``), an absolute
    source (``/a/joint_states:=/a/js``, one robot; ``/tf:=tf``, each robot's own)."""
    tokens = list(robot_arguments(argv))
    for index, token in enumerate(tokens[:-1]):
        if token not in _REMAP_FLAGS:
            continue
        rule = tokens[index + 1]
        source, _, target = rule.partition(":=")
        node, _, name = source.rpartition(":")
        if node not in ("", NODE_NAME) or not target.startswith("/"):
            continue
        if not name.startswith("/"):
            return (
                f"{token} {rule}: every robot's {name} would be {target}, one name for every "
                f"robot (each robot's node is made with the process's arguments): remap one "
                f"robot's name (-r /<robot>/{name.removeprefix('~/')}:={target}) or give a "
                "relative target"
            )
    return None


def robot_arguments(argv: Sequence[str]) -> tuple[str, ...]:
    """The ROS arguments each robot's node is made with (and only these: rclpy's
    ``use_global_arguments=False``): the tokens of every ``--ros-args`` block of the
    process's command line ``argv`` (``--params-file``, ``-p``, topic remappings...), but
    the remapping rules that rename a node or move its namespace (``names_a_node``): those
    place the fleet's own node, and a robot's node is ``joint_tf_publisher`` in its namespace
    nested under the fleet's (``robot_node_namespace``), as rclcpp_components' container
    makes each component's node with its own arguments, not the process's. Starts with
    ``--ros-args``."""
    tokens = list(argv)
    kept = ["--ros-args"]
    skip = -1
    for index, token in _ros_tokens(tokens):
        if index == skip:
            continue
        rule = tokens[index + 1] if index + 1 < len(tokens) else ""
        if token in _REMAP_FLAGS and names_a_node(rule):
            skip = index + 1
            continue
        kept.append(token)
    return tuple(kept)


def robot_node_namespace(fleet_namespace: str, robot: str) -> str:
    """The namespace of robot ``robot`` (``/arm``, as ``wanted_robots`` gives it) in a fleet
    whose node is in ``fleet_namespace`` (``/``, or ``/site`` with ``-r __ns:=/site`` or a
    launch file's ``namespace=``): nested under it, ``/site/arm``, as launch_ros nests a
    composable node's namespace under the launch file's."""
    return fleet_namespace.rstrip("/") + robot


@contextmanager
def params_copies(argv: Sequence[str]) -> Iterator[list[str]]:
    """``argv`` with each ``--params-file`` path of its ``--ros-args`` blocks replaced by a
    copy of the file as it is now, read through the package's safe reader
    (``files.read_regular_file``: a regular file of at most ``MAX_PARAMS_FILE_BYTES``, never
    a FIFO or a device, which would block rcl's own read of the path) into a private folder
    that is removed when the block ends (rcl reads a parameters file when a node or the
    context is made with it). FileRefused (a ModelError) naming ``--params-file`` and the
    file otherwise."""
    tokens = list(argv)
    with tempfile.TemporaryDirectory(prefix="joint_tf_fleet-") as folder:
        copied = 0
        for index, token in list(_ros_tokens(tokens)):
            if token != PARAMS_FILE_FLAG or index + 1 >= len(tokens):
                continue
            path = Path(tokens[index + 1])
            data = read_regular_file(path, MAX_PARAMS_FILE_BYTES, f"{PARAMS_FILE_FLAG} {path}")
            copy = Path(folder) / f"{copied}.yaml"
            copy.write_bytes(data)
            tokens[index + 1] = str(copy)
            copied += 1
        yield tokens


#: A C source location rcl appends to its error texts (``, at /project/src/parse.c:776``).
_C_SOURCE = re.compile(r"\s*,? at \S+\.c:\d+")


def named_as_given(reason: str, copied: Sequence[str], argv: Sequence[str]) -> str:
    """rcl's ``reason`` for refusing ``copied`` (``params_copies``'s command line of
    ``argv``) as the user reads it: each parameters file named by the path ``argv`` gives,
    not its copy (a temporary file, gone once the start ended, named differently each time,
    so each retry's refusal looked new), and without rcl's C source locations."""
    for given, copy in zip(argv, copied, strict=True):
        if given != copy:
            reason = reason.replace(copy, given)
    return _C_SOURCE.sub("", reason)


#: What the parameters files looked like: each path with its stamp (None: unreadable).
FileStamps = tuple[tuple[Path, FileStamp | None], ...]


def file_stamps(paths: Iterable[Path]) -> FileStamps:
    """Each path with its stamp, the one the node's description file watch takes
    (``description_source.stamp_of``): a saved, created, removed or replaced file, or one
    whose permissions changed, changes it."""
    return tuple((path, stamp_of(path)) for path in paths)


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
    #: Robots whose node is being made (out of the spin loop, ``ros.fleet``).
    starting: set[str] = field(default_factory=set)
    #: Robots that left ``robots`` while their node was being made: that start's outcome
    #: (a node made from what it read then, or its wait for xacro given up) is dropped,
    #: whether or not the robot is listed again meanwhile (it then starts afresh).
    abandoned: set[str] = field(default_factory=set)

    def want(self, robots: tuple[str, ...]) -> None:
        """From now on the fleet serves ``robots`` (``wanted_robots``'s result); refusals of
        robots no longer wanted are forgotten (listed again, a robot tries afresh), and so
        are the starts under way of those robots (``abandoned``)."""
        self.wanted = robots
        self.abandoned.update(name for name in self.starting if name not in robots)
        for namespace in [name for name in self.refused if name not in robots]:
            del self.refused[namespace]

    def plan(self, now_s: float, inputs: Hashable) -> FleetPlan:
        """Stop the serving robots no longer wanted; start the wanted ones not serving nor
        starting that never tried, or were refused with other ``inputs`` or
        ``retry_period_s`` or more before ``now_s`` (steady clock, seconds)."""
        stop = tuple(sorted(name for name in self.serving if name not in self.wanted))
        start = tuple(
            name
            for name in self.wanted
            if name not in self.serving
            and name not in self.starting
            and self._due(name, now_s, inputs)
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

    def start(self, namespace: str) -> None:
        """``namespace``'s node is being made (``plan`` does not start it again meanwhile)."""
        self.starting.add(namespace)
        self.abandoned.discard(namespace)

    def start_ended(self, namespace: str) -> bool:
        """The making of ``namespace``'s node ended; whether its outcome stands (its node
        then serves or it is refused): False if the robot left ``robots`` meanwhile, even if
        listed again since (its node destroyed, its refusal, such as a xacro wait that gave
        up when it left, not kept: ``plan`` starts it afresh if it is wanted)."""
        self.starting.discard(namespace)
        left = namespace in self.abandoned
        self.abandoned.discard(namespace)
        return not left

    def started(self, namespace: str) -> None:
        """``namespace``'s node serves."""
        self.starting.discard(namespace)
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
        self.starting.discard(namespace)
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
