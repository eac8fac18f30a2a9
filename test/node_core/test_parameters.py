"""parameters: the one table, the settings it validates, and the docs that must follow it.

No rclpy: the table, ``Settings`` and the docs checks stand alone. That the node declares
exactly this table (with descriptors) is checked in test_node.py.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from array import array
from collections.abc import Callable
from typing import Any

import pytest
from repo_paths import REPO_ROOT, config_parameters

from joint_tf_publisher.description.xacro_process import (
    XACRO_MEMORY_LIMIT_BYTES,
    XACRO_TIME_LIMIT_S,
)
from joint_tf_publisher.description.xmlio import MAX_DESCRIPTION_BYTES
from joint_tf_publisher.model import ClampMode
from joint_tf_publisher.node_core.fleet import MAX_RETRY_PERIOD_S
from joint_tf_publisher.node_core.parameter_keys import MAX_WARNED
from joint_tf_publisher.node_core.parameters import (
    ATTACHMENTS,
    MAX_ARRAY_ITEMS,
    MAX_PERIOD_S,
    MAX_PREFIX_CHARS,
    MAX_PUBLISH_FREQUENCY,
    MAX_SHOWN_CHARS,
    MAX_TIME_OFFSET_S,
    PARAMETERS,
    PARAMETERS_BY_NAME,
    SETTING_FIELDS,
    ZEROS_PREFIX,
    ParameterRejected,
    Settings,
    as_number,
    check_array_type,
    parse_clamp,
    parse_frequency,
    parse_joint_names,
    parse_time_offsets,
    parse_topic_names,
    parse_zero,
    shown,
    shown_text,
    takes_any_empty_array,
    xacro_mappings,
)
from joint_tf_publisher.node_core.remote_output import MAX_NAMED_FRAMES

yaml = pytest.importorskip("yaml")

DOCS = [REPO_ROOT / "README.md", REPO_ROOT / "docs" / "node.md"]
ROS_TYPE_WORDS = {
    "bool": "bool",
    "integer": "integer",
    "double": "double",
    "string": "string",
    "string_array": "string array",
    "double_array": "double array",
}


def yaml_value(value: Any) -> Any:
    """A default as YAML (and rcl) reads it: a tuple is a list."""
    return list(value) if isinstance(value, tuple) else value


def test_every_setting_has_one_parameter_and_every_parameter_a_setting() -> None:
    settings = {field.name for field in dataclasses.fields(Settings)}
    names = {spec.alias_of or spec.name for spec in PARAMETERS} - {"robot_description"}
    names = {SETTING_FIELDS.get(name, name) for name in names}
    # zeros and attachment_fields: the zeros.* and attachments.<name>.* parameters
    assert names | {ZEROS_PREFIX.rstrip("."), "attachment_fields"} == settings
    defaults = Settings()
    for spec in PARAMETERS:
        field = SETTING_FIELDS.get(spec.name, spec.name)
        if field in settings:
            assert getattr(defaults, field) == spec.default, spec.name
    aliases = [spec for spec in PARAMETERS if spec.alias_of]
    assert all(PARAMETERS_BY_NAME[spec.alias_of].default == spec.default for spec in aliases)


def test_description_from_topic_is_the_name_and_the_old_one_an_alias() -> None:
    assert PARAMETERS_BY_NAME["description_from_topic"].alias_of is None
    assert PARAMETERS_BY_NAME["use_robot_description_topic"].alias_of == "description_from_topic"
    assert Settings.from_values({"use_robot_description_topic": True}).description_from_topic
    assert Settings.from_values({"description_from_topic": True}).description_from_topic
    both = {"description_from_topic": False, "use_robot_description_topic": True}
    assert Settings.from_values(both).description_from_topic


@pytest.mark.parametrize("value", [0.0, -1.0, 1000.5, "fast", True])
def test_publish_frequency_out_of_range_is_rejected(value: Any) -> None:
    with pytest.raises(ParameterRejected, match="publish_frequency must be"):
        parse_frequency(value)


def test_publish_frequency_accepts_integers_and_the_bounds() -> None:
    assert parse_frequency(50) == 50.0
    assert parse_frequency(1000.0) == 1000.0
    assert Settings.from_values({"publish_frequency": 50}).interval_ns == 20_000_000


def test_clamp_modes() -> None:
    assert [parse_clamp(mode) for mode in ("hard", "soft", "none")] == ["hard", "soft", "none"]
    with pytest.raises(ParameterRejected, match="clamp must be one of hard, soft, none"):
        parse_clamp("tight")
    assert Settings(clamp="none").clamp_mode is ClampMode.NONE
    assert Settings().clamp_mode is ClampMode.HARD


def test_exclude_joints_from_array_or_comma_separated_text() -> None:
    assert parse_joint_names(["a", " b ", ""]) == ("a", "b")
    assert parse_joint_names("a, b") == ("a", "b")
    assert parse_joint_names(None) == ()  # rcl reads [] in a parameters file as "not set"
    with pytest.raises(ParameterRejected, match="exclude_joints must be a string array"):
        parse_joint_names([1, 2])


def test_source_list_topics_in_order_without_repeats() -> None:
    assert parse_topic_names(["arm/joint_states", "gripper", "arm/joint_states"]) == (
        "arm/joint_states",
        "gripper",
    )
    assert Settings.from_values({"source_list": None}).source_list == ()
    with pytest.raises(ParameterRejected, match="source_list must be a string array"):
        Settings.from_values({"source_list": [1.0]})


def test_zeros_are_read_by_joint_name_and_unset_by_none() -> None:
    settings = Settings.from_values(
        {"zeros.caster": 0.3, "zeros.base": [1, 2.5, 0.0], "zeros.arm::elbow": -1}
    )
    assert settings.zeros == (
        ("arm::elbow", (-1.0,)),
        ("base", (1.0, 2.5, 0.0)),
        ("caster", (0.3,)),
    )
    # rclpy gives a double array parameter (ros2 param set ... "[1.0, 2.5, 0.0]") as an array.
    assert parse_zero("zeros.base", array("d", [1.0, 2.5, 0.0])) == (1.0, 2.5, 0.0)
    assert settings.changed({"zeros.base": None}).zeros == (
        ("arm::elbow", (-1.0,)),
        ("caster", (0.3,)),
    )


@pytest.mark.parametrize("value", ["up", True, [], [0.1, "x"]])
def test_a_zero_that_is_no_number_or_list_of_numbers_is_rejected(value: Any) -> None:
    with pytest.raises(ParameterRejected, match="zeros.caster must be a number or a list"):
        parse_zero("zeros.caster", value)


def test_a_change_is_all_or_nothing() -> None:
    settings = Settings()
    with pytest.raises(ParameterRejected, match="publish_frequency"):
        settings.changed({"frame_prefix": "x/", "publish_frequency": 0.0})
    assert settings.frame_prefix == ""
    changed = settings.changed({"frame_prefix": "x/", "use_sim_time": True})
    assert changed.frame_prefix == "x/"  # names without a setting are not ours: ignored


def test_config_file_gives_every_parameter_its_default() -> None:
    assert config_parameters() == {spec.name: yaml_value(spec.default) for spec in PARAMETERS}


def parameter_rows(text: str) -> dict[str, list[str]]:
    """The rows ``| `name` | type | default | meaning |`` of a "Parameters" section."""
    section = text.split("## Parameters", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"^\| `([a-z_.]+)` \|(.*)\|\s*$", line)
        if match:
            rows[match.group(1)] = [cell.strip() for cell in match.group(2).split("|")]
    return rows


def documented_default(cell: str) -> Any:
    """A default as the docs write it: ``""``, ``20.0``, ``false``, ``[]``, ``"hard"``."""
    word = cell.split()[0]
    return json.loads(word)


@pytest.mark.parametrize("path", DOCS, ids=lambda path: path.name)
def test_docs_give_every_parameter_its_type_and_default(path: Any) -> None:
    rows = parameter_rows(path.read_text())
    for spec in PARAMETERS:
        if spec.alias_of:  # documented in its main name's row
            assert f"`{spec.name}`" in rows[spec.alias_of][2], spec.name
            continue
        assert spec.name in rows, f"{path.name}: no row for {spec.name}"
        kind, default, meaning = rows[spec.name][:3]
        assert kind == ROS_TYPE_WORDS[spec.type_name], spec.name
        assert documented_default(default) == yaml_value(spec.default), spec.name
        assert ("Read-only" in meaning) == spec.read_only, spec.name


#: How the docs state a range in prose: ``range (0, 1000]``, ``[0, 3600]``, ``> 0 and <= 1000``,
#: ``>= 0 and <= 3600``, ``within +-2147483647``. Groups: the lower bound's bracket or sign
#: (none: symmetric, closed), low, high.
_NUMBER = r"-?[\d.]+(?:e-?\d+)?"  # 1e-12 too (loop_tolerance)
RANGE_WORDS = (
    re.compile(rf"(?P<open>[(\[])(?P<low>{_NUMBER}), (?P<high>{_NUMBER})\]"),
    re.compile(rf"(?P<open>>=?) (?P<low>{_NUMBER}) and <= (?P<high>{_NUMBER})"),
    re.compile(r"within \+-(?P<high>[\d.]+)"),
)


def documented_ranges(text: str) -> list[tuple[bool, float, float]]:
    """Every range ``text`` states: (lower bound included, low, high)."""
    found = []
    for pattern in RANGE_WORDS:
        for match in pattern.finditer(text):
            high = float(match["high"])
            if "low" not in match.groupdict():
                found.append((True, -high, high))
            else:
                found.append((match["open"] in ("[", ">="), float(match["low"]), high))
    return found


def takes(name: str, value: float) -> bool:
    """Whether the table takes ``value`` for ``name``."""
    try:
        Settings.from_values({name: value})
    except ParameterRejected:
        return False
    return True


RANGED = [spec for spec in PARAMETERS if spec.float_range is not None]


@pytest.mark.parametrize("path", DOCS, ids=lambda path: path.name)
def test_every_documented_range_is_the_code_s(path: Any) -> None:
    """Each ranged parameter's row states its range, and every range stated (in the row, in
    the descriptor's description) is the table's bounds, with the lower bound open where the
    code refuses it and the upper bound the largest value it takes (issue 47: docs the last
    rounds made stale)."""
    rows = parameter_rows(path.read_text())
    for spec in RANGED:
        assert spec.float_range is not None
        stated = documented_ranges(rows[spec.name][2])
        assert stated, f"{path.name}: {spec.name}'s row states no range"
        for low_included, low, high in stated + documented_ranges(spec.description):
            assert (low, high) == spec.float_range, (path.name, spec.name, low, high)
            assert takes(spec.name, low) == low_included, (path.name, spec.name, low)
            assert takes(spec.name, high) and not takes(spec.name, high * 1.001 + 0.001)


#: Numbers the docs' prose states, each a constant of the code: (value, pattern whose group 1
#: states it, the docs that must state it). Every match of the pattern in those docs must be
#: the value, and each of them must have one.
README, NODE, ROBUSTNESS, FLEET = "README.md", "docs/node.md", "docs/robustness.md", "docs/fleet.md"
MIB = 2**20
PROSE_FACTS: list[tuple[float, str, tuple[str, ...]]] = [
    (MAX_ARRAY_ITEMS, r"at most ([\d,]+) items", (README, NODE, ROBUSTNESS)),
    (MAX_ARRAY_ITEMS, r"more than ([\d,]+) items", ("docs/recordings.md",)),
    (MAX_WARNED, r"at most (\d+) (?:of them|warned)", (NODE, ROBUSTNESS)),
    (MAX_NAMED_FRAMES, r"at most (\d+) named", (ROBUSTNESS,)),
    (MAX_PUBLISH_FREQUENCY, r"`publish_frequency` \[0.001, ([\d.]+)\]", (ROBUSTNESS,)),
    (MAX_PERIOD_S, r"periods \[0, ([\d.]+)\]", (ROBUSTNESS,)),
    (MAX_TIME_OFFSET_S, r"value within \+-(\d+) s", (ROBUSTNESS,)),
    (MAX_RETRY_PERIOD_S, r"`retry_period` \[0, ([\d.]+)\]", (ROBUSTNESS,)),
    (MAX_RETRY_PERIOD_S, r"\[0, ([\d.]+)\]; an integer", (FLEET,)),
    (MAX_DESCRIPTION_BYTES / MIB, r"files? of at most (\d+) MiB", (README, ROBUSTNESS)),
    (XACRO_TIME_LIMIT_S, r"in a child process limited to (\d+) s", (README, NODE)),
    (XACRO_MEMORY_LIMIT_BYTES / MIB, r"limited to \d+ s and (\d+) MiB", (README, NODE)),
]


@pytest.mark.parametrize("value, pattern, paths", PROSE_FACTS, ids=lambda x: str(x)[:24])
def test_numbers_in_the_docs_prose_are_the_code_s(
    value: float, pattern: str, paths: tuple[str, ...]
) -> None:
    for path in paths:
        found = re.findall(pattern, (REPO_ROOT / path).read_text())
        assert found, f"{path} no longer states {pattern!r}"
        for number in found:
            assert float(number.replace(",", "")) == value, (path, pattern, number)


# -- empty arrays of any type (ros2cli sends "[]" as a BOOL_ARRAY) -----------------------------


def test_every_settable_array_parameter_takes_an_empty_array_of_any_type() -> None:
    arrays = [spec.name for spec in PARAMETERS if takes_any_empty_array(spec)]
    assert {"source_list", "exclude_joints", "description_args", "source_time_offsets"} <= set(
        arrays
    )
    assert ATTACHMENTS in arrays
    for name in arrays:
        for empty in ([], (), array("d"), array("q")):
            check_array_type(name, empty)
        assert Settings().changed({name: []}) == Settings()


def test_an_array_of_the_wrong_type_or_an_unset_value_is_refused_naming_the_parameter() -> None:
    check_array_type("source_list", ["a", "b"])
    check_array_type("source_time_offsets", array("d", [0.5]))
    with pytest.raises(ParameterRejected, match=r"^source_list must be a string array \(or"):
        check_array_type("source_list", [True])
    with pytest.raises(ParameterRejected, match=r"^source_list must be a string array, got 'a,b'"):
        check_array_type("source_list", "a,b")
    with pytest.raises(ParameterRejected, match=r"^source_time_offsets must be a double array"):
        check_array_type("source_time_offsets", array("q", [1]))
    with pytest.raises(ParameterRejected, match=r"^attachments\.names cannot be unset: set \[\]"):
        check_array_type(ATTACHMENTS, None)
    check_array_type("publish_frequency", "not checked here")  # not an array parameter


#: Values of every type a parameters file can hold (YAML: numbers, text, lists, maps, null).
ANY_TYPED_VALUES: list[Any] = [
    3, 2.5, True, None, "x", "", [], [1, 2], ["a", 3], [[1]], {"a": 1}, [{"a": 1}], float("nan"),
    10**400, 10**5000, float("inf"), [10**400], ["x"] * (MAX_ARRAY_ITEMS + 1),
]  # fmt: skip


OFFLINE_NAMES = [*PARAMETERS_BY_NAME, "zeros.j1", "attachments.tool.file",
                 "attachments.tool.origin", "attachments.tool.parent"]  # fmt: skip


@pytest.mark.parametrize("name", OFFLINE_NAMES)
def test_a_value_of_any_type_is_taken_or_refused_by_name_never_a_crash(name: str) -> None:
    """Offline (``bag repair --params``, ``doctor --bag --params``) a parameters file's
    values reach the table without rclpy's declared types: each is taken or refused with
    ParameterRejected naming the parameter (or the one it is another name for), never
    another exception (``source_list: 3`` was a TypeError)."""
    spec = PARAMETERS_BY_NAME.get(name)
    named = {name.split(".")[0], spec.alias_of if spec is not None else None} - {None}
    for value in ANY_TYPED_VALUES:
        try:
            Settings.from_values({name: value})
        except ParameterRejected as exc:
            assert any(str(part) in str(exc) for part in named), (value, exc)


# -- hostile numbers and sizes (issue 43, items 5 and 13) ---------------------------------------

#: Every parameter that takes numbers: the doubles, the double array, a zero, an origin.
NUMERIC_NAMES = [spec.name for spec in PARAMETERS if spec.type_name in ("double", "double_array")]
NUMERIC_NAMES += ["zeros.j1", "attachments.tool.origin"]

#: Numbers no parameter takes: beyond a double (PyYAML reads a 400-digit integer as one), beyond
#: int64 (rcl's integers), infinite, not a number, and bools (rclpy keeps them apart from numbers).
HOSTILE_NUMBERS: list[Any] = [
    10**400, -(10**400), 10**5000, 2**63, float("inf"), -float("inf"), float("nan"), True, False
]  # fmt: skip


def as_given(name: str, number: Any) -> Any:
    """``number`` where ``name`` takes it: alone, in a one-item list, or as an origin's x."""
    if name == "source_time_offsets":
        return [number]
    if name.endswith(".origin"):
        return [number, 0.0, 0.0, 0.0, 0.0, 0.0]
    return number


@pytest.mark.parametrize("name", NUMERIC_NAMES)
def test_every_numeric_parameter_refuses_a_hostile_number_by_name(name: str) -> None:
    """A huge integer was an OverflowError traceback (``bag repair --params``); a NaN or an
    infinity in an origin was taken. Every such value is refused in one line naming the
    parameter, whatever the source (the node, the bag commands, the fleet: all read them here)."""
    for number in HOSTILE_NUMBERS:
        if number == 2**63 and name not in PARAMETERS_BY_NAME:
            continue  # a zero's or an origin's range is the model's (zeros.check_zero)
        given = {name: as_given(name, number)}
        if name == "source_time_offsets":
            given["source_list"] = ["arm"]
        with pytest.raises(ParameterRejected, match=re.escape(name)) as refused:
            Settings.from_values(given)
        reason = str(refused.value)
        assert "\n" not in reason and len(reason) < 300, reason


def test_a_negative_zero_is_zero_and_refused_where_zero_is() -> None:
    for name in ("diagnostic_period", "static_republish_period", "time_offset"):
        value = getattr(Settings.from_values({name: -0.0}), name)
        assert value == 0.0 and math.copysign(1.0, value) == 1.0, name
    for name in ("publish_frequency", "remote.rate", "joint_state_timeout"):
        with pytest.raises(ParameterRejected, match=re.escape(name)):
            Settings.from_values({name: -0.0})


ARRAY_NAMES = [spec.name for spec in PARAMETERS if isinstance(spec.default, tuple)]


@pytest.mark.parametrize("name", [*ARRAY_NAMES, "zeros.j1"])
def test_every_array_parameter_is_bounded_in_length(name: str) -> None:
    """``remote.frames`` with 50,000 names ran a close-match search for minutes inside the
    parameter callback; every array takes at most ``MAX_ARRAY_ITEMS`` items, from every
    source (a list, a comma-separated string, an ``array.array`` from a service)."""
    spec = PARAMETERS_BY_NAME.get(name)
    numbers = name == "zeros.j1" or (spec is not None and spec.double_array)
    item: Callable[[int], Any] = (lambda i: float(i)) if numbers else (lambda i: f"n{i}:=v")
    for count in (MAX_ARRAY_ITEMS + 1, 50_000):
        for given in ([item(i) for i in range(count)], array("d", range(count))):
            with pytest.raises(ParameterRejected, match=rf"^{re.escape(name)} holds {count} items"):
                Settings.from_values({name: given})
            if spec is not None and takes_any_empty_array(spec):
                with pytest.raises(ParameterRejected, match=rf"^{re.escape(name)} holds"):
                    check_array_type(name, given)
    if name in ("exclude_joints", "source_list", "remote.frames"):
        joined = ",".join(f"n{i}" for i in range(MAX_ARRAY_ITEMS + 1))
        with pytest.raises(ParameterRejected, match=rf"^{re.escape(name)} holds"):
            Settings.from_values({name: joined})
    given = {name: [item(i) for i in range(MAX_ARRAY_ITEMS)]}
    if name == "source_time_offsets":  # one per topic
        given["source_list"] = [f"t{i}" for i in range(MAX_ARRAY_ITEMS)]
    if name != ATTACHMENTS:  # its names: letters, not "n0:=v"
        Settings.from_values(given)  # the bound itself is taken


# -- issue #44: every bound at the bound itself, every double from an integer ------------------

#: The double parameters with a documented range, and whether the low end itself is allowed
#: (``joint_state_timeout`` is > 0; periods may be 0, "off"; rates from 0.001 Hz,
#: ``loop_tolerance`` from 1e-12).
BOUNDED = {
    spec.name: spec.float_range
    for spec in PARAMETERS
    if spec.float_range is not None and spec.alias_of is None
}
LOW_END_ALLOWED = {
    "time_offset",
    "diagnostic_period",
    "static_republish_period",
    "loop_tolerance",
    "publish_frequency",
    "remote.rate",
}


def setting(name: str, value: Any) -> Any:
    """The ``Settings`` field parameter ``name`` sets, from ``value``."""
    return getattr(Settings.from_values({name: value}), SETTING_FIELDS.get(name, name))


def test_every_double_parameter_with_a_range_is_listed() -> None:
    assert set(BOUNDED) == {
        "publish_frequency",
        "time_offset",
        "diagnostic_period",
        "joint_state_timeout",
        "static_republish_period",
        "remote.rate",
        "loop_tolerance",
    }


@pytest.mark.parametrize("name", sorted(BOUNDED))
def test_the_documented_maximum_is_taken_as_a_double_and_as_an_integer(name: str) -> None:
    """3600 s periods, 1000 Hz rates, +-2147483647 s offsets: the bound itself, and the
    bound as the integer ros2cli and launch send (``remote.rate 5``)."""
    high = BOUNDED[name][1]
    assert setting(name, high) == high
    assert setting(name, int(high)) == high and isinstance(setting(name, int(high)), float)
    with pytest.raises(ParameterRejected, match=re.escape(name)):
        setting(name, high + 0.5)
    with pytest.raises(ParameterRejected, match=re.escape(name)):
        setting(name, int(high) + 1)


@pytest.mark.parametrize("name", sorted(BOUNDED))
def test_the_low_end_is_taken_or_refused_as_documented_and_below_it_refused(name: str) -> None:
    low = BOUNDED[name][0]
    if name in LOW_END_ALLOWED:
        assert setting(name, low) == low
        if float(low).is_integer():
            assert setting(name, int(low)) == low
        else:  # 1e-12, 0.001: the integer below it, 0, is refused, and so is half of it
            with pytest.raises(ParameterRejected, match=re.escape(name)):
                setting(name, int(low))
            with pytest.raises(ParameterRejected, match=re.escape(name)):
                setting(name, low / 2)
    else:
        with pytest.raises(ParameterRejected, match=re.escape(name)):
            setting(name, low)
        with pytest.raises(ParameterRejected, match=re.escape(name)):
            setting(name, int(low))
        assert setting(name, 1) == 1.0  # just inside, as an integer
    with pytest.raises(ParameterRejected, match=re.escape(name)):
        setting(name, low - 0.5)


@pytest.mark.parametrize(
    "name", ["frame_prefix", "global_frame_prefix", "model_name", "description_file"]
)
def test_a_text_parameter_unset_reads_empty(name: str) -> None:
    """A text parameter unset (None: rcl's NOT_SET, ``ros2 param delete``) is "" (no
    prefix, no model name, no file), not the value it held (make mutate's survivor of the
    parser closure built at import)."""
    held = Settings.from_values({name: "r/"})
    assert getattr(held, name) == "r/"
    assert getattr(held.changed({name: None}), name) == ""


@pytest.mark.parametrize("name", ["frame_prefix", "global_frame_prefix"])
def test_a_prefix_of_the_longest_length_is_taken_and_one_more_character_refused(name: str) -> None:
    """node.md: at most 256 characters, for both prefixes."""
    assert setting(name, "r" * MAX_PREFIX_CHARS) == "r" * MAX_PREFIX_CHARS
    words = f"{name} holds {MAX_PREFIX_CHARS + 1} characters: at most {MAX_PREFIX_CHARS} are taken"
    with pytest.raises(ParameterRejected, match=f"^{re.escape(words)}$"):
        setting(name, "r" * (MAX_PREFIX_CHARS + 1))


# -- issue #44: the words of every refusal, and what make mutate found unguarded ---------------

#: (parameter, value, the whole reason): each names the parameter, says what it takes and
#: shows the value refused (these are what ros2 param set, a start and bag repair print).
REFUSALS: list[tuple[str, Any, str]] = [
    ("clamp", "tight", "clamp must be one of hard, soft, none, got 'tight'"),
    ("remote.topic", "  ", "remote.topic must be a topic name, got '  '"),
    ("remote.topic", 3, "remote.topic must be a topic name, got 3"),
    ("loop_tolerance", "x", "loop_tolerance must be a number (m and rad), got 'x'"),
    ("loop_tolerance", 2.0, "loop_tolerance must be >= 1e-12 and <= 1 (round-off stays below "
     "1e-13), got 2.0"),
    ("static_republish_period", 0.05, "static_republish_period must be 0 (off) or >= 0.1 s "
     "(10 Hz at most), got 0.05"),
    ("static_republish_period", "x", "static_republish_period must be a number of seconds, "
     "got 'x'"),
    ("time_offset", "x", "time_offset must be a number of seconds, got 'x'"),
    ("time_offset", 3e9, "time_offset must be finite and within +-2147483647 s (the seconds a "
     "stamp holds), got 3000000000.0"),
    ("time_offset", -(10**400), "time_offset must be finite and within +-2147483647 s (the "
     "seconds a stamp holds), got an integer of 1329 bits"),
    ("source_time_offsets", "0.5", "source_time_offsets must be a double array, got '0.5'"),
    ("source_time_offsets", [0.5, "x"], "source_time_offsets[1] must be a number of seconds, "
     "got 'x'"),
    ("description_args", [3], "description_args must be a string array, got [3]"),
    ("description_args", ["novalue"], "description_args: 'novalue' is not name:=value"),
    ("description_args", [":=a:=b"], "description_args: ':=a:=b' is not name:=value"),
    ("zeros.j1", [], "zeros.j1 must be a number or a list of numbers, got []"),
    ("zeros.j1", ["x"], "zeros.j1 must be a number or a list of numbers, got 'x'"),
    ("zeros.j1", [math.inf], "zeros.j1 must be finite (a number or a list of numbers), got inf"),
    (ATTACHMENTS, ["names"], "attachments.names: 'names' cannot name an attachment (letters, "
     "digits and underscores, not starting with a digit; not 'names')"),
    (ATTACHMENTS, ["9tool"], "attachments.names: '9tool' cannot name an attachment (letters, "
     "digits and underscores, not starting with a digit; not 'names')"),
    ("attachments.tool.colour", "x", "attachments.tool.colour: an attachment parameter is "
     "attachments.<name>.<field>, field one of description, file, parent, origin, prefix"),
    ("attachments.file", "x", "attachments.file: an attachment parameter is "
     "attachments.<name>.<field>, field one of description, file, parent, origin, prefix"),
    ("attachments.tool.file", 3, "attachments.tool.file must be a string, got 3"),
    ("attachments.tool.origin", [0.0] * 5, "attachments.tool.origin must be 6 numbers (x y z "
     "roll pitch yaw), got [0.0, 0.0, 0.0, 0.0, 0.0]"),
    ("attachments.tool.origin", [0.0] * 5 + [math.nan], "attachments.tool.origin must be "
     "finite (6 numbers (x y z roll pitch yaw)), got nan"),
    ("attachments.tool.origin", [0.0] * 5 + [True], "attachments.tool.origin must be 6 numbers "
     "(x y z roll pitch yaw), got True"),
    ("publish_frequency", "x", "publish_frequency must be a number, got 'x'"),
    ("publish_frequency", True, "publish_frequency must be a number, got True"),
    ("remote.rate", 0, "remote.rate must be >= 0.001 and <= 1000 Hz, got 0"),
    ("diagnostic_period", -1, "diagnostic_period must be >= 0 and <= 3600 s, got -1"),
    ("joint_state_timeout", 0, "joint_state_timeout must be > 0 and <= 3600 s, got 0"),
    ("ignore_timestamp", 1, "ignore_timestamp must be a bool, got 1"),
    ("publish_default_positions", "true", "publish_default_positions must be a bool, got 'true'"),
    ("frame_prefix", 3, "frame_prefix must be a string, got 3"),
    ("model_name", ["a"], "model_name must be a string, got ['a']"),
    ("exclude_joints", [1], "exclude_joints must be a string array, got [1]"),
]  # fmt: skip


@pytest.mark.parametrize("name, value, reason", REFUSALS, ids=lambda x: str(x)[:30])
def test_every_refusal_names_the_parameter_what_it_takes_and_the_value(
    name: str, value: Any, reason: str
) -> None:
    given = {name: value}
    if name == "source_time_offsets":
        given["source_list"] = ["arm", "gripper"]
    with pytest.raises(ParameterRejected) as refused:
        Settings.from_values(given)
    assert str(refused.value) == reason


def test_a_refused_value_is_shown_whole_up_to_its_bound_and_by_its_size_beyond() -> None:
    """An integer a double cannot hold by its bits (from 65 bits), an array of more than
    ``MAX_ARRAY_ITEMS`` items by its count, text of ``MAX_SHOWN_CHARS`` characters whole."""
    assert shown(2**64) == "an integer of 65 bits"
    assert shown(2**64 - 1) == str(2**64 - 1)
    assert shown(["a"] * (MAX_ARRAY_ITEMS + 1)) == f"{MAX_ARRAY_ITEMS + 1} items"
    assert shown([1] * MAX_ARRAY_ITEMS).endswith(f"... ({3 * MAX_ARRAY_ITEMS} chars)")
    text = "x" * (MAX_SHOWN_CHARS - 2)  # its repr: MAX_SHOWN_CHARS characters
    assert shown(text) == repr(text)
    assert shown(text + "x") == f"{repr(text + 'x')[:MAX_SHOWN_CHARS]}... (121 chars)"


def test_an_integer_no_double_holds_is_an_infinity_of_its_sign() -> None:
    assert as_number("time_offset", 10**400) == math.inf
    assert as_number("time_offset", -(10**400)) == -math.inf
    assert as_number("time_offset", -1) == -1.0


def test_the_arrays_a_parser_takes_alone_are_bounded_too() -> None:
    """``parse_time_offsets`` and ``parse_zero`` (the zeros check and the bag commands call
    them without ``Settings``) refuse more than ``MAX_ARRAY_ITEMS`` items by their count."""
    too_many = [0.0] * (MAX_ARRAY_ITEMS + 1)
    with pytest.raises(ParameterRejected, match=r"^source_time_offsets holds 4097 items"):
        parse_time_offsets(too_many)
    with pytest.raises(ParameterRejected, match=r"^zeros.j1 holds 4097 items"):
        parse_zero("zeros.j1", too_many)


def test_values_taken_as_users_give_them() -> None:
    """A remote.topic with spaces around it, attachment names in any case, one xacro
    argument as a plain string (a launch file's substitution), unset attachment fields at
    their defaults, the shortest republish period, a source_list topic's own offset."""
    assert setting("remote.topic", " viewer/tf ") == "viewer/tf"
    assert setting(ATTACHMENTS, ["Gripper_2", "cam"]) == ("Gripper_2", "cam")
    assert setting("description_args", "mode:=sim") == ("mode:=sim",)
    assert setting("static_republish_period", 0.1) == 0.1
    unset = {ATTACHMENTS: ["tool"], "attachments.tool.file": None}
    (tool,) = Settings.from_values({**unset, "attachments.tool.origin": None}).attachment_list
    assert (tool.file, tool.origin) == ("", (0.0,) * 6)
    offsets = {"source_list": ["arm", "gripper"], "time_offset": -0.5}
    assert Settings.from_values(offsets).time_offsets_s() == {"arm": -0.5, "gripper": -0.5}
    offsets["source_time_offsets"] = [0.25, -0.25]
    assert Settings.from_values(offsets).time_offsets_s() == {"arm": -0.25, "gripper": -0.75}


def test_offsets_of_another_length_than_source_list_are_refused_saying_how_to_set_both() -> None:
    with pytest.raises(ParameterRejected) as refused:
        Settings.from_values({"source_list": ["arm", "gripper"], "source_time_offsets": [0.1]})
    assert str(refused.value) == (
        "source_time_offsets has 1 value(s) but source_list 2 topic(s): give one offset per "
        "topic, in source_list's order, or none (set both in one change: a parameters file, "
        "or ros2 service call <node>/set_parameters_atomically)"
    )


def test_a_name_is_shown_in_place_printable_and_cut() -> None:
    """A key of a params file or a parameter name in a refusal: as it is when printable,
    escaped when not (a newline, an escape sequence), cut at ``MAX_SHOWN_CHARS``."""
    assert shown_text("zeros.elbow") == "zeros.elbow"
    assert shown_text("forged\n\x1b[31mred") == "forged\\n\\x1b[31mred"
    assert shown_text("x" * MAX_SHOWN_CHARS) == "x" * MAX_SHOWN_CHARS
    assert shown_text("x" * (MAX_SHOWN_CHARS + 1)) == "x" * MAX_SHOWN_CHARS + "..."


def test_a_xacro_argument_s_value_may_hold_the_separator() -> None:
    assert xacro_mappings(("mode:=a:=b", " arm :=ur5")) == {"mode": "a:=b", "arm": "ur5"}


def test_an_array_of_another_type_is_refused_in_node_md_s_words() -> None:
    with pytest.raises(ParameterRejected) as refused:
        check_array_type("source_list", [True])
    assert (
        str(refused.value) == "source_list must be a string array (or [] to clear it), got [True]"
    )
    assert f"(`{refused.value}`)" in (REPO_ROOT / "docs" / "node.md").read_text()


def test_the_topic_is_the_source_when_either_name_says_so_in_any_order() -> None:
    """The node passes both names (each has a value): either true, whichever comes first,
    makes the description come from the topic; both false, never."""
    old_first = {"use_robot_description_topic": True, "description_from_topic": False}
    assert Settings.from_values(old_first).description_from_topic
    both_false = {"description_from_topic": False, "use_robot_description_topic": False}
    assert Settings.from_values(both_false).description_from_topic is False
