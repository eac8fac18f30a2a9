"""The union of the graph's statics (``static_union``, issue #46): no rclpy here.

Every ``/tf_static`` publisher latches its own last message; a bridge or a recorder that keeps
one sample, or a tool that latches only its last ``sendTransform``, loses the rest. The node
with ``static_union`` on reads every publisher's statics and publishes one message with the
complete set; ``StaticUnion`` decides what that set holds, ``Debouncer`` when it goes out.
Its inputs are plain values, so the node (``ros.static_union``), ``bag repair`` and the fleet
feed it alike: who sent a message (``PublisherId``: the writer's GID, the identity, and its
node's name, for reports) and the message's transforms (``StaticTransform``).

The rules, kept per child frame as tf2 keeps statics:

- **Additive**: a publisher's newer message adds to the frames it sent before (a publisher that
  latches only its last message keeps its earlier frames in the union). An unchanged resend is
  no change; so is one whose only difference is the stamp (the union keeps the stamp the
  transform first came with: tf2 ignores a static's stamp).
- **The owner's word**: a publisher changing a frame it holds (a recalibration, a new parent)
  wins at once.
- **First keeps it**: a child frame given by a second direct publisher with another parent or
  value stays with the first; the conflict is recorded (``Conflict``: the frame, both
  publishers, since when) and lasts while the two disagree; the union never flips between
  them. When the holder leaves (``publisher_left``) the next publisher that gave the frame
  (the earliest) takes it over with its latest value.
- **Statics are static**: the frames of a publisher that left stay in the union; a direct
  publisher that gives one of them later takes it over (a restarted
  ``static_transform_publisher`` with a new calibration), without a conflict.
- **Unions are copies**: a writer announced as another node's union (``set_union_writers``:
  told apart by the publisher, never by the content) holds only frames no direct publisher
  gives: a direct publisher takes a frame from it at once and without a conflict, and its
  copy of a frame a direct publisher holds (even one that left) is ignored, so two nodes with
  the union on never echo a stale value back to each other. Between unions the first keeps a
  frame, silently (their copies converge on the owner's value). A writer learned to be a
  union after its frames came hands each over to the earliest direct publisher that gave it.
- **Own writers and own frames**: the node's own writers (``set_own_writers``) are ignored;
  a foreign transform whose child is one of the node's own robot frames (``set_own``: the
  child frames of the node's own transforms, not its root link, which a ``world`` ->
  ``base_link`` static may well give) is refused: those are always the node's own values
  (another union's copy of them is ignored without a count, also where the union learns
  later that it was one: the echo of the node's own).

Frame ids are taken as tf2 takes them: one leading ``/`` stripped (``tf2_frame``), so
``/link1`` is the node's own ``link1`` and ``/a`` and ``a`` one frame, to every rule below.

Refused, each counted by reason (``Refusal``), never dropped silently: frame ids empty, over
``MAX_FRAME_ID_CHARS``, not printable or with a second leading ``/``; a frame that is its own
parent; a stamp ``builtin_interfaces/Time`` cannot hold (its int32 seconds would wrap); values
not finite; a rotation whose squared length is off 1 by more than ``QUATERNION_TOLERANCE`` (tf2's
``QUATERNION_NORMALIZATION_TOLERANCE``; a rotation within it is normalised, as tf2 does); the
node's own frames; a transform that would close a cycle through the union and the node's own
tree, or hang a frame deeper than tf2 can look up (``MAX_GRAPH_DEPTH``), or whose check would
walk beyond what one message may (``MAX_WALK_STEPS``); frames beyond the cap; the second
value of a conflict.

Bounded: at most ``max_frames`` foreign frames (``static_union_max_frames``), shared. A
publisher may add a frame while the union has room, or while it holds fewer than its fair share
(``max_frames`` // the publishers holding frames, a newcomer counted): then the newest frame of
the largest holder above its share makes room (counted as refused over the cap for that one).
So one publisher can fill an empty union but never keep the others out. Publishers that gave a
frame the holder keeps (``_Record.contending``) are remembered for at most
``MAX_CONTENDERS`` frames in all; beyond, their frames are counted, not kept for handover.

Cost: linear in a message's size. An unchanged frame costs a dict lookup and a tuple
comparison. A new or moved frame that is no frame's parent cannot close a cycle (one lookup);
any other walks up its new parent's ancestors, at most ``MAX_GRAPH_DEPTH`` steps, and at most
``MAX_WALK_STEPS`` in one message (or one publisher leaving). A new model of the node
(``set_own``) checks the whole union in one pass, each frame walked once; the same model
again costs nothing.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NamedTuple

import numpy as np

from ..health.model import UnionConflictFact, UnionFacts
from ..health.wording import NAMES_SHOWN
from ..stamps import MAX_STAMP_NS, MIN_STAMP_NS, NS_PER_S, stamp_to_ns
from .cdr import Publication, TFMessageLayout

#: Default of ``static_union_max_frames``: thousands of frames (a site's sensors, markers and
#: several robots), a few MB of memory at most.
DEFAULT_MAX_FRAMES = 10_000
#: Range of ``static_union_max_frames``.
MIN_MAX_FRAMES = 1
MAX_MAX_FRAMES = 100_000
#: Longest frame id taken, characters: ROS names are kept under 256 characters (the
#: project's bound on ``frame_prefix`` too, ``parameters.MAX_PREFIX_CHARS``).
MAX_FRAME_ID_CHARS = 256
#: tf2's ``QUATERNION_NORMALIZATION_TOLERANCE``: a rotation whose squared length is off 1 by
#: more is refused (tf2 ignores it too); within it, it is normalised.
QUATERNION_TOLERANCE = 10e-3
#: tf2's ``MAX_GRAPH_DEPTH``: tf2 looks up no chain of more parents (it calls it a loop).
MAX_GRAPH_DEPTH = 1000
#: Most parent steps the cycle checks of one message walk in all (``MAX_GRAPH_DEPTH`` for each
#: of 200 frames that are no leaf, or 20,000 frames 10 deep): a hostile message of frames
#: hung below a deep chain cost 2 s for 10,000 frames; beyond, its frames that need a walk are
#: refused (counted), leaves still taken.
MAX_WALK_STEPS = 200_000
#: Most (frame, contender) pairs remembered for a handover or a conflict, in all.
MAX_CONTENDERS = 10_000
#: Smallest interval between two publications of a changed union, seconds (at most 10 a
#: second, ``static_republish_period``'s low end): a flood of changes costs a bridge or a
#: recorder 10 complete sets a second at most, and a change goes out within it.
MIN_INTERVAL_S = 0.1

#: A transform's values: translation x y z (m), rotation quaternion x y z w.
Pose = tuple[float, float, float, float, float, float, float]


class Refusal(Enum):
    """Why a foreign transform is not in the union (the health report's words)."""

    BAD_NAME = "frame id empty, too long, not printable or starting with //"
    BAD_STAMP = "stamp beyond builtin_interfaces/Time"
    OWN_PARENT = "frame is its own parent"
    NOT_FINITE = "value not finite"
    NOT_UNIT = "rotation far from unit length"
    OWN_FRAME = "one of the node's own frames"
    CYCLE = "closes a cycle"
    TOO_DEEP = f"deeper than {MAX_GRAPH_DEPTH} frames"
    WALKS = "its message's cycle checks over their budget"
    OVER_CAP = "beyond static_union_max_frames"
    CONFLICT = "frame held by another publisher"


@dataclass(frozen=True)
class PublisherId:
    """A ``/tf_static`` writer: ``gid`` (the writer's GID bytes, its identity) and ``node``
    (its node's name, for reports; "" while unknown: not part of the identity)."""

    gid: bytes
    node: str = field(default="", compare=False)

    @property
    def shown(self) -> str:
        """How reports name it: its node, else its GID in hex."""
        return self.node or f"writer {self.gid.hex()}"


class StaticTransform(NamedTuple):
    """One transform of a ``/tf_static`` message as plain values: ``parent`` and ``child``
    frame ids, ``stamp_ns`` (its header stamp, ns), ``pose`` (translation x y z in metres,
    quaternion x y z w)."""

    parent: str
    child: str
    stamp_ns: int
    pose: Pose

    @classmethod
    def of(cls, stamped: Any) -> StaticTransform:
        """A ``geometry_msgs/TransformStamped`` as plain values: rclpy's message or a
        recording's (rosbags'), which have the same fields."""
        t, q = stamped.transform.translation, stamped.transform.rotation
        stamp = stamped.header.stamp
        return cls(
            stamped.header.frame_id,
            stamped.child_frame_id,
            stamp_to_ns(stamp.sec, stamp.nanosec),
            (t.x, t.y, t.z, q.x, q.y, q.z, q.w),
        )


@dataclass(frozen=True)
class Conflict:
    """A frame two direct publishers give differently: ``kept`` holds it, ``refused`` gives
    another parent or value, since ``since_ns`` (steady clock)."""

    frame: str
    kept: PublisherId
    refused: PublisherId
    since_ns: int


def tf2_frame(frame_id: str) -> str:
    """``frame_id`` as tf2 keeps it: one leading ``/`` stripped (tf2's ``stripSlash``: to a
    listener ``/camera`` and ``camera`` are one frame)."""
    return frame_id[1:] if frame_id.startswith("/") else frame_id


def checked(transform: StaticTransform) -> StaticTransform | Refusal:
    """``transform`` with its frame ids as tf2 keeps them (``tf2_frame``) and its rotation
    normalised, or why it is refused on its own values (names, parent, stamp, numbers). A
    frame id still starting with ``/`` (``//camera``) is refused: the union's copy, stripped
    once more by a listener, would be another frame than the publisher's."""
    parent, child = tf2_frame(transform.parent), tf2_frame(transform.child)
    for name in (parent, child):
        if (
            not name
            or len(name) > MAX_FRAME_ID_CHARS
            or name.startswith("/")
            or not name.isprintable()
        ):
            return Refusal.BAD_NAME
    if parent == child:
        return Refusal.OWN_PARENT
    if not MIN_STAMP_NS <= transform.stamp_ns <= MAX_STAMP_NS:
        return Refusal.BAD_STAMP  # a nanosec over 1e9 past 2038: int32 sec would wrap
    if parent != transform.parent or child != transform.child:
        transform = transform._replace(parent=parent, child=child)
    pose = transform.pose
    if not all(math.isfinite(value) for value in pose):
        return Refusal.NOT_FINITE
    x, y, z, qx, qy, qz, qw = pose
    squared = qx * qx + qy * qy + qz * qz + qw * qw
    if abs(squared - 1.0) > QUATERNION_TOLERANCE:
        return Refusal.NOT_UNIT
    # q and -q are one rotation: the sign with w >= 0 (the first non-zero of w z y x positive)
    # kept, so two publishers giving one rotation with both signs are no conflict, and an
    # owner's resend with the other sign no change
    sign = -1.0 if (qw, qz, qy, qx) < (0.0, 0.0, 0.0, 0.0) else 1.0
    if squared != 1.0 or sign < 0:
        scale = sign / math.sqrt(squared)
        pose = (x, y, z, qx * scale, qy * scale, qz * scale, qw * scale)
        return transform._replace(pose=pose)
    return transform


@dataclass
class _Held:
    """A frame of the union: its transform, its holder's GID, and the direct publishers
    that gave it too (GID -> their latest transform of it, earliest first)."""

    transform: StaticTransform
    holder: bytes
    contenders: dict[bytes, StaticTransform] = field(default_factory=dict)


@dataclass
class _Record:
    """What the union knows of one writer: its id (the latest node name), whether it is
    another node's union, whether it left, the frames it holds (in order) and those it
    contends for."""

    id: PublisherId
    union: bool = False
    left: bool = False
    holds: dict[str, None] = field(default_factory=dict)
    contending: set[str] = field(default_factory=set)
    #: Its transforms refused as the node's own frames (not counted once it is a union).
    own_refused: int = 0


class StaticUnion:
    """The foreign frames of the union, kept per child frame (see the module docstring).

    ``max_frames``: the cap (``static_union_max_frames``); ``steady_ns``: the steady clock
    (conflicts' ``since``); tests pass their own.
    """

    def __init__(
        self,
        max_frames: int = DEFAULT_MAX_FRAMES,
        steady_ns: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self.max_frames = max_frames
        self._steady_ns = steady_ns
        #: The union's frames by child frame id, in the order they came.
        self._frames: dict[str, _Held] = {}
        #: Per frame id, how many union frames name it as their parent.
        self._children: dict[str, int] = {}
        self._records: dict[bytes, _Record] = {}
        self._own_writers: frozenset[bytes] = frozenset()
        self._union_writers: frozenset[bytes] = frozenset()
        #: The node's own transforms: child frame -> parent frame; the parents among them.
        self._own: Mapping[str, str] = {}
        self._own_parents: frozenset[str] = frozenset()
        self._contenders = 0
        #: (frame, refused GID) -> the conflict, while it lasts, in the order they started;
        #: those ``new_conflicts`` has not given yet.
        self._conflicts: dict[tuple[str, bytes], Conflict] = {}
        self._untold: dict[tuple[str, bytes], None] = {}
        #: Parent steps the cycle checks of this message (or change) may still walk.
        self._walk_budget = MAX_WALK_STEPS
        #: How many other writers hold frames, while one message is taken in (None: to count).
        self._holding: int | None = None
        #: Transforms refused since start, by reason.
        self.refused: dict[Refusal, int] = {}
        #: Bumped by every change of the set (``transforms``).
        self.version = 0

    # -- what it holds ---------------------------------------------------------------------------

    def transforms(self) -> list[StaticTransform]:
        """The foreign transforms, one per child frame, in the order their frames came."""
        return [held.transform for held in self._frames.values()]

    def __len__(self) -> int:
        return len(self._frames)

    def writers(self) -> set[bytes]:
        """The GIDs of the writers the union remembers (holding or contending for frames)."""
        return set(self._records)

    def holder(self, frame: str) -> PublisherId | None:
        """The publisher whose value of ``frame`` the union holds (None: not in it)."""
        held = self._frames.get(frame)
        return None if held is None else self._records[held.holder].id

    def conflicts(self) -> list[Conflict]:
        """The conflicts that last, oldest first."""
        return sorted(self._conflicts.values(), key=lambda conflict: conflict.since_ns)

    def new_conflicts(self) -> list[Conflict]:
        """The lasting conflicts not given before (to warn about once each; one that ends and
        comes back is new again), oldest first. Costs the new ones, not all."""
        new = [self._conflicts[key] for key in self._untold]
        self._untold.clear()
        return sorted(new, key=lambda conflict: conflict.since_ns)

    def facts(self) -> UnionFacts:
        """What the health report shows of the union: its conflicts the oldest
        ``NAMES_SHOWN``, the others counted (a publisher contending for 10,000 frames made
        each report list and sort them all: 77 ms, after every message)."""
        holders = sorted(record.id.shown for record in self._records.values() if record.holds)
        oldest = sorted(
            itertools.islice(self._conflicts.values(), NAMES_SHOWN),
            key=lambda conflict: conflict.since_ns,
        )
        return UnionFacts(
            frames=len(self._frames),
            max_frames=self.max_frames,
            publishers=tuple(holders),
            refused={reason.value: count for reason, count in self.refused.items()},
            conflicts=tuple(
                UnionConflictFact(c.frame, self._shown(c.kept), self._shown(c.refused), c.since_ns)
                for c in oldest
            ),
            more_conflicts=len(self._conflicts) - len(oldest),
        )

    def _shown(self, publisher: PublisherId) -> str:
        """``publisher`` named with the latest node name known of it."""
        record = self._records.get(publisher.gid)
        return (record.id if record is not None else publisher).shown

    # -- who is who ------------------------------------------------------------------------------

    def set_own_writers(self, gids: Iterable[bytes]) -> bool:
        """The node's own ``/tf_static`` writers (its own, its global tree's): their messages
        are ignored, and what the union holds of them goes. True if the set changed."""
        self._walk_budget = MAX_WALK_STEPS  # for the handovers
        self._own_writers = frozenset(gids)
        changed = False
        for gid in self._own_writers & self._records.keys():
            changed |= self._forget(gid, keep=False)
        return changed

    def set_names(self, names: Mapping[bytes, str]) -> None:
        """The node names of writers by GID (the graph's), for reports."""
        for gid, record in self._records.items():
            node = names.get(gid)
            if node and node != record.id.node:
                record.id = PublisherId(gid, node)

    def set_union_writers(self, gids: Iterable[bytes]) -> bool:
        """The writers that are other nodes' unions (their announcements): copies, which
        yield to direct publishers (see the module docstring). True if the set changed."""
        self._walk_budget = MAX_WALK_STEPS  # for the handovers
        new = frozenset(gids)
        became, ceased = new - self._union_writers, self._union_writers - new
        self._union_writers = new
        for gid in ceased & self._records.keys():
            # no union now (its node turned the union off, its announcement gone): a direct
            # publisher again, holding what it holds as one (its own frames no copies that any
            # publisher takes silently); another publisher giving one is a conflict
            self._records[gid].union = False
        changed = False
        for gid in became & self._records.keys():
            record = self._records[gid]
            record.union = True
            self._count(Refusal.OWN_FRAME, -record.own_refused)  # echoes after all
            record.own_refused = 0
            for frame in list(record.contending):  # a copy contends for nothing
                self._drop_contender(frame, gid)
            for frame in list(record.holds):
                held = self._frames[frame]
                if held.contenders:  # the earliest direct giver takes it
                    changed |= self._hand_over(frame, held)
        return changed

    def set_own(self, own: Mapping[str, str]) -> bool:
        """The node's own transforms (child frame -> parent frame, as it publishes them): a
        union frame that is now one of them, or that now closes a cycle through them, goes
        (counted). True if the set changed."""
        own = {tf2_frame(child): tf2_frame(parent) for child, parent in own.items()}
        if own == self._own:
            return False  # the same model again (each publication of the node's statics)
        self._own = own
        self._own_parents = frozenset(own.values())
        changed = False
        for frame in [frame for frame in self._frames if frame in own]:
            self._count(Refusal.OWN_FRAME)
            self._remove(frame)
            changed = True
        for frame, reason in self._tree_refusals():
            self._count(reason)
            self._remove(frame)
            changed = True
        return changed

    def _tree_refusals(self) -> list[tuple[str, Refusal]]:
        """The union frames that close a cycle through the union and the node's own tree
        (one per cycle: of its union frames, the one that came first), then those that hang
        deeper than tf2 looks up (``MAX_GRAPH_DEPTH``) once those are gone: the first frame
        beyond it of each chain (the frames below it then hang from it). One pass: each
        frame is walked once (``_tree_refusal`` per frame would walk each chain again, 10
        million steps for 10,000 frames below a chain 1000 deep)."""
        order = {frame: index for index, frame in enumerate(self._frames)}
        cut: list[str] = []
        #: Per frame met: how many frames a walk from it visits up to its root, inclusive
        #: (``_tree_refusal``'s steps), with the cut frames as roots.
        visits: dict[str, int] = {}

        def parent_of(frame: str) -> str | None:
            held = self._frames.get(frame)
            return held.transform.parent if held is not None else self._own.get(frame)

        for start in self._frames:
            path: list[str] = []
            on_path: dict[str, int] = {}
            frame: str | None = start
            while frame is not None and frame not in visits:
                if frame in on_path:  # a cycle: path[on_path[frame]:]; its first union frame goes
                    loop = [f for f in path[on_path[frame] :] if f in self._frames]
                    first = min(loop, key=order.__getitem__)
                    cut.append(first)
                    visits[first] = 1
                    path, on_path, frame = [], {}, start  # walked again, the cycle cut
                    continue
                on_path[frame] = len(path)
                path.append(frame)
                frame = parent_of(frame)
            count = 1 if frame is None else visits[frame] + 1
            for walked in reversed(path):
                visits[walked] = count
                count += 1
        refusals = [(frame, Refusal.CYCLE) for frame in cut]
        cut_set = set(cut)
        for frame, held in self._frames.items():
            if frame in cut_set:  # a root now: its parent never walked
                continue
            # the frame visits one more than its parent; cut one past each MAX_GRAPH_DEPTH
            beyond = visits[held.transform.parent] - MAX_GRAPH_DEPTH
            if beyond > 0 and beyond % (MAX_GRAPH_DEPTH + 1) == 1:
                refusals.append((frame, Refusal.TOO_DEEP))
        return refusals

    def set_max_frames(self, max_frames: int) -> bool:
        """A new cap; frames beyond it go, the newest of the largest holders first (counted).
        True if the set changed."""
        self.max_frames = max_frames
        excess = len(self._frames) - max_frames
        if excess <= 0:
            return False
        # the largest holder first, of equal ones the first that came (as ``_largest_holder``):
        # a heap, not a scan of every holder per frame (100,000 frames of 1000 publishers
        # lowered to 1 took 115 s)
        heap = [
            (-len(record.holds), index, record)
            for index, record in enumerate(self._records.values())
            if record.holds
        ]
        heapq.heapify(heap)
        for _ in range(excess):
            negative_size, index, record = heapq.heappop(heap)
            self._evict_from(record)
            if record.holds:
                heapq.heappush(heap, (negative_size + 1, index, record))
        return True

    def publisher_left(self, gid: bytes) -> bool:
        """Writer ``gid`` left the graph: each frame it holds goes to the earliest publisher
        that gave it too, else stays; what it contended for is forgotten. True if the set
        changed."""
        self._walk_budget = MAX_WALK_STEPS  # for the handovers
        record = self._records.get(gid)
        if record is None:
            return False
        record.left = True
        return self._forget(gid, keep=True)

    # -- a message -------------------------------------------------------------------------------

    def receive(self, publisher: PublisherId, transforms: Iterable[StaticTransform]) -> bool:
        """One ``/tf_static`` message of ``publisher``: its transforms taken in, by the
        rules of the module docstring (the node's own writers' messages ignored). True if
        the union's set changed (``new_conflicts`` then gives the conflicts it started)."""
        gid = publisher.gid
        if gid in self._own_writers:
            return False
        self._holding = None
        self._walk_budget = MAX_WALK_STEPS
        record = self._records.get(gid)
        if record is None:
            record = self._records[gid] = _Record(publisher, union=gid in self._union_writers)
        elif publisher.node and publisher.node != record.id.node:
            record.id = publisher
        record.left = False
        changed = False
        for given in transforms:
            transform = checked(given)
            if isinstance(transform, Refusal):
                self._count(transform)
                continue
            if transform.child in self._own:
                if not record.union:  # another union's copy of them: an echo, not counted
                    self._count(Refusal.OWN_FRAME)
                    record.own_refused += 1
                continue
            held = self._frames.get(transform.child)
            if held is None:
                changed |= self._add(record, transform)
            elif held.holder == gid:
                changed |= self._update(held, transform)
            else:
                changed |= self._contend(record, held, transform)
        if not record.holds and not record.contending and not record.own_refused:
            self._records.pop(gid, None)  # gave nothing kept
        if changed:
            self.version += 1
        return changed

    def _add(self, record: _Record, transform: StaticTransform) -> bool:
        """A frame new to the union, given by ``record``: added if the tree and the cap
        allow."""
        reason = self._tree_refusal(transform.parent, transform.child)
        if reason is None and not self._room_for(record):
            reason = Refusal.OVER_CAP
        if reason is not None:
            self._count(reason)
            return False
        self._frames[transform.child] = _Held(transform, record.id.gid)
        self._children[transform.parent] = self._children.get(transform.parent, 0) + 1
        record.holds[transform.child] = None
        return True

    def _update(self, held: _Held, transform: StaticTransform) -> bool:
        """The holder gives its frame again: a new parent or value wins at once (if the
        tree allows); the same is no change (the first stamp stays)."""
        old = held.transform
        if old.parent == transform.parent and old.pose == transform.pose:
            return False
        if old.parent != transform.parent:
            reason = self._tree_refusal(transform.parent, transform.child)
            if reason is not None:
                self._count(reason)
                return False
            self._unparent(old.parent)
            self._children[transform.parent] = self._children.get(transform.parent, 0) + 1
        held.transform = transform
        self._settle_conflicts(transform.child, held)
        return True

    def _contend(self, record: _Record, held: _Held, transform: StaticTransform) -> bool:
        """``record`` gives a frame another holds: True if it took it over (the holder is a
        union and it is direct, or the holder left); else it is a copy (ignored) or a
        contender (remembered; a conflict where it disagrees)."""
        holder = self._records[held.holder]
        if record.union:
            if holder.union and holder.left:  # between copies, a left one yields
                return self._take(record, held, transform)
            return False  # a copy never overrides, never contends
        if holder.union or holder.left:
            return self._take(record, held, transform)
        gid = record.id.gid
        same = held.transform.parent == transform.parent and held.transform.pose == transform.pose
        if gid not in held.contenders:
            if self._contenders >= MAX_CONTENDERS:  # counted, not remembered
                if not same:
                    self._count(Refusal.CONFLICT)
                return False
            self._contenders += 1
            record.contending.add(transform.child)
        held.contenders[gid] = transform
        key = (transform.child, gid)
        if same:
            self._end_conflict(key)
            return False
        self._count(Refusal.CONFLICT)
        if key not in self._conflicts:
            self._conflicts[key] = Conflict(
                transform.child, holder.id, record.id, self._steady_ns()
            )
            self._untold[key] = None
        return False

    def _take(self, record: _Record, held: _Held, transform: StaticTransform) -> bool:
        """``record`` takes over ``held`` with ``transform`` (if the tree allows)."""
        frame = transform.child
        if held.transform.parent != transform.parent:
            reason = self._tree_refusal(transform.parent, frame)
            if reason is not None:
                self._count(reason)
                return False
        old = self._records[held.holder]
        old.holds.pop(frame, None)
        if not old.holds and not old.contending and old.left:
            self._records.pop(old.id.gid, None)
        self._drop_contender(frame, record.id.gid)
        self._unparent(held.transform.parent)
        self._children[transform.parent] = self._children.get(transform.parent, 0) + 1
        held.transform, held.holder = transform, record.id.gid
        record.holds[frame] = None
        self._settle_conflicts(frame, held)
        return True

    # -- bookkeeping -----------------------------------------------------------------------------

    def _tree_refusal(self, parent: str, child: str) -> Refusal | None:
        """Why ``child`` may not hang from ``parent`` in the union and the node's own tree: a
        cycle, a chain deeper than tf2 looks up, or a walk beyond what one message may
        (``MAX_WALK_STEPS``); None if it may."""
        if child not in self._children and child not in self._own_parents:
            return None  # a leaf closes no cycle (nor, as it comes, is its depth walked)
        if self._walk_budget <= 0:
            return Refusal.WALKS
        frame, steps = parent, 0
        while True:
            if frame == child:
                self._walk_budget -= steps
                return Refusal.CYCLE
            steps += 1
            if steps > MAX_GRAPH_DEPTH:
                self._walk_budget -= steps
                return Refusal.TOO_DEEP
            held = self._frames.get(frame)
            if held is not None:
                frame = held.transform.parent
            elif frame in self._own:
                frame = self._own[frame]
            else:
                self._walk_budget -= steps
                return None

    def _room_for(self, record: _Record) -> bool:
        """Whether ``record`` may add a frame: the union has room, or it holds fewer than its
        fair share and a holder above its own share yields its newest frame."""
        if len(self._frames) < self.max_frames:
            return True
        if self._holding is None:  # once a message: evictions only lower it
            self._holding = sum(1 for other in self._records.values() if other.holds) - (
                1 if record.holds else 0
            )
        share = self.max_frames // (self._holding + 1)
        if len(record.holds) >= share:
            return False
        largest = self._largest_holder()
        if len(largest.holds) <= share:
            return False
        self._evict_from(largest)
        return True

    def _largest_holder(self) -> _Record:
        return max(
            (record for record in self._records.values() if record.holds),
            key=lambda record: len(record.holds),
        )

    def _evict_from(self, record: _Record) -> None:
        """``record``'s newest frame leaves the union (refused over the cap)."""
        frame = next(reversed(record.holds))
        self._count(Refusal.OVER_CAP)
        self._remove(frame)

    def _remove(self, frame: str) -> None:
        """``frame`` leaves the union with its contenders and conflicts."""
        held = self._frames.pop(frame)
        self._unparent(held.transform.parent)
        record = self._records[held.holder]
        record.holds.pop(frame, None)
        for gid in list(held.contenders):
            self._drop_contender(frame, gid, held)
        if not record.holds and not record.contending and record.left:
            self._records.pop(held.holder, None)
        self.version += 1

    def _unparent(self, parent: str) -> None:
        count = self._children[parent] - 1
        if count:
            self._children[parent] = count
        else:
            del self._children[parent]

    def _forget(self, gid: bytes, keep: bool) -> bool:
        """Writer ``gid`` contends for nothing now, and each frame it holds goes to its
        earliest contender; one that none takes stays where ``keep`` (a writer that left),
        else goes (one of the node's own writers). True if the set changed."""
        record = self._records[gid]
        for frame in list(record.contending):
            self._drop_contender(frame, gid)
        changed = False
        for frame in list(record.holds):
            held = self._frames[frame]
            if held.contenders and self._hand_over(frame, held):
                changed = True
            elif not keep:
                self._remove(frame)
                changed = True
        if not record.holds:
            self._records.pop(gid, None)
        if changed:
            self.version += 1
        return changed

    def _hand_over(self, frame: str, held: _Held) -> bool:
        """``frame`` to its earliest contender that the tree allows; True if one took it."""
        for gid, transform in list(held.contenders.items()):
            if self._take(self._records[gid], held, transform):
                return True
        return False

    def _drop_contender(self, frame: str, gid: bytes, held: _Held | None = None) -> None:
        held = held if held is not None else self._frames.get(frame)
        if held is not None and held.contenders.pop(gid, None) is not None:
            self._contenders -= 1
        record = self._records.get(gid)
        if record is not None:
            record.contending.discard(frame)
        self._end_conflict((frame, gid))

    def _settle_conflicts(self, frame: str, held: _Held) -> None:
        """The conflicts over ``frame`` as they stand now that ``held`` has a new value or
        holder: a contender that agrees has none; one that disagrees keeps its start time
        (or starts one, not warned: the holder's change made it)."""
        holder = self._records[held.holder].id
        for gid, transform in held.contenders.items():
            key = (frame, gid)
            same = (
                held.transform.parent == transform.parent and held.transform.pose == transform.pose
            )
            if same:
                self._end_conflict(key)
            else:
                old = self._conflicts.get(key)
                since_ns = old.since_ns if old is not None else self._steady_ns()
                contender = self._records[gid].id
                self._conflicts[key] = Conflict(frame, holder, contender, since_ns)
                if old is None:
                    self._untold[key] = None

    def _end_conflict(self, key: tuple[str, bytes]) -> None:
        """The conflict of ``key`` (frame, refused GID) is over, if there was one: should it
        come back, it is new."""
        self._conflicts.pop(key, None)
        self._untold.pop(key, None)

    def _count(self, reason: Refusal, count: int = 1) -> None:
        total = self.refused.get(reason, 0) + count
        if total:
            self.refused[reason] = total
        else:
            self.refused.pop(reason, None)


class Debouncer:
    """When a changed union goes out: at once if nothing went out in the last
    ``min_interval_ns``, else that long after the last publication (so at most one per
    interval, and a change waits at most one interval: always within one
    ``static_republish_period``, which is never shorter). ``now_ns`` reads the steady clock.

    The caller says ``changed`` for a change, asks ``wait_ns`` how long to wait (None: nothing
    to send), and says ``sent`` for every publication of the set (a periodic one too).
    """

    def __init__(
        self,
        min_interval_ns: int = round(MIN_INTERVAL_S * NS_PER_S),
        now_ns: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self.min_interval_ns = min_interval_ns
        self._now_ns = now_ns
        self._last_sent_ns: int | None = None
        self.pending = False

    def changed(self) -> None:
        """The union changed: it is to go out."""
        self.pending = True

    def wait_ns(self) -> int | None:
        """Nanoseconds until the pending change may go out (0: now); None: nothing pending."""
        if not self.pending:
            return None
        if self._last_sent_ns is None:
            return 0
        return max(0, self._last_sent_ns + self.min_interval_ns - self._now_ns())

    def due(self) -> bool:
        """Whether a pending change may go out now."""
        return self.wait_ns() == 0

    def sent(self) -> None:
        """The complete set went out now (nothing is pending)."""
        self._last_sent_ns = self._now_ns()
        self.pending = False


class UnionPublication:
    """The one ``/tf_static`` message of a node with the union on: its own statics first
    (``own``, the pipeline's publication, its global tree's layout kept: foreign frames stay
    out of the global tree), then the union's foreign transforms with their own stamps. The
    layout of the foreign frames is kept while their (parent, child) pairs stay the same (a
    recalibration costs no new layout)."""

    def __init__(self) -> None:
        self._frames: tuple[tuple[str, str], ...] | None = None
        self._layout: TFMessageLayout | None = None

    def build(self, own: Publication | None, foreign: list[StaticTransform]) -> Publication | None:
        """The complete set; None where there is nothing at all to publish."""
        if not foreign:
            return own
        own_frames = own.layout.frames if own is not None else ()
        frames = own_frames + tuple((t.parent, t.child) for t in foreign)
        if frames != self._frames or self._layout is None:
            self._layout, self._frames = TFMessageLayout(frames), frames
        foreign_poses = np.array([t.pose for t in foreign], dtype=np.float64).reshape(-1, 7)
        foreign_stamps = np.array([t.stamp_ns for t in foreign], dtype=np.int64)
        if own is None:
            return Publication(self._layout, 0, foreign_poses, None, foreign_stamps)
        return Publication(
            self._layout,
            own.stamp_ns,
            np.vstack([own.poses, foreign_poses]),
            own.global_layout,
            np.concatenate([own.stamps(), foreign_stamps]),
        )
