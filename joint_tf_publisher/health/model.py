"""Joint-state health: what the node knows about its inputs, without rclpy.

``JointStateHealth`` is fed by the pipeline and read once per ``diagnostic_period`` by the
node, which turns its ``HealthReport`` into a ``diagnostic_msgs/DiagnosticArray`` status and
its log facts into log lines (one source of truth for /diagnostics and the logs; the
sentences are ``wording``'s, which the doctor says too).

The hot path costs one ``StreamSlot.received`` call per message: a counter, the message
stamp and the arrival time (steady clock) written into the slot of the message's shape (its
source topic and tuple of names, whose joints are known once). Everything else (which joints
never arrived, which stopped, rates, the clock) is worked out by ``report``. Rare events
(clamped or rejected values, mismatched lengths) are recorded as they happen.

Levels follow diagnostic_updater: OK, WARN, ERROR, STALE (a stream that stopped); the
status's level is the worst condition and its message that condition's sentence.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from ..arrays import Array, IndexArray, distinct
from ..model.clamp_mode import ClampMode
from ..stamps import NS_PER_S
from . import wording
from .facts import RobotFacts, frames_left, never_received
from .wording import name_list

#: Message shapes kept apart; beyond, they are folded into one (a flood of new name tuples
#: cannot grow memory).
MAX_SLOTS = 256
#: Most unknown names remembered and listed (``Key.UNKNOWN``): one JointState of 10,000 names
#: the robot lacks was 10,000 names (69 kB) in every report.
MAX_UNKNOWN_NAMES = 1000
#: The source number of the slot that folds the others (no topic has it).
FOLDED_SOURCE = -1


class Level(IntEnum):
    """diagnostic_msgs/DiagnosticStatus levels, worst last."""

    OK = 0
    WARN = 1
    ERROR = 2
    STALE = 3


class Key:
    """The stable keys of ``HealthReport.values`` (docs/node.md lists them)."""

    ROBOT = "robot"
    MOVING_JOINTS = "moving joints"
    PUBLISHERS = "joint state publishers"
    RATE_IN = "joint states in (msg/s)"
    RATE_OUT = "tf out (msg/s)"
    LAST_AGE = "last joint state age (s)"
    NEVER_RECEIVED = "never received joints"
    MISSING_FRAMES = "frames missing from /tf"
    STOPPED = "stopped joints"
    CLAMPED = "clamped joints"
    REJECTED = "rejected values"
    LENGTHS = "mismatched lengths"
    UNKNOWN = "unknown names"
    CLOCK = "node clock (s)"
    STAMP = "newest joint state stamp (s)"
    TWO_PUBLISHERS = "joints given by two publishers"
    REMOVED_FRAMES = "removed frames"
    TIME_OFFSETS = "time offsets (s)"
    OUT_OF_RANGE = "stamps out of range"
    REFUSED_DESCRIPTION = "refused description"
    REMOTE_FRAMES = "remote frames"
    REMOTE_RATE = "remote rate (Hz)"
    REMOTE_SENT = "remote messages sent"
    REMOTE_LEFT_OUT = "remote frames left out"
    UNDECODABLE = "undecodable messages"
    CALLBACK_FAILURES = "callback failures"
    UNKNOWN_PARAMETERS = "unknown parameters"
    LOOPS = "loops (m, rad)"
    LOOPS_NOT_CLOSED = "loops not closed"
    UNION_FRAMES = "static union frames"
    UNION_PUBLISHERS = "static union publishers"
    UNION_REFUSED = "static union refused"
    UNION_CONFLICTS = "static union conflicts"


def never_received_joints(message: str, values: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """The joints a health report names as never received (``Key.NEVER_RECEIVED``) when that
    is what its ``message`` says (``wording.never_received``: the status's worst condition),
    read back from the status as /diagnostics carries it; () for any other status."""
    by_key = dict(values)
    joints = [name for name in by_key.get(Key.NEVER_RECEIVED, "").split(", ") if name]
    frames = [name for name in by_key.get(Key.MISSING_FRAMES, "").split(", ") if name]
    if joints and message == wording.never_received(joints, frames):
        return tuple(joints)
    return ()


@dataclass(frozen=True)
class Condition:
    """One problem found: its level and one sentence naming it."""

    level: Level
    message: str


@dataclass(frozen=True)
class HealthReport:
    """One period's status: ``level`` the worst condition, ``message`` its sentence (or
    "joint states OK"), ``values`` (key, text) pairs with every ``Key`` in a fixed order.
    ``missing_log`` is the warning to log about never-received joints (None when all
    arrived)."""

    robot: str
    level: Level
    message: str
    values: tuple[tuple[str, str], ...]
    conditions: tuple[Condition, ...]
    missing_log: str | None = None


@dataclass(frozen=True)
class GraphFacts:
    """What the node knows from ROS at report time.

    ``publishers``: per joint-state topic (its source number, ``joint_sources``) the names of
    the nodes publishing it. ``node_clock_ns``:
    the node clock (ROS time) now; ``use_sim_time``: whether that clock follows /clock.
    """

    publishers: Mapping[int, Sequence[str]]
    node_clock_ns: int
    use_sim_time: bool = False
    #: Per source number, the topic's name (where no publisher is known by name).
    topics: Mapping[int, str] = field(default_factory=dict)


@dataclass
class LoopFacts:
    """The robot's closed loops as the report shows them (``node_core.loops`` keeps them):
    per loop joint (``joints``) how far apart its frames are after the last solve (m, rad),
    the steady time (ns) since which each loop joint that does not close has not, and whether
    the given joints over-determine the loops (then the values are a least-squares fit)."""

    joints: tuple[str, ...]
    position_error_m: Array
    angle_error_rad: Array
    not_closed_since_ns: dict[str, int] = field(default_factory=dict)
    over_determined: bool = False


@dataclass
class RemoteFacts:
    """The remote output as the report shows it (``node_core.remote_output`` keeps it):
    the chosen ``frames``, the cap ``rate_hz``, its ``topic`` ("" when off), the messages
    ``sent`` since start, and the chosen frames ``left_out`` with why."""

    frames: tuple[str, ...] = ()
    rate_hz: float = 0.0
    topic: str = ""
    sent: int = 0
    left_out: tuple[str, ...] = ()


@dataclass(frozen=True)
class UnionConflictFact:
    """A frame two publishers give differently (``node_core.static_union.Conflict``, named):
    ``kept`` holds it, ``refused`` is refused, since ``since_ns`` (steady clock)."""

    frame: str
    kept: str
    refused: str
    since_ns: int


@dataclass(frozen=True)
class UnionFacts:
    """The union of the graph's statics as the report shows it (``node_core.static_union``
    keeps it): its foreign ``frames`` and cap ``max_frames``, the ``publishers`` holding them
    (node names), the transforms ``refused`` since start by reason, the oldest lasting
    ``conflicts`` and how many ``more_conflicts``."""

    frames: int = 0
    max_frames: int = 0
    publishers: tuple[str, ...] = ()
    refused: Mapping[str, int] = field(default_factory=dict)
    conflicts: tuple[UnionConflictFact, ...] = ()
    #: Lasting conflicts beyond ``conflicts`` (which lists the oldest), counted.
    more_conflicts: int = 0

    def refused_entries(self) -> list[str]:
        """Each reason transforms were refused for, with its count (``reason (Nx)``), sorted."""
        return [f"{reason} ({count}x)" for reason, count in sorted(self.refused.items())]

    def conflicts_value(self) -> str:
        """The lasting conflicts as the report's ``static union conflicts`` says them."""
        return wording.union_conflicts_value(
            [wording.union_conflict_entry(c.frame, c.kept, c.refused) for c in self.conflicts],
            self.more_conflicts,
        )


class StreamSlot:
    """The messages of one shape (source topic number and tuple of names) since the model
    loaded.

    ``joints``: the moving joints such a message updates (mimic followers included).
    """

    __slots__ = ("source", "names", "joints", "arrivals", "last_stamp_ns", "last_arrival_ns")

    def __init__(self, source: int, names: tuple[str, ...], joints: IndexArray) -> None:
        self.source = source
        self.names = names
        self.joints = joints
        self.arrivals = 0
        self.last_stamp_ns = 0
        self.last_arrival_ns = 0

    def received(self, stamp_ns: int, arrival_ns: int) -> None:
        """One message of this shape, stamped ``stamp_ns`` (message time), arrived at
        ``arrival_ns`` (steady clock): the hot path's whole cost."""
        self.arrivals += 1
        self.last_stamp_ns = stamp_ns
        self.last_arrival_ns = arrival_ns


@dataclass
class _Clamps:
    count: int = 0
    excursion: float = 0.0


@dataclass
class _Period:
    """Counts since the last report."""

    clamps: dict[str, _Clamps] = field(default_factory=dict)
    #: The limits values were clamped to ("hard" or "soft"; the latest message's).
    clamp: str = ""
    rejected: dict[str, int] = field(default_factory=dict)
    lengths: int = 0
    out_of_range: int = 0
    #: Messages the RMW could not decode, by message type.
    undecodable: dict[str, int] = field(default_factory=dict)


class JointStateHealth:
    """The health model of one node (see the module docstring).

    ``timeout_s``: seconds after which a joint never received, or a stream silent, is
    reported (``joint_state_timeout``). ``steady_ns`` reads the steady clock (arrival times,
    ages, rates); tests pass their own.
    """

    def __init__(
        self, timeout_s: float = 1.0, steady_ns: Callable[[], int] = time.monotonic_ns
    ) -> None:
        self.timeout_s = timeout_s
        self.steady_ns = steady_ns
        self.facts: RobotFacts | None = None
        #: /tf messages published (the node adds one per publication).
        self.published = 0
        #: Why the last description given (a saved description file) did not load while the
        #: running model stays; None once one loads. The node sets it.
        self.refused_description: str | None = None
        self._slots: dict[tuple[int, tuple[str, ...]], StreamSlot] = {}
        self._unknown: set[str] = set()
        self._period = _Period()
        self._since_ns = steady_ns()
        self._last_report_ns = self._since_ns
        self._last_arrivals: dict[tuple[int, tuple[str, ...]], int] = {}
        self._last_published = 0
        #: Frames that left the robot with a description or prefix change since the node
        #: started and that it does not have now (listeners keep them), sorted.
        self.removed_frames: list[str] = []
        #: Per joint-state topic, the seconds added to its stamps (``time_offsets``).
        self.time_offsets_s: Mapping[str, float] = {}
        #: The remote output (None: the node has none).
        self.remote: RemoteFacts | None = None
        #: Callbacks that raised since the node started, by cause (``callback_failed``).
        self.callback_failures: dict[str, int] = {}
        self._failures_reported = 0
        #: Keys given for the node at start that it does not declare (warned about once;
        #: ``node_core.parameter_keys``): how many, and the first names.
        self.unknown_parameters: tuple[int, tuple[str, ...]] = (0, ())
        #: The robot's closed loops (None: it has none).
        self.loops: LoopFacts | None = None
        #: The union of the graph's statics (None: ``static_union`` off); the node sets it.
        self.union: UnionFacts | None = None
        self._union_refused_reported = 0

    # -- feeding --------------------------------------------------------------------------------

    def install(self, facts: RobotFacts) -> list[str]:
        """A model (re)loaded: forget every stream (not the frames it removed); the frames
        that left with it (``frames_changed``)."""
        left = self.frames_changed(facts)
        self._slots = {}
        self._last_arrivals = {}
        self._unknown.clear()
        self._period = _Period()
        self._since_ns = self.steady_ns()
        return left

    def slot(self, source: int, names: tuple[str, ...], joints: IndexArray) -> StreamSlot:
        """The slot of messages from ``source`` (a topic's number) with ``names``, updating moving
        joints ``joints``; made once per shape. A joint in the slots of two sources (or two
        shapes) that both arrive within a period is reported as given by two publishers."""
        key = (source, names)
        slot = self._slots.get(key)
        if slot is None:
            if len(self._slots) >= MAX_SLOTS:
                self._fold()
            slot = self._slots[key] = StreamSlot(source, names, joints)
        return slot

    def frames_changed(self, facts: RobotFacts) -> list[str]:
        """The robot's frames are ``facts``' now (a new model or prefix): the frames that
        left with this change (``facts.frames_left``), added to ``removed_frames``."""
        left = frames_left(self.facts, facts)
        self.removed_frames = sorted((set(self.removed_frames) | set(left)) - facts.frames)
        self.facts = facts
        return left

    def _fold(self) -> None:
        """Fold every slot into one (no names) that updates all their joints: ages and rates
        stay right for the stream as a whole; per-joint ages become the newest of them."""
        slots = list(self._slots.values())
        folded = StreamSlot(FOLDED_SOURCE, (), distinct(np.concatenate([s.joints for s in slots])))
        folded.arrivals = sum(s.arrivals for s in slots)
        folded.last_stamp_ns = max(s.last_stamp_ns for s in slots)
        folded.last_arrival_ns = max(s.last_arrival_ns for s in slots)
        self._slots = {(FOLDED_SOURCE, ()): folded}
        self._last_arrivals = {(FOLDED_SOURCE, ()): sum(self._last_arrivals.values())}

    def clamped(
        self,
        names: Sequence[str],
        values: Sequence[float] | Array,
        joints: Sequence[str],
        clamp: ClampMode,
    ) -> None:
        """A message's values (``names``, ``values``) clamped ``joints`` to ``clamp`` limits."""
        facts = self.facts
        if facts is None or not joints:
            return
        clamps = self._period.clamps
        for joint in joints:
            clamps.setdefault(joint, _Clamps()).count += 1
        self._period.clamp = clamp.value
        for joint, beyond in facts.excursions(tuple(names), values, clamp).items():
            if joint in clamps:
                clamps[joint].excursion = max(clamps[joint].excursion, beyond)

    def rejected(self, joints: Sequence[str]) -> None:
        """Values for ``joints`` rejected (NaN, infinite, beyond +-1e100, zero quaternion)."""
        rejected = self._period.rejected
        for joint in joints:
            rejected[joint] = rejected.get(joint, 0) + 1

    def mismatched_lengths(self) -> None:
        """A message dropped: its names and values differ in length."""
        self._period.lengths += 1

    def stamp_out_of_range(self) -> None:
        """A message dropped: its stamp plus its topic's time offset is no stamp."""
        self._period.out_of_range += 1

    def undecodable(self, message_type: str) -> None:
        """A ``message_type`` message dropped: the RMW could not decode its bytes."""
        undecodable = self._period.undecodable
        undecodable[message_type] = undecodable.get(message_type, 0) + 1

    def callback_failed(self, cause: str) -> str:
        """A callback raised (``cause``: the callback and the exception's type, as
        ``node_core.callback_edge`` words it); the node served on. Kept since start, at most
        ``MAX_SLOTS`` causes (any further one counted as ``wording.OTHER_CAUSES``): the cause
        it was counted under."""
        failures = self.callback_failures
        if cause not in failures and len(failures) >= MAX_SLOTS:
            cause = wording.OTHER_CAUSES
        failures[cause] = failures.get(cause, 0) + 1
        return cause

    def unknown(self, names: Iterable[str]) -> None:
        """Names that are no moving joint's variable (listed, not a problem): the first
        ``MAX_UNKNOWN_NAMES`` remembered, the others not."""
        remembered = self._unknown
        for name in names:
            if len(remembered) >= MAX_UNKNOWN_NAMES:
                return
            remembered.add(name)

    # -- the report -----------------------------------------------------------------------------

    def report(self, graph: GraphFacts) -> HealthReport:
        """This period's status; starts the next period."""
        now_ns = self.steady_ns()
        elapsed_s = max((now_ns - self._last_report_ns) / NS_PER_S, 1e-9)
        slots = list(self._slots.values())
        active = [s for s in slots if s.arrivals != self._last_arrivals.get((s.source, s.names), 0)]
        arrived = sum(slot.arrivals for slot in slots) - sum(self._last_arrivals.values())
        values: dict[str, str] = dict.fromkeys(KEYS, "")
        values[Key.RATE_IN] = f"{arrived / elapsed_s:.1f}"
        values[Key.RATE_OUT] = f"{(self.published - self._last_published) / elapsed_s:.1f}"
        self._last_arrivals = {(s.source, s.names): s.arrivals for s in slots}
        self._last_published = self.published
        self._last_report_ns = now_ns
        period, self._period = self._period, _Period()
        publishers = sorted({node for nodes in graph.publishers.values() for node in nodes})
        values[Key.PUBLISHERS] = ", ".join([str(len(publishers)), *publishers])
        values[Key.CLOCK] = _seconds(graph.node_clock_ns)
        values[Key.LENGTHS] = str(period.lengths)
        values[Key.OUT_OF_RANGE] = str(period.out_of_range)
        values[Key.REMOVED_FRAMES] = ", ".join(self.removed_frames)
        values[Key.TIME_OFFSETS] = ", ".join(
            f"{topic}: {seconds:g}" for topic, seconds in self.time_offsets_s.items()
        )
        values[Key.UNKNOWN] = ", ".join(sorted(self._unknown))
        count, names = self.unknown_parameters
        if count:
            values[Key.UNKNOWN_PARAMETERS] = ", ".join([str(count), *names])

        conditions = _sim_clock(graph) + _remote(self.remote, values) + self._failures(values)
        conditions += _loops(self.loops, now_ns, values)
        conditions += self._union(now_ns, values)
        if self.refused_description is not None:
            values[Key.REFUSED_DESCRIPTION] = self.refused_description
            conditions.append(Condition(Level.WARN, self.refused_description))
        facts = self.facts
        if facts is None:
            conditions.append(Condition(Level.WARN, wording.NO_DESCRIPTION))
            return _finish("", conditions, values, None)
        values[Key.ROBOT] = facts.robot
        values[Key.MOVING_JOINTS] = str(len(facts.joint_names))
        timeout_ns = int(self.timeout_s * NS_PER_S)
        joints = _JointArrivals(facts, slots, now_ns)
        conditions += self._stream(joints, len(publishers), values)
        never = joints.never_received(values)
        missing_log = None
        if never is not None and now_ns - self._since_ns >= timeout_ns:
            if joints.any:  # else the stream's ERROR says it
                conditions.append(Condition(Level.WARN, never))
            missing_log = wording.never_received_log(never)
        conditions += joints.stopped(timeout_ns, values)
        conditions += _period_conditions(period, values)
        conditions += _stamp_clock(slots, graph, self.timeout_s, values)
        conditions += _two_publishers(active, facts, graph, values)
        return _finish(facts.robot, conditions, values, missing_log)

    def _failures(self, values: dict[str, str]) -> list[Condition]:
        """Callbacks that raised: counted since start in the values; WARN in a period that
        had new ones."""
        failures = self.callback_failures
        if not failures:
            return []
        values[Key.CALLBACK_FAILURES] = ", ".join(
            f"{cause} ({count}x)" for cause, count in sorted(failures.items())
        )
        total = sum(failures.values())
        new, self._failures_reported = total - self._failures_reported, total
        if not new:
            return []
        return [Condition(Level.WARN, wording.callback_failures(new, sorted(failures)))]

    def _union(self, now_ns: int, values: dict[str, str]) -> list[Condition]:
        """The union's values; each lasting conflict (WARN); refusals new this period (WARN)."""
        union = self.union
        if union is None:
            return []
        values[Key.UNION_FRAMES] = f"{union.frames} of {union.max_frames}"
        values[Key.UNION_PUBLISHERS] = (  # the first 10 named: every DDS writer is one
            f"{len(union.publishers)}, {wording.name_list(union.publishers)}"
            if union.publishers
            else "0"
        )
        values[Key.UNION_REFUSED] = ", ".join(union.refused_entries())
        values[Key.UNION_CONFLICTS] = union.conflicts_value()
        conditions = [
            Condition(
                Level.WARN,
                wording.union_conflict(
                    c.frame, c.kept, c.refused, (now_ns - c.since_ns) / NS_PER_S
                ),
            )
            for c in union.conflicts
        ]
        if union.more_conflicts:
            conditions.append(
                Condition(Level.WARN, wording.union_more_conflicts(union.more_conflicts))
            )
        total = sum(union.refused.values())
        new, self._union_refused_reported = total - self._union_refused_reported, total
        if new > 0:
            conditions.append(
                Condition(Level.WARN, wording.union_refused(new, union.refused_entries()))
            )
        return conditions

    def _stream(
        self, joints: _JointArrivals, publishers: int, values: dict[str, str]
    ) -> list[Condition]:
        """The stream as a whole: stopped (STALE) or never started (ERROR)."""
        if joints.any:
            age_s = joints.newest_age_ns / NS_PER_S
            values[Key.LAST_AGE] = f"{age_s:.2f}"
            if age_s < self.timeout_s:
                return []
            return [Condition(Level.STALE, wording.stream_stopped(age_s))]
        waited_s = (joints.now_ns - self._since_ns) / NS_PER_S
        if waited_s < self.timeout_s or joints.facts.excluded.all():  # nothing to wait for
            return []
        return [Condition(Level.ERROR, wording.nothing_received(waited_s, publishers))]


KEYS = tuple(value for name, value in vars(Key).items() if name.isupper())


class _JointArrivals:
    """Per moving joint, when a message last updated it (0: never), at one report."""

    def __init__(self, facts: RobotFacts, slots: Sequence[StreamSlot], now_ns: int) -> None:
        self.facts = facts
        self.now_ns = now_ns
        self.last_ns = np.zeros(len(facts.joint_names), dtype=np.int64)
        arrived = [slot for slot in slots if slot.arrivals]
        for slot in arrived:
            np.maximum.at(self.last_ns, slot.joints, slot.last_arrival_ns)
        self.any = bool(arrived)
        self.newest_age_ns = now_ns - max((s.last_arrival_ns for s in arrived), default=now_ns)
        self.received = (self.last_ns > 0) | facts.excluded
        facts.follow_leaders(self.received, self.last_ns)

    def never_received(self, values: dict[str, str]) -> str | None:
        """The sentence naming joints never received and their frames, None if none."""
        names, missing = never_received(self.facts, self.received)
        values[Key.NEVER_RECEIVED] = ", ".join(names)
        values[Key.MISSING_FRAMES] = ", ".join(missing)
        return wording.never_received(names, missing) if names else None

    def stopped(self, timeout_ns: int, values: dict[str, str]) -> list[Condition]:
        """Joints silent for ``timeout_ns`` while others still arrive (WARN)."""
        if not self.any or self.newest_age_ns >= timeout_ns:
            return []
        ages = self.now_ns - self.last_ns
        silent = np.flatnonzero((self.last_ns > 0) & ~self.facts.excluded & (ages >= timeout_ns))
        if not silent.size:
            return []
        stopped = [
            f"{self.facts.joint_names[i]} ({ages[i] / NS_PER_S:.1f} s)" for i in silent.tolist()
        ]
        values[Key.STOPPED] = ", ".join(stopped)
        return [Condition(Level.WARN, wording.joints_stopped(silent.size, name_list(stopped)))]


def _sim_clock(graph: GraphFacts) -> list[Condition]:
    """use_sim_time with a node clock at 0: no /clock (ERROR)."""
    if not (graph.use_sim_time and graph.node_clock_ns == 0):
        return []
    return [Condition(Level.ERROR, wording.SIM_TIME_WITHOUT_CLOCK)]


def _remote(remote: RemoteFacts | None, values: dict[str, str]) -> list[Condition]:
    """The remote output's values; chosen frames left out (WARN)."""
    if remote is None or not remote.topic:
        return []
    values[Key.REMOTE_FRAMES] = ", ".join(remote.frames)
    values[Key.REMOTE_RATE] = f"{remote.rate_hz:g}"
    values[Key.REMOTE_SENT] = str(remote.sent)
    if not remote.left_out:
        return []
    values[Key.REMOTE_LEFT_OUT] = "; ".join(remote.left_out)
    return [Condition(Level.WARN, wording.remote_frames_left_out(remote.left_out))]


def _loops(loops: LoopFacts | None, now_ns: int, values: dict[str, str]) -> list[Condition]:
    """Each loop joint's residual; a loop not closed (WARN, since when); an over-determined
    fit beyond the tolerance (WARN)."""
    if loops is None:
        return []
    positions, angles = loops.position_error_m.tolist(), loops.angle_error_rad.tolist()
    values[Key.LOOPS] = ", ".join(
        f"{name}: {position:.3g}, {angle:.3g}"
        for name, position, angle in zip(loops.joints, positions, angles, strict=True)
    )
    values[Key.LOOPS_NOT_CLOSED] = ", ".join(sorted(loops.not_closed_since_ns))
    conditions = []
    for k, name in enumerate(loops.joints):
        since_ns = loops.not_closed_since_ns.get(name)
        if since_ns is None:
            continue
        if loops.over_determined:
            message = wording.loop_over_determined(name, positions[k], angles[k])
        else:
            for_s = (now_ns - since_ns) / NS_PER_S
            message = wording.loop_not_closed(name, positions[k], angles[k], for_s)
        conditions.append(Condition(Level.WARN, message))
    return conditions


def _stamp_clock(
    slots: Sequence[StreamSlot], graph: GraphFacts, timeout_s: float, values: dict[str, str]
) -> list[Condition]:
    """Joint-state stamps in another clock domain than the node clock (WARN)."""
    stamps = [s.last_stamp_ns for s in slots if s.arrivals and s.last_stamp_ns]
    if not stamps:
        return []
    newest_ns = max(stamps)
    values[Key.STAMP] = _seconds(newest_ns)
    offset_s = (newest_ns - graph.node_clock_ns) / NS_PER_S
    if not graph.node_clock_ns or abs(offset_s) <= timeout_s + wording.CLOCK_DOMAIN_GAP_S:
        return []
    sentence = wording.stamps_off_clock(
        _seconds(newest_ns), offset_s, _seconds(graph.node_clock_ns)
    )
    return [Condition(Level.WARN, sentence)]


def _period_conditions(period: _Period, values: dict[str, str]) -> list[Condition]:
    """What this period clamped (WARN), rejected (ERROR) or dropped for its lengths, its
    stamps or bytes the RMW could not decode (WARN)."""
    conditions = []
    if period.clamps:
        entries = [
            f"{name} ({record.count}x, up to {record.excursion:.3g} beyond the limit)"
            for name, record in sorted(period.clamps.items())
        ]
        values[Key.CLAMPED] = ", ".join(entries)
        sentence = f"{wording.clamped(period.clamp)}: {name_list(entries)}"
        conditions.append(Condition(Level.WARN, sentence))
    if period.rejected:
        entries = [f"{name} ({count}x)" for name, count in sorted(period.rejected.items())]
        values[Key.REJECTED] = ", ".join(entries)
        conditions.append(Condition(Level.ERROR, f"{wording.REJECTED}: {name_list(entries)}"))
    if period.lengths:
        conditions.append(Condition(Level.WARN, wording.dropped_lengths(period.lengths)))
    if period.out_of_range:
        conditions.append(Condition(Level.WARN, wording.stamps_out_of_range(period.out_of_range)))
    if period.undecodable:
        entries = [f"{kind} ({count}x)" for kind, count in sorted(period.undecodable.items())]
        values[Key.UNDECODABLE] = ", ".join(entries)
        count = sum(period.undecodable.values())
        conditions.append(Condition(Level.WARN, wording.undecodable(count, entries)))
    return conditions


def _two_publishers(
    active: Sequence[StreamSlot], facts: RobotFacts, graph: GraphFacts, values: dict[str, str]
) -> list[Condition]:
    """Joints given by two publishers this period (WARN): a joint in two message shapes
    that both arrived, from two topics or from a topic with two or more publishers."""
    entries = []
    for joint, sources in _shared_joints(active, len(facts.joint_names)):
        nodes = sorted({node for source in sources for node in graph.publishers.get(source, ())})
        if len(nodes) >= 2 or len(sources) >= 2:
            topics = [graph.topics.get(source, f"topic {source}") for source in sources]
            entries.append(f"{facts.joint_names[joint]} ({', '.join(nodes or topics)})")
    if not entries:
        return []
    values[Key.TWO_PUBLISHERS] = ", ".join(entries)
    return [Condition(Level.WARN, wording.two_publishers(name_list(entries)))]


def _shared_joints(
    active: Sequence[StreamSlot], joint_count: int
) -> list[tuple[int, tuple[int, ...]]]:
    """Joints that two slots active this period both update, with the slots' sources."""
    active = [slot for slot in active if slot.names]  # not the folded slot
    if len(active) < 2:
        return []
    owners: list[list[StreamSlot]] = [[] for _ in range(joint_count)]
    for slot in active:
        for joint in slot.joints.tolist():
            owners[joint].append(slot)
    return [
        (joint, tuple(sorted({slot.source for slot in slots})))
        for joint, slots in enumerate(owners)
        if len(slots) >= 2
    ]


def _finish(
    robot: str, conditions: list[Condition], values: dict[str, str], missing_log: str | None
) -> HealthReport:
    worst = max(conditions, key=lambda condition: condition.level, default=None)
    level = worst.level if worst is not None else Level.OK
    message = worst.message if worst is not None else "joint states OK"
    return HealthReport(
        robot, level, message, tuple(values.items()), tuple(conditions), missing_log
    )


def _seconds(ns: int) -> str:
    return f"{ns / NS_PER_S:.3f}"
