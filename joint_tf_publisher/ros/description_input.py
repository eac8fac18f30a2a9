"""The node's description input: where its robot description comes from (``robot_description``,
``description_file`` or, with ``description_from_topic``, the ``robot_description`` topic),
the start's model, the description file watched for saves on a steady-clock timer, the topic
subscribed to, or the ``robot_description`` topic published (latched) from the parameter or
file; and the folders runtime changes may read (``allowed_folders``).

Which source wins, how a file is watched and why a description is refused is
``node_core.description_source``'s policy; how a text becomes the model installed is
``node_core.parameter_changes.prepared_model``'s. It may import rclpy, ``errors``,
``description.files`` (the reading rules), ``node_core`` and the adapter's ``part_host``,
``qos`` and ``timers``; ``node`` composes it and installs the models it
gives (``replace_model``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from rclpy.publisher import Publisher
from std_msgs.msg import String

from ..description.files import reading_under
from ..errors import ModelError, valid_utf8
from ..node_core.allowed_folders import runtime_rules, start_folders, start_rules
from ..node_core.description_source import (
    WATCH_PERIOD_S,
    DescriptionFileWatch,
    DescriptionSource,
    Refused,
    description_source,
    refusal,
)
from ..node_core.log_routing import package_logs_to
from ..node_core.parameter_changes import (
    PARAMETER_SOURCE,
    TOPIC_SOURCE,
    Described,
    file_model,
    load_description,
    prepared_model,
)
from ..node_core.parameters import ParameterRejected, Settings
from ..node_core.pipeline import LoadedModel
from .part_host import PartHost
from .qos import latched_qos
from .timers import RestartableTimer

#: Make a model (prepared with the settings given) the node's current one.
ReplaceModel = Callable[[LoadedModel, Settings], object]


class DescriptionInput:
    """The description input of ``host``'s node, started with the parameter
    ``robot_description`` ``text`` under ``settings``: the start's model (``start_model``)
    is loaded at once, read from any folder (ModelError or ParameterRejected for one
    refused); ``open_topic`` makes its topic. ``stopped`` is the process's stop flag (a wait
    for a xacro expansion gives up when it turns true); a model loaded later (a saved file,
    a message) goes to ``replace_model``."""

    def __init__(
        self,
        host: PartHost,
        stopped: Callable[[], bool],
        replace_model: ReplaceModel,
        text: str,
        settings: Settings,
    ) -> None:
        self._node, self._pipeline, self._edges = host.node, host.pipeline, host.edges
        self._replace_model = replace_model
        self._publisher: Publisher[String] | None = None
        self._watch_timer = RestartableTimer(
            host.node, host.edges.timer("description_file watch", self._check_description_file)
        )
        with reading_under(start_rules(stopped)):
            source = description_source(
                text, settings.description_file, settings.description_from_topic
            )
            watch = None
            model: LoadedModel | None = None
            if source is DescriptionSource.FILE:
                watch = DescriptionFileWatch(settings.description_file, settings.description_args)
                model, _ = watch.load(partial(file_model, self.load, settings))
            elif source is DescriptionSource.PARAMETER:
                model, _ = prepared_model(self.load, text, PARAMETER_SOURCE, settings)
            #: Where the running description comes from (and the file watched, if any).
            self.described = Described(source, text, watch)
            texts = (text, model.text if model is not None else "")
            folders = start_folders(settings, watch.files if watch is not None else (), texts)
        #: The start's model (None: from the topic, later).
        self.start_model = model
        #: What runtime changes may read (``allowed_folders.start_folders``), and the stop
        #: flag.
        self.file_rules = runtime_rules(folders, stopped, settings)

    def load(
        self, text: str, settings: Settings, source: str, path: Path | None = None
    ) -> LoadedModel:
        """``load_description`` (the attachments of ``settings`` composed onto ``text``),
        its warnings to the node's logger."""
        with package_logs_to(self._node.get_logger()):
            return load_description(text, settings, source, path)

    def open_topic(self, from_topic: bool) -> None:
        """Subscribe to ``robot_description`` (``from_topic``: ``description_from_topic``),
        else make its latched publisher."""
        if from_topic:
            self._node.create_subscription(
                String,
                "robot_description",
                self._edges.callback("robot_description", self._on_description_message),
                latched_qos(),
            )
        else:
            self._publisher = self._node.create_publisher(
                String, "robot_description", latched_qos()
            )

    def publish(self, model: LoadedModel) -> None:
        """``model``'s description on ``robot_description`` (none from the topic)."""
        if self._publisher is not None:
            self._publisher.publish(String(data=model.text))

    def adopt(self, described: Described) -> None:
        """A parameter change's source of the description made current (a xacro expansion
        the file watch it replaces started is no longer wanted); ``follow`` after."""
        old_watch = self.described.watch
        if old_watch is not None and old_watch is not described.watch:
            old_watch.close()
        self.described = described

    def follow(self, announce: bool) -> None:
        """The description file checked every ``WATCH_PERIOD_S`` s of the steady clock while
        the description comes from one (a sim clock that does not run cannot stop it), no
        longer otherwise; ``announce``: a new file loaded, its watch is said."""
        watch = self.described.watch
        if watch is None:
            self._watch_timer.stop()
        elif not self._watch_timer.running:
            self._watch_timer.restart(WATCH_PERIOD_S)
        if announce and watch is not None:
            self._say_watched(watch)

    def close(self) -> None:
        """Stop a xacro expansion the file watch started (the node is destroyed)."""
        if self.described.watch is not None:
            self.described.watch.close()

    def _say_watched(self, watch: DescriptionFileWatch) -> None:
        files = valid_utf8(", ".join(str(path) for path in watch.files))
        self._node.get_logger().info(f"description_file: watching {files} for saves")

    def _check_description_file(self) -> None:
        """Load the description file again if a save changed it (``DescriptionFileWatch``);
        a save that does not load is said once (log, health report), the model stays."""
        watch = self.described.watch
        if watch is None:
            return
        watched = watch.files
        with reading_under(self.file_rules):
            outcome = watch.poll(partial(file_model, self.load, self._pipeline.settings))
        if watch.files != watched:
            self._say_watched(watch)
        if isinstance(outcome, Refused):
            self._node.get_logger().error(outcome.reason)
            self._pipeline.health.refused_description = outcome.reason
        elif outcome is not None:
            self._node.get_logger().info(f"description_file {watch.path} changed: reloaded")
            self._replace_model(*outcome.loaded)

    def _on_description_message(self, msg: String) -> None:
        settings = self._pipeline.settings
        try:
            with reading_under(self.file_rules):
                model, settings = prepared_model(self.load, msg.data, TOPIC_SOURCE, settings)
        except (ModelError, ParameterRejected) as err:
            running = self._pipeline.model is not None
            reason = refusal(DescriptionSource.TOPIC, err, running)
            self._node.get_logger().error(reason)
            self._pipeline.health.refused_description = reason
            return
        self._replace_model(model, settings)
