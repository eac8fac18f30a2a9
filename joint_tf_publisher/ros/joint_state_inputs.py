"""The node's joint-state inputs: its ``joint_states`` subscription, the ``source_list``
topics', ``multi_dof_joint_states``, the default positions timer and the clock jump callback,
each handing the pipeline's intake what it got; and ``loop_joint_states``, the solved passive
joints sent for each JointState read (``publish_loop_joint_states``).

The subscriptions take serialized bytes (``take_joint_state``, ``take_multi_dof_joint_state``;
the RMW decodes only the few JointStates the pipeline's reader does not read), with
sensor-data QoS and a deeper queue (``qos``); the answers go out through the TF outputs
(``tf_outputs``). It may import rclpy, ``stamps``, ``node_core`` (the policy) and the
adapter's ``part_host``, ``edges``, ``qos``, ``timers``, ``diagnostics`` (the report names
each topic's publishers), ``remote_tf`` (the ``loop_joint_states`` name, which the remote
output refuses too) and ``tf_outputs``; ``node`` composes it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rclpy.clock import JumpThreshold, TimeJump
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos_overriding_options import QoSOverridingOptions
from rclpy.subscription import Subscription
from sensor_msgs.msg import JointState, MultiDOFJointState

from ..node_core.cdr import JointStateData, Publication, UndecodableMessage
from ..node_core.joint_sources import FIRST_LISTED_SOURCE, JOINT_STATES_SOURCE
from ..node_core.parameters import ParameterRejected, Settings
from ..stamps import ns_to_stamp, stamp_to_ns
from .diagnostics import DiagnosticsPublisher
from .edges import decoded
from .part_host import PartHost
from .qos import joint_states_publisher_qos, joint_states_qos
from .remote_tf import LOOP_JOINT_STATES
from .tf_outputs import TfOutputs
from .timers import RestartableTimer


def check_source_topics(node: Node, topics: tuple[str, ...], loop_states: bool) -> None:
    """ParameterRejected unless each of ``topics`` (a ``source_list``) is a valid topic name
    for ``node`` that is not ``joint_states`` (subscribed to already) nor, where
    ``loop_states`` (``publish_loop_joint_states``), ``loop_joint_states``: read back, the
    solved passive joints would be given ones, and the loops would no longer be solved."""
    main = node.resolve_topic_name("joint_states")
    own = node.resolve_topic_name(LOOP_JOINT_STATES) if loop_states else None
    for topic in topics:
        try:
            resolved = node.resolve_topic_name(topic)
        except Exception as err:  # rclpy raises several types for an invalid name
            reason = str(err).split(", at ", 1)[0]  # not the C source line
            msg = f"source_list: invalid topic name {topic!r}: {reason}"
            raise ParameterRejected(msg) from None
        if resolved == main:
            raise ParameterRejected(
                f"source_list: {topic!r} is {main}, which the node reads already"
            )
        if resolved == own:
            raise ParameterRejected(
                f"source_list: {topic!r} is {own}, where the node publishes the solved "
                "passive joints of its loops (publish_loop_joint_states): read back, they "
                "would be given, no longer solved"
            )


class JointStateInputs:
    """The joint-state inputs of ``host``'s node under ``settings`` (the start's): the
    pipeline takes what they get, ``outputs`` sends its answers, ``diagnostics`` learns the
    topics' source numbers. The default positions timer runs once ``restart_default_timer``
    is called."""

    def __init__(
        self,
        host: PartHost,
        outputs: TfOutputs,
        diagnostics: DiagnosticsPublisher,
        settings: Settings,
    ) -> None:
        node, pipeline, edges = host.node, host.pipeline, host.edges
        self._node, self._pipeline, self._edges, self._now_ns = node, pipeline, edges, host.now_ns
        self._outputs = outputs
        self._diagnostics = diagnostics
        #: The few JointStates the pipeline's reader does not read: the RMW deserializes them.
        pipeline.decode_joint_state = self._decode_joint_state
        #: ``loop_joint_states`` (``publish_loop_joint_states``): the solved passive joints.
        self.loop_states = (
            node.create_publisher(JointState, LOOP_JOINT_STATES, joint_states_publisher_qos())
            if settings.publish_loop_joint_states
            else None
        )
        self._joint_states = self._subscribe("joint_states", JOINT_STATES_SOURCE)
        #: The source_list topics as given, with their subscriptions and source numbers.
        self._sources: dict[str, Subscription[Any]] = {}
        self._source_numbers: dict[str, int] = {}
        self._next_source = FIRST_LISTED_SOURCE
        self.subscribe_sources(settings.source_list)
        self._multi_dof = node.create_subscription(
            MultiDOFJointState,
            "multi_dof_joint_states",
            edges.callback("multi_dof_joint_states", self._on_multi_dof_bytes),
            joint_states_qos(),
            qos_overriding_options=QoSOverridingOptions.with_default_policies(),
            raw=True,  # decoded in the callback: bytes the RMW cannot decode are counted
        )
        # Simulation reset or bag loop: the node clock jumps back, the limiter starts afresh.
        self._jump_handle = node.get_clock().create_jump_callback(
            JumpThreshold(min_forward=None, min_backward=Duration(nanoseconds=-1)),
            post_callback=edges.callback("clock jump", self._on_clock_jump),
        )
        self._default_timer = RestartableTimer(
            node, edges.timer("default positions", self._publish_default_positions), steady=False
        )

    def restart_default_timer(self) -> None:
        """Publish the default positions at ``publish_frequency`` (Hz of the node clock) while
        ``publish_default_positions`` asks for them."""
        settings = self._pipeline.settings
        on = settings.publish_default_positions
        self._default_timer.restart(1.0 / settings.publish_frequency if on else 0.0)

    def subscribe_sources(self, topics: tuple[str, ...]) -> None:
        """Subscribe to exactly ``topics`` (the ``source_list``): new ones added, dropped ones
        destroyed, kept ones left as they are."""
        node = self._node
        for topic in [topic for topic in self._sources if topic not in topics]:
            node.destroy_subscription(self._sources.pop(topic))
            del self._source_numbers[topic]
            self._diagnostics.forget(topic)
        for topic in topics:
            if topic not in self._sources:
                self._sources[topic] = self._subscribe(topic, self._next_source)
                self._source_numbers[topic] = self._next_source
                self._diagnostics.topics[self._next_source] = topic
                self._next_source += 1
                node.get_logger().info(
                    f"reading joint states from {node.resolve_topic_name(topic)} too"
                )
        self._pipeline.number_sources(self._source_numbers)

    def _subscribe(self, topic: str, source: int) -> Subscription[Any]:
        """A JointState subscription to ``topic`` (relative to the namespace), its bytes
        handed to the pipeline's intake (``take_joint_state``) as from topic number
        ``source`` (``joint_sources``): serialized TFMessage bytes (the short way) are sent
        as they are, a ``Publication`` by ``_published``."""
        take, health = self._pipeline.take_joint_state, self._pipeline.health
        tf, edges, published = self._outputs.tf, self._edges, self._published

        def on_message(data: bytes) -> None:
            try:  # the edge (``edges``), inline: a try costs nothing until it catches
                message = take(data, source)
                if isinstance(message, bytes):
                    if message:
                        tf.publisher.publish(message)
                        health.published += 1
                else:
                    published(message)
            except Exception as error:
                edges.failed(topic, error)

        return self._node.create_subscription(
            JointState,
            topic,
            on_message,
            joint_states_qos(),
            qos_overriding_options=QoSOverridingOptions.with_default_policies(),
            raw=True,
        )

    def _decode_joint_state(self, data: bytes) -> JointStateData | None:
        """A JointState the pipeline's reader does not read (not CDR little endian), as the
        RMW deserializes it; None (counted) for bytes it cannot decode."""
        msg = decoded(self._pipeline, data, JointState)
        if msg is None:
            return None
        stamp = msg.header.stamp
        return JointStateData(
            stamp_to_ns(stamp.sec, stamp.nanosec),
            tuple(msg.name),
            np.asarray(msg.position, dtype=np.float64),
        )

    def _published(self, publication: Publication | None) -> None:
        """A JointState's answer from the pipeline's general way: published, then the solved
        passive joints (``publish_loop_joint_states``) for the JointState read."""
        self._outputs.publish(publication)
        stamp_ns = self._pipeline.read_stamp_ns
        if self.loop_states is not None and stamp_ns is not None:
            self._publish_loop_states(stamp_ns)

    def _publish_loop_states(self, stamp_ns: int) -> None:
        """The solved passive joints on ``loop_joint_states``, stamped as the JointState
        they were solved for (or now, for a zero stamp)."""
        solved = self._pipeline.loop_joint_state()
        if solved is None or self.loop_states is None:
            return
        message = JointState()
        message.header.stamp.sec, message.header.stamp.nanosec = ns_to_stamp(
            stamp_ns or self._now_ns()
        )
        message.name, message.position = solved
        self.loop_states.publish(message)

    def _on_multi_dof_bytes(self, data: bytes) -> None:
        try:
            publication = self._pipeline.take_multi_dof_joint_state(data)
        except UndecodableMessage:
            self._pipeline.undecodable("sensor_msgs/MultiDOFJointState")
            return
        self._outputs.publish(publication)

    def _publish_default_positions(self) -> None:
        self._outputs.publish(self._pipeline.default_positions())

    def _on_clock_jump(self, jump: TimeJump) -> None:
        self._pipeline.reset_limiter("the node clock jumped backwards")
