"""The node's parameters as one table, and the settings read from them (no rclpy here).

``PARAMETERS`` lists every parameter the node declares: name, default (its type too),
description, range and whether it is read-only. The node declares them from it (with
descriptors that ``ros2 param describe`` shows), validates every change against it
(``Settings.changed``), and tests check README.md and config/joint_tf_publisher.yaml against
it. A new parameter is one row here, one field of ``Settings`` with its parser, and its docs.
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from ..description.compose import ATTACHMENT_FIELDS, Attachment
from ..description.files import ALLOWED_FOLDERS_PARAMETER
from ..model import ClampMode

#: Accepted values of ``clamp``: the values of ``ClampMode``.
CLAMP_MODES = tuple(mode.value for mode in ClampMode)
#: Largest ``publish_frequency``, Hz (robot_state_publisher's bound too).
MAX_PUBLISH_FREQUENCY = 1000.0
#: Smallest ``publish_frequency`` and ``remote.rate``, Hz: one per 1000 s. Its interval
#: (``Settings.interval_ns``, the default positions' timer, ``bag repair``'s) is then at most
#: 1e12 ns: 1e-300 Hz was an infinite interval (an ``OverflowError`` per JointState in the
#: node, a traceback in ``bag repair``), 1e-11 Hz one beyond int64 (rclpy's timer).
MIN_RATE_HZ = 0.001
#: Largest ``diagnostic_period``, ``joint_state_timeout`` and ``static_republish_period``,
#: seconds.
MAX_PERIOD_S = 3600.0
#: Smallest ``static_republish_period`` but 0 (off), seconds: 10 Hz, the fastest period
#: ROS 1's static_transform_publisher was run with (its ``period_in_ms``, 100 in its docs).
#: tf2 keeps a static frame until it changes, so a faster period serves no subscriber; it
#: only floods /tf_static, bridges and recordings (1 ns was a busy timer).
MIN_STATIC_REPUBLISH_PERIOD_S = 0.1
#: Largest magnitude of ``time_offset`` and of each ``source_time_offsets`` value, seconds:
#: what the seconds of a stamp (``builtin_interfaces/Time.sec``, int32) can hold.
MAX_TIME_OFFSET_S = float(2**31 - 1)
#: Largest ``loop_tolerance``, metres and radians (beyond, no loop would say it is open).
MAX_LOOP_TOLERANCE = 1.0
#: Smallest ``loop_tolerance``: ten times what the solve leaves where a loop closes (round-off,
#: 1e-13 m at most, ``loop_solver``). Below it a closing loop counts as open, so the node holds
#: its passive joints at their drawing while the given ones move (1e-300: a spatial loop's
#: links 0.26 m apart on /tf).
MIN_LOOP_TOLERANCE = 1e-12

#: Most items an array parameter takes (names, topics, folders, arguments, offsets, a zero's
#: values), and an item list given as one comma-separated string: far above any real robot's
#: (a few hundred joints and links), low enough that checking every item stays fast inside the
#: parameter callback while /tf waits for it.
MAX_ARRAY_ITEMS = 4096
#: Longest ``frame_prefix`` and ``global_frame_prefix``: each prefixes two frame ids of
#: every transform published, so a prefix of 4 MB made a 5-state bag repair write 337 MB
#: (and the node /tf messages of 64 MB). ROS names are kept under 256 characters too.
MAX_PREFIX_CHARS = 256
#: Most characters of a refused value a reason shows (a huge array or text is cut).
MAX_SHOWN_CHARS = 120

ParameterValue = bool | float | str | tuple[str, ...] | tuple[float, ...]
#: What an array parameter's value is: a list or tuple as given in Python, an ``array.array``
#: as rclpy hands a double or integer array set through its services (``ros2 param set``).
ARRAY_TYPES = (list, tuple, array)


class ParameterRejected(ValueError):
    """A parameter value the node refuses; the text is the reason, naming the parameter."""


def shown(value: Any) -> str:
    """``value`` as a refusal shows it: its repr, an integer too large for a double as its
    size (Python will not even print one of over 4300 digits), at most ``MAX_SHOWN_CHARS``
    characters."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    if isinstance(value, ARRAY_TYPES) and len(value) > MAX_ARRAY_ITEMS:
        return f"{len(value)} items"
    text = repr(value)
    if len(text) <= MAX_SHOWN_CHARS:
        return text
    return f"{text[:MAX_SHOWN_CHARS]}... ({len(text)} chars)"


def shown_text(text: str) -> str:
    """``text`` (a name) as a message names it in place: as it is when printable, else
    escaped as a repr escapes it (a newline, an escape sequence cannot forge a log line or
    colour a terminal: ``\\n``, ``\\x1b``), cut at ``MAX_SHOWN_CHARS``."""
    if not text.isprintable():
        text = repr(text)[1:-1]
    return text if len(text) <= MAX_SHOWN_CHARS else f"{text[:MAX_SHOWN_CHARS]}..."


def as_number(name: str, value: Any, what: str = "a number") -> float:
    """``value`` as a float, maybe not finite (an integer no double holds, a 400-digit one,
    as an infinity of its sign; ``-0.0`` as ``0.0``); ParameterRejected naming ``name``
    (``what``: what it must be, for the reason) for a bool (rclpy keeps bools apart from
    numbers) or anything but an int or float. For a parameter with a range, which refuses
    NaN and the infinities with the range's words."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParameterRejected(f"{name} must be {what}, got {shown(value)}")
    try:
        return float(value) + 0.0  # -0.0 + 0.0 is 0.0
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def finite_number(name: str, value: Any, what: str = "a number") -> float:
    """``as_number``, refusing NaN and the infinities (and integers no double holds)."""
    number = as_number(name, value, what)
    if not math.isfinite(number):
        raise ParameterRejected(f"{name} must be finite ({what}), got {shown(value)}")
    return number


def check_item_count(name: str, items: Any) -> None:
    """ParameterRejected naming ``name`` when the array ``items`` (a list, tuple or
    ``array.array``; anything else passes) holds more than ``MAX_ARRAY_ITEMS``."""
    if isinstance(items, ARRAY_TYPES) and len(items) > MAX_ARRAY_ITEMS:
        raise ParameterRejected(
            f"{name} holds {len(items)} items: at most {MAX_ARRAY_ITEMS} are taken"
        )


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter: name, default (which fixes its type), what it does, its limits.

    ``float_range`` is inclusive (as ROS's FloatingPointRange); ``dynamic_typing`` lets an
    integer stand for a double (``-p publish_frequency:=50``); ``alias_of`` names the
    parameter this one is another name for; ``double_array`` types a tuple default (empty
    by default, so its type cannot be read from it) as a double array, not a string array.
    """

    name: str
    default: ParameterValue
    description: str
    read_only: bool = False
    dynamic_typing: bool = False
    float_range: tuple[float, float] | None = None
    alias_of: str | None = None
    double_array: bool = False

    @property
    def declared_read_only(self) -> bool:
        """Whether rclpy itself refuses a change (the descriptor's ``read_only``). Not for a
        read-only array with an empty default: rclpy cannot declare one with a value (a
        declared ``[]`` is a byte array, a typed declaration has none, and a read-only
        parameter cannot be set after), so ``parameter_changes.plan_change`` refuses it."""
        return self.read_only and not isinstance(self.default, tuple)

    @property
    def type_name(self) -> str:
        """The ROS type: bool, double, string, string_array or double_array."""
        if isinstance(self.default, bool):
            return "bool"
        if isinstance(self.default, float):
            return "double"
        if isinstance(self.default, str):
            return "string"
        return "double_array" if self.double_array else "string_array"


PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec(
        "robot_description",
        "",
        "URDF or SDFormat text of the robot (unless description_file or description_from_topic)",
    ),
    ParameterSpec(
        "description_file",
        "",
        "path of a .urdf, .sdf or .xacro file the node reads and reloads when it is saved "
        "(instead of robot_description)",
    ),
    ParameterSpec(
        "description_args",
        (),
        "xacro arguments for description_file, each name:=value",
    ),
    ParameterSpec(
        "publish_frequency",
        20.0,
        "maximum rate (Hz, message time) of /tf publications per joint; [0.001, 1000]",
        dynamic_typing=True,
        float_range=(MIN_RATE_HZ, MAX_PUBLISH_FREQUENCY),
    ),
    ParameterSpec(
        "ignore_timestamp",
        False,
        "publish every joint state regardless of its stamp (no rate limiting)",
    ),
    ParameterSpec("frame_prefix", "", "text prepended to every frame id (plain concatenation)"),
    ParameterSpec(
        "global_frame_prefix",
        "",
        "also publish every transform on the absolute /tf and /tf_static (despite remappings) "
        "with this frame prefix instead of frame_prefix; empty: off",
    ),
    ParameterSpec("clamp", "hard", "limits joint values are clamped to: hard, soft or none"),
    ParameterSpec("exclude_joints", (), "joints whose transforms this node does not publish"),
    ParameterSpec(
        "source_list",
        (),
        "further JointState topics (relative to the node's namespace) besides joint_states",
    ),
    ParameterSpec(
        "time_offset",
        0.0,
        "seconds added to the stamp of every joint state before it is used (REP 138)",
        dynamic_typing=True,
        float_range=(-MAX_TIME_OFFSET_S, MAX_TIME_OFFSET_S),
    ),
    ParameterSpec(
        "source_time_offsets",
        (),
        "seconds added to the stamps of each source_list topic on top of time_offset, "
        "in source_list's order (doubles: [0.0, -0.008]); [] = none",
        double_array=True,
    ),
    ParameterSpec(
        "publish_default_positions",
        False,
        "publish joints never received at their zero position, at publish_frequency",
    ),
    ParameterSpec(
        "model_name", "", "SDFormat only: the <model> to publish where the file has several"
    ),
    ParameterSpec(
        "diagnostic_period",
        1.0,
        "seconds between two joint-state health reports on /diagnostics; 0 turns them off",
        dynamic_typing=True,
        float_range=(0.0, MAX_PERIOD_S),
    ),
    ParameterSpec(
        "joint_state_timeout",
        1.0,
        "seconds after which a joint never received or a silent stream is reported; > 0",
        dynamic_typing=True,
        float_range=(0.0, MAX_PERIOD_S),
    ),
    ParameterSpec(
        "static_republish_period",
        0.0,
        "seconds between two republications of the complete static set, 0 or >= 0.1; "
        "0 = publish once (latched)",
        dynamic_typing=True,
        float_range=(0.0, MAX_PERIOD_S),
    ),
    ParameterSpec(
        "loop_tolerance",
        1e-6,
        "closed loops: how far apart (m, and rad) a loop joint's two frames may stay and count "
        "as closed; beyond, the health report says the loop is not closed; [1e-12, 1]",
        dynamic_typing=True,
        float_range=(MIN_LOOP_TOLERANCE, MAX_LOOP_TOLERANCE),
    ),
    ParameterSpec(
        "publish_loop_joint_states",
        False,
        "closed loops: publish the solved passive joints' values (and the values given for "
        "loop joints themselves) on loop_joint_states (sensor_msgs/JointState) with each "
        "joint state that moves them",
        read_only=True,
    ),
    ParameterSpec(
        "remote.frames",
        (),
        "links published on remote.topic, each relative to its nearest chosen ancestor (else "
        "the root link), at most remote.rate messages per second; [] = no remote output",
    ),
    ParameterSpec(
        "remote.rate",
        10.0,
        "most TFMessages per second on remote.topic (steady clock); [0.001, 1000]",
        dynamic_typing=True,
        float_range=(MIN_RATE_HZ, MAX_PUBLISH_FREQUENCY),
    ),
    ParameterSpec(
        "remote.topic",
        "remote/tf",
        "topic of the remote output (relative: the namespace applies); its static frames on "
        "the same name with _static",
    ),
    ParameterSpec(
        "attachments.names",
        (),
        "names of descriptions hung from the robot, each given by attachments.<name>.* "
        "(description or file, parent, origin, prefix)",
    ),
    ParameterSpec(
        ALLOWED_FOLDERS_PARAMETER,
        (),
        "folders from which runtime changes (description_file, attachment files, SDFormat "
        "includes, xacro includes) may read, besides those of the files the node started "
        "with and the share folders of the packages its start description names",
        read_only=True,
    ),
    ParameterSpec(
        "description_from_topic",
        False,
        "take the description from topic robot_description, not the parameter",
        read_only=True,
    ),
    ParameterSpec(
        "use_robot_description_topic",
        False,
        "alias of description_from_topic (the older robot_state_publisher name)",
        read_only=True,
        alias_of="description_from_topic",
    ),
)
PARAMETERS_BY_NAME: dict[str, ParameterSpec] = {spec.name: spec for spec in PARAMETERS}

#: ``zeros.<joint name>``: one parameter per moving joint of the current model (declared by
#: the node as the model is installed), joint_state_publisher's name. Its value: the joint's
#: value where none was received (a number, or a list in the order of the joint's JointState
#: variables for a multi-value joint); by default zero clamped into the joint's hard limits.
ZEROS_PREFIX = "zeros."
ZEROS_DESCRIPTION = (
    "value of this joint where none was received (publish_default_positions, mimic leaders): "
    "a number, or a list in the order of its JointState variables; checked against its limits"
)

#: The names of the descriptions hung from the robot. Not ``attachments`` itself: a
#: parameter that is also the first part of others (``attachments.<name>.file``) cannot be
#: written as nested YAML in a parameters file, and ``ros2 param dump`` fails on it.
ATTACHMENTS = "attachments.names"

#: ``attachments.<name>.`` starts every per-name parameter.
ATTACHMENT_PREFIX = "attachments."

#: Per field (in ``ATTACHMENT_FIELDS`` order): its parameter's default (which fixes its
#: type) and description.
ATTACHMENT_PARAMETERS: dict[str, tuple[Any, str]] = {
    "description": ("", "URDF or SDFormat text of this attachment (or give file)"),
    "file": ("", "path to this attachment's .urdf, .sdf or .xacro file (or give description)"),
    "parent": ("", "link of the robot (or of an earlier attachment) this attachment hangs from"),
    "origin": (
        [0.0] * 6,
        "x y z roll pitch yaw of the attachment's root link in the parent link frame (m, rad)",
    ),
    "prefix": ("", "text prepended to the attachment's link, joint and material names"),
}


def takes_any_empty_array(spec: ParameterSpec) -> bool:
    """Whether the node declares ``spec`` with dynamic typing so that an empty array of any
    type clears it: every settable array parameter. ros2cli sends ``"[]"`` as an empty
    BOOL_ARRAY, and rclpy refuses another type than the declared one before the node's
    callback sees it (``_apply_descriptor``; Humble's rclpy has no pre-set callback to
    retype it), so the type is checked by ``check_array_type`` instead."""
    return isinstance(spec.default, tuple) and not spec.read_only


def check_array_type(name: str, value: Any) -> None:
    """ParameterRejected unless ``value`` suits the array parameter ``name`` set at run
    time: an empty array of any type, or an array of its items' type (text; numbers that are
    doubles for a double array). Other parameters pass."""
    spec = PARAMETERS_BY_NAME.get(name)
    if spec is None or not takes_any_empty_array(spec):
        return
    wanted = spec.type_name.replace("_", " ")
    if value is None:
        raise ParameterRejected(f"{name} cannot be unset: set [] to clear it")
    if not isinstance(value, ARRAY_TYPES):
        raise ParameterRejected(f"{name} must be a {wanted}, got {shown(value)}")
    check_item_count(name, value)
    item_type = float if spec.double_array else str
    if not all(type(item) is item_type for item in value):
        raise ParameterRejected(
            f"{name} must be a {wanted} (or [] to clear it), got {shown(value)}"
        )


def parameter_name(name: str, field: str) -> str:
    """``attachments.<name>.<field>``."""
    return f"{ATTACHMENT_PREFIX}{name}.{field}"


def split_attachment_parameter(parameter: str) -> tuple[str, str]:
    """(name, field) of an ``attachments.<name>.<field>`` parameter; ParameterRejected for
    another field or an empty name."""
    name, _, field = parameter.removeprefix(ATTACHMENT_PREFIX).rpartition(".")
    if not name or field not in ATTACHMENT_FIELDS or parameter == ATTACHMENTS:
        raise ParameterRejected(
            f"{shown_text(parameter)}: an attachment parameter is "
            f"attachments.<name>.<field>, field one of {', '.join(ATTACHMENT_FIELDS)}"
        )
    return name, field


def parse_attachment_field(parameter: str, value: Any) -> Any:
    """An attachment parameter's value checked for its field's type: text, or for
    ``origin`` six numbers as a tuple of floats. None (unset) is the field's default."""
    _, field = split_attachment_parameter(parameter)
    parameter = shown_text(parameter)  # from a file read offline, any key
    if field != "origin":
        if value is None:
            return ""
        if not isinstance(value, str):
            raise ParameterRejected(f"{parameter} must be a string, got {shown(value)}")
        return value
    items = [0.0] * 6 if value is None else value if isinstance(value, ARRAY_TYPES) else []
    if len(items) != 6:
        raise ParameterRejected(
            f"{parameter} must be 6 numbers (x y z roll pitch yaw), got {shown(value)}"
        )
    return tuple(
        finite_number(parameter, item, "6 numbers (x y z roll pitch yaw)") for item in items
    )


def _parse_rate(name: str) -> Callable[[Any], float]:
    """A rate parameter as a float in [0.001, 1000] Hz."""

    def parse(value: Any) -> float:
        frequency = as_number(name, value)
        if not MIN_RATE_HZ <= frequency <= MAX_PUBLISH_FREQUENCY:  # NaN fails too
            raise ParameterRejected(
                f"{name} must be >= {MIN_RATE_HZ:g} and <= {MAX_PUBLISH_FREQUENCY:g} Hz, "
                f"got {shown(value)}"
            )
        return frequency

    return parse


#: ``publish_frequency`` as a float in [0.001, 1000] Hz.
parse_frequency = _parse_rate("publish_frequency")


def parse_remote_topic(value: Any) -> str:
    """``remote.topic`` as a non-empty name (the node checks it as a topic name)."""
    if not isinstance(value, str) or not value.strip():
        raise ParameterRejected(f"remote.topic must be a topic name, got {shown(value)}")
    return value.strip()


def parse_seconds(name: str, *, zero_allowed: bool) -> Callable[[Any], float]:
    """A duration parameter as seconds in [0, MAX_PERIOD_S] (or (0, ...] without 0): the
    node's periods and the fleet's ``retry_period``; an integer taken as ros2cli and launch
    send a whole number."""

    def parse(value: Any) -> float:
        seconds = as_number(name, value, "a number of seconds")
        low_ok = seconds >= 0.0 if zero_allowed else seconds > 0.0  # NaN: neither
        if not (low_ok and seconds <= MAX_PERIOD_S):
            bound = ">= 0" if zero_allowed else "> 0"
            raise ParameterRejected(
                f"{name} must be {bound} and <= {MAX_PERIOD_S:g} s, got {shown(value)}"
            )
        return seconds

    return parse


def parse_loop_tolerance(value: Any) -> float:
    """``loop_tolerance``: metres and radians in [``MIN_LOOP_TOLERANCE``,
    ``MAX_LOOP_TOLERANCE``]."""
    tolerance = as_number("loop_tolerance", value, "a number (m and rad)")
    if not MIN_LOOP_TOLERANCE <= tolerance <= MAX_LOOP_TOLERANCE:  # NaN fails too
        raise ParameterRejected(
            f"loop_tolerance must be >= {MIN_LOOP_TOLERANCE:g} and <= {MAX_LOOP_TOLERANCE:g} "
            f"(round-off stays below 1e-13), got {shown(value)}"
        )
    return tolerance


def parse_static_republish_period(value: Any) -> float:
    """``static_republish_period``: 0 (off), or seconds in [MIN_STATIC_REPUBLISH_PERIOD_S,
    MAX_PERIOD_S]."""
    seconds = parse_seconds("static_republish_period", zero_allowed=True)(value)
    if 0.0 < seconds < MIN_STATIC_REPUBLISH_PERIOD_S:
        raise ParameterRejected(
            f"static_republish_period must be 0 (off) or >= {MIN_STATIC_REPUBLISH_PERIOD_S:g} s "
            f"(10 Hz at most), got {seconds:g}"
        )
    return seconds


def _offset_seconds(name: str, value: Any) -> float:
    """One time offset as finite seconds within +-``MAX_TIME_OFFSET_S``."""
    seconds = as_number(name, value, "a number of seconds")
    if not abs(seconds) <= MAX_TIME_OFFSET_S:  # NaN fails too
        raise ParameterRejected(
            f"{name} must be finite and within +-{MAX_TIME_OFFSET_S:.0f} s (the seconds a "
            f"stamp holds), got {shown(value)}"
        )
    return seconds


def parse_time_offset(value: Any) -> float:
    """``time_offset`` as finite seconds that a stamp can hold (``MAX_TIME_OFFSET_S``)."""
    return _offset_seconds("time_offset", value)


def parse_time_offsets(value: Any) -> tuple[float, ...]:
    """``source_time_offsets`` as seconds (None, as rcl reads ``[]``: none; rclpy gives a
    double array as an ``array.array``)."""
    if value is None:
        return ()
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, array)):
        raise ParameterRejected(f"source_time_offsets must be a double array, got {shown(value)}")
    check_item_count("source_time_offsets", value)
    return tuple(_offset_seconds(f"source_time_offsets[{i}]", item) for i, item in enumerate(value))


def parse_clamp(value: Any) -> str:
    """``clamp`` as one of ``CLAMP_MODES``."""
    if value not in CLAMP_MODES:
        raise ParameterRejected(
            f"clamp must be one of {', '.join(CLAMP_MODES)}, got {shown(value)}"
        )
    return str(value)


def _parse_names(parameter: str) -> Callable[[Any], tuple[str, ...]]:
    """A parser of ``parameter``'s names: a string array, or one comma-separated string; empty
    names are dropped, and repeated ones (None, as rcl reads ``[]`` from a parameters file,
    is no names)."""

    def parse(value: Any) -> tuple[str, ...]:
        if value is None:
            return ()
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, ARRAY_TYPES) or not all(isinstance(i, str) for i in items):
            raise ParameterRejected(f"{parameter} must be a string array, got {shown(value)}")
        check_item_count(parameter, items)
        return tuple(dict.fromkeys(name.strip() for name in items if name.strip()))

    return parse


#: ``exclude_joints`` as joint names (``_parse_names``).
parse_joint_names = _parse_names("exclude_joints")
#: ``source_list`` as topic names (``_parse_names``).
parse_topic_names = _parse_names("source_list")
#: ``remote.frames`` as link names (``_parse_names``).
parse_remote_frames = _parse_names("remote.frames")
#: ``allowed_description_folders`` as folder paths (``_parse_names``).
parse_folders = _parse_names(ALLOWED_FOLDERS_PARAMETER)


def parse_attachment_names(value: Any) -> tuple[str, ...]:
    """``attachments.names`` as attachment names (``_parse_names``); ParameterRejected for
    a name that is no valid parameter name part (empty, with a dot) or is ``names``."""
    names = _parse_names(ATTACHMENTS)(value)
    for name in names:
        if name == "names" or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ParameterRejected(
                f"{ATTACHMENTS}: {shown(name)} cannot name an attachment (letters, digits and "
                "underscores, not starting with a digit; not 'names')"
            )
    return names


def parse_description_args(value: Any) -> tuple[str, ...]:
    """``description_args`` as its ``name:=value`` items (None: none); ParameterRejected
    naming an item that is not ``name:=value``."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, ARRAY_TYPES) or not all(isinstance(i, str) for i in items):
        raise ParameterRejected(f"description_args must be a string array, got {shown(value)}")
    for item in items:
        name, separator, _ = item.partition(":=")
        if not separator or not name.strip():
            raise ParameterRejected(f"description_args: {shown(item)} is not name:=value")
    return tuple(items)


def xacro_mappings(args: tuple[str, ...]) -> dict[str, str]:
    """``description_args`` (checked by ``parse_description_args``) as xacro's mappings."""
    pairs = (item.partition(":=") for item in args)
    return {name.strip(): value for name, _, value in pairs}


def parse_zero(name: str, value: Any) -> tuple[float, ...] | None:
    """A ``zeros.<joint>`` parameter's value as a tuple of floats (one per JointState variable
    of the joint); None when unset. ParameterRejected naming ``name`` for anything but a
    number or a non-empty list of numbers."""
    if value is None:
        return None
    check_item_count(name, value)
    items = list(value) if isinstance(value, ARRAY_TYPES) else [value]
    what = "a number or a list of numbers"
    if not items:
        raise ParameterRejected(f"{name} must be {what}, got {shown(value)}")
    return tuple(finite_number(name, item, what) for item in items)


def _parse_bool(name: str) -> Callable[[Any], bool]:
    def parse(value: Any) -> bool:
        if not isinstance(value, bool):
            raise ParameterRejected(f"{name} must be a bool, got {shown(value)}")
        return value

    return parse


def _parse_text(name: str, max_chars: int | None = None) -> Callable[[Any], str]:
    """A text parameter: a string (None, unset: "") of at most ``max_chars`` characters
    (None: any); anything else refused naming ``name``, as rclpy refuses it for a parameter
    declared a string."""

    def parse(value: Any) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            raise ParameterRejected(f"{name} must be a string, got {shown(value)}")
        if max_chars is not None and len(value) > max_chars:
            raise ParameterRejected(
                f"{name} holds {len(value)} characters: at most {max_chars} are taken"
            )
        return value

    return parse


@dataclass(frozen=True)
class Settings:
    """The node's parameters other than the description text, validated.

    ``description_from_topic`` is true when either of its names is.
    """

    publish_frequency: float = 20.0
    ignore_timestamp: bool = False
    frame_prefix: str = ""
    #: The global tree's frame prefix ("" = no global tree; ``tf_outputs``).
    global_frame_prefix: str = ""
    clamp: str = "hard"
    exclude_joints: tuple[str, ...] = ()
    source_list: tuple[str, ...] = ()
    publish_default_positions: bool = False
    model_name: str = ""
    #: The description's file (``description_source``), "" for none, and its xacro arguments.
    description_file: str = ""
    description_args: tuple[str, ...] = ()
    description_from_topic: bool = False
    #: ``allowed_description_folders`` as given (read-only; ``node_core.allowed_folders``).
    allowed_description_folders: tuple[str, ...] = ()
    diagnostic_period: float = 1.0
    joint_state_timeout: float = 1.0
    #: Seconds between two republications of the static set (0: latched once).
    static_republish_period: float = 0.0
    #: How far apart a loop joint's frames may stay and count as closed, m and rad.
    loop_tolerance: float = 1e-6
    #: Publish the solved passive joints on ``loop_joint_states`` (read-only).
    publish_loop_joint_states: bool = False
    #: Seconds added to every joint-state stamp, and to each ``source_list`` topic's.
    time_offset: float = 0.0
    source_time_offsets: tuple[float, ...] = ()
    #: ``zeros.<joint>`` parameters: (joint name, values), sorted by name.
    #: Checked against a model by ``zeros.start_positions``, not here.
    zeros: tuple[tuple[str, tuple[float, ...]], ...] = ()
    #: ``remote.frames``, ``remote.rate`` (Hz) and ``remote.topic``: the remote output
    #: (``remote_output``; no frames: off).
    remote_frames: tuple[str, ...] = ()
    remote_rate: float = 10.0
    remote_topic: str = "remote/tf"
    #: ``attachments.names``.
    attachments: tuple[str, ...] = ()
    #: ``attachments.<name>.<field>`` parameters: ((name, field), parsed value), sorted;
    #: those of names ``attachments`` does not list are kept but unused.
    attachment_fields: tuple[tuple[tuple[str, str], Any], ...] = ()

    @cached_property  # read for every JointState
    def interval_ns(self) -> int:
        """Minimum spacing of publications per joint in message time, nanoseconds."""
        return int(round(1e9 / self.publish_frequency))

    @cached_property
    def clamp_mode(self) -> ClampMode:
        """``clamp`` as the kinematics takes it (converted here, once)."""
        return ClampMode(self.clamp)

    @cached_property
    def attachment_list(self) -> tuple[Attachment, ...]:
        """The attachments ``attachments`` lists, in its order, from their fields (missing
        ones at their defaults; checked when composed, ``description.compose``)."""
        fields = dict(self.attachment_fields)
        return tuple(
            Attachment(
                name=name,
                parent=fields.get((name, "parent"), ""),
                description=fields.get((name, "description"), ""),
                file=fields.get((name, "file"), ""),
                origin=fields.get((name, "origin"), (0.0,) * 6),
                prefix=fields.get((name, "prefix"), ""),
            )
            for name in self.attachments
        )

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Settings:
        """Settings from parameter values by name (missing ones at their defaults);
        ParameterRejected for the first invalid one."""
        return cls().changed(values)

    def changed(self, values: Mapping[str, Any]) -> Settings:
        """These settings with ``values`` (by parameter name) applied, all or nothing;
        ParameterRejected for an invalid value. Names without a setting are ignored."""
        updates: dict[str, Any] = {}
        zeros = dict(self.zeros)
        attachment_fields = dict(self.attachment_fields)
        for name, value in values.items():
            check_item_count(shown_text(name), value)
            if name == ATTACHMENTS:
                updates["attachments"] = parse_attachment_names(value)
                continue
            if name.startswith(ATTACHMENT_PREFIX):
                attachment_fields[split_attachment_parameter(name)] = parse_attachment_field(
                    name, value
                )
                continue
            if name.startswith(ZEROS_PREFIX):
                joint_values = parse_zero(shown_text(name), value)
                if joint_values is None:
                    zeros.pop(name.removeprefix(ZEROS_PREFIX), None)
                else:
                    zeros[name.removeprefix(ZEROS_PREFIX)] = joint_values
                continue
            spec = PARAMETERS_BY_NAME.get(name)
            target = spec.alias_of if spec is not None and spec.alias_of else name
            parse = _PARSERS.get(target)
            if parse is not None:
                parsed = parse(value)
                if target == "description_from_topic":  # either name true: true
                    parsed = parsed or updates.get(target, False)
                updates[SETTING_FIELDS.get(target, target)] = parsed
        updates["zeros"] = tuple(sorted(zeros.items()))
        updates["attachment_fields"] = tuple(sorted(attachment_fields.items()))
        settings = replace(self, **updates)
        settings.check_time_offsets()
        return settings

    def check_time_offsets(self) -> None:
        """ParameterRejected unless ``source_time_offsets`` is empty or has one value per
        ``source_list`` topic."""
        offsets, topics = len(self.source_time_offsets), len(self.source_list)
        if offsets and offsets != topics:
            raise ParameterRejected(
                f"source_time_offsets has {offsets} value(s) but source_list {topics} "
                "topic(s): give one offset per topic, in source_list's order, or none (set "
                "both in one change: a parameters file, or ros2 service call "
                "<node>/set_parameters_atomically)"
            )

    def time_offsets_s(self) -> dict[str, float]:
        """Seconds added to the stamps of each ``source_list`` topic (``time_offset`` plus
        its ``source_time_offsets`` value)."""
        extra = self.source_time_offsets or (0.0,) * len(self.source_list)
        return {
            topic: self.time_offset + offset
            for topic, offset in zip(self.source_list, extra, strict=True)
        }


_PARSERS: dict[str, Callable[[Any], Any]] = {
    "publish_frequency": parse_frequency,
    "ignore_timestamp": _parse_bool("ignore_timestamp"),
    "frame_prefix": _parse_text("frame_prefix", MAX_PREFIX_CHARS),
    "global_frame_prefix": _parse_text("global_frame_prefix", MAX_PREFIX_CHARS),
    "clamp": parse_clamp,
    "exclude_joints": parse_joint_names,
    "source_list": parse_topic_names,
    "publish_default_positions": _parse_bool("publish_default_positions"),
    "model_name": _parse_text("model_name"),
    "description_file": _parse_text("description_file"),
    "description_args": parse_description_args,
    "description_from_topic": _parse_bool("description_from_topic"),
    ALLOWED_FOLDERS_PARAMETER: parse_folders,
    "diagnostic_period": parse_seconds("diagnostic_period", zero_allowed=True),
    "joint_state_timeout": parse_seconds("joint_state_timeout", zero_allowed=False),
    "static_republish_period": parse_static_republish_period,
    "loop_tolerance": parse_loop_tolerance,
    "publish_loop_joint_states": _parse_bool("publish_loop_joint_states"),
    "time_offset": parse_time_offset,
    "source_time_offsets": parse_time_offsets,
    "remote.frames": parse_remote_frames,
    "remote.rate": _parse_rate("remote.rate"),
    "remote.topic": parse_remote_topic,
}
#: The remote output's parameters and their ``Settings`` fields.
REMOTE_FIELDS = {
    "remote.frames": "remote_frames",
    "remote.rate": "remote_rate",
    "remote.topic": "remote_topic",
}
#: The ``Settings`` field of each parameter whose name is no field name.
SETTING_FIELDS = {ATTACHMENTS: "attachments", **REMOTE_FIELDS}
