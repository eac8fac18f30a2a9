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
    MAX_PUBLISH_FREQUENCY,
    MAX_TIME_OFFSET_S,
    PARAMETERS,
    PARAMETERS_BY_NAME,
    SETTING_FIELDS,
    ZEROS_PREFIX,
    ParameterRejected,
    Settings,
    check_array_type,
    parse_clamp,
    parse_frequency,
    parse_joint_names,
    parse_topic_names,
    parse_zero,
    takes_any_empty_array,
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
