"""The remote output's ROS side: its two publishers and its timer, around
``node_core.remote_output.RemoteOutput`` (the policy: which frames, the cap, what a change asks).

The node calls ``check`` on a change of the remote parameters (and at start), ``update`` after
every model or settings change, and ``republish_statics`` with its static republication timer.
The timer runs on the steady clock at ``remote.rate`` (a paused simulation does not stop it;
the cap is about the link), and each tick sends what ``RemoteOutput.tick`` gives.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.node import Node
from rclpy.timer import Timer

from ..node_core.parameters import ParameterRejected, Settings
from ..node_core.pipeline import JointStatePipeline, LoadedModel
from ..node_core.remote_output import RemoteOutput, check_choice, remote_on, static_topic
from ..node_core.tf_outputs import GLOBAL_TF_STATIC_TOPIC, GLOBAL_TF_TOPIC, TfTopics
from .tf_publishers import RemoteTfPublisher


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
        self._guard = guard
        self._pipeline = pipeline
        self._own_topics = own_topics
        self._now_ns = now_ns
        self.output = RemoteOutput(pipeline)
        self.publisher: RemoteTfPublisher | None = None
        self._timer: Timer | None = None

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

    def update(self) -> None:
        """The remote output for the pipeline's current model and settings: its publishers
        opened, moved or closed, its timer restarted, its static set published."""
        change = self.output.configure()
        node = self._node
        if change.reopen:
            if self.publisher is not None:
                self.publisher.destroy()
                self.publisher = None
            if change.topic is not None:
                self.publisher = RemoteTfPublisher(node, change.topic, static_topic(change.topic))
        if change.restart_timer:
            if self._timer is not None:
                node.destroy_timer(self._timer)
                self._timer = None
            if change.topic is not None:
                steady = Clock(clock_type=ClockType.STEADY_TIME)
                period_s = 1.0 / self._pipeline.settings.remote_rate
                tick = self._tick if self._guard is None else self._guard("remote", self._tick)
                self._timer = node.create_timer(period_s, tick, clock=steady)
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
