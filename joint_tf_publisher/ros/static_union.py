"""The static union's ROS side (``static_union``): around ``node_core.static_union``, the
policy, this module reads ``/tf_static``, knows its writers, and publishes the complete set.

- **Reading**: the node's own ``/tf_static`` topic (as remapped) with
  ``qos.tf_listener_static_qos`` (reliable, transient local, keep last 100: every publisher's
  latched sample at a late join), as serialized bytes (bytes the RMW cannot decode are
  counted as undecodable), each message with its writer's GID from rclpy's message info
  (``publisher_gid``: rclpy 9, Kilted, and later; ``union_supported``). Earlier rclpy (Jazzy,
  Humble) gives no writer with a message: the union cannot tell publishers apart there, and
  ``static_union`` is refused with that reason. rclpy's events executor (Kilted's default)
  fails on a callback that takes the message info (``SystemError: null argument to internal
  routine``), so the union's subscriptions live on a node of their own that no executor
  spins (``<node name>_static_union``, in the node's namespace, without the user's
  remappings: it reads the topic as the node resolved it), and the node's steady timer takes
  their messages every ``POLL_S`` (at most ``MAX_TAKEN`` a turn, and no further message once
  ``MAX_TRANSFORMS_A_TURN`` transforms were taken in).
- **Writers**: the node names of ``/tf_static``'s writers come from
  ``get_publishers_info_by_topic`` (the node's own writers among them: its own, its global
  tree's), read again every ``GRAPH_PERIOD_S``: a writer the union knows that the graph no
  longer lists has left. Other nodes' unions are told apart by their announcements: each
  node with the union on latches one ``std_msgs/String`` on ``UNION_WRITERS_TOPIC``, the GIDs
  of its ``/tf_static`` writers in hex, space-separated; the node reads everyone's
  (``union_writers_listener_qos``), at most ``MAX_ANNOUNCED`` GIDs.
- **Publishing**: one TFMessage on the node's ``/tf_static`` from its own static writer,
  the node's own statics first, then the foreign ones with their stamps
  (``UnionPublication``); the global tree's message keeps the node's own frames only. A
  change goes out through ``Debouncer`` (at once, or at most ``MIN_INTERVAL_S`` later: the
  timer's next turn), the set again every ``static_republish_period``.
- **Reports**: each conflict is warned about once in the log; the union's facts go to the
  health report (``/diagnostics``) after each message.
- **One union a process and topic** (a fleet's robots in one context): the first node's part
  to turn the union on for its ``/tf_static`` topic hosts it (``_HOSTS``); each other node's
  part with the union on for that topic joins it as a guest and runs nothing of its own. The
  host's one message holds every member's own statics (the host's first, so its global tree
  stays aligned), then the foreign frames; every member's frames are own frames, every
  member's writers own writers; a guest's own writer publishes nothing (its global tree's
  does), each member's health report shows the union, the host's log its conflicts, the
  host's ``static_republish_period`` and cap apply. A host that leaves (its robot removed,
  its union off) hands the union, as it stands, to its first guest, which hosts from then on.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TypeVar

import numpy as np
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.subscription import Subscription
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from ..health import wording
from ..health.wording import NAMES_SHOWN
from ..node_core.cdr import Publication, TFMessageLayout
from ..node_core.parameters import ParameterRejected, Settings
from ..node_core.pipeline import JointStatePipeline
from ..node_core.static_union import (
    MIN_INTERVAL_S,
    Debouncer,
    PublisherId,
    StaticTransform,
    StaticUnion,
    UnionPublication,
)
from ..stamps import NS_PER_S
from .edges import Edges, decoded
from .qos import latched_qos, tf_listener_static_qos, union_writers_listener_qos
from .tf_publishers import GLOBAL_TREE_NODE_SUFFIX, StaticTfPublisher, to_message, unspun_node
from .timers import RestartableTimer

#: Where each node with the union on latches the GIDs of its ``/tf_static`` writers.
UNION_WRITERS_TOPIC = "/tf_static_union_writers"
#: Most writer GIDs of other unions kept (the newest announcements' first).
MAX_ANNOUNCED = 1000
#: Bytes of a DDS writer's GID that name its participant (the GUID prefix, where the GID is
#: the writer's GUID: rmw_fastrtps copies it; elsewhere the node-name rule of ``_vouched``).
GUID_PREFIX_BYTES = 12
#: Seconds between two turns of the union's timer (messages taken, a change sent): the
#: debouncer's interval, so a change waits at most one turn.
POLL_S = MIN_INTERVAL_S
#: Most messages taken from each of the union's subscriptions in one turn, and most
#: transforms taken in from ``/tf_static`` in one (then the turn ends: a flood of large
#: messages costs a turn some 0.3 s of policy at most, ``node_core.static_union``).
MAX_TAKEN = 100
MAX_TRANSFORMS_A_TURN = 20_000
#: Seconds between two reads of the topic's writers (node names, writers that left).
GRAPH_PERIOD_S = 1.0
#: The union's own node is named after the node: ``<node name>`` + this.
UNION_NODE_SUFFIX = "_static_union"
#: Why ``static_union`` is refused on an rclpy without ``MessageInfo.publisher_gid``.
NO_PUBLISHER_GID = (
    "static_union: this rclpy gives no publisher with a message (MessageInfo.publisher_gid "
    "arrived with Kilted's rclpy 9): the union could not tell publishers apart"
)


#: The unions hosted in this process, by context and topic (see the module docstring).
_HOSTS: dict[tuple[int, str], StaticUnionPart] = {}
#: Held by every call into a part: a fleet makes a robot's node (which joins its union) in its
#: start thread while the host's timer runs in the spin loop.
_LOCK = threading.RLock()
_P = ParamSpec("_P")
_R = TypeVar("_R")


def _serialized(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """``method`` run holding ``_LOCK``."""

    @functools.wraps(method)
    def locked(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with _LOCK:
            return method(*args, **kwargs)

    return locked


def union_supported() -> bool:
    """Whether rclpy gives each message's writer GID (``MessageInfo.publisher_gid``)."""
    try:
        from rclpy.subscription import MessageInfo
    except ImportError:  # Humble: no MessageInfo
        return False
    return "publisher_gid" in getattr(MessageInfo, "__annotations__", {})


def gid_bytes(gid: Any) -> bytes:
    """A writer GID as rclpy gives it (a list of ints, bytes; Humble's 24 bytes padded with
    zeros, later 16) as bytes without the padding (a DDS GUID ends in its entity kind, never
    0), so the graph's and a message's compare equal."""
    return bytes(gid).rstrip(b"\0")


class StaticUnionPart:
    """The static union of ``node``: its subscriptions (on a node of their own), announcement,
    timer and the one ``/tf_static`` message (``tf_static``) it publishes; see the module
    docstring.

    The node calls ``publish`` with its own static set (each time it changes), ``republish``
    with its static republication timer, ``update`` after every settings change (and at
    start), and ``writers_changed`` when its global tree's publishers come or go.
    """

    def __init__(
        self,
        node: Node,
        pipeline: JointStatePipeline,
        tf_static: StaticTfPublisher,
        edges: Edges,
    ) -> None:
        self._node = node
        self._pipeline = pipeline
        self._tf_static = tf_static
        self._topic = tf_static.publisher.topic_name
        self._own: Publication | None = None
        self.union: StaticUnion | None = None
        self._debouncer = Debouncer()
        self._build = UnionPublication()
        #: The union's node, its subscriptions and announcement, and the node's timer.
        self._reader: Node | None = None
        self._subscription: Subscription[Any] | None = None
        self._announcements: Subscription[Any] | None = None
        self._announcer: Publisher[String] | None = None
        self._timer = RestartableTimer(node, edges.timer("static union", self._turn))
        #: When the current turn began, and when the graph was read last (steady ns).
        self._turn_ns = self._last_graph_ns = 0
        #: Other unions' writers: per announcing writer, the GIDs it announced, and its
        #: node's name (the graph's, last read).
        self._announced: dict[bytes, frozenset[bytes]] = {}
        self._announcers: dict[bytes, str] = {}
        #: The topic's writers by GID, their nodes' names (the graph's, last read), and
        #: the node's own among them.
        self._names: dict[bytes, str] = {}
        self._own_writers: frozenset[bytes] = frozenset()
        #: The union this part is a guest of (None: it hosts its own, or the union is off),
        #: and, hosting, its guests; the key it is hosted under.
        self._host: StaticUnionPart | None = None
        self._guests: list[StaticUnionPart] = []
        self._key = (id(node.context), self._topic)

    @staticmethod
    def check(settings: Settings) -> None:
        """ParameterRejected where ``settings`` ask for the union and rclpy cannot give it."""
        if settings.static_union and not union_supported():
            raise ParameterRejected(NO_PUBLISHER_GID)

    # -- the node's calls ---------------------------------------------------------------------

    @_serialized
    def update(self) -> None:
        """The union as the settings ask: started, stopped (the node's own statics alone
        latched again), or its cap changed."""
        settings = self._pipeline.settings
        running = self.union is not None or self._host is not None
        if settings.static_union and not running:
            host = _HOSTS.get(self._key)
            if host is not None and host._node.context is self._node.context:
                self._join(host)
            else:
                self._start(settings.static_union_max_frames)
        elif not settings.static_union and running:
            self._stop()
        elif self.union is not None and self.union.max_frames != settings.static_union_max_frames:
            if self.union.set_max_frames(settings.static_union_max_frames):
                self._changed()
            self._report()

    @_serialized
    def publish(self, own: Publication | None) -> None:
        """The node's own static set is ``own`` now: the complete set goes out at once (a
        guest's through its host; the union joined or started first where it is asked for,
        so a guest never latches its own set alone)."""
        self._own = own
        if self.union is None and self._host is None and self._pipeline.settings.static_union:
            self.update()
        if self._host is not None:
            self._host._members_changed()
            self._publish_global()
            return
        if self.union is not None and self.union.set_own(self._own_transforms()):
            self._report()
        self._send()

    @_serialized
    def republish(self) -> None:
        """The complete set again (``static_republish_period``): as it was, or anew where a
        change waits."""
        if self._host is not None:  # the host republishes the process's one set
            self._publish_global()
            return
        if self._debouncer.pending:
            self._send()
        else:
            self._tf_static.republish()

    @_serialized
    def writers_changed(self) -> None:
        """The node's own writers may have changed (its global tree came or went)."""
        if self._host is not None:
            self._host._read_graph()
        elif self.union is not None:
            self._read_graph()

    # -- on and off -------------------------------------------------------------------------

    def _start(self, max_frames: int, union: StaticUnion | None = None) -> None:
        """Host the union (``union``: one handed over, as it stands; else a new one)."""
        node = self._node
        self.union = union if union is not None else StaticUnion(max_frames)
        _HOSTS[self._key] = self
        self.union.set_own(self._own_transforms())
        self._reader = reader = unspun_node(node, UNION_NODE_SUFFIX)
        self._announcer = reader.create_publisher(String, UNION_WRITERS_TOPIC, latched_qos())
        self._read_graph()  # own writers known before their first message comes back
        self._announcements = reader.create_subscription(
            String, UNION_WRITERS_TOPIC, _ignored, union_writers_listener_qos(), raw=True
        )
        self._subscription = reader.create_subscription(
            TFMessage, self._topic, _ignored, tf_listener_static_qos(), raw=True
        )
        self._timer.restart(POLL_S)
        self._report()

    def _stop(self) -> None:
        self._leave()
        self._send()  # the own statics alone: nothing foreign stays latched

    def _leave(self) -> None:
        """Out of the union: a guest leaves its host; a host stops hosting and hands the
        union to its first guest."""
        self._pipeline.health.union = None
        host = self._host
        if host is not None:
            self._host = None
            host._guests.remove(self)
            host._members_changed()
            return
        self._timer.stop()
        if self._reader is not None:
            self._reader.destroy_node()  # its subscriptions and announcement go with it
        self._reader = self._subscription = self._announcements = self._announcer = None
        self._announced.clear()
        self._names, self._announcers, self._own_writers = {}, {}, frozenset()
        union, self.union = self.union, None
        self._debouncer = Debouncer()
        if _HOSTS.get(self._key) is self:
            del _HOSTS[self._key]
        guests, self._guests = self._guests, []
        if union is not None and guests and self._node.context.ok():  # not at shutdown
            heir = guests[0]
            heir._host = None
            heir._guests = guests[1:]
            for guest in heir._guests:
                guest._host = heir
            heir._start(heir._pipeline.settings.static_union_max_frames, union)
            heir._members_changed()

    def _join(self, host: StaticUnionPart) -> None:
        """A guest of ``host`` (see the module docstring)."""
        self._host = host
        host._guests.append(self)
        host._members_changed()

    def _members_changed(self) -> None:
        """Hosting: a member joined or left, or a guest's own set changed: the own frames
        and writers anew, the complete set out."""
        if self.union is not None and self.union.set_own(self._own_transforms()):
            self._report()
        self._read_graph()
        self._send()

    def _members(self) -> list[StaticUnionPart]:
        """The nodes' parts the union serves: this one first, then its guests."""
        return [self, *self._guests]

    def _own_transforms(self) -> dict[str, str]:
        """Every member's own transforms (child -> parent)."""
        own: dict[str, str] = {}
        for member in self._members():
            own.update(member._pipeline.own_transforms())
        return own

    def _own_set(self) -> Publication | None:
        """Every member's own static set, as one (this node's first: its global tree's
        layout is this node's own)."""
        sets = [member._own for member in self._members() if member._own is not None]
        if not self._guests or not sets:
            return self._own
        frames = tuple(frame for own in sets for frame in own.layout.frames)
        return Publication(
            TFMessageLayout(frames),
            sets[0].stamp_ns,
            np.vstack([own.poses for own in sets]),
            self._own.global_layout if self._own is not None else None,
            np.concatenate([own.stamps() for own in sets]),
        )

    def _publish_global(self) -> None:
        """A guest's global tree's statics, on its global tree's writer (its own writer
        stays silent: the host carries its set)."""
        publisher = self._tf_static.global_publisher
        tree = self._own.in_global_tree() if self._own is not None else None
        if publisher is not None and tree is not None:
            publisher.publish(tree.to_bytes() if self._tf_static.raw else to_message(tree))

    @_serialized
    def destroy(self) -> None:
        """The union's node goes (the node is destroyed); a host hands the union on."""
        if self._host is not None or self.union is not None:
            self._leave()
        if self._reader is not None:
            self._reader.destroy_node()
            self._reader = None

    # -- a turn -----------------------------------------------------------------------------

    @_serialized
    def _turn(self) -> None:
        """Messages taken in, the writers read (every ``GRAPH_PERIOD_S``), a change sent."""
        self._turn_ns = now_ns = time.monotonic_ns()
        if now_ns - self._last_graph_ns >= GRAPH_PERIOD_S * NS_PER_S:
            self._read_graph()
        for data, info in _taken(self._announcements):
            self._on_announcement(data, info)
        transforms = 0
        taken = False
        for data, info in _taken(self._subscription):
            taken = True
            transforms += self._on_message(data, info)
            if transforms >= MAX_TRANSFORMS_A_TURN:
                break  # the rest wait for the next turn (or the reader's history drops them)
        if taken and self.union is not None:
            self._warn_new_conflicts(self.union)
            self._report()  # once a turn, not after every message
        if self._debouncer.due():
            self._send()

    def _warn_new_conflicts(self, union: StaticUnion) -> None:
        """One WARN line for each new conflict, the first ``NAMES_SHOWN`` of a turn, then one
        for the rest (a publisher contending for 10,000 frames logged 10,000 lines, again
        each time it agreed and disagreed)."""
        new = union.new_conflicts()
        logger = self._node.get_logger()
        for conflict in new[:NAMES_SHOWN]:
            logger.warning(
                wording.union_conflict_log(
                    conflict.frame, conflict.kept.shown, conflict.refused.shown
                )
            )
        if len(new) > NAMES_SHOWN:
            logger.warning(wording.union_more_conflicts(len(new) - NAMES_SHOWN))

    def _on_message(self, data: bytes, info: Any) -> int:
        """One message of the topic taken in; how many transforms it had."""
        union = self.union
        if union is None:
            return 0
        message = decoded(self._pipeline, data, TFMessage)
        if message is None:
            return 0
        gid = gid_bytes(info["publisher_gid"]["data"])
        if gid not in self._names and self._last_graph_ns != self._turn_ns:
            self._read_graph()  # a new writer: its node's name for the report (once a turn)
        if union.receive(
            PublisherId(gid, self._names.get(gid, "")),
            [StaticTransform.of(t) for t in message.transforms],
        ):
            self._changed()
        return len(message.transforms)

    def _on_announcement(self, data: bytes, info: Any) -> None:
        union = self.union
        message = decoded(self._pipeline, data, String)
        if union is None or message is None:
            return
        announcer = gid_bytes(info["publisher_gid"]["data"])
        gids = set()
        for word in message.data.split(maxsplit=8)[:8]:  # not a list of every word sent
            try:
                gids.add(bytes.fromhex(word))
            except ValueError:
                continue
        self._announced.pop(announcer, None)  # the newest last
        self._announced[announcer] = frozenset(gids - self._own_writers)
        while sum(len(announced) for announced in self._announced.values()) > MAX_ANNOUNCED:
            del self._announced[next(iter(self._announced))]
        if announcer not in self._announcers and self._last_graph_ns != self._turn_ns:
            self._read_graph()  # a new announcer: its node (once a turn)
        if union.set_union_writers(self._vouched()):
            self._changed()
        self._report()

    def _vouched(self) -> set[bytes]:
        """The announced writers an announcement may name: ``/tf_static`` writers (in the
        graph) of the announcer's own DDS participant (their GIDs' GUID prefix), or of its
        own nodes (``<name>`` and its global tree's for the announcer ``<name>_static_union``:
        RMWs whose GIDs are no GUIDs). Anyone may publish an announcement: one naming another
        node's writer made it a copy, and a second publisher took that writer's frames
        without a conflict."""
        vouched: set[bytes] = set()
        for announcer, gids in self._announced.items():
            node = self._announcers.get(announcer, "")
            base = (
                node.removesuffix(UNION_NODE_SUFFIX) if node.endswith(UNION_NODE_SUFFIX) else None
            )
            family = {base, base + GLOBAL_TREE_NODE_SUFFIX} if base else set()
            prefix = announcer[:GUID_PREFIX_BYTES]
            for gid in gids:
                name = self._names.get(gid)
                if name is not None and (gid[:GUID_PREFIX_BYTES] == prefix or name in family):
                    vouched.add(gid)
        return vouched

    def _read_graph(self) -> None:
        """The writers of the topic now: their node names, the node's own, and those that
        left; the announcement of the node's own."""
        union = self.union
        if union is None:
            return
        self._last_graph_ns = self._turn_ns
        node = self._node
        own_nodes = set()
        for member in self._members():
            name = member._node.get_fully_qualified_name()
            own_nodes |= {name, name + GLOBAL_TREE_NODE_SUFFIX}
        names: dict[bytes, str] = {}
        for endpoint in node.get_publishers_info_by_topic(self._topic):
            namespace = endpoint.node_namespace.rstrip("/")
            names[gid_bytes(endpoint.endpoint_gid)] = f"{namespace}/{endpoint.node_name}"
        self._names = names
        announcers = {
            gid_bytes(e.endpoint_gid): f"{e.node_namespace.rstrip('/')}/{e.node_name}"
            for e in node.get_publishers_info_by_topic(UNION_WRITERS_TOPIC)
        }
        for gone in [a for a in self._announced if a in self._announcers and a not in announcers]:
            del self._announced[gone]  # its node turned the union off (or left): no union now
        self._announcers = announcers
        own = frozenset(gid for gid, name in names.items() if name in own_nodes)
        changed = False
        if own != self._own_writers:
            self._own_writers = own
            changed |= union.set_own_writers(own)
            if self._announcer is not None:
                # the writer of the union's message only: its global tree's (and a fleet's
                # guests' own) carry the node's own frames, which other unions must take as
                # their owner's, not as copies that yield silently to any publisher (and a
                # reader takes 8 GIDs: a fleet's carrier got lost among its robots' writers)
                carrier = node.get_fully_qualified_name()
                carriers = sorted(gid.hex() for gid in own if names[gid] == carrier)
                self._announcer.publish(String(data=" ".join(carriers)))
        union.set_names(names)
        for gid in union.writers() - names.keys():
            changed |= union.publisher_left(gid)
        changed |= union.set_union_writers(self._vouched())  # the graph vouches anew
        if changed:
            self._changed()
        self._report()

    # -- sending ----------------------------------------------------------------------------

    def _changed(self) -> None:
        """The union changed: sent now, or at the turn the debouncer lets it."""
        self._debouncer.changed()
        if self._debouncer.due():
            self._send()

    def _send(self) -> None:
        """The complete set on ``/tf_static`` now (the own set alone without the union)."""
        union = self.union
        foreign = union.transforms() if union is not None else []
        publication = self._build.build(self._own_set(), foreign)
        if publication is None and self._tf_static.current is not None:
            # no model yet (description_from_topic) and the union sent foreign frames: an
            # empty set replaces them, else they stayed latched with the union off
            publication = Publication(TFMessageLayout(()), 0, np.empty((0, 7)))
        if publication is not None:
            self._tf_static.replace(publication)
        self._debouncer.sent()

    def _report(self) -> None:
        if self.union is not None:
            facts = self.union.facts()
            for member in self._members():
                member._pipeline.health.union = facts


def _ignored(_message: Any) -> None:
    """The union's subscriptions' callback: no executor spins their node (``_taken``)."""


def _taken(subscription: Subscription[Any] | None) -> Iterator[tuple[bytes, Any]]:
    """The messages waiting on ``subscription`` (serialized, with their info), each taken
    when the caller asks for it, at most ``MAX_TAKEN``."""
    if subscription is None:
        return
    for _ in range(MAX_TAKEN):
        message: Any = subscription.handle.take_message(subscription.msg_type, True)
        if message is None:
            return
        yield message
