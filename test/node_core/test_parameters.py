"""parameters: the one table, the settings it validates, and the docs that must follow it.

No rclpy: the table, ``Settings`` and the docs checks stand alone. That the node declares
exactly this table (with descriptors) is checked in test_node.py.
"""

from __future__ import annotations

import dataclasses
import json
import re
from array import array
from typing import Any

import pytest
from repo_paths import REPO_ROOT, config_parameters

from joint_tf_publisher.model import ClampMode
from joint_tf_publisher.node_core.parameters import (
    ATTACHMENTS,
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

yaml = pytest.importorskip("yaml")

DOCS = [REPO_ROOT / "README.md", REPO_ROOT / "docs" / "node.md"]
ROS_TYPE_WORDS = {
    "bool": "bool",
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
    3, 2.5, True, None, "x", "", [], [1, 2], ["a", 3], [[1]], {"a": 1}, [{"a": 1}], float("nan")
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


# -- issue #44: every bound at the bound itself, every double from an integer ------------------

#: The double parameters with a documented range, and whether the low end itself is allowed
#: (rates and ``joint_state_timeout`` are > 0; periods may be 0, "off").
BOUNDED = {
    spec.name: spec.float_range
    for spec in PARAMETERS
    if spec.float_range is not None and spec.alias_of is None
}
LOW_END_ALLOWED = {"time_offset", "diagnostic_period", "static_republish_period"}


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
        assert setting(name, low) == low and setting(name, int(low)) == low
    else:
        with pytest.raises(ParameterRejected, match=re.escape(name)):
            setting(name, low)
        with pytest.raises(ParameterRejected, match=re.escape(name)):
            setting(name, int(low))
        assert setting(name, 1) == 1.0  # just inside, as an integer
    with pytest.raises(ParameterRejected, match=re.escape(name)):
        setting(name, low - 0.5)
