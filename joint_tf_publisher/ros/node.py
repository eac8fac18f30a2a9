"""The ROS 2 node: robot description + joint states -> tf2 transforms (rclpy adapter).

A thin adapter over the core: parsing lives in ``urdf``/``sdf``, all joint math in
``kinematics``; this module turns ROS parameters and messages into calls on them and their
results into ``TFMessage``s. robot_state_publisher's parameters and topics keep their names
and meaning; see README.md ("Parameters", "Topics") for the full list.

Behaviour worth knowing (documented in README.md too):

- Moving joints are published on ``/tf`` only when a JointState (or MultiDOFJointState)
  arrives: every joint of one message, plus its mimic followers, in ONE TFMessage stamped with
  the message's stamp. Fixed joints are published once on ``/tf_static`` (complete set,
  republished as a whole after a reload or a change of ``frame_prefix``/``exclude_joints``).
- Rate limiting, as robot_state_publisher, in message time: a message is published when its
  least recently published joint was last published at least ``1 / publish_frequency`` s
  earlier (message stamps), or always with ``ignore_timestamp``. Unlike robot_state_publisher,
  a zero stamp is replaced by the node clock, and a stamp (or node clock) that jumps backwards
  resets the limiter with one throttled warning.
- Mimic joints follow their leader through chains of any depth; a value given for a mimic
  joint in the message is ignored (the leader decides).
- Values are clamped to hard or soft limits (``clamp``); non-finite values never reach /tf.
- The joint-state subscriptions keep up to ``JOINT_STATES_DEPTH`` messages (best effort, as
  sensor data QoS), and ``spin`` takes every message waiting on each wake-up: a node paused a
  few milliseconds on a busy machine catches up instead of dropping a burst at 1 kHz.
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import rclpy
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from numpy.typing import NDArray
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.exceptions import ParameterException, ParameterUninitializedException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.qos_overriding_options import QoSOverridingOptions
from rclpy.signals import uninstall_signal_handlers
from rclpy.subscription import Subscription
from rclpy.timer import Timer
from sensor_msgs.msg import JointState, MultiDOFJointState
from std_msgs.msg import String

from ..errors import ModelError
from ..kinematics.compiled import MAX_JOINT_VALUE, Kinematics, Update
from ..robot import Robot
from .tf_broadcast import StaticTransformSet, TransformSender

NODE_NAME = "joint_tf_publisher"
CLAMP_MODES: dict[str, str | None] = {"hard": "hard", "soft": "soft", "none": None}
MAX_PUBLISH_FREQUENCY = 1000.0
# "Never published" in the rate limiter: far in the past, yet safe to add an interval to.
_NEVER_NS = -(2**62)
_THROTTLE_S = 10.0
_MAX_REMEMBERED_NAMES = 1000
# Longest a shutdown by signal can go unnoticed by the spin loop, seconds.
_SHUTDOWN_POLL_S = 0.25
# While joint states stream: the longest the executor's entities (parameter services, timers,
# the description topic) wait between two turns of the executor, seconds.
_SERVICE_PERIOD_S = 0.01
#: Queue depth of the joint-state subscriptions: 100 ms at 1 kHz (sensor data QoS has 5).
JOINT_STATES_DEPTH = 100
_NAMES_PER_LINE = 10


class StartupError(Exception):
    """A reason the node cannot start (bad parameters or description); reported in one line."""


class _Rejected(Exception):
    """A parameter change refused by the set-parameters callback; the text is the reason."""


class Throttle:
    """At most one report per ``period_s`` per key, decided before any text is built.

    rclpy's ``throttle_duration_sec`` inspects the caller's frame on every call (about a
    millisecond), too slow for a check made on every joint-state message.
    """

    def __init__(self, period_s: float) -> None:
        self.period_s = period_s
        self._next_s: dict[str, float] = {}

    def due(self, key: str) -> bool:
        """True (and start a new period) if no report for ``key`` was made this period."""
        now_s = time.monotonic()
        if now_s < self._next_s.get(key, -math.inf):
            return False
        self._next_s[key] = now_s + self.period_s
        return True


@dataclass(frozen=True)
class Settings:
    """The node's parameters other than the description text (see README, "Parameters")."""

    publish_frequency: float = 20.0
    ignore_timestamp: bool = False
    frame_prefix: str = ""
    clamp: str = "hard"
    exclude_joints: tuple[str, ...] = ()
    publish_default_positions: bool = False
    model_name: str = ""

    @property
    def interval_ns(self) -> int:
        """Minimum spacing of publications per joint in message time, nanoseconds."""
        return int(round(1e9 / self.publish_frequency))


def parse_frequency(value: Any) -> float:
    """``publish_frequency`` as a float in (0, 1000] Hz; _Rejected otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Rejected(f"publish_frequency must be a number, got {value!r}")
    frequency = float(value)
    if not 0.0 < frequency <= MAX_PUBLISH_FREQUENCY:
        raise _Rejected(
            f"publish_frequency must be > 0 and <= {MAX_PUBLISH_FREQUENCY:g} Hz, got {frequency:g}"
        )
    return frequency


def parse_clamp(value: Any) -> str:
    """``clamp`` as one of ``CLAMP_MODES``; _Rejected otherwise."""
    if value not in CLAMP_MODES:
        raise _Rejected(f"clamp must be one of {', '.join(CLAMP_MODES)}, got {value!r}")
    return str(value)


def parse_joint_names(value: Any) -> tuple[str, ...]:
    """``exclude_joints`` as names: a string array, or one comma-separated string."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    if not all(isinstance(item, str) for item in items):
        raise _Rejected(f"exclude_joints must be a string array, got {value!r}")
    return tuple(name.strip() for name in items if name.strip())


def parse_bool(name: str, value: Any) -> bool:
    """A bool parameter; _Rejected for another type."""
    if not isinstance(value, bool):
        raise _Rejected(f"{name} must be a bool, got {value!r}")
    return value


def stamp_to_ns(stamp: Time) -> int:
    """A builtin_interfaces/Time as integer nanoseconds."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def joint_states_qos() -> QoSProfile:
    """QoS of the joint-state subscriptions: sensor data's (best effort, so any publisher
    matches; volatile) with a deeper queue, ``JOINT_STATES_DEPTH``. A fresh object per call:
    rclpy writes QoS overrides into the profile it is given."""
    return QoSProfile(
        depth=JOINT_STATES_DEPTH,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.VOLATILE,
    )


def make_transform(parent: str, child: str) -> TransformStamped:
    """A TransformStamped with its frame ids set (identity transform, zero stamp)."""
    msg = TransformStamped()
    msg.header.frame_id = parent
    msg.child_frame_id = child
    msg.transform.rotation.w = 1.0
    return msg


class LoadedModel:
    """One robot description with the node's state for it: joint values and limiter times."""

    def __init__(self, robot: Robot, text: str) -> None:
        self.robot = robot
        self.text = text
        self.kin: Kinematics = robot.kinematics
        self.positions = self.kin.new_positions()
        moving = self.kin.moving_joints
        # Per moving joint: message time of the last publication (rate limiter), ns.
        self.last_publish_ns = np.full(len(moving), _NEVER_NS, dtype=np.int64)
        # Set by configure(): which moving joints this node publishes, their cached messages,
        # and their transforms at default (zero) positions.
        self.publish_mask = np.ones(len(moving), dtype=bool)
        self.moving_frames: list[tuple[str, str]] = []
        self.default_translations = np.zeros((len(moving), 3))
        self.default_quaternions = np.zeros((len(moving), 4))

    def configure(self, settings: Settings) -> tuple[list[TransformStamped], list[str]]:
        """Apply prefix, exclusions and clamp mode; return the static set and unknown names.

        The static transforms (fixed joints, not excluded) carry frames with the prefix and a
        zero stamp (the caller stamps them).
        """
        excluded = set(settings.exclude_joints)
        unknown = sorted(excluded - set(self.robot.joints))
        prefix = settings.frame_prefix
        moving = self.kin.moving_joints
        self.publish_mask = np.array([joint.name not in excluded for joint in moving], dtype=bool)
        self.moving_frames = [(prefix + joint.parent, prefix + joint.child) for joint in moving]
        # Zero positions clamped into the limits (mimic followers from their leaders).
        zero = self.kin.new_positions()
        self.kin.apply(zero, [], [], clamp=CLAMP_MODES[settings.clamp])
        self.default_translations, self.default_quaternions = self.kin.joint_transforms(
            zero, np.arange(len(moving))
        )
        self.reset_limiter()

        statics: list[TransformStamped] = []
        translations, quaternions = self.kin.fixed_transforms()
        for joint, (tx, ty, tz), (qx, qy, qz, qw) in zip(
            self.kin.fixed_joints, translations.tolist(), quaternions.tolist(), strict=True
        ):
            if joint.name in excluded:
                continue
            msg = make_transform(prefix + joint.parent, prefix + joint.child)
            translation = msg.transform.translation
            translation.x, translation.y, translation.z = tx, ty, tz
            rotation = msg.transform.rotation
            rotation.x, rotation.y, rotation.z, rotation.w = qx, qy, qz, qw
            statics.append(msg)
        return statics, unknown

    def reset_limiter(self) -> None:
        """Forget all publication times: the next message of every joint is published."""
        self.last_publish_ns.fill(_NEVER_NS)


class JointTfPublisher(Node):
    """robot_state_publisher's job for URDF and SDFormat robots, with every joint type.

    Raises StartupError (from the constructor) for an unusable start: empty or invalid
    ``robot_description``, or an out-of-range parameter.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(NODE_NAME, **kwargs)
        self._declare_parameters()
        try:
            self._settings = self._read_settings()
        except _Rejected as err:
            raise StartupError(str(err)) from None
        self._use_topic = bool(
            self._value("use_robot_description_topic") or self._value("description_from_topic")
        )
        self._model: LoadedModel | None = None
        if not self._use_topic:
            text = str(self._value("robot_description") or "")
            if not text.strip():
                raise StartupError(
                    "parameter robot_description is empty: give the URDF or SDFormat text "
                    "(or set use_robot_description_topic:=true)"
                )
            try:
                self._model = self._load(text, self._settings.model_name, "robot_description")
            except ModelError as err:
                raise StartupError(str(err)) from None

        self._tf = TransformSender(self)
        self._tf_static = StaticTransformSet(self)
        latched = QoSProfile(
            depth=1,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL,
        )
        self._description_pub = None
        self._description_sub = None
        if self._use_topic:
            self._description_sub = self.create_subscription(
                String, "robot_description", self._on_description_message, latched
            )
        else:
            self._description_pub = self.create_publisher(String, "robot_description", latched)

        # Diagnostics state: counters and the names already reported once.
        self._clamp_counts: Counter[str] = Counter()
        self._rejected_counts: Counter[str] = Counter()
        self._reported_names: dict[str, set[str]] = {}
        self._pending_names: dict[str, list[str]] = {}
        self._reported_zero_stamp = False
        self._last_callback_ns = self.get_clock().now().nanoseconds
        self._default_timer: Timer | None = None
        self._throttle = Throttle(_THROTTLE_S)

        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._joint_state_sub = self.create_subscription(
            JointState,
            "joint_states",
            self._on_joint_state,
            joint_states_qos(),
            qos_overriding_options=QoSOverridingOptions.with_default_policies(),
        )
        self._multi_dof_sub = self.create_subscription(
            MultiDOFJointState,
            "multi_dof_joint_states",
            self._on_multi_dof_joint_state,
            joint_states_qos(),
            qos_overriding_options=QoSOverridingOptions.with_default_policies(),
        )

        if self._model is not None:
            self._install(self._model)
        else:
            self.get_logger().info("waiting for the robot description on topic robot_description")
        self._update_default_timer()

    @property
    def joint_state_inputs(self) -> tuple[tuple[Subscription[Any], Callable[[Any], None]], ...]:
        """The hot subscriptions (JointState, MultiDOFJointState) and their callbacks, which
        ``spin`` serves itself."""
        return (
            (self._joint_state_sub, self._on_joint_state),
            (self._multi_dof_sub, self._on_multi_dof_joint_state),
        )

    # -- parameters ---------------------------------------------------------------------------

    def _declare_parameters(self) -> None:
        def describe(
            text: str, *, dynamic: bool = False, read_only: bool = False
        ) -> ParameterDescriptor:
            return ParameterDescriptor(
                description=text, dynamic_typing=dynamic, read_only=read_only
            )

        self.declare_parameter(
            "robot_description", "", describe("URDF or SDFormat text of the robot")
        )
        self.declare_parameter(
            "publish_frequency",
            20.0,
            describe(
                "maximum rate (Hz, message time) of /tf publications per joint; (0, 1000]",
                dynamic=True,
            ),
        )
        self.declare_parameter(
            "ignore_timestamp",
            False,
            describe("publish every joint state regardless of its stamp (no rate limiting)"),
        )
        self.declare_parameter(
            "frame_prefix", "", describe("text prepended to every frame id (plain concatenation)")
        )
        self.declare_parameter(
            "clamp", "hard", describe("limits joint values are clamped to: hard, soft or none")
        )
        self.declare_parameter(
            "exclude_joints",
            Parameter.Type.STRING_ARRAY,
            describe("joints whose transforms this node does not publish"),
        )
        self.declare_parameter(
            "publish_default_positions",
            False,
            describe("publish joints never received at their zero position, at publish_frequency"),
        )
        self.declare_parameter(
            "model_name",
            "",
            describe("SDFormat only: the <model> to publish where the file has several"),
        )
        self.declare_parameter(
            "use_robot_description_topic",
            False,
            describe(
                "take the description from topic robot_description, not the parameter",
                read_only=True,
            ),
        )
        self.declare_parameter(
            "description_from_topic",
            False,
            describe(
                "alias of use_robot_description_topic (newer robot_state_publisher name)",
                read_only=True,
            ),
        )

    def _value(self, name: str) -> Any:
        """A parameter's value; None where it has none (``-p name:=`` with a blank value)."""
        try:
            return self.get_parameter(name).value
        except ParameterUninitializedException:
            return None

    def _read_settings(self) -> Settings:
        value = self._value
        return Settings(
            publish_frequency=parse_frequency(value("publish_frequency")),
            ignore_timestamp=parse_bool("ignore_timestamp", value("ignore_timestamp")),
            frame_prefix=str(value("frame_prefix") or ""),
            clamp=parse_clamp(value("clamp")),
            exclude_joints=parse_joint_names(value("exclude_joints")),
            publish_default_positions=parse_bool(
                "publish_default_positions", value("publish_default_positions")
            ),
            model_name=str(value("model_name") or ""),
        )

    def _on_set_parameters(self, parameters: list[Parameter[Any]]) -> SetParametersResult:
        """Validate a parameter change; apply it only if every parameter in it is valid."""
        settings = self._settings
        new_text: str | None = None
        try:
            for parameter in parameters:
                name, value = parameter.name, parameter.value
                if name == "robot_description":
                    if self._use_topic:
                        raise _Rejected(
                            "robot_description comes from the topic "
                            "(use_robot_description_topic is true)"
                        )
                    new_text = str(value or "")
                    if not new_text.strip():
                        raise _Rejected("robot_description must not be empty")
                elif name == "publish_frequency":
                    settings = replace(settings, publish_frequency=parse_frequency(value))
                elif name == "ignore_timestamp":
                    settings = replace(settings, ignore_timestamp=parse_bool(name, value))
                elif name == "frame_prefix":
                    settings = replace(settings, frame_prefix=str(value or ""))
                elif name == "clamp":
                    settings = replace(settings, clamp=parse_clamp(value))
                elif name == "exclude_joints":
                    settings = replace(settings, exclude_joints=parse_joint_names(value))
                elif name == "publish_default_positions":
                    settings = replace(settings, publish_default_positions=parse_bool(name, value))
                elif name == "model_name":
                    settings = replace(settings, model_name=str(value or ""))
            new_model: LoadedModel | None = None
            model_name_changed = settings.model_name != self._settings.model_name
            if new_text is None and model_name_changed and self._model is not None:
                new_text = self._model.text
            if new_text is not None:
                new_model = self._load(new_text, settings.model_name, "robot_description")
        except (_Rejected, ModelError) as err:
            reason = str(err)
            self.get_logger().warning(f"parameter change rejected: {reason}")
            return SetParametersResult(successful=False, reason=reason)
        self._apply_settings(settings, new_model)
        return SetParametersResult(successful=True)

    def _apply_settings(self, settings: Settings, new_model: LoadedModel | None) -> None:
        old = self._settings
        self._settings = settings
        if new_model is not None:
            self._install(new_model)
        elif self._model is not None and (
            (settings.frame_prefix, settings.exclude_joints, settings.clamp)
            != (old.frame_prefix, old.exclude_joints, old.clamp)
        ):
            self._publish_statics(self._model)
        if (settings.publish_frequency, settings.publish_default_positions) != (
            old.publish_frequency,
            old.publish_default_positions,
        ):
            self._update_default_timer()

    # -- model ----------------------------------------------------------------------------------

    @staticmethod
    def _load(text: str, model_name: str, source: str) -> LoadedModel:
        """Parse and compile a description; ModelError naming ``source`` and line."""
        robot = Robot.from_xml_string(text, source=source, model_name=model_name or None)
        return LoadedModel(robot, text)

    def _install(self, model: LoadedModel) -> None:
        """Make ``model`` current: publish its description (parameter mode) and statics."""
        self._model = model
        for warning in model.robot.warnings:
            self.get_logger().warning(warning)
        if self._description_pub is not None:
            self._description_pub.publish(String(data=model.text))
        self._publish_statics(model)
        kin = model.kin
        self.get_logger().info(
            f"robot {model.robot.name!r}: {len(kin.moving_joints)} moving joints, "
            f"{len(kin.fixed_joints)} fixed joints"
        )

    def _publish_statics(self, model: LoadedModel) -> None:
        """Publish the complete static set of ``model`` under the current settings."""
        statics, unknown = model.configure(self._settings)
        if unknown:
            self.get_logger().warning(
                f"exclude_joints names joints not in the robot: {', '.join(unknown)}"
            )
        stamp = self.get_clock().now().to_msg()
        for msg in statics:
            msg.header.stamp = stamp
        self._tf_static.replace(statics)

    def _on_description_message(self, msg: String) -> None:
        try:
            model = self._load(msg.data, self._settings.model_name, "robot_description topic")
        except ModelError as err:
            self.get_logger().error(f"robot description from topic rejected: {err}")
            return
        self._install(model)

    # -- joint states ---------------------------------------------------------------------------

    def _on_joint_state(self, msg: JointState) -> None:
        model = self._model
        if model is None:
            if self._throttle.due("no model"):
                self.get_logger().warning("joint states ignored: no robot description yet")
            return
        if len(msg.name) != len(msg.position):
            if self._throttle.due("length"):
                self.get_logger().warning(
                    f"JointState dropped: {len(msg.name)} names but {len(msg.position)} "
                    "positions (reported at most every 10 s)"
                )
            return
        update = model.kin.apply(
            model.positions, msg.name, msg.position, clamp=CLAMP_MODES[self._settings.clamp]
        )
        self._report(update)
        self._publish_moving(model, update.moved, msg.header.stamp)

    def _on_multi_dof_joint_state(self, msg: MultiDOFJointState) -> None:
        model = self._model
        if model is None:
            if self._throttle.due("no model"):
                self.get_logger().warning("joint states ignored: no robot description yet")
            return
        if len(msg.joint_names) != len(msg.transforms):
            if self._throttle.due("length"):
                self.get_logger().warning(
                    f"MultiDOFJointState dropped: {len(msg.joint_names)} joint names but "
                    f"{len(msg.transforms)} transforms (reported at most every 10 s)"
                )
            return
        translations = np.array(
            [(t.translation.x, t.translation.y, t.translation.z) for t in msg.transforms],
            dtype=np.float64,
        ).reshape(-1, 3)
        quaternions = np.array(
            [(t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w) for t in msg.transforms],
            dtype=np.float64,
        ).reshape(-1, 4)
        update = model.kin.apply_multi_dof(
            model.positions, list(msg.joint_names), translations, quaternions
        )
        self._report(update)
        self._publish_moving(model, update.moved, msg.header.stamp)

    def _report(self, update: Update) -> None:
        """Log what an update clamped, rejected or ignored (throttled or once per name)."""
        logger = self.get_logger()
        if update.clamped:
            self._clamp_counts.update(update.clamped)
            if self._throttle.due("clamped"):
                counts = ", ".join(
                    f"{name} ({count}x)" for name, count in self._clamp_counts.most_common(10)
                )
                logger.warning(
                    f"joint values clamped to {self._settings.clamp} limits, counts since "
                    f"start: {counts}"
                )
        if update.rejected:
            self._rejected_counts.update(update.rejected)
            if self._throttle.due("rejected"):
                counts = ", ".join(
                    f"{name} ({count}x)" for name, count in self._rejected_counts.most_common(10)
                )
                logger.warning(
                    f"non-finite values, values beyond +-{MAX_JOINT_VALUE:g} or zero quaternions "
                    f"ignored, joints keep their last good value; counts since start: {counts}"
                )
        self._report_names_once(
            "unknown", update.unknown, "ignoring names that are not moving joints of the robot"
        )
        self._report_names_once(
            "mimic",
            update.ignored_mimic,
            "values for mimic joints are ignored (they follow their leader)",
        )

    def _report_names_once(self, kind: str, names: Sequence[str], text: str) -> None:
        """Log each name once, at most one line per 10 s per kind, at most 10 names a line."""
        if not names:
            return
        reported = self._reported_names.setdefault(kind, set())
        pending = self._pending_names.setdefault(kind, [])
        for name in names:
            if name not in reported and len(reported) < _MAX_REMEMBERED_NAMES:
                reported.add(name)
                pending.append(name)
        if pending and self._throttle.due(kind):
            shown = ", ".join(pending[:_NAMES_PER_LINE])
            more = len(pending) - _NAMES_PER_LINE
            suffix = f" and {more} more" if more > 0 else ""
            self.get_logger().info(f"{text}: {shown}{suffix}")
            pending.clear()

    def _message_stamp(self, stamp: Time) -> tuple[Time, int]:
        """The stamp to publish with and its ns: a zero stamp becomes the node clock's now."""
        stamp_ns = stamp_to_ns(stamp)
        if stamp_ns != 0:
            return stamp, stamp_ns
        if not self._reported_zero_stamp:
            self._reported_zero_stamp = True
            self.get_logger().info(
                "joint states with a zero stamp are stamped with the node clock (reported once)"
            )
        now = self.get_clock().now()
        return now.to_msg(), now.nanoseconds

    def _publish_moving(self, model: LoadedModel, moved: NDArray[np.intp], stamp: Time) -> None:
        """Rate-limit in message time, then publish ``moved`` joints in one TFMessage."""
        stamp, stamp_ns = self._message_stamp(stamp)
        now_ns = self.get_clock().now().nanoseconds
        jumped = now_ns < self._last_callback_ns
        self._last_callback_ns = now_ns
        if moved.size == 0:
            if jumped:
                self._reset_limiter(model, "the node clock jumped backwards")
            return
        last_ns = model.last_publish_ns[moved]
        if not self._settings.ignore_timestamp:
            if jumped:
                self._reset_limiter(model, "the node clock jumped backwards")
            elif stamp_ns < int(last_ns.max()):
                self._reset_limiter(model, "joint state stamps jumped backwards")
            else:
                if stamp_ns < int(last_ns.min()) + self._settings.interval_ns:
                    return
        model.last_publish_ns[moved] = stamp_ns
        publish = moved[model.publish_mask[moved] & model.positions.received[moved]]
        if publish.size:
            self._send_moving(model, publish, stamp)

    def _reset_limiter(self, model: LoadedModel, reason: str) -> None:
        model.reset_limiter()
        if self._throttle.due("reset"):
            self.get_logger().warning(
                f"{reason}: rate limiter reset (simulation reset or bag loop?); "
                "reported at most every 10 s"
            )

    def _send_moving(self, model: LoadedModel, indices: NDArray[np.intp], stamp: Time) -> None:
        translations, quaternions = model.kin.joint_transforms(model.positions, indices)
        # Defence in depth (the kinematics rejects non-finite input already): a whole-array
        # check first (finite in practice), rows only when it fails.
        if not (np.isfinite(translations).all() and np.isfinite(quaternions).all()):
            finite = np.isfinite(translations).all(axis=1) & np.isfinite(quaternions).all(axis=1)
            if not finite.all():
                if self._throttle.due("non-finite"):
                    self.get_logger().error("non-finite transforms withheld")
                indices, translations, quaternions = (
                    indices[finite],
                    translations[finite],
                    quaternions[finite],
                )
        frames = [model.moving_frames[i] for i in indices.tolist()]
        self._tf.send_arrays(frames, stamp, translations, quaternions)

    # -- default positions ----------------------------------------------------------------------

    def _update_default_timer(self) -> None:
        if self._default_timer is not None:
            self.destroy_timer(self._default_timer)
            self._default_timer = None
        if self._settings.publish_default_positions:
            self._default_timer = self.create_timer(
                1.0 / self._settings.publish_frequency, self._publish_default_positions
            )

    def _publish_default_positions(self) -> None:
        """Publish joints never received at their zero (clamped) position, stamped now."""
        model = self._model
        if model is None:
            return
        pending = np.flatnonzero(model.publish_mask & ~model.positions.received)
        if pending.size == 0:
            return
        stamp = self.get_clock().now().to_msg()
        frames = [model.moving_frames[i] for i in pending.tolist()]
        self._tf.send_arrays(
            frames, stamp, model.default_translations[pending], model.default_quaternions[pending]
        )


def main(args: list[str] | None = None) -> int:
    """Console script ``joint_tf_publisher``: run the node until SIGINT or SIGTERM.

    Returns 0 on a clean shutdown; 1 with one line ``joint_tf_publisher: <reason>`` on stderr
    when the node cannot start.
    """
    try:
        rclpy.init(args=args)
    except Exception as err:  # rcl reports bad --ros-args as RCLError, with a long text
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else repr(err)
        return _startup_failure(f"cannot initialise ROS: {first_line}")
    try:
        node = JointTfPublisher()
    except (KeyboardInterrupt, ExternalShutdownException):
        rclpy.try_shutdown()
        return 0
    except Exception as err:
        if not rclpy.ok():  # SIGINT/SIGTERM shut ROS down while the node was starting
            rclpy.try_shutdown()
            return 0
        if isinstance(err, StartupError):
            return _startup_failure(str(err))
        if isinstance(err, (ModelError, ValueError, TypeError, ParameterException)):
            return _startup_failure(f"{type(err).__name__}: {err}")
        raise  # a bug: keep its traceback
    executor = SingleThreadedExecutor()
    try:
        executor.add_node(node)
        spin(node, executor)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok():
            raise  # a bug: keep its traceback
        # else a signal shut ROS down while the loop was using its entities: a clean exit
    finally:
        # rclpy's signal thread triggers every registered signal guard condition (the
        # executor's) without a lock: destroying one while it runs is a use-after-free
        # (seen: SIGSEGV in rcl_trigger_guard_condition at Ctrl-C, exit code -11). Uninstalling
        # the handlers first joins that thread; a second signal now gets Python's defaults.
        uninstall_signal_handlers()
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def spin(node: JointTfPublisher, executor: SingleThreadedExecutor) -> None:
    """Run ``node`` until ROS shuts down: joint states from a reused wait set, the rest
    through ``executor``.

    Not ``rclpy.spin``: its executor builds a wait set of every entity of the node (parameter
    services, subscriptions, timers, events) for each callback, which alone takes about half
    a core at 1 kHz. Here each turn waits on the two joint-state subscriptions with one
    reused wait set (for at most ``_SERVICE_PERIOD_S``, so a signal is noticed within it;
    no signal guard condition of its own, see ``main``) and handles every
    message waiting, in arrival order, each published as robot_state_publisher does (none
    coalesced; rate limiting decides). Everything else gets a turn of ``executor``
    (``spin_once``: one ready callback) at least every ``_SERVICE_PERIOD_S`` and whenever a
    timer is due. When no joint state arrives for that long, the loop blocks in the executor
    instead (it serves joint states too, one per turn), so an idle node does not poll and
    answers parameter requests at once. Every wait is bounded: a shutdown cannot go unnoticed
    (rclpy.spin could block after a signal that landed before it waited).
    """
    context = node.context
    if context.handle is None:
        raise RuntimeError("the node's context is not initialised")
    if not hasattr(_rclpy, "WaitSet"):  # an rclpy whose internals differ: the plain executor
        node.get_logger().info("rclpy has no WaitSet binding: spinning with the executor")
        with contextlib.suppress(ExternalShutdownException):  # returns as the loop below does
            executor.spin()
        return
    inputs = node.joint_state_inputs
    wait_set = _rclpy.WaitSet(len(inputs), 0, 0, 0, 0, 0, context.handle)
    try:
        next_turn = time.monotonic() + _SERVICE_PERIOD_S
        streaming = False  # a joint state was handled since the executor's last turn
        while context.ok():
            wait_s = min(next_turn - time.monotonic(), _next_timer_s(node))
            handled = _handle_joint_states(wait_set, inputs, wait_s, next_turn)
            streaming = streaming or handled > 0
            if time.monotonic() < next_turn and _next_timer_s(node) > 0.0:
                continue
            # The executor's turn: a glance while joint states stream, else a bounded block.
            executor.spin_once(timeout_sec=0.0 if streaming else _SHUTDOWN_POLL_S)
            streaming = False
            next_turn = time.monotonic() + _SERVICE_PERIOD_S
    finally:
        wait_set.destroy_when_not_in_use()


def _handle_joint_states(
    wait_set: Any,
    inputs: Sequence[tuple[Subscription[Any], Callable[[Any], None]]],
    wait_s: float,
    deadline: float,
) -> int:
    """Wait up to ``wait_s`` for joint states, then handle every message waiting (until
    ``deadline``, monotonic s, so a flood cannot starve the executor); return the count."""
    (first, _), (second, _) = inputs  # entered: the handles stay valid meanwhile
    with first.handle, second.handle:
        wait_set.clear_entities()
        for subscription, _ in inputs:
            wait_set.add_subscription(subscription.handle)
        wait_set.wait(max(0, int(wait_s * 1e9)))
        handled = 0
        for subscription, callback in inputs:
            handle, msg_type = subscription.handle, subscription.msg_type
            while (taken := handle.take_message(msg_type, False)) is not None:
                callback(taken[0])
                handled += 1
                if time.monotonic() >= deadline:
                    return handled
    return handled


def _next_timer_s(node: Node) -> float:
    """Seconds until the node's next timer is due (inf without one; <= 0 when due)."""
    due_ns = [ns for timer in node.timers if (ns := timer.time_until_next_call()) is not None]
    return min(due_ns) * 1e-9 if due_ns else math.inf


def _startup_failure(reason: str) -> int:
    print(f"{NODE_NAME}: {' '.join(reason.split())}", file=sys.stderr)
    rclpy.try_shutdown()
    return 1


if __name__ == "__main__":
    sys.exit(main())
