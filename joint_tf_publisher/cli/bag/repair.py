"""``joint-tf-publisher bag repair``: a bag's robot TF rebuilt from its joint states, by the
node's own engine.

A reader and a writer around ``node_core.pipeline.JointStatePipeline``: each JointState of
the bag goes through the pipeline's intake exactly as the node takes it from DDS
(``take_joint_state``, ``take_multi_dof_joint_state``: the same call) and what the
pipeline returns is written on ``/tf`` at that JointState's log time; the static set is the
pipeline's ``static_publication``. The node's clock is the bag's log time (zero stamps,
static stamps, default positions). Settings are the node's (``--params``, read by
``params_file``), with one difference: without ``publish_frequency`` or ``ignore_timestamp``
in them every JointState is kept (``ignore_timestamp``), as a recording keeps them. The
description comes by the node's rule (``given_description``: ``description_source``, two
sources refused), with one difference: none given is the recording's own topic. The robot's
frames are the pipeline's rule (``pipeline.own_parents``).

What the output holds:

- ``/tf``: one TFMessage per JointState of ``/joint_states`` and the ``source_list`` topics,
  and per MultiDOFJointState of ``/multi_dof_joint_states`` (and the transforms of other
  publishers recorded in the input, the robot's own frames removed from them and counted);
- ``/tf_static``: the complete static set, reliable and transient local, at the bag's first
  log time, at each description change and every ``static_republish_period``; each message
  is the robot's set with every other publisher's static frames recorded in the input
  (their value at that time, or their first one), as one message; with ``--static-union``
  (or ``static_union`` in ``--params``) the other publishers' frames are the union of the
  recorded statics as the node keeps it (``static_union``), and a set is written at each
  change of it too;
- every other topic byte for byte with its type, definition and QoS; with ``--description``
  the ``/robot_description`` topic carries that description (once, at the start, latched).

Topic names here are the root namespace's; for a node that ran in a namespace
(``--namespace``) they resolve as ``topics`` says. The input is read twice: once for
``/robot_description`` and ``/tf_static`` only (the description and the other publishers'
statics from the start), once in full. Nothing but the current message is held: memory does
not grow with the bag.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from ...errors import ModelError
from ...health import wording
from ...health.model import JointStateHealth, UnionFacts
from ...health.reporting import Reporter
from ...node_core.cdr import Publication, UndecodableMessage
from ...node_core.description_source import (
    DescriptionFileWatch,
    DescriptionSource,
    description_source,
    refusal,
)
from ...node_core.joint_sources import FIRST_LISTED_SOURCE, JOINT_STATES_SOURCE
from ...node_core.parameter_changes import (
    PARAMETER_SOURCE,
    TOPIC_SOURCE,
    file_model,
    load_description,
    prepared_model,
)
from ...node_core.parameter_keys import offline_unknown, warnings
from ...node_core.parameters import ParameterRejected, Settings
from ...node_core.pipeline import JointStatePipeline, LoadedModel, own_parents
from ...stamps import NS_PER_S
from ..params_file import ParamsFileError, node_parameters
from . import messages
from .errors import BagError
from .qos import tf_qos, tf_static_qos
from .reader import InputBag, bag_files, open_bag
from .settings import output_compression
from .static_union import MIN_INTERVAL_NS, RecordedUnion
from .topics import RobotTopics, robot_topics
from .types import STRING, TF_MESSAGE
from .writer import BagOutput, BagTopic, checked_output
from .writer_process import start_writer, stop_writer

if TYPE_CHECKING:
    from rosbags.interfaces import Connection

    from ...model.elements import Joint

#: Seconds between two progress lines on a terminal.
PROGRESS_PERIOD_S = 0.5
#: Bytes the static sets written every ``static_republish_period`` may add to the output:
#: the input's size (its files), at least this. Beyond, the period is lengthened so that
#: they fit: other publishers' recorded statics ride in every set, and 10,000 of them (1 MB)
#: every 0.1 s made a 2.3 MB recording of 20 s a 172 MB output (31 GB an hour).
STATIC_REPUBLISH_FLOOR_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class RepairOptions:
    """What ``bag repair`` was asked: input and output bags, the output's storage (None: the
    input's), the description file that wins over the bag's (with its xacro arguments), the
    node's parameters file, a ``static_republish_period`` over the file's, the namespace
    the node ran in ("": the root; ``topics``), ``--static-union`` (None: the file's
    ``static_union``)."""

    source: Path
    output: Path
    force: bool = False
    storage: str | None = None
    description: Path | None = None
    description_args: tuple[str, ...] = ()
    params: Path | None = None
    static_republish_period: float | None = None
    namespace: str = ""
    #: ``--static-union`` (None: as the parameters file says, else off).
    static_union: bool | None = None


@dataclass
class RepairSummary:
    """What a repair did, in counts (``line`` says it in one line)."""

    messages_in: int = 0
    joint_states: int = 0
    undecodable: int = 0
    tf_out: int = 0
    transforms_out: int = 0
    frames_replaced: int = 0
    #: Recorded transforms of robot frames the repair does not write (a floating base's
    #: child from an estimator, a joint no JointState carries): kept, by child frame.
    frames_kept: dict[str, int] = field(default_factory=dict)
    #: JointStates the pipeline dropped: names and values of different lengths, a stamp
    #: out of range (with its time offset).
    mismatched_lengths: int = 0
    stamps_out_of_range: int = 0
    statics_written: int = 0
    #: The static republish period used where the given one was lengthened (seconds).
    static_period: float | None = None
    #: ``--static-union``: the union of the recorded statics as written last (None: off),
    #: and the log time between two sets written for its changes where it was lengthened (s).
    union: UnionFacts | None = None
    union_interval: float | None = None
    descriptions: int = 0
    copied: int = 0
    seconds: float = 0.0
    output: str = ""
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        rate = self.joint_states / self.seconds if self.seconds > 0 else 0.0
        kept = sum(self.frames_kept.values())
        kept_frames = f" ({short_names(self.frames_kept)})" if kept else ""
        return (
            f"wrote {self.output}: {self.messages_in} messages in, {self.joint_states} joint "
            f"states ({self.undecodable} undecodable, {self.mismatched_lengths} of mismatched "
            f"lengths, {self.stamps_out_of_range} stamped out of range: skipped) -> "
            f"{self.tf_out} /tf messages with {self.transforms_out} transforms; "
            f"{self.frames_replaced} recorded robot transform(s) replaced, {kept} kept that "
            f"the repair does not write{kept_frames}; {self.statics_written} /tf_static "
            "message(s)"
            + (
                f" (every {self.static_period:.3f} s, lengthened to fit)"
                if self.static_period is not None
                else ""
            )
            + union_summary(self.union, self.union_interval)
            + "; "
            f"{self.descriptions} description(s); {self.copied} messages copied; "
            f"{self.seconds:.1f} s ({rate:.0f} joint states/s)"
        )


def union_summary(union: UnionFacts | None, interval_s: float | None) -> str:
    """The summary's words on the static union (``--static-union``): its frames, their
    recorded publishers, the transforms refused by reason, the conflicts; "" when off."""
    if union is None:
        return ""
    refused = sum(union.refused.values())
    reasons = ", ".join(union.refused_entries())
    conflicts = union.conflicts_value()
    return (
        f", with the static union of {union.frames} recorded foreign frame(s) (of "
        f"{union.max_frames}) from {len(union.publishers)} recorded publisher(s)"
        + (f", changes at most every {interval_s:.4g} s (lengthened to fit)" if interval_s else "")
        + f"; {refused} recorded static transform(s) refused"
        + (f" ({reasons})" if reasons else "")
        + f", {len(union.conflicts) + union.more_conflicts} conflict(s)"
        + (f" ({conflicts})" if conflicts else "")
    )


def short_names(counts: dict[str, int], shown: int = 5) -> str:
    """The first ``shown`` names of ``counts``, and how many more."""
    names = list(counts)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


class CountingHealth(JointStateHealth):
    """The pipeline's health model, counting for the summary the JointStates it drops."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(timeout_s)
        self.lengths = 0
        self.out_of_range = 0

    def mismatched_lengths(self) -> None:
        super().mismatched_lengths()
        self.lengths += 1

    def stamp_out_of_range(self) -> None:
        super().stamp_out_of_range()
        self.out_of_range += 1


class StderrLogger:
    """The pipeline's logger offline: its lines on stderr, ``warning:`` in front."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr

    def info(self, message: str) -> None:
        print(f"note: {message}", file=self.stream)

    def warning(self, message: str) -> None:
        print(f"warning: {message}", file=self.stream)

    def error(self, message: str) -> None:
        print(f"error: {message}", file=self.stream)


def params_settings(params: Path | None, namespace: str = "") -> tuple[Settings, dict[str, Any]]:
    """The node's settings from its parameters file ``params`` (the defaults for None) and
    the values they came from, as the bag commands take ``--params`` (the sections of a node
    in ``namespace``, ``--namespace``'s); BagError naming the
    file where it does not load or a value is refused. A key the node would not declare is
    a warning on stderr, as the node logs it (``parameter_keys``)."""
    values: dict[str, Any] = {}
    if params is not None:
        try:
            values = node_parameters(params, namespace=namespace)
        except ParamsFileError as exc:
            raise BagError(f"--params {exc}") from None
    try:
        settings = Settings.from_values(values)
    except ParameterRejected as exc:
        raise BagError(f"--params {params}: {exc}") from None
    logger = StderrLogger()
    for line in warnings(offline_unknown(values, settings.attachments)):
        logger.warning(f"--params {params}: {line}")
    return settings, values


def repair_settings(options: RepairOptions) -> tuple[Settings, dict[str, Any]]:
    """The node's settings for the repair and the parameter values they came from."""
    settings, values = params_settings(options.params, options.namespace)
    if "publish_frequency" not in values and "ignore_timestamp" not in values:
        settings = replace(settings, ignore_timestamp=True)  # a recording keeps every state
    if options.static_republish_period is not None:
        try:
            settings = settings.changed(
                {"static_republish_period": options.static_republish_period}
            )
        except ParameterRejected as exc:
            raise BagError(str(exc)) from None
    return settings, values


Loader = Callable[[Settings], tuple[LoadedModel, Settings]]


def description_choice(
    settings: Settings, values: dict[str, Any], description_given: bool, params: Path | None
) -> DescriptionSource | None:
    """Where the bag commands' description comes from (``given_description``): the node's
    ``description_source`` over the parameters file ``params`` (``settings``, ``values``)
    with ``--description`` (``description_given``) as its ``description_file``; None where
    none gives one. BagError naming them where two give one."""
    file = "--description" if description_given else settings.description_file
    text = str(values.get("robot_description") or "")
    if not (text.strip() or file.strip() or settings.description_from_topic):
        return None
    try:
        return description_source(text, file, settings.description_from_topic)
    except ParameterRejected as exc:
        given = ["--description"] if description_given else []
        given += [f"--params {params}"] if params is not None else []
        raise BagError(f"{' and '.join(given)}: {exc}") from None


def given_description(
    settings: Settings,
    values: dict[str, Any],
    description: Path | None = None,
    description_args: tuple[str, ...] = (),
    params: Path | None = None,
) -> tuple[Loader, str] | None:
    """How to load the description the bag commands are given, as the node loads it
    (``prepared_model``), and its name; None where it is the recording's topic. The node's
    rule (``description_source``): exactly one of ``robot_description``,
    ``description_file`` and ``description_from_topic`` in the parameters file
    ``params`` (read into ``settings`` and ``values``); ``--description`` (with its xacro
    arguments) is ``description_file`` given on the command line, over the file's, as
    ``-p`` overrides a parameters file. None of them: the recording's topic (a recording's
    own description, where the node would refuse to start). BagError naming them where
    two give one."""
    source = description_choice(settings, values, description is not None, params)
    if source is None or source is DescriptionSource.TOPIC:
        return None
    file = str(description) if description is not None else settings.description_file
    args = description_args if description is not None else settings.description_args
    text = str(values.get("robot_description") or "")
    if source is DescriptionSource.FILE:
        watch = DescriptionFileWatch(file, args)
        return (lambda settings: watch.load(partial(file_model, load_description, settings))), file
    return (
        lambda settings: prepared_model(load_description, text, PARAMETER_SOURCE, settings)
    ), "robot_description parameter"


def robot_parents(
    model: LoadedModel, settings: Settings, joints: Iterable[Joint] | None = None
) -> dict[str, str]:
    """Every frame the node publishes for ``joints`` of ``model`` (None: all of them), with
    its parent: the node's own rule (``pipeline.own_parents``)."""
    return own_parents(model.robot.joints.values() if joints is None else joints, settings)


def robot_frames(
    model: LoadedModel, settings: Settings, joints: Iterable[Joint] | None = None
) -> set[str]:
    """The frames of ``robot_parents``."""
    return set(robot_parents(model, settings, joints))


def static_frames(model: LoadedModel, settings: Settings) -> set[str]:
    """The frames of ``model``'s static set: its fixed joints' children (``robot_frames``)."""
    return robot_frames(model, settings, model.kin.fixed_joints)


@dataclass
class RecordedStatics:
    """The recorded ``/tf_static``'s transforms by child frame: how many were recorded, and
    the values in log-time order (a value repeated, as a republishing publisher sends it, is
    kept once: memory does not grow with the recording's length)."""

    count: dict[str, int] = field(default_factory=dict)
    changes: dict[str, list[tuple[int, Any]]] = field(default_factory=dict)

    def add(self, time_ns: int, transform: Any) -> None:
        child = transform.child_frame_id
        self.count[child] = self.count.get(child, 0) + 1
        changes = self.changes.setdefault(child, [])
        if not changes or _value(changes[-1][1]) != _value(transform):
            changes.append((time_ns, transform))


def _value(transform: Any) -> tuple[object, ...]:
    """What a static transform says: its parent and pose."""
    t, q = transform.transform.translation, transform.transform.rotation
    return (transform.header.frame_id, t.x, t.y, t.z, q.x, q.y, q.z, q.w)


def first_pass(
    bag: InputBag, topics: RobotTopics
) -> tuple[list[tuple[int, str]], RecordedStatics, int]:
    """The bag's descriptions (log time, text; consecutive repeats left out), its recorded
    ``/tf_static`` transforms, and how many of those messages did not decode."""
    wanted = [c for c in bag.connections if c.topic in (topics.robot_description, topics.tf_static)]
    descriptions: list[tuple[int, str]] = []
    statics = RecordedStatics()
    broken = 0
    if not wanted:
        return descriptions, statics, broken
    for connection, time_ns, data in bag.messages(wanted):
        try:
            if connection.topic == topics.robot_description:
                text = messages.string_value(data)
                if not descriptions or descriptions[-1][1] != text:
                    descriptions.append((time_ns, text))
            else:
                for transform in messages.tf_transforms(data):
                    statics.add(time_ns, transform)
        except ValueError:
            broken += 1
    return descriptions, statics, broken


class Repair:
    """One repair: the pipeline, the output and the counts (``run`` does it all)."""

    def __init__(self, options: RepairOptions, progress: TextIO | None = None) -> None:
        self.options = options
        self.summary = RepairSummary(output=str(options.output))
        self.progress = progress
        self.now_ns = 0
        self.settings, self.values = repair_settings(options)
        self.logger = StderrLogger()
        self.health = CountingHealth(self.settings.joint_state_timeout)
        self.pipeline = JointStatePipeline(
            self.settings, Reporter(self.logger), self._clock_ns, self.health
        )
        self.sources: dict[str, int] = {}
        self.base_text: str | None = None
        self.static: Publication | None = None
        #: Other publishers' static frames: child -> their values (log time, transform).
        self.other_statics: dict[str, list[tuple[int, Any]]] = {}
        #: Every frame the robot ever had (every description's), with its parent.
        self.robot_frames: dict[str, str] = {}
        #: Frames of the static sets the repair writes (every description's).
        self.static_frames: set[str] = set()
        #: The robot's frames the repair writes by now, and what they were computed from.
        self._written: set[str] = set()
        #: The model and the count of joints received ``_written`` was computed for: the
        #: model itself, not its ``id`` (a freed model's id is reused by a later one).
        self._written_for: tuple[object, int] | None = None
        self.out: BagOutput | None = None
        #: The writing process started for the output (``run``), which the output takes.
        self.writer: subprocess.Popen[bytes] | None = None
        #: The output's connection numbers (``BagOutput.connection``).
        self.tf: int | None = None
        self.tf_static: int | None = None
        #: The robot's topics in the bag (``run`` looks at the bag's topics first).
        self.topics = robot_topics(options.namespace)
        #: ``--static-union``: the union of the recorded statics (made by ``_write_all``).
        self.union: RecordedUnion | None = None
        #: Whether the repair writes the union (``--static-union``, over the parameters
        #: file's ``static_union``), and its cap (the file's ``static_union_max_frames``).
        self.union_on = (
            self.settings.static_union if options.static_union is None else options.static_union
        )
        self.max_frames = self.settings.static_union_max_frames

    def _clock_ns(self) -> int:
        """The node clock offline: the log time of the message being handled."""
        return self.now_ns

    # -- setup --------------------------------------------------------------------------------

    def _joint_state_topics(self) -> dict[str, int]:
        """The JointState topics the node would read, by source number (``joint_sources``)."""
        topics = {self.topics.joint_states: JOINT_STATES_SOURCE}
        for number, topic in enumerate(self.settings.source_list, FIRST_LISTED_SOURCE):
            topics[self.topics.resolved(topic)] = number
        return topics

    def _load(self, loader: Loader, where: str) -> LoadedModel:
        """The model ``loader`` makes under the current settings (which then take its
        ``zeros``); BagError naming the description's file and line if it is refused."""
        try:
            model, self.settings = loader(self.settings)
        except (ModelError, ParameterRejected) as exc:
            raise BagError(f"the description ({where}) does not load: {exc}") from None
        except OSError as exc:
            raise BagError(f"the description ({where}) cannot be read: {exc}") from None
        return model

    def _install(self, model: LoadedModel) -> None:
        self.pipeline.install(model, self.settings)
        self.base_text = model.base_text
        self.robot_frames.update(robot_parents(model, self.settings))
        self.static_frames |= static_frames(model, self.settings)
        self.summary.descriptions += 1
        stamp = self.now_ns
        self.static = self.pipeline.static_publication(stamp)

    # -- writing ------------------------------------------------------------------------------

    def _write_statics(self, time_ns: int) -> int:
        """The current static set on ``/tf_static`` at ``time_ns`` (``_static_set``). Its
        size in bytes (0: none written)."""
        assert self.out is not None and self.tf_static is not None
        data = self._static_set(time_ns, self.union)
        if data is None:
            return 0
        self.out.write(self.tf_static, time_ns, data)
        self.summary.statics_written += 1
        if self.union is not None:
            self.union.sent(time_ns)
        return len(data)

    def _static_set(self, time_ns: int, union: RecordedUnion | None) -> bytes | None:
        """The robot's static set with the other publishers' statics, as one message: the
        union's frames (``--static-union``), else every other recorded static frame as of
        ``time_ns``; the global tree's set too where there is one (live it is a second
        latched publisher; a bag's one ``/tf_static`` latches one message on playback).
        None before a model."""
        if self.static is None:
            return None
        own = self.static
        if union is not None:
            publication = union.publication(own)
            assert publication is not None  # the robot's own set at least
            data, extra = publication.to_bytes(), []
        else:
            data, extra = own.to_bytes(), self._other_statics_at(time_ns)
        global_tree = own.in_global_tree()
        if global_tree is not None:
            extra = messages.tf_transforms(global_tree.to_bytes()) + extra
        return messages.merged_tf(data, extra)

    def _bounded_period(self, bag: InputBag, period_ns: int, set_bytes: int) -> int:
        """``period_ns``, or longer where static sets of ``set_bytes`` every ``period_ns``
        over the recording's log time would add more than ``STATIC_REPUBLISH_FLOOR_BYTES``
        and the input's size to the output (said in a warning and the summary)."""
        budget = max(input_bytes(bag.path), STATIC_REPUBLISH_FLOOR_BYTES)
        duration_ns = max(bag.reader.duration, 0)
        added = set_bytes * (duration_ns // period_ns)
        longer_ns = fitted_interval(duration_ns, period_ns, set_bytes, budget)
        if longer_ns == period_ns:
            return period_ns
        self.summary.static_period = longer_ns / NS_PER_S
        self.logger.warning(
            f"static_republish_period {period_ns / NS_PER_S:g} s lengthened to "
            f"{longer_ns / NS_PER_S:.3f} s: the static set is {set_bytes} bytes (the recorded "
            f"statics of other publishers ride in each), and every {period_ns / NS_PER_S:g} s "
            f"over the recording's {duration_ns / NS_PER_S:.1f} s it would add {added} bytes, "
            f"more than the {budget} allowed (the input's size, at least "
            f"{STATIC_REPUBLISH_FLOOR_BYTES})"
        )
        return longer_ns

    def _union_interval(self, bag: InputBag, set_bytes: int) -> int:
        """The least log time between two sets written for the union's changes: the node's
        (``MIN_INTERVAL_NS``), or longer where sets of ``set_bytes`` that often over the
        recording would add more than the byte budget of ``_bounded_period`` (said in a
        warning and the summary): a recorded static that changes at every message must not
        make the output a copy of the whole set per message."""
        budget = max(input_bytes(bag.path), STATIC_REPUBLISH_FLOOR_BYTES)
        duration_ns = max(bag.reader.duration, 0)
        interval_ns = fitted_interval(duration_ns, MIN_INTERVAL_NS, set_bytes, budget)
        if interval_ns != MIN_INTERVAL_NS:
            self.summary.union_interval = interval_ns / NS_PER_S
            self.logger.warning(
                f"static union: its changes are written at most every "
                f"{interval_ns / NS_PER_S:.4g} s of log time (not {MIN_INTERVAL_NS / NS_PER_S:g}"
                f" s): sets of up to {set_bytes} bytes that often over the recording's "
                f"{duration_ns / NS_PER_S:.1f} s would add more than the {budget} allowed"
            )
        return interval_ns

    def _other_statics_at(self, time_ns: int) -> list[Any]:
        """Each other publisher's static frame: its last value at or before ``time_ns``,
        else its first (a recorder that started late still saw it)."""
        chosen = []
        for changes in self.other_statics.values():
            value = changes[0][1]
            for recorded_ns, transform in changes:
                if recorded_ns > time_ns:
                    break
                value = transform
            chosen.append(value)
        return chosen

    def _write_tf(self, publication: Publication | None) -> None:
        if publication is None:
            return
        self._write_tf_bytes(publication.to_bytes(), len(publication.layout.frames))
        global_tree = publication.in_global_tree()
        if global_tree is not None:
            self._write_tf_bytes(global_tree.to_bytes(), len(global_tree.layout.frames))

    def _write_tf_bytes(self, data: bytes, count: int) -> None:
        assert self.out is not None and self.tf is not None
        self.out.write(self.tf, self.now_ns, data)
        self.summary.tf_out += 1
        self.summary.transforms_out += count

    # -- messages -----------------------------------------------------------------------------

    def _joint_state(self, data: bytes, source: int) -> None:
        """One JointState through the pipeline's intake, as the node's subscription feeds
        it (``take_joint_state``)."""
        self.summary.joint_states += 1
        try:
            message = self.pipeline.take_joint_state(data, source)
        except UndecodableMessage:
            self.summary.undecodable += 1
            return
        if isinstance(message, bytes):
            if message:
                self._write_tf_bytes(message, message_count(message))
        else:
            self._write_tf(message)

    def _multi_dof_joint_state(self, data: bytes) -> None:
        """One MultiDOFJointState through the pipeline's intake, as the node's subscription
        feeds it (``take_multi_dof_joint_state``)."""
        self.summary.joint_states += 1
        try:
            self._write_tf(self.pipeline.take_multi_dof_joint_state(data))
        except UndecodableMessage:
            self.summary.undecodable += 1

    def _written_frames(self) -> set[str]:
        """The robot's frames the repair writes by now: its static sets', and each moving
        joint's child once a value of it was received (all of them with
        ``publish_default_positions``), as the remote output counts them."""
        model = self.pipeline.model
        if model is None:
            return self.static_frames
        received = model.positions.received
        if self.settings.publish_default_positions:
            received = np.ones_like(received)
        count = int(received.sum())
        computed_for = self._written_for
        if computed_for is None or computed_for[0] is not model or computed_for[1] != count:
            moving = model.kin.moving_joints
            published = [moving[i] for i in np.flatnonzero(received)]
            self._written = self.static_frames | robot_frames(model, self.settings, published)
            self._written_for = (model, count)
        return self._written

    def _recorded_tf(self, connection: Connection, data: bytes) -> None:
        """A recorded ``/tf`` message: kept without the robot's frames the repair writes
        (``_written_frames``); its other robot frames are kept and counted."""
        assert self.out is not None and self.tf is not None
        try:
            transforms = messages.tf_transforms(data)
        except ValueError:
            self.out.write(self.tf, self.now_ns, data)  # not ours to judge: kept as it was
            return
        written = self._written_frames()
        kept = [t for t in transforms if t.child_frame_id not in written]
        self.summary.frames_replaced += len(transforms) - len(kept)
        frames_kept = self.summary.frames_kept
        for t in kept:
            if t.child_frame_id in self.robot_frames:
                frames_kept[t.child_frame_id] = frames_kept.get(t.child_frame_id, 0) + 1
        if len(kept) == len(transforms):
            self.out.write(self.tf, self.now_ns, data)
        elif kept:
            self.out.write(self.tf, self.now_ns, messages.tf_bytes(kept))

    def _recorded_static(
        self, union: RecordedUnion, connection: Connection, time_ns: int, data: bytes
    ) -> None:
        """A recorded ``/tf_static`` message into the union; each conflict it starts said."""
        union.receive(connection, time_ns, data)
        for line in union.said:
            self.logger.warning(line)
        union.said.clear()

    def _description(self, data: bytes) -> None:
        """A recorded description: a changed one is installed at its log time (refused: said,
        the model stays, as the node does)."""
        try:
            text = messages.string_value(data)
        except ValueError:
            self.logger.warning("a /robot_description message does not decode: ignored")
            return
        if text == self.base_text:
            return
        loader = partial(prepared_model, load_description, text, TOPIC_SOURCE)
        try:
            model, self.settings = loader(self.settings)
        except (ModelError, ParameterRejected) as exc:
            self.logger.warning(refusal(DescriptionSource.TOPIC, exc))
            self.base_text = text
            return
        self._install(model)
        self._write_statics(self.now_ns)

    # -- the run ------------------------------------------------------------------------------

    def run(self) -> RepairSummary:
        started = time.monotonic()
        # its start-up (rosbags, the type store) overlaps opening the bag and its description
        self.writer = writer = start_writer()
        try:
            with open_bag(self.options.source) as bag:
                self._run(bag)
        finally:
            if self.out is None:  # no output took it (stopping it twice is harmless)
                stop_writer(writer)
        self.summary.seconds = time.monotonic() - started
        self.summary.mismatched_lengths = self.health.lengths
        self.summary.stamps_out_of_range = self.health.out_of_range
        return self.summary

    def _run(self, bag: InputBag) -> None:
        options = self.options
        output = checked_output(bag.path, options.output)
        self.topics = robot_topics(options.namespace, {c.topic for c in bag.connections})
        topics = self._joint_state_topics()
        self.pipeline.number_sources(  # by the names given, as the node numbers them
            {name: n for n, name in enumerate(self.settings.source_list, FIRST_LISTED_SOURCE)}
        )
        descriptions, recorded_statics, broken = first_pass(bag, self.topics)
        if broken:
            self.logger.warning(
                f"{broken} recorded /robot_description or /tf_static message(s) do not decode: "
                "ignored"
            )
        given = given_description(
            self.settings,
            self.values,
            options.description,
            options.description_args,
            options.params,
        )
        first_loaded: tuple[LoadedModel, Settings] | None = None  # the bag's first, if loaded
        for index, (_, text) in enumerate(descriptions):  # every frame the robot ever had
            try:  # is its own
                model, settings = prepared_model(
                    load_description, text, TOPIC_SOURCE, self.settings
                )
            except (ModelError, ParameterRejected):
                continue
            if index == 0:
                first_loaded = model, settings
            self.robot_frames.update(robot_parents(model, settings))
            self.static_frames |= static_frames(model, settings)
        multi_dof = self.topics.multi_dof_joint_states
        has_states = any(c.topic in topics or c.topic == multi_dof for c in bag.connections)
        if given is None and not descriptions:
            if not has_states:
                raise BagError(
                    f"{options.source}: no {self.topics.joint_states} and no description: "
                    "nothing to compute the robot's TF from (give --description FILE; the bag "
                    "needs its joint states)"
                )
            raise BagError(
                f"{options.source}: no {self.topics.robot_description} in the bag: give the "
                "robot's description with --description FILE"
            )
        messages_iter = bag.messages()
        first = next(messages_iter, None)
        self.now_ns = first[1] if first is not None else 0
        if given is not None:
            loader, where = given
            self._install(self._load(loader, where))
        else:
            start_ns, text = descriptions[0]
            where = f"{self.topics.robot_description} at {start_ns / NS_PER_S:.3f} s"
            if first_loaded is not None:  # loaded above with these settings: not again
                model, self.settings = first_loaded
            else:  # refused above: said here, with its file and line
                model = self._load(
                    partial(prepared_model, load_description, text, TOPIC_SOURCE), where
                )
            self._install(model)
        self.other_statics = {  # the robot's static set is the repair's; a moving joint's
            child: changes  # frame has no static value
            for child, changes in recorded_statics.changes.items()
            if child not in self.robot_frames
        }
        self.summary.frames_replaced += sum(
            count for child, count in recorded_statics.count.items() if child in self.robot_frames
        )
        installed = self.pipeline.model
        if not has_states and installed is not None and installed.kin.moving_joints:
            names = ", ".join(sorted({multi_dof, *topics}))
            raise BagError(
                f"{options.source}: no joint states ({names}): robot "
                f"{installed.robot.name!r} has moving joints whose frames cannot be rebuilt (its "
                "recorded /tf is left as it is: no output written); a JointState topic of "
                "another name goes in --params source_list"
            )
        storage = options.storage or bag.storage
        compression = output_compression(bag.compression, storage)
        self.out = BagOutput(
            output, storage, options.force, self.writer, compression, source=bag.path
        )
        try:
            with self.out:
                self._write_all(bag, first, messages_iter, topics, given is not None)
        finally:  # a stop while the old bag is removed: said before the process ends
            if self.out.left_behind is not None:
                self.logger.warning(self.out.left_behind)

    def _write_all(
        self,
        bag: InputBag,
        first: tuple[Connection, int, bytes] | None,
        rest: Any,
        topics: dict[str, int],
        description_given: bool,
    ) -> None:
        assert self.out is not None
        out = self.out
        # rosbags' own definitions (None), from the store the writing process has loaded
        names = self.topics
        self.tf = out.connection(BagTopic(names.tf, TF_MESSAGE, (tf_qos(),)))
        self.tf_static = out.connection(BagTopic(names.tf_static, TF_MESSAGE, (tf_static_qos(),)))
        if description_given and self.pipeline.model is not None:
            description = out.connection(
                BagTopic(names.robot_description, STRING, (tf_static_qos(),))
            )
            out.write(description, self.now_ns, messages.string_bytes(self.pipeline.model.text))
        start_ns = self.now_ns
        # the largest set: every recorded static frame (the union holds at most those)
        set_bytes = len(self._static_set(start_ns, None) or b"")
        if self.union_on:
            interval_ns = self._union_interval(bag, set_bytes)
            self.union = RecordedUnion(self.robot_frames, self.max_frames, start_ns, interval_ns)
        self._write_statics(start_ns)
        union = self.union
        period_ns = round(self.settings.static_republish_period * NS_PER_S)
        if period_ns:
            period_ns = self._bounded_period(bag, period_ns, set_bytes)
        next_static_ns = self.now_ns + period_ns
        default_ns = round(NS_PER_S / self.settings.publish_frequency)
        next_default_ns = self.now_ns
        copies: dict[int, int] = {}
        total = max(bag.reader.message_count, 1)
        next_progress = time.monotonic()  # the first line at the first check, then each period
        if first is None:
            return
        for connection, time_ns, data in _chain(first, rest):
            self.now_ns = time_ns
            self.summary.messages_in += 1
            if period_ns and time_ns >= next_static_ns:
                self._write_statics(time_ns)
                next_static_ns = next_static_mark(next_static_ns, time_ns, period_ns)
            elif union is not None and union.due(time_ns):
                self._write_statics(time_ns)  # the union changed
            if self.settings.publish_default_positions and time_ns >= next_default_ns:
                self._write_tf(self.pipeline.default_positions())
                next_default_ns = time_ns + default_ns
            topic = connection.topic
            source = topics.get(topic)
            if topic == names.tf:
                self._recorded_tf(connection, data)
            elif topic == names.tf_static:
                if union is not None:
                    self._recorded_static(union, connection, time_ns, data)
                continue  # replaced: the complete set is written above
            elif topic == names.robot_description and description_given:
                continue  # the description given replaces the recorded one
            else:
                if source is not None:
                    self._joint_state(data, source)
                elif topic == names.multi_dof_joint_states:
                    self._multi_dof_joint_state(data)
                elif topic == names.robot_description:
                    self._description(data)
                copy = copies.get(connection.id)
                if copy is None:
                    definition, digest = recorded_definition(connection)
                    copy = copies[connection.id] = out.connection(
                        BagTopic(
                            name=topic,
                            msgtype=connection.msgtype,
                            profiles=tuple(connection.ext.offered_qos_profiles),
                            msgdef=definition,
                            digest=digest,
                            serialization_format=connection.ext.serialization_format,
                        )
                    )
                out.write(copy, time_ns, data)
                self.summary.copied += 1
            if self.progress is not None and self.summary.messages_in % 1024 == 0:
                now = time.monotonic()
                if now >= next_progress:
                    next_progress = now + PROGRESS_PERIOD_S
                    done = 100.0 * self.summary.messages_in / total
                    self.progress.write(
                        f"\r{done:5.1f}% {self.summary.messages_in}/{total} messages, "
                        f"{self.summary.joint_states} joint states"
                    )
                    self.progress.flush()
        if union is not None:
            if union.pending:  # a change at the end: written at the last log time
                self._write_statics(self.now_ns)
            self.summary.union = union.facts()
            if union.unsaid:
                self.logger.warning(f"static union: {wording.union_more_conflicts(union.unsaid)}")
        if self.progress is not None:
            self.progress.write("\r" + " " * 70 + "\r")


def recorded_definition(connection: Connection) -> tuple[str, str]:
    """A recorded connection's message definition and type hash, as recorded; where the bag
    has none (rosbag2 before Iron wrote no definitions), rosbags' own for a type it knows,
    else none ("")."""
    definition, digest = connection.msgdef.data, connection.digest
    if definition and digest:
        return definition, digest
    try:
        known, known_digest = messages.definition(connection.msgtype)
    except Exception:  # a type rosbags does not know: copied without a definition
        return definition, digest
    return definition or known, digest or known_digest


def next_static_mark(mark_ns: int, time_ns: int, period_ns: int) -> int:
    """The log time from which the next static set is due, after one written at ``time_ns``
    for the mark ``mark_ns`` (<= ``time_ns``): the first later multiple of ``period_ns``
    past the first mark. The marks a stretch without messages passed (a gap, an outlier
    first log time) are not made up: one set at the first message after it, so at most one
    set per recorded message and per period of the recording's log time."""
    return mark_ns + period_ns * ((time_ns - mark_ns) // period_ns + 1)


def fitted_interval(duration_ns: int, interval_ns: int, set_bytes: int, budget: int) -> int:
    """``interval_ns``, or the least longer interval at which sets of ``set_bytes`` over
    ``duration_ns`` add at most ``budget`` bytes."""
    if set_bytes * (duration_ns // interval_ns) <= budget:
        return interval_ns
    return -(-duration_ns * set_bytes // budget)  # rounded up


def input_bytes(path: Path) -> int:
    """The size of the bag at ``path`` (``bag_location``): its files' (``bag_files``)."""
    total = 0
    for file in bag_files(path):
        with contextlib.suppress(OSError):
            total += file.stat().st_size
    return total


def message_count(data: bytes) -> int:
    """The number of transforms of a serialized TFMessage (its first uint32)."""
    return int.from_bytes(data[4:8], "little")


def _chain(first: Any, rest: Any) -> Any:
    yield first
    yield from rest


def run_repair(options: RepairOptions) -> RepairSummary:
    """Repair as ``options`` ask, a progress line on stderr when it is a terminal."""
    progress = sys.stderr if sys.stderr.isatty() else None
    return Repair(options, progress).run()
