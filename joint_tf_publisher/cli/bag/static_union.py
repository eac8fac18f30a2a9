"""``bag repair --static-union``: the recording's statics as the node's ``static_union`` keeps
them, fed from the bag instead of DDS.

The policy is ``node_core.static_union``'s (``StaticUnion``: per child frame, additive per
publisher, the holder's change wins, a conflict's first publisher keeps the frame, the cap,
hostile frames refused and counted; ``Debouncer``; ``UnionPublication``); this module only
feeds it what the bag holds, with the bag's log time as its clock:

- **Publishers are the recorded connections.** rosbag2 records no writer GIDs (rosbag2#1252):
  it stores one connection (a topic's row, an MCAP channel) per topic, whoever published on
  it. So each recorded ``/tf_static`` connection is one publisher (``publisher_of``), named
  ``<topic>#<connection number>``: a recording made by ``ros2 bag record`` has one, so a
  frame recorded again with another value is its owner's change (newest wins, as tf2 took it
  live) and two live publishers that disagreed cannot be told apart in it (the node, run with
  the union while recording, reported that conflict live: ``doctor --bag`` reads its recorded
  /diagnostics). A bag merged from several recordings, or a future rosbag2 that writes a
  channel per publisher, has several: a frame two of them give differently is a conflict,
  the first keeps it.
- **The robot's own frames** (every description the recording has, ``repair.robot_parents``)
  are the union's own frames: recorded transforms naming them are the repair's to replace (the
  summary counts them as replaced), never given to the union, and its tree is the one a foreign
  frame may not close a cycle through.
- **When a set is written**: the repair writes the complete set at the start, at each
  description change and every ``static_republish_period`` (``repair``); a change of the union
  is written at the first recorded message at or after the debouncer lets it go (the node's
  interval, at most 10 sets a second of log time, lengthened so that change sets add at most
  the repair's byte budget), and a change still pending at the end at the last log time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ...health import wording
from ...health.model import UnionFacts
from ...health.wording import NAMES_SHOWN
from ...node_core.cdr import Publication
from ...node_core.static_union import (
    MIN_INTERVAL_S,
    Conflict,
    Debouncer,
    PublisherId,
    StaticTransform,
    StaticUnion,
    UnionPublication,
)
from ...stamps import NS_PER_S
from . import messages

if TYPE_CHECKING:
    from rosbags.interfaces import Connection

#: The node's smallest interval between two sets of a changed union, ns.
MIN_INTERVAL_NS = round(MIN_INTERVAL_S * NS_PER_S)


def publisher_of(connection: Connection) -> PublisherId:
    """The publisher a recorded ``/tf_static`` connection stands for (see the module
    docstring): its identity the connection's number, named ``<topic>#<number>``."""
    name = f"{connection.topic}#{connection.id}"
    return PublisherId(name.encode(), name)


def conflict_line(conflict: Conflict, time_ns: int, start_ns: int) -> str:
    """The warning for a conflict that starts at log time ``time_ns`` of a recording that
    starts at ``start_ns``."""
    entry = wording.union_conflict_entry(
        conflict.frame, conflict.kept.shown, conflict.refused.shown
    )
    return (
        f"static union: frame {entry} given differently at "
        f"{(time_ns - start_ns) / NS_PER_S:.3f} s of the recording: {wording.UNION_FIRST_KEEPS}"
    )


class RecordedUnion:
    """The union of a recording's statics: ``receive`` each recorded ``/tf_static`` message in
    log-time order, ``due`` says when a changed set is to be written, ``publication`` is the
    set (the robot's own statics first) and ``sent`` says it was written.

    ``own``: the robot's frames (child -> parent, every description's); ``max_frames``: the
    cap (``static_union_max_frames``); ``min_interval_ns``: the least log time between two
    sets written for changes (``MIN_INTERVAL_NS``, or longer to fit the byte budget).
    """

    def __init__(
        self,
        own: Mapping[str, str],
        max_frames: int,
        start_ns: int,
        min_interval_ns: int = MIN_INTERVAL_NS,
    ) -> None:
        self.now_ns = start_ns
        self.start_ns = start_ns
        #: The robot's frames: the union leaves them to the repair, which replaces and counts
        #: them.
        self.own_frames = dict(own)
        self.union = StaticUnion(max_frames, steady_ns=self._now)
        self.union.set_own(self.own_frames)
        self.debouncer = Debouncer(min_interval_ns, now_ns=self._now)
        self._publication = UnionPublication()
        #: The warnings of the conflicts that started, in order (the repair prints them): the
        #: first ``NAMES_SHOWN`` of the recording, the others counted in ``unsaid`` (a
        #: recording can start thousands, and again each time one ends and comes back: one
        #: line each flooded stderr).
        self.said: list[str] = []
        self.unsaid = 0
        self._conflicts_started = 0

    def _now(self) -> int:
        return self.now_ns

    def receive(self, connection: Connection, time_ns: int, data: bytes) -> None:
        """One recorded ``/tf_static`` message at log time ``time_ns``, the robot's own frames
        left out (``own_frames``: the repair replaces and counts them); one that does not
        decode is left out (the repair's first pass counted it)."""
        self.now_ns = time_ns
        try:
            recorded = messages.tf_transforms(data)
        except ValueError:
            return
        own = self.own_frames
        transforms = [StaticTransform.of(t) for t in recorded if t.child_frame_id not in own]
        if self.union.receive(publisher_of(connection), transforms):
            self.debouncer.changed()
        for conflict in self.union.new_conflicts():
            if self._conflicts_started < NAMES_SHOWN:
                self.said.append(conflict_line(conflict, time_ns, self.start_ns))
            else:
                self.unsaid += 1
            self._conflicts_started += 1

    def due(self, time_ns: int) -> bool:
        """Whether a changed set is to be written at log time ``time_ns``."""
        self.now_ns = time_ns
        return self.debouncer.due()

    @property
    def pending(self) -> bool:
        """Whether a change has not been written yet."""
        return self.debouncer.pending

    def publication(self, own: Publication | None) -> Publication | None:
        """The complete set: ``own`` (the robot's static set) then the union's frames."""
        return self._publication.build(own, self.union.transforms())

    def sent(self, time_ns: int) -> None:
        """A complete set was written at log time ``time_ns``."""
        self.now_ns = time_ns
        self.debouncer.sent()

    def facts(self) -> UnionFacts:
        """What the summary says of the union."""
        return self.union.facts()
