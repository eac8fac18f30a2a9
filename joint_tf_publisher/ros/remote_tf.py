"""The remote output's ROS side: its two publishers and its timer, around
``node_core.remote_output.RemoteOutput`` (the policy: which frames, the cap, what a change asks).

The node calls ``check`` on a change of the remote parameters (and at start), ``update`` after
every model or settings change, and ``republish_statics`` with its static republication timer.
A new ``remote.topic``'s publishers are made by ``check``, before the change is accepted, and
the old ones dropped by ``update`` only once the new ones exist: a topic the middleware refuses
(in this process, a topic of another type: the node's own ``joint_states``, or another robot's
topic in the fleet) is refused with a plain reason, and the output stays on its old topic.
The timer runs on the steady clock at ``remote.rate`` (a paused simulation does not stop it;
the cap is about the link), and each tick sends what ``RemoteOutput.tick`` gives.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rclpy.node import Node

from ..node_core.parameters import ParameterRejected, Settings
from ..node_core.pipeline import JointStatePipeline, LoadedModel
from ..node_core.remote_output import RemoteOutput, check_choice, remote_on, static_topic
from ..node_core.tf_outputs import GLOBAL_TF_STATIC_TOPIC, GLOBAL_TF_TOPIC, TfTopics
from .tf_publishers import RemoteTfPublisher
from .timers import RestartableTimer

#: The topic of the solved passive joints (``publish_loop_joint_states``), relative.
LOOP_JOINT_STATES = "loop_joint_states"
#: The type the remote output publishes, as the graph names it.
TF_MESSAGE_TYPE = "tf2_msgs/msg/TFMessage"
JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"
#: The node's own topics of other types (``node``'s subscriptions and publishers, rclpy's),
#: by name as the node gives it: the remote output cannot publish TFMessages there.
NODE_TOPICS = {
    "joint_states": JOINT_STATE_TYPE,
    "multi_dof_joint_states": "sensor_msgs/msg/MultiDOFJointState",
    "robot_description": "std_msgs/msg/String",
    "/diagnostics": "diagnostic_msgs/msg/DiagnosticArray",
    "/rosout": "rcl_interfaces/msg/Log",
    "/parameter_events": "rcl_interfaces/msg/ParameterEvent",
}


def _other_type(topic: str, resolved: str, kind: str) -> str:
    """The refusal of remote topic ``topic`` (``resolved``), a topic of type ``kind``."""
    return (
        f"remote.topic: {topic!r} is {resolved}, a topic of type {kind} in this process; "
        f"the remote output publishes {TF_MESSAGE_TYPE}: give it a topic of its own"
    )


class RemoteTf:
    """The remote output of ``node``, whose pipeline is ``pipeline`` and whose own tf topics
    resolve to ``own_topics``; ``now_ns`` reads the node clock (the statics' stamp);
    ``guard`` (a name, a callback) gives the timer's callback as the node guards its
    callbacks (``edges.Edges.timer``)."""

    def __init__(
        self,
        node: Node,
        pipeline: JointStatePipeline,
        own_topics: TfTopics,
        now_ns: Callable[[], int],
        guard: Callable[[str, Callable[[], None]], Callable[[], None]] | None = None,
    ) -> None:
        self._node = node
        self._pipeline = pipeline
        self._own_topics = own_topics
        self._now_ns = now_ns
        self.output = RemoteOutput(pipeline)
        self.publisher: RemoteTfPublisher | None = None
        #: The topic ``publisher`` publishes on (as the parameter gives it).
        self._topic: str | None = None
        #: Publishers ``check`` made for a new topic, used by the next ``update`` (topic, them).
        self._prepared: tuple[str, RemoteTfPublisher] | None = None
        tick = self._tick if guard is None else guard("remote", self._tick)
        self._timer = RestartableTimer(node, tick)

    def check(self, settings: Settings, model: LoadedModel | None) -> None:
        """ParameterRejected where the remote output of ``settings`` cannot be: a chosen
        frame ``model`` cannot give (``check_choice``; None: not checked), a topic that is no
        topic name, or one on which the node publishes its whole tree."""
        if not remote_on(settings):
            return
        if model is not None:
            check_choice(model, settings)
        own = self._own_topics
        taken = {own.tf, own.tf_static, GLOBAL_TF_TOPIC, GLOBAL_TF_STATIC_TOPIC}
        for topic in (settings.remote_topic, static_topic(settings.remote_topic)):
            try:
                resolved = self._node.resolve_topic_name(topic)
            except Exception as err:  # rclpy raises several types for an invalid name
                reason = str(err).split(", at ", 1)[0]  # not the C source line
                msg = f"remote.topic: invalid topic name {topic!r}: {reason}"
                raise ParameterRejected(msg) from None
            if resolved in taken:
                raise ParameterRejected(
                    f"remote.topic: {topic!r} is {resolved}, where the node publishes its "
                    "whole tree: give the remote output a topic of its own"
                )
            kind = self._own_other_types(settings).get(resolved)
            if kind is not None:
                raise ParameterRejected(_other_type(topic, resolved, kind))
        self._prepare(settings.remote_topic)

    def _own_other_types(self, settings: Settings) -> dict[str, str]:
        """The node's own topics of other types than TFMessage, resolved, with their type
        (a publisher of the remote output there would clash with them in this process)."""
        named = {**NODE_TOPICS, **{topic: JOINT_STATE_TYPE for topic in settings.source_list}}
        return {self._node.resolve_topic_name(name): kind for name, kind in named.items()}

    def _prepare(self, topic: str) -> None:
        """The publishers of ``topic`` made now, unless the output has them already;
        ParameterRejected with a plain reason where the middleware refuses them."""
        if topic == self._topic or (self._prepared is not None and self._prepared[0] == topic):
            return
        self._drop_prepared()
        try:
            made = RemoteTfPublisher(self._node, topic, static_topic(topic))
        except Exception as err:  # rclpy's RCLError, with the C source lines
            raise ParameterRejected(self._refusal(topic, err)) from None
        self._prepared = (topic, made)

    def _refusal(self, topic: str, err: Exception) -> str:
        """Why the middleware refused a TFMessage publisher on ``topic`` (or its statics
        twin), in words: the other type the process has on it, if the graph shows one."""
        types = dict(self._node.get_topic_names_and_types())
        for name in (topic, static_topic(topic)):
            resolved = self._node.resolve_topic_name(name)
            others = [kind for kind in types.get(resolved, []) if kind != TF_MESSAGE_TYPE]
            if others:
                return _other_type(name, resolved, ", ".join(others))
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        reason = first.split(", at ", 1)[0]  # not the C source lines
        return f"remote.topic: cannot publish on {topic!r}: {reason}"

    def _drop_prepared(self) -> None:
        if self._prepared is not None:
            self._prepared[1].destroy()
            self._prepared = None

    def update(self) -> None:
        """The remote output for the pipeline's current model and settings: its publishers
        opened, moved or closed, its timer restarted, its static set published."""
        change = self.output.configure()
        node = self._node
        if change.reopen:
            new = None
            if change.topic is not None:  # made before the old ones go (``check`` made it)
                prepared = self._prepared
                if prepared is not None and prepared[0] == change.topic:
                    new, self._prepared = prepared[1], None
                else:
                    new = RemoteTfPublisher(node, change.topic, static_topic(change.topic))
            if self.publisher is not None:
                self.publisher.destroy()
            self.publisher, self._topic = new, change.topic
        self._drop_prepared()  # made for a change that did not come (another one did)
        if change.restart_timer:
            on = change.topic is not None
            self._timer.restart(1.0 / self._pipeline.settings.remote_rate if on else 0.0)
        if (change.republish_statics or change.reopen) and self.publisher is not None:
            publication = self.output.static_publication(self._now_ns())
            if publication is not None:
                self.publisher.static.replace(publication)

    def republish_statics(self) -> None:
        """The remote static set again, as it was (``static_republish_period``)."""
        if self.publisher is not None:
            self.publisher.static.republish()

    def _tick(self) -> None:
        publication = self.output.tick(time.monotonic_ns())
        if publication is not None and self.publisher is not None:
            self.publisher.publish(publication)
