"""The ROS side of ``joint-tf-publisher doctor``: listen to a running system for a few seconds
and return what was heard as plain data (``Heard``), which the command turns into the
rclpy-free analysis's ``Observation`` (``cli.doctor``).

Listens to /tf (with each message's publisher, from rclpy's ``MessageInfo`` and the graph),
/tf_static, /clock, /diagnostics, the joint states and, when no description is given, the
``robot_description`` topic; then asks the graph who publishes /tf, /tf_static, /clock and
the joint states, and the nodes involved for their ``use_sim_time`` (and the state
publisher's ``robot_description``, ``frame_prefix`` and ``exclude_joints``) over their
parameter services. A node the graph shows without a ``get_parameters`` service (made with
``start_parameter_services=False``, as the node's global-tree publisher ``<name>_global_tf``)
is not asked: it would be waited for ``PARAMETER_TIMEOUT_S`` in vain.

Discovery: the listening window (``--seconds``) starts once the doctor's /tf reader has
matched the /tf publishers the graph shows, at least one (and its joint-state reader those
of the joint states), or after ``DISCOVERY_TIMEOUT_S``: a window that opened before
discovery had matched the running system's writers heard part of it, or nothing. A publisher
whose message was heard exists, whatever the graph says yet: before asking the graph, the
doctor waits (up to ``DISCOVERY_TIMEOUT_S``) until it names every publisher heard, and a
joint-state publisher heard counts as one of the topic's publishers (by the name the graph
gives its gid). ros2cli's commands instead spin a fixed time (``--spin-time``, 0.5 s) or use
the daemon's graph; waiting for what discovery and the messages show is what keeps the
report from saying "no /tf" or "nothing publishes joint_states" about a system discovered a
moment late.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.srv import GetParameters
from rclpy.node import Node
from rclpy.parameter import parameter_value_to_python
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from ...node_core.tf_outputs import TF_STATIC_TOPIC, TF_TOPIC
from ...ros.demo_source import DemoSession
from ...ros.qos import (
    clock_qos,
    diagnostics_listener_qos,
    joint_states_qos,
    latched_qos,
    tf_listener_static_qos,
    tf_qos,
)
from ...stamps import stamp_to_ns

#: Longest a parameter request to one node may take, seconds (all are sent together).
PARAMETER_TIMEOUT_S = 3.0
#: The type of the parameter service the doctor asks (``<node>/get_parameters``).
PARAMETER_SERVICE_TYPE = "rcl_interfaces/srv/GetParameters"
#: The parameters the doctor reads of every node that publishes what it heard (absent ones
#: are skipped): its clock, and whether it runs the union of the graph's statics.
EVERY_NODE_PARAMETERS = ("use_sim_time", "static_union")
#: The state publisher's parameters the doctor reads (absent ones are skipped).
STATE_PUBLISHER_PARAMETERS = ("robot_description", "frame_prefix", "exclude_joints")
#: Longest the doctor waits for discovery, seconds: before listening, for its readers to match
#: the publishers the graph shows; after, for the graph to name every publisher heard.
DISCOVERY_TIMEOUT_S = 3.0

#: (parent, child, static, publisher) of a transform heard; the publisher is the node's fully
#: qualified name, or a gid in hex while listening ("" once unknown to the graph).
TransformKey = tuple[str, str, bool, str]
#: name, level, message, hardware_id, (key, value) pairs of a diagnostic status.
StatusRecord = tuple[str, int, str, str, tuple[tuple[str, str], ...]]


@dataclass
class Heard:
    """What the listening heard. ``transforms``: newest stamp (ns) and count by
    ``TransformKey``; ``statuses``: the newest diagnostic status of each name;
    ``clock_ns``: the newest /clock time; ``description``: the robot_description topic's
    text; ``now_ns``: the wall clock when listening ended; the graph's publishers and the
    nodes whose use_sim_time is true; ``joint_state_gids``: the publishers (gid, hex) of the
    joint states heard on ``joint_state_topic``; ``setup``: the state publisher's parameters;
    ``silent_node``: the node named on the command line when it did not answer;
    ``unasked_nodes``: the nodes not asked, the graph showing them without a parameter
    service; ``union_nodes``: the nodes whose ``static_union`` is true."""

    transforms: dict[TransformKey, tuple[int, int]] = field(default_factory=dict)
    statuses: dict[str, StatusRecord] = field(default_factory=dict)
    clock_ns: int | None = None
    description: str | None = None
    listened_s: float = 0.0
    now_ns: int = 0
    clock_publishers: list[str] = field(default_factory=list)
    joint_state_topic: str = "/joint_states"
    joint_state_publishers: list[str] = field(default_factory=list)
    joint_state_gids: set[str] = field(default_factory=set)
    sim_time_nodes: list[str] = field(default_factory=list)
    setup: NodeSetup | None = None
    silent_node: str | None = None
    unasked_nodes: list[str] = field(default_factory=list)
    union_nodes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DoctorTarget:
    """What the command line says to examine: the state publisher's node (fully qualified,
    or None: the publisher of the robot_description topic), and whether a description was
    given (then the topic is not read)."""

    node: str | None = None
    description_given: bool = False


@dataclass(frozen=True)
class NodeSetup:
    """What the state publisher's node says of itself (its parameters)."""

    node: str
    description: str | None
    frame_prefix: str
    excluded_joints: tuple[str, ...]


def gid_text(gid: Any) -> str:
    """A publisher's gid (bytes from MessageInfo, ints from the graph) as hex text."""
    return bytes(gid).hex()


def stamp_ns(stamp: Any) -> int:
    return stamp_to_ns(int(stamp.sec), int(stamp.nanosec))


class Listener:
    """The subscriptions of the listening, filling a ``Heard``."""

    def __init__(self, node: Node, read_description: bool, joint_state_topic: str) -> None:
        self.heard = Heard(joint_state_topic=joint_state_topic)
        self.node = node
        self.subscriptions: list[Any] = []
        subscribe = node.create_subscription
        self.tf_reader = subscribe(TFMessage, TF_TOPIC, self._on_tf, tf_qos())
        self.joint_state_reader = subscribe(
            JointState, joint_state_topic, self._on_joint_state, joint_states_qos()
        )
        self.subscriptions += [
            self.tf_reader,
            self.joint_state_reader,
            subscribe(TFMessage, TF_STATIC_TOPIC, self._on_tf_static, tf_listener_static_qos()),
            subscribe(Clock, "/clock", self._on_clock, clock_qos()),
            subscribe(
                DiagnosticArray, "/diagnostics", self._on_diagnostics, diagnostics_listener_qos()
            ),
        ]
        if read_description:
            self.subscriptions.append(
                subscribe(String, "/robot_description", self._on_description, latched_qos())
            )

    def matched(self) -> bool:
        """True once the /tf reader has matched a publisher and as many as the graph shows,
        and the joint-state reader as many as the graph shows on its topic: discovery with
        the running system has come this far (the listening window starts then)."""
        node, tf_count = self.node, self.tf_reader.get_publisher_count()
        joint_state_count = self.joint_state_reader.get_publisher_count()
        return tf_count >= max(1, node.count_publishers(TF_TOPIC)) and (
            joint_state_count >= node.count_publishers(self.heard.joint_state_topic)
        )

    def stop(self) -> Heard:
        """End the listening (the graph and parameter queries that follow spin the node
        again); what was heard."""
        for subscription in self.subscriptions:
            self.node.destroy_subscription(subscription)
        self.subscriptions.clear()
        return self.heard

    def _store(self, message: Any, static: bool, publisher: str) -> None:
        for stamped in message.transforms:
            key = (stamped.header.frame_id, stamped.child_frame_id, static, publisher)
            newest_ns, count = self.heard.transforms.get(key, (0, 0))
            self.heard.transforms[key] = (max(newest_ns, stamp_ns(stamped.header.stamp)), count + 1)

    def _on_tf(self, message: Any, info: Any) -> None:
        self._store(message, False, publisher_of(info))

    def _on_tf_static(self, message: Any, info: Any) -> None:
        self._store(message, True, publisher_of(info))

    def _on_joint_state(self, message: Any, info: Any) -> None:
        gid = publisher_of(info)
        if gid != UNKNOWN_PUBLISHER:
            self.heard.joint_state_gids.add(gid)

    def _on_clock(self, message: Any) -> None:
        self.heard.clock_ns = stamp_ns(message.clock)

    def _on_diagnostics(self, message: Any) -> None:
        for status in message.status:
            level = status.level  # a byte: bytes of length 1 in rclpy, or an int
            self.heard.statuses[status.name] = (
                status.name,
                int.from_bytes(level, "little") if isinstance(level, bytes) else int(level),
                status.message,
                status.hardware_id,
                tuple((pair.key, pair.value) for pair in status.values),
            )

    def _on_description(self, message: Any) -> None:
        self.heard.description = message.data


#: The publisher of a message whose info does not tell it: Jazzy's rclpy (7.1) gives a
#: subscription callback the message's timestamps and sequence numbers but no publisher gid
#: (``MessageInfo.publisher_gid`` came with rclpy 8).
UNKNOWN_PUBLISHER = ""


def publisher_of(info: Any) -> str:
    """The publisher gid (hex text) of a message from its message info, or
    ``UNKNOWN_PUBLISHER`` where the rclpy in use does not tell it."""
    gid = info.get("publisher_gid")
    return gid_text(gid["data"]) if gid else UNKNOWN_PUBLISHER


def by_publisher_name(
    transforms: dict[TransformKey, tuple[int, int]], names: dict[str, str]
) -> dict[TransformKey, tuple[int, int]]:
    """``transforms`` keyed by publisher gid rekeyed by the publishing node's name (``names``:
    gid -> name; "" for a gid the graph no longer knows), the entries of one node's several
    publishers merged (newest stamp, summed counts)."""
    merged: dict[TransformKey, tuple[int, int]] = {}
    for (parent, child, static, gid), (newest_ns, count) in transforms.items():
        key = (parent, child, static, names.get(gid, ""))
        before_ns, before_count = merged.get(key, (0, 0))
        merged[key] = (max(before_ns, newest_ns), before_count + count)
    return merged


def full_name(namespace: str, name: str) -> str:
    return f"{namespace.rstrip('/')}/{name}"


def publishers_by_gid(node: Node, topic: str) -> dict[str, str]:
    """gid (hex) -> fully qualified name of the nodes publishing ``topic``."""
    return {
        gid_text(info.endpoint_gid): full_name(info.node_namespace, info.node_name)
        for info in node.get_publishers_info_by_topic(topic)
    }


def await_publishers(session: DemoSession, topics: dict[str, set[str]]) -> dict[str, str]:
    """gid (hex) -> name of the publishers of ``topics`` (topic -> gids heard on it), once
    the graph names every gid heard or ``DISCOVERY_TIMEOUT_S`` has passed (a gid still
    unnamed then is left out)."""
    names: dict[str, str] = {}

    def all_named() -> bool:
        names.clear()
        for topic in topics:
            names.update(publishers_by_gid(session.node, topic))
        return all(gid in names for gids in topics.values() for gid in gids)

    if not all_named():
        session.spin(all_named, DISCOVERY_TIMEOUT_S)
    return names


def publisher_nodes(node: Node, topic: str) -> list[str]:
    """Fully qualified names of the nodes publishing ``topic`` (sorted, each once)."""
    return sorted(set(publishers_by_gid(node, topic).values()))


def without_parameter_service(node: Node, names: Iterable[str]) -> list[str]:
    """The nodes of ``names`` (fully qualified) that the graph shows without a
    ``<node>/get_parameters`` service (sorted). A node the graph does not show is not among
    them: it may be discovered late, so it is asked."""
    shown = {full_name(namespace, name) for name, namespace in node.get_node_names_and_namespaces()}
    without = []
    for name in sorted(set(names) & shown):
        namespace, _, base = name.rpartition("/")
        services = node.get_service_names_and_types_by_node(base, namespace or "/")
        if not any(
            service == f"{name}/get_parameters" and PARAMETER_SERVICE_TYPE in types
            for service, types in services
        ):
            without.append(name)
    return without


def ask_parameters(
    session: DemoSession, requests: dict[str, Sequence[str]]
) -> dict[str, dict[str, Any]]:
    """node -> {parameter: value} by each node's GetParameters service, the requests sent
    together; a node that does not answer within ``PARAMETER_TIMEOUT_S`` (or has no such
    service) is left out, and unset parameters are left out of its values."""
    node = session.node
    pending: dict[str, tuple[Any, Any, Sequence[str]]] = {}
    deadline = time.monotonic() + PARAMETER_TIMEOUT_S
    for target, names in requests.items():
        client: Any = node.create_client(GetParameters, f"{target}/get_parameters")
        pending[target] = (client, None, names)
    answers: dict[str, dict[str, Any]] = {}

    def done() -> bool:
        for target, (client, future, names) in list(pending.items()):
            if future is None and client.service_is_ready():
                future = client.call_async(GetParameters.Request(names=list(names)))
                pending[target] = (client, future, names)
            if future is not None and future.done():
                values = future.result().values
                answers[target] = {
                    name: parameter_value_to_python(value)
                    for name, value in zip(names, values, strict=False)
                    if value.type != 0  # PARAMETER_NOT_SET
                }
                node.destroy_client(client)
                del pending[target]
        return not pending

    session.spin(lambda: done() or time.monotonic() > deadline)
    for client, _, _ in pending.values():
        node.destroy_client(client)
    return answers


def state_publisher(session: DemoSession, target: DoctorTarget) -> str | None:
    """The node to ask for the description: the one named, else the only publisher of the
    robot_description topic (None when there is none or several)."""
    if target.node is not None:
        return target.node
    publishers = publisher_nodes(session.node, "/robot_description")
    return publishers[0] if len(publishers) == 1 else None


def joint_state_topic(state_publisher: str | None) -> str:
    """The joint-state topic of a state publisher (fully qualified node name; None: the
    root namespace's): ``joint_states`` in its namespace."""
    namespace = state_publisher.rsplit("/", 1)[0] if state_publisher else ""
    return f"{namespace}/joint_states"


def listen(seconds: float, target: DoctorTarget, ros_args: Sequence[str] = ()) -> Heard:
    """Wait for discovery (``Listener.matched``, up to ``DISCOVERY_TIMEOUT_S``), listen
    ``seconds`` more, then ask the graph and the nodes involved; what was heard."""
    with DemoSession("joint_tf_publisher_doctor", ros_args) as session:
        listener = Listener(
            session.node,
            read_description=not target.description_given,
            joint_state_topic=joint_state_topic(target.node),
        )
        started = time.monotonic()
        session.spin(listener.matched, DISCOVERY_TIMEOUT_S)
        session.spin(lambda: False, seconds)
        heard = listener.stop()
        heard.listened_s = time.monotonic() - started
        heard.now_ns = time.time_ns()
        node = session.node
        tf_gids = {gid for (_, _, _, gid) in heard.transforms}
        names = await_publishers(
            session,
            {
                TF_TOPIC: tf_gids,
                TF_STATIC_TOPIC: set(),
                heard.joint_state_topic: heard.joint_state_gids,
            },
        )
        heard.transforms = by_publisher_name(heard.transforms, names)
        gids = publishers_by_gid(node, TF_TOPIC) | publishers_by_gid(node, TF_STATIC_TOPIC)
        publisher = state_publisher(session, target)
        topic = joint_state_topic(publisher)
        heard_on_topic = (
            {names[gid] for gid in heard.joint_state_gids if gid in names}
            if topic == heard.joint_state_topic
            else set()
        )
        heard.joint_state_topic = topic
        heard.joint_state_publishers = sorted(heard_on_topic | set(publisher_nodes(node, topic)))
        heard.clock_publishers = publisher_nodes(node, "/clock")
        requests: dict[str, Sequence[str]] = {
            name: EVERY_NODE_PARAMETERS for name in {*gids.values(), *heard.joint_state_publishers}
        }
        if publisher is not None:
            requests[publisher] = (*EVERY_NODE_PARAMETERS, *STATE_PUBLISHER_PARAMETERS)
        heard.unasked_nodes = without_parameter_service(node, requests)
        for name in heard.unasked_nodes:
            del requests[name]
        answers = ask_parameters(session, requests)
    heard.sim_time_nodes = sorted(name for name, got in answers.items() if got.get("use_sim_time"))
    heard.union_nodes = sorted(name for name, got in answers.items() if got.get("static_union"))
    if target.node is not None and target.node not in answers:
        heard.silent_node = target.node
    if publisher is not None and publisher in answers:
        values = answers[publisher]
        heard.setup = NodeSetup(
            node=publisher,
            description=values.get("robot_description") or heard.description,
            frame_prefix=str(values.get("frame_prefix", "")),
            excluded_joints=tuple(values.get("exclude_joints") or ()),
        )
    return heard
