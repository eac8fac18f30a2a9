"""The node's policy, without rclpy: joint states in, TFMessages to publish out.

``JointStatePipeline`` decides, for each JointState, as robot_state_publisher does and in this
order: is there a model, do names and positions match, is the message due (rate limit in
message time, keyed on the joints it moves: a message it drops costs no kinematics), and only
then resolves the values and computes the transforms it publishes, in one kinematics call
(``MessagePlan.resolve``: mimic, clamping, rejection; the plan is compiled once per tuple of
names under the current settings). A MultiDOFJointState takes the same steps: its transforms
become the values of its joints' variable names (``Kinematics.multi_dof_plan``). What it
remembers between messages is keyed by value: the last message shape's ``Stream`` (topic, plan,
health slot) while the next message's topic and names compare equal, the rate limiter's
extremes under ``MessagePlan.moves_key``. It also owns the static set (fixed joints), the
default positions of joints never received, stamps (a zero stamp becomes the node clock's now;
each topic's time offset is added, ``time_offsets``), the frames a new model or prefix takes
away (one warning, the health report), the reports of clamped, rejected and unknown values
(``reporting.Reporter``), and which settings changes republish the static set or restart a
timer (``Reconfigured``). It feeds the health model (``health.JointStateHealth``): one slot
write per message, and the rare events (clamped or rejected values, mismatched lengths, stamps
out of range) as they happen.

What it returns is a ``cdr.Publication``: a TFMessage layout with a stamp and the transforms,
which the node's /tf publisher serializes and sends. Its short way, ``joint_state_bytes``,
takes a topic's common message from its serialized bytes to the TFMessage's in one pass (the
same steps; anything else goes on through ``joint_state``). The node is wiring around this
class; tests drive it directly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from ..arrays import Array, BoolArray, IndexArray
from ..bounded_cache import bounded_cache
from ..health import wording
from ..health.facts import RobotFacts
from ..health.model import JointStateHealth, StreamSlot
from ..health.reporting import Reporter
from ..health.wording import NO_DESCRIPTION, dropped_message
from ..kinematics import JointPositions, Kinematics, Resolved
from ..kinematics.joint_transforms import PosePlan, poses_of
from ..kinematics.message_plan import MessagePlan
from ..model import Joint
from ..robot import Robot
from ..stamps import NS_PER_S
from .cdr import NameBlock, Publication, TFMessageLayout
from .joint_sources import JOINT_STATES_SOURCE, MULTI_DOF_SOURCE, JointSources
from .loops import LoopClosing
from .parameters import Settings
from .rate_limiter import RateLimiter
from .tf_outputs import global_tree_on
from .time_offsets import TimeOffsets
from .zeros import start_positions


class Reconfigured(NamedTuple):
    """What a settings change asks of the node besides the new settings: publish the static
    set again (a prefix, exclusions or clamp mode changed), restart the default-positions timer
    (its rate or switch changed), restart the health report's timer (its period changed),
    restart the static set's republication timer (``static_republish_period`` changed), open
    or close the global tree's publishers (``global_frame_prefix`` set or cleared)."""

    republish_statics: bool
    restart_default_timer: bool
    restart_diagnostic_timer: bool
    restart_static_timer: bool
    switch_global_tree: bool


class Stream(NamedTuple):
    """JointStates of one shape from one topic under the current model and settings: the
    topic (``joint_sources``), the message plan of their names and the health slot they
    feed. The pipeline keeps the last one and compares the next message's topic and names
    with it by value."""

    source: int
    plan: MessagePlan
    slot: StreamSlot


class Steady(NamedTuple):
    """A stream whose next messages ``joint_state_bytes`` serves in one pass: their name
    block (``cdr``, the bytes they share), their number of positions, and the TFMessage
    layout of the joints they publish. Made after a message of the stream took the general
    way, when that stream can take the short one (``JointStatePipeline._steady_of``)."""

    stream: Stream
    block: NameBlock
    value_count: int
    layout: TFMessageLayout


class LoadedModel:
    """One robot description with what the node keeps for it: joint values, limiter times.

    ``text`` is the description the node publishes: ``base_text``, the robot's own
    description, with its attachments composed in (``description.compose``; the same text
    without attachments).
    """

    def __init__(self, robot: Robot, text: str, base_text: str | None = None) -> None:
        self.robot = robot
        self.text = text
        self.base_text = text if base_text is None else base_text
        self.kin: Kinematics = robot.kinematics
        self.positions = self.kin.new_positions()
        #: Per moving joint: message time of its last publication.
        self.limiter = RateLimiter(len(self.kin.moving_joints))
        #: Per moving joint: the topic of its last value (several joint-state topics).
        self.sources = JointSources(len(self.kin.moving_joints))


class Configured:
    """A model under one set of settings: frames with the prefix, which joints are
    published, their default transforms, the static set, the message plans and the
    TFMessage layouts of the index sets published (with the global tree's prefix too, where
    there is a global tree: ``tf_outputs``)."""

    def __init__(
        self, model: LoadedModel, settings: Settings, steady_ns: Callable[[], int]
    ) -> None:
        kin = model.kin
        excluded = set(settings.exclude_joints)
        moving = kin.moving_joints
        prefix = settings.frame_prefix
        global_prefix = settings.global_frame_prefix if global_tree_on(settings) else None
        #: Names in exclude_joints that are no joint of the robot.
        self.unknown_excluded = sorted(excluded - set(model.robot.joints))
        self.publish_mask = np.array([joint.name not in excluded for joint in moving], dtype=bool)
        self._frames = _frame_pairs(moving, prefix)
        self._global_frames = None if global_prefix is None else _frame_pairs(moving, global_prefix)
        #: The ``MessagePlan`` of a JointState by its names, under these settings.
        self.message_plan = kin.message_plans(settings.clamp_mode, self.publish_mask)
        #: The TFMessage layouts (own, and the global tree's or None) of moving joints by the
        #: bytes of their index array (intp).
        self.layouts_of = bounded_cache(self._layouts)
        self.restart_from(kin, settings)
        fixed = [i for i, joint in enumerate(kin.fixed_joints) if joint.name not in excluded]
        static_joints = [kin.fixed_joints[i] for i in fixed]
        translations, quaternions = kin.fixed_transforms()
        self.static_layout = TFMessageLayout(_frame_pairs(static_joints, prefix))
        self.static_global_layout = (
            None
            if global_prefix is None
            else TFMessageLayout(_frame_pairs(static_joints, global_prefix))
        )
        self.static_poses = np.hstack((translations, quaternions))[fixed]
        self._transforms = kin.transforms
        self._with_passive = bounded_cache(self._joints_with_passive)
        #: The passive joints (moving joint indices) of the last solve of the loops.
        self.solved_joints: IndexArray = np.empty(0, dtype=np.intp)
        #: The robot's closed loops under these settings (None for a tree): ``loops``.
        self.loops = (
            None
            if kin.loops is None
            else LoopClosing(
                kin,
                kin.loops,
                settings.loop_tolerance,
                steady_ns,
            )
        )

    def resolved(self, positions: JointPositions, plan: MessagePlan, values: Array) -> Resolved:
        """``values`` applied to ``positions`` by ``plan`` and what to publish: for a robot
        with loops, the loops closed (``loops``: the passive joints solved in ``positions``)
        and the passive joints published with those the message moved, their poses computed
        once, after the solve."""
        if self.loops is None:
            return plan.resolve(positions, values)
        applied = plan.apply(positions, values)
        joints, key, poses = self._closed(self.loops, positions, applied.joints_key)
        return Resolved(joints, key, poses, applied.clamped, applied.rejected)

    def closed_fast(
        self, positions: JointPositions, plan: MessagePlan, values: Array
    ) -> tuple[Array, TFMessageLayout] | None:
        """For a robot with loops, the common message (``MessagePlan.apply_fast``) as
        ``resolved`` takes it: the poses (n, 7) to publish and their TFMessage layout; None,
        ``positions`` untouched, for any other message (``resolved`` takes it)."""
        if self.loops is None or not plan.apply_fast(positions, values):
            return None
        _, key, poses = self._closed(self.loops, positions, plan.published_key)
        return poses, self.layouts_of(key)[0]

    def _closed(
        self, loops: LoopClosing, positions: JointPositions, key: bytes
    ) -> tuple[IndexArray, bytes, Array]:
        """The loops of ``positions`` closed after a message applied to it that publishes
        the joints of index bytes ``key``: those and the passive joints published, their
        bytes and their poses (n, 7)."""
        passive = loops.close(positions)
        self.solved_joints = passive
        joints, joints_key, pose_plan = self._with_passive((key, passive.tobytes()))
        return joints, joints_key, poses_of(pose_plan, positions.values)

    def _joints_with_passive(self, keys: tuple[bytes, bytes]) -> tuple[IndexArray, bytes, PosePlan]:
        """The moving joints of index bytes ``keys[0]`` and the published ones of
        ``keys[1]`` (the passive joints), sorted, their bytes and their poses' plan."""
        given, passive = (np.frombuffer(key, np.intp) for key in keys)
        joints = np.union1d(given, passive[self.publish_mask[passive]]).astype(np.intp)
        joints.flags.writeable = False
        return joints, joints.tobytes(), self._transforms.plan(joints)

    def restart_from(self, kin: Kinematics, settings: Settings) -> None:
        """Take the start values of ``settings`` (its ``zeros``) for joints never received."""
        #: The values of joints never received: ``zeros.*`` (else zero) clamped into the
        #: limits, mimic followers from their leaders.
        self.start = start_positions(kin, settings.zeros, settings.clamp_mode)
        self.default_poses = kin.joint_poses(self.start, np.arange(len(kin.moving_joints)))

    def _layouts(self, key: bytes) -> tuple[TFMessageLayout, TFMessageLayout | None]:
        joints = np.frombuffer(key, np.intp).tolist()
        layout = TFMessageLayout([self._frames[i] for i in joints])
        if self._global_frames is None:
            return layout, None
        return layout, TFMessageLayout([self._global_frames[i] for i in joints])

    def publication(self, key: bytes, stamp_ns: int, poses: Array) -> Publication:
        """The moving joints of index array ``key`` (its bytes, intp) at ``poses``, stamped
        ``stamp_ns``, in every tree the node publishes."""
        layout, global_layout = self.layouts_of(key)
        return Publication(layout, stamp_ns, poses, global_layout)


def _frame_pairs(joints: Sequence[Joint], prefix: str) -> list[tuple[str, str]]:
    """(parent, child) frame of each of ``joints``, ``prefix`` in front (plain concatenation,
    as robot_state_publisher's ``frame_prefix``)."""
    return [(prefix + joint.parent, prefix + joint.child) for joint in joints]


class JointStatePipeline:
    """Joint states to TFMessages under ``settings``; see the module docstring.

    ``clock_ns`` reads the node clock (ns), used for zero stamps and default positions.
    """

    def __init__(
        self,
        settings: Settings,
        reporter: Reporter,
        clock_ns: Callable[[], int],
        health: JointStateHealth | None = None,
    ) -> None:
        self.settings = settings
        self.reporter = reporter
        self._clock_ns = clock_ns
        #: What the node knows about its inputs (fed here, read by /diagnostics).
        self.health = health or JointStateHealth(settings.joint_state_timeout)
        self._steady_ns = self.health.steady_ns
        self.model: LoadedModel | None = None
        self._configured: Configured | None = None
        #: The shape of the last JointState: its plan and health slot.
        self._stream: Stream | None = None
        #: Per topic, the short way of its last stream (``joint_state_bytes``).
        self._steady: dict[int, Steady] = {}
        #: The offset added to each topic's stamps (``time_offset``, ``source_time_offsets``).
        self.time_offsets = TimeOffsets()
        self.time_offsets.configure(settings)
        self.health.time_offsets_s = self.time_offsets.by_topic_s
        #: The stamp (ns) of the latest publication of moving joints on /tf, until the remote
        #: output (``remote_output``) has sent it; None then. Its one write per publication
        #: is all the remote output costs per JointState.
        self.unsent_stamp_ns: int | None = None

    # -- model and settings -----------------------------------------------------------------

    def install(self, model: LoadedModel, settings: Settings | None = None) -> Reconfigured:
        """Make ``model`` current (its limiter and its health start afresh), under
        ``settings`` if given; what else the change of settings asks of the node. Frames of
        the previous model that ``model`` does not have are named in one warning and in the
        health report (``wording.frames_left_warning``)."""
        self.model = model
        self.unsent_stamp_ns = None
        changes = self._configure(settings or self.settings, new_model=True)
        settings = self.settings
        facts = RobotFacts(model.kin, settings.exclude_joints, settings.frame_prefix)
        self._warn_frames_left(self.health.install(facts))
        return changes

    def configure(self, settings: Settings) -> Reconfigured:
        """Apply new settings (prefix, exclusions, clamp mode, rate, start values, time
        offsets) to the current model; what else the change asks of the node. A change of
        ``zeros`` alone only gives the joints never received their new start values."""
        return self._configure(settings, new_model=False)

    def _configure(self, settings: Settings, new_model: bool) -> Reconfigured:
        old, self.settings = self.settings, settings
        self._forget_steady()
        changes = Reconfigured(
            republish_statics=_static_set_of(settings) != _static_set_of(old),
            restart_default_timer=(settings.publish_frequency, settings.publish_default_positions)
            != (old.publish_frequency, old.publish_default_positions),
            restart_diagnostic_timer=settings.diagnostic_period != old.diagnostic_period,
            restart_static_timer=settings.static_republish_period != old.static_republish_period,
            switch_global_tree=global_tree_on(settings) != global_tree_on(old),
        )
        self.health.timeout_s = settings.joint_state_timeout
        self.time_offsets.configure(settings)
        self.health.time_offsets_s = self.time_offsets.by_topic_s
        if self.model is None:
            return changes
        if (
            not new_model
            and self._configured is not None
            and _beside_the_model(old) == _beside_the_model(settings)
        ):
            self._configured.restart_from(self.model.kin, settings)
            self._start_waiting_joints(self.model, self._configured)
            return changes
        self._configured = Configured(self.model, settings, self._steady_ns)
        loops = self._configured.loops
        self.health.loops = None if loops is None else loops.facts
        self.model.limiter.reset()
        self._stream = None
        if not new_model and self.health.facts is not None:  # new exclusions or prefix
            facts = RobotFacts(self.model.kin, settings.exclude_joints, settings.frame_prefix)
            self._warn_frames_left(self.health.frames_changed(facts))
        self._start_waiting_joints(self.model, self._configured)
        if self._configured.unknown_excluded:
            self.reporter.logger.warning(
                "exclude_joints names joints not in the robot: "
                + ", ".join(self._configured.unknown_excluded)
            )
        return changes

    def number_sources(self, numbers: Mapping[str, int]) -> None:
        """The source numbers (``joint_sources``) the node gave the ``source_list`` topics,
        by topic: each takes its ``source_time_offsets`` value."""
        self.time_offsets.configure(self.settings, numbers)
        self.health.time_offsets_s = self.time_offsets.by_topic_s
        self._forget_steady()

    def _forget_steady(self) -> None:
        """The short way decided anew at the next message (settings, model or topics
        changed)."""
        self._steady.clear()

    def _warn_frames_left(self, frames: Sequence[str]) -> None:
        if frames:
            self.reporter.logger.warning(wording.frames_left_warning(frames))

    @staticmethod
    def _start_waiting_joints(model: LoadedModel, configured: Configured) -> None:
        """Joints never received take their (new) start values."""
        positions, start = model.positions, configured.start
        waiting = ~positions.received[model.kin.layout.slot_joint]
        positions.values[waiting] = start.values[waiting]

    def static_publication(self, stamp_ns: int) -> Publication | None:
        """The whole static set (fixed joints not excluded) stamped ``stamp_ns``; None
        without a model."""
        configured = self._configured
        if configured is None:
            return None
        return Publication(
            configured.static_layout,
            stamp_ns,
            configured.static_poses,
            configured.static_global_layout,
        )

    def undecodable(self, message_type: str) -> None:
        """A ``message_type`` message dropped because the RMW could not decode its bytes:
        counted in the health report, said in a throttled warning; nothing else changes."""
        self.health.undecodable(message_type)
        self.reporter.warn_throttled(
            "undecodable", f"{message_type} dropped: {wording.UNDECODABLE_BYTES}"
        )

    def reset_limiter(self, reason: str) -> None:
        """Publish the next message of every joint (a clock or stamp jumped backwards)."""
        if self.model is not None:
            self.model.limiter.reset()
        self.reporter.warn_throttled(
            "reset", f"{reason}: rate limiter reset (simulation reset or bag loop?)"
        )

    # -- joint states -----------------------------------------------------------------------

    def joint_state(
        self,
        stamp_ns: int,
        names: tuple[str, ...],
        positions: Array,
        source: int = JOINT_STATES_SOURCE,
        block: NameBlock | None = None,
    ) -> Publication | None:
        """A JointState's transforms to publish, or None (see the module docstring).

        ``names`` are joint (or MoveIt variable) names, ``positions`` radians or metres;
        ``source`` tells the topic it came from (``joint_sources``: between topics, the newer
        stamp wins). ``block``: the name block ``names`` were read from (``cdr``), given when
        the caller publishes bytes: the stream's next messages may then take the short way
        (``joint_state_bytes``).
        """
        model, configured = self.model, self._configured
        if model is None or configured is None:
            self.reporter.warn_throttled("no model", f"joint states ignored: {NO_DESCRIPTION}")
            return None
        if len(names) != len(positions):
            self.health.mismatched_lengths()
            self.reporter.warn_throttled(
                "length",
                dropped_message("JointState", len(names), len(positions), "positions"),
            )
            return None
        stream = self._stream
        if stream is None or stream.source != source or stream.plan.names != names:
            stream = self._stream = self._new_stream(configured, names, source)
        stream.slot.received(stamp_ns, self._steady_ns())
        plan = stream.plan
        if plan.unknown or plan.first_value_only or plan.ambiguous:
            self._report_names(plan.unknown, plan.first_value_only, plan.ambiguous)
        shifted_ns = self.time_offsets.shift(stamp_ns or self._zero_stamp_ns(), source)
        if shifted_ns is None:
            self._out_of_range(stamp_ns, source)
            return None
        stamp_ns = shifted_ns
        model.sources.note(source)
        if block is not None:  # the topic's next messages of this shape: the short way?
            steady = self._steady_of(stream, block, configured)
            if steady is None:
                self._steady.pop(source, None)
            else:
                self._steady[source] = steady
        if model.sources.several and not self.settings.ignore_timestamp:
            kept = self._newer_than_other_topics(model, plan, stamp_ns, source)
            if kept is not None:  # some values are older than another topic's: left out
                if not kept.any():
                    return None
                names = tuple(name for name, keep in zip(names, kept.tolist(), strict=True) if keep)
                positions = positions[kept]
                plan = configured.message_plan(names)
        if not self._due(model, plan, stamp_ns, source):
            return None
        resolved = configured.resolved(model.positions, plan, positions)
        return self._published(model, configured, plan, resolved, stamp_ns, source, positions)

    def joint_state_bytes(self, data: bytes, source: int) -> bytes | None:
        """The serialized TFMessage to publish for the serialized JointState ``data`` from
        topic ``source`` (``b""``: nothing to publish), when ``data`` continues that topic's
        stream on its short way (``Steady``: the same name block, padding aside); None
        otherwise, with nothing done: the caller reads ``data`` and calls ``joint_state``.

        The short way is ``joint_state`` for the common message in one pass: no names decoded,
        no objects made but the bytes. Any message it does not cover (a zero stamp, a stamp out
        of range or older than another topic's values, a value to clamp or reject) takes
        ``joint_state`` from where it is, with the values read.
        """
        steady = self._steady.get(source)
        if steady is None:
            return None
        read = steady.block.read_same(data, steady.value_count)
        if read is None:
            return None
        stamp_ns, values = read
        model, stream = self.model, steady.stream
        plan = stream.plan
        shifted_ns = self.time_offsets.shift(stamp_ns, source) if stamp_ns else None
        if (
            model is None
            or shifted_ns is None
            or (  # values older than another topic's: joint_state leaves them out
                model.sources.several
                and not self.settings.ignore_timestamp
                and shifted_ns < model.limiter.extremes(plan.moves, plan.moves_key)[1]
            )
        ):
            return self._general_bytes(stamp_ns, plan.names, values, source)
        if not self._due(model, plan, shifted_ns, source):
            stream.slot.received(stamp_ns, self._steady_ns())
            return b""
        configured, layout = self._configured, steady.layout
        if configured is None or configured.loops is None:
            poses = plan.resolve_fast(model.positions, values)
        else:  # the loops closed, the passive joints published with the given ones
            closed = configured.closed_fast(model.positions, plan, values)
            poses, layout = (None, layout) if closed is None else closed
        if poses is None:
            return self._general_bytes(stamp_ns, plan.names, values, source)
        stream.slot.received(stamp_ns, self._steady_ns())
        self._record(model, plan, shifted_ns, source)
        return layout.write(shifted_ns, poses)

    def _general_bytes(
        self, stamp_ns: int, names: tuple[str, ...], values: Array, source: int
    ) -> bytes:
        """``joint_state``'s answer as the bytes to publish (``b""``: none); only for a
        stream on the short way (one tree: no global tree there)."""
        publication = self.joint_state(stamp_ns, names, values, source)
        return b"" if publication is None else publication.to_bytes()

    def _steady_of(self, stream: Stream, block: NameBlock, configured: Configured) -> Steady | None:
        """The short way of ``stream`` (read from ``block``), or None where its messages
        need what only ``joint_state`` does: names to report, a second tree (the global
        one), no fast apply (values to convert), nothing to publish, the solved passive
        joints to publish after it (``publish_loop_joint_states``). A robot's closed loops
        are closed on the short way too (``Configured.closed_fast``)."""
        plan = stream.plan
        if (
            plan.name_plan.fast is None
            or plan.unknown
            or plan.first_value_only
            or plan.ambiguous
            or not plan.published.size
            or global_tree_on(self.settings)
            # The node publishes the solved passive joints after ``joint_state`` only.
            or (configured.loops is not None and self.settings.publish_loop_joint_states)
        ):
            return None
        layout, _ = configured.layouts_of(plan.published_key)
        return Steady(stream, block, len(plan.names), layout)

    def multi_dof_joint_state(
        self,
        stamp_ns: int,
        names: tuple[str, ...],
        translations: Array,
        quaternions: Array,
        source: int = MULTI_DOF_SOURCE,
    ) -> Publication | None:
        """A MultiDOFJointState's transforms to publish, or None: ``translations`` (K, 3) in
        metres and ``quaternions`` (K, 4) x y z w per joint name; ``source`` as in
        ``joint_state``. Its transforms become the values of their joints' variable names
        (``Kinematics.multi_dof_plan``): from there on it is a JointState of those names."""
        model, configured = self.model, self._configured
        if model is None or configured is None:
            self.reporter.warn_throttled("no model", f"joint states ignored: {NO_DESCRIPTION}")
            return None
        if not len(names) == len(translations) == len(quaternions):
            self.health.mismatched_lengths()
            self.reporter.warn_throttled(
                "length",
                dropped_message("MultiDOFJointState", len(names), len(translations), "transforms"),
            )
            return None
        multi_dof = model.kin.multi_dof_plan(names)
        if multi_dof.unknown:
            self.health.unknown(multi_dof.unknown)
            self._report_names(multi_dof.unknown, (), ())
        values = multi_dof.values(translations, quaternions)
        return self.joint_state(stamp_ns, multi_dof.variable_names, values, source)

    def loop_joint_state(self) -> tuple[list[str], list[float]] | None:
        """The passive joints of the robot's loops as the last JointState solved them, then
        the loop joints held at a value given: their names and values (rad or m), for
        ``loop_joint_states``; None without loops (or nothing to say yet)."""
        model, configured = self.model, self._configured
        if model is None or configured is None:
            return None
        positions = model.positions
        held = np.flatnonzero(positions.loop_received).tolist()
        if not configured.solved_joints.size and not held:
            return None
        layout = model.kin.layout
        joints = configured.solved_joints
        names = [layout.moving_joints[j].name for j in joints.tolist()]
        names += [model.robot.loop_joints[k].name for k in held]
        values = positions.values[layout.slot[joints]].tolist()
        return names, values + positions.loop_values[held].tolist()

    def default_positions(self) -> Publication | None:
        """Joints never received (and not excluded) at their start position (``zeros.*``, else
        zero; clamped), stamped with the node clock; None when there are none."""
        model, configured = self.model, self._configured
        if model is None or configured is None:
            return None
        pending = np.flatnonzero(configured.publish_mask & ~model.positions.received)
        if pending.size == 0:
            return None
        stamp_ns = self.unsent_stamp_ns = self._clock_ns()
        if configured.loops is None:
            poses = configured.default_poses[pending]
        else:  # the passive joints among them at their solved values
            configured.loops.close(model.positions)
            poses = model.kin.joint_poses(model.positions, pending)
        return configured.publication(pending.tobytes(), stamp_ns, poses)

    # -- steps ------------------------------------------------------------------------------

    def _due(self, model: LoadedModel, plan: MessagePlan, stamp_ns: int, source: int) -> bool:
        """The rate limiter, in message time: due when the least recently published joint
        ``plan`` moves was published at least one interval before ``stamp_ns``; a stamp before
        the latest publication of one of them by the same topic resets the limiter (and is
        due); one before values of other topics only is no jump back."""
        moves = plan.moves
        if not moves.size:
            return False
        if self.settings.ignore_timestamp:
            return True
        earliest_ns, latest_ns = model.limiter.extremes(moves, plan.moves_key)
        if stamp_ns < latest_ns:
            sources = model.sources
            if (
                not sources.several
                or (
                    (model.limiter.times(moves) > stamp_ns) & ~sources.from_others(moves, source)
                ).any()
            ):
                self.reset_limiter("joint state stamps jumped backwards")
                return True
        return stamp_ns >= earliest_ns + self.settings.interval_ns

    def _newer_than_other_topics(
        self, model: LoadedModel, plan: MessagePlan, stamp_ns: int, source: int
    ) -> BoolArray | None:
        """Which values of the message to keep: False for those of joints whose value from
        another topic has a newer stamp than ``stamp_ns`` (each counted in
        ``sources.conflicts``, logged once); None when every value is kept."""
        if not plan.moves.size or stamp_ns >= model.limiter.extremes(plan.moves, plan.moves_key)[1]:
            return None  # nothing named, or nothing newer (the common case: no array built)
        name_plan = plan.name_plan
        converted = name_plan.converted
        joints = np.concatenate((name_plan.joints, [c.joint for c in converted])).astype(np.intp)
        where = np.concatenate((name_plan.message_index, [c.message_index for c in converted]))
        older = (model.limiter.times(joints) > stamp_ns) & model.sources.from_others(joints, source)
        if not older.any():
            return None
        kept = np.ones(len(plan.names), dtype=bool)
        kept[where[older].astype(np.intp)] = False
        moving = model.kin.moving_joints
        conflicting = sorted(moving[j].name for j in set(joints[older].tolist()))
        model.sources.conflicts.update(conflicting)
        self.reporter.names_once(
            "older than another topic",
            conflicting,
            "joints given by several topics: a value older than another topic's is ignored",
        )
        return kept

    def _published(
        self,
        model: LoadedModel,
        configured: Configured,
        plan: MessagePlan,
        resolved: Resolved,
        stamp_ns: int,
        source: int,
        values: Array,
    ) -> Publication | None:
        """Report what was clamped or rejected (given the message's ``values`` of
        ``plan.names``), record the publication time of the joints ``plan`` moves and build
        what to publish."""
        if resolved.clamped or resolved.rejected:
            self.reporter.values(resolved.clamped, resolved.rejected, self.settings.clamp)
            self.health.clamped(plan.names, values, resolved.clamped, self.settings.clamp_mode)
            self.health.rejected(resolved.rejected)
        self._record(model, plan, stamp_ns, source)
        if not resolved.joints.size:
            return None
        return configured.publication(resolved.joints_key, stamp_ns, resolved.poses)

    def _record(self, model: LoadedModel, plan: MessagePlan, stamp_ns: int, source: int) -> None:
        """The joints ``plan`` moves were published at ``stamp_ns`` (message time) with values
        from topic ``source``: for the rate limiter and between topics, and for the remote
        output."""
        self.unsent_stamp_ns = stamp_ns
        if not self.settings.ignore_timestamp:  # else never read (configure resets it)
            model.limiter.record(plan.moves, plan.moves_key, stamp_ns)
            model.sources.record(plan.moves, source)

    def _new_stream(self, configured: Configured, names: tuple[str, ...], source: int) -> Stream:
        """The ``Stream`` of JointStates with ``names`` from topic ``source``: its plan (one
        per shape, ``Configured.message_plan``) and its health slot (one per shape and topic);
        its unknown names go to the health report."""
        plan = configured.message_plan(names)
        self.health.unknown(plan.unknown)
        return Stream(source, plan, self.health.slot(source, plan.names, plan.moves))

    def _out_of_range(self, stamp_ns: int, source: int) -> None:
        """A message whose stamp ``stamp_ns`` plus its topic's offset is no stamp: dropped,
        counted in the health report, and logged (throttled)."""
        self.health.stamp_out_of_range()
        offset_s = self.time_offsets.offset_ns(source) / NS_PER_S
        self.reporter.warn_throttled(
            "stamp range",
            wording.stamp_out_of_range(stamp_ns / NS_PER_S, offset_s),
        )

    def _zero_stamp_ns(self) -> int:
        self.reporter.info_once(
            "zero stamp", "joint states with a zero stamp are stamped with the node clock"
        )
        return self._clock_ns()

    def _report_names(
        self,
        unknown: Sequence[str],
        first_value_only: Sequence[str],
        ambiguous: Sequence[tuple[str, tuple[str, ...]]],
    ) -> None:
        self.reporter.names_once(
            "unknown", unknown, "ignoring names that are not moving joints of the robot"
        )
        self.reporter.names_once(
            "first value",
            first_value_only,
            "bare names of multi-value joints (as Gazebo's bridge publishes them) set their "
            "first value only",
        )
        for name, candidates in ambiguous:
            self.reporter.warning_once(
                f"ambiguous {name}",
                f"ignoring joint state name {name!r}: the bare name of several nested models' "
                f"joints ({', '.join(candidates)}); give the scoped name",
            )


def _beside_the_model(settings: Settings) -> Settings:
    """``settings`` without what does not change the configured model: ``zeros`` (start
    values, taken without a rebuild) and the attachments (a change of them that matters comes
    with a new model; one of unlisted names' fields changes nothing)."""
    return replace(
        settings,
        zeros=(),
        attachments=(),
        attachment_fields=(),
        remote_frames=(),
        remote_rate=0.0,
        remote_topic="",
    )


def _static_set_of(settings: Settings) -> tuple[object, ...]:
    """What the static set's frames and values depend on among ``settings``."""
    return (
        settings.frame_prefix,
        settings.global_frame_prefix,
        settings.exclude_joints,
        settings.clamp,
    )
