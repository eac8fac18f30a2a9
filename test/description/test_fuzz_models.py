"""Fuzzing the URDF and SDFormat loaders: mutated descriptions load or raise ModelError.

Hypothesis takes the project's valid test descriptions and mutates their XML trees (drops,
duplicates, renames and moves elements; drops, adds and garbles attributes and text) or their
raw text (truncation, inserted bytes). Loading must then either succeed or raise ModelError
with a one-line ``source:...`` message; nothing else may escape. A model that loads must also
be usable: its axes are unit vectors, every joint's parent->child transform (what the node
publishes) is finite at zero and at a sample configuration, and forward kinematics runs (or
raises ModelError), so the node never publishes a NaN or a frozen joint for a description it
accepted.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree
from repo_paths import TEST_DIR

from joint_tf_publisher import ModelError, Robot

#: Large seeds (the 72-joint humanoid) make each example slow without finding more.
SKIPPED_SEEDS = {"humanoid.urdf"}

FUZZ_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: Values that broke XML number and name readers somewhere, plus plausible ones.
INTERESTING_VALUES = [
    "",
    " ",
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "Infinity",
    "1e400",
    "-1e400",
    "1e-400",
    "1e308",
    "0",
    "-0",
    "1",
    "-1",
    "0.5",
    "1 0 0",
    "0 0 1",
    "0 0 0",
    "1 2",
    "1 2 3 4",
    "1 2 3 4 5 6",
    "1 2 3 0 0 0 1",
    "nan nan nan",
    "1e308 1e308 1e308",
    "inf 0 0",
    "1,2,3",
    "abc",
    "0x10",
    "1_000",
    "\u0661\u0662",
    "true",
    "false",
    "  1   2  3 ",
    "1\t2\n3",
    "revolute",
    "continuous",
    "prismatic",
    "fixed",
    "floating",
    "planar",
    "screw",
    "gearbox",
    "revolute2",
    "universal",
    "ball",
    "1.0",
    "1.1",
    "1.2",
    "2.0",
    "1.4",
    "1.5",
    "1.6",
    "1.7",
    "1.8",
    "1.9",
    "1.10",
    "1.11",
    "world",
    "__model__",
    "euler_rpy",
    "quat_xyzw",
    "degrees",
    "axis",
    "axis2",
    "x" * 300,
]

#: Element and attribute names of both formats, for renames and additions.
TAGS = [
    "robot",
    "link",
    "joint",
    "parent",
    "child",
    "origin",
    "axis",
    "axis2",
    "limit",
    "dynamics",
    "mimic",
    "safety_controller",
    "calibration",
    "pose",
    "xyz",
    "model",
    "sdf",
    "world",
    "frame",
    "lower",
    "upper",
    "effort",
    "velocity",
    "use_parent_model_frame",
    "thread_pitch",
    "screw_thread_pitch",
    "gearbox_ratio",
    "gearbox_reference_body",
    "canonical_link",
    "include",
    "multiplier",
    "offset",
    "reference",
    "unknown_tag",
]
ATTRIBUTES = [
    "name",
    "type",
    "link",
    "xyz",
    "rpy",
    "quat_xyzw",
    "lower",
    "upper",
    "effort",
    "velocity",
    "joint",
    "multiplier",
    "offset",
    "version",
    "relative_to",
    "expressed_in",
    "degrees",
    "rotation_format",
    "k_velocity",
    "soft_lower_limit",
    "soft_upper_limit",
    "rising",
    "falling",
    "canonical_link",
    "axis",
    "acceleration",
    "jerk",
]

INLINE_URDF = """<robot name="inline" version="1.2">
  <link name="a"/><link name="b"/><link name="c"/><link name="d"/>
  <joint name="j1" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0 0 1" quat_xyzw="0 0 0 1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1" acceleration="2" jerk="3"/>
    <safety_controller k_velocity="1" soft_lower_limit="-0.5" soft_upper_limit="0.5"/>
  </joint>
  <joint name="j2" type="prismatic"><parent link="b"/><child link="c"/>
    <limit lower="0" upper="0.2" effort="1" velocity="1"/>
    <mimic joint="j1" multiplier="0.1" offset="0.05"/></joint>
  <joint name="j3" type="planar"><parent link="c"/><child link="d"/><axis xyz="0 0 1"/></joint>
</robot>"""

INLINE_SDF = """<sdf version="1.9"><model name="inline"><pose>0 0 1 0 0 0</pose>
  <link name="a"/><link name="b"><pose relative_to="f">0 0 1 0 0 90</pose></link>
  <frame name="f" attached_to="a"><pose degrees="true">1 0 0 0 0 90</pose></frame>
  <link name="c"><pose rotation_format="quat_xyzw">0 1 0 0 0 0 1</pose></link>
  <joint name="u" type="universal"><parent>a</parent><child>b</child>
    <axis><xyz expressed_in="__model__">1 0 0</xyz><limit><lower>-1</lower><upper>1</upper>
    </limit></axis><axis2><xyz>0 1 0</xyz></axis2></joint>
  <joint name="s" type="ball"><parent>b</parent><child>c</child></joint>
  <joint name="w" type="fixed"><parent>world</parent><child>a</child></joint>
</model></sdf>"""


def seed_documents(pattern: str, inline: str) -> list[tuple[str, str]]:
    """(name, text) of the test descriptions matching ``pattern`` under test/, and ``inline``."""
    seeds = [("inline", inline)]
    for path in sorted(TEST_DIR.glob(pattern)):
        if path.name not in SKIPPED_SEEDS:
            seeds.append((path.name, path.read_text()))
    return seeds


URDF_SEEDS = seed_documents("urdf/*.urdf", INLINE_URDF)
SDF_SEEDS = seed_documents("sdf/*.sdf", INLINE_SDF)


#: Joint types whose motion is along or about ``axis``.
AXIS_TYPES = {
    "revolute",
    "continuous",
    "prismatic",
    "planar",
    "screw",
    "gearbox",
    "revolute2",
    "universal",
}

#: A non-zero configuration of each multi-DOF joint type (scalar types use 0.3).
SAMPLE_CFG: dict[str, object] = {
    "fixed": None,
    "planar": [0.1, 0.2, 0.3],
    "floating": [0.1, 0.2, 0.3, 0.1, 0.2, 0.3],
    "revolute2": [0.1, 0.2],
    "universal": [0.1, 0.2],
    "ball": [0.0, 0.0, 0.38268343, 0.92387953],
}


def check_loads_or_model_error(text: str | bytes, source: str) -> None:
    """The property under test: success with usable kinematics, or a clear ModelError."""
    try:
        robot = Robot.from_xml_string(text, source=source)
    except ModelError as error:
        assert_one_line_error(error, source)
        return
    assert robot.root in robot.links
    for joint in robot.joints.values():
        assert joint.parent in robot.links and joint.child in robot.links, joint.name
        assert np.all(np.isfinite(joint.origin)), joint.name
        if joint.joint_type in AXIS_TYPES:
            assert_unit(joint.axis, f"joint {joint.name!r} axis")
            if joint.axis2 is not None:
                assert_unit(joint.axis2, f"joint {joint.name!r} axis2")
        for cfg in (None, SAMPLE_CFG.get(joint.joint_type, 0.3)):
            pose = joint.child_pose(cfg)
            assert np.all(np.isfinite(pose)), f"joint {joint.name!r} at {cfg}: {pose}"
    try:
        robot.link_fk()
    except ModelError as error:
        assert_one_line_error(error, source)


def assert_unit(axis: np.ndarray, what: str) -> None:
    """An accepted joint axis is a finite unit vector (a zero axis would freeze the joint)."""
    assert np.all(np.isfinite(axis)) and abs(np.linalg.norm(axis) - 1.0) < 1e-9, f"{what}: {axis}"


def assert_one_line_error(error: ModelError, source: str) -> None:
    """A ModelError message names the source and fits on one line."""
    message = str(error)
    assert message.startswith(f"{source}"), message
    assert "\n" not in message, message
    assert error.reason.strip(), message


# -- tree mutations --------------------------------------------------------------------------

Mutation = Callable[[st.DataObject, etree._Element], None]


def value_strategy(root: etree._Element) -> st.SearchStrategy[str]:
    """Garbage drawn from interesting values, the document's own values, floats and text."""
    own = sorted(
        {v for el in root.iter(tag=etree.Element) for v in el.attrib.values()}
        | {el.text.strip() for el in root.iter(tag=etree.Element) if el.text}
    )
    number = st.floats(allow_nan=True, allow_infinity=True).map(repr)
    vector = st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=8)
    return st.one_of(
        st.sampled_from(INTERESTING_VALUES),
        st.sampled_from(own or [""]),
        number,
        vector.map(lambda values: " ".join(repr(value) for value in values)),
        st.text(max_size=12),
    )


def elements(root: etree._Element) -> list[etree._Element]:
    """Every element of the tree, root first (comments and entities left out)."""
    return list(root.iter(tag=etree.Element))


def drop_attribute(data: st.DataObject, root: etree._Element) -> None:
    element = data.draw(st.sampled_from(elements(root)))
    if element.attrib:
        del element.attrib[data.draw(st.sampled_from(sorted(element.attrib)))]


def set_attribute(data: st.DataObject, root: etree._Element) -> None:
    element = data.draw(st.sampled_from(elements(root)))
    names = sorted(element.attrib) + ATTRIBUTES
    element.set(data.draw(st.sampled_from(names)), data.draw(value_strategy(root)))


def set_text(data: st.DataObject, root: etree._Element) -> None:
    element = data.draw(st.sampled_from(elements(root)))
    element.text = data.draw(value_strategy(root))


def drop_element(data: st.DataObject, root: etree._Element) -> None:
    element = data.draw(st.sampled_from(elements(root)[1:] or [root]))
    parent = element.getparent()
    if parent is not None:
        parent.remove(element)


def duplicate_element(data: st.DataObject, root: etree._Element) -> None:
    element = data.draw(st.sampled_from(elements(root)[1:] or [root]))
    if element.getparent() is not None:
        element.addnext(copy.deepcopy(element))


def rename_element(data: st.DataObject, root: etree._Element) -> None:
    element = data.draw(st.sampled_from(elements(root)))
    element.tag = data.draw(st.sampled_from(TAGS))


def move_element(data: st.DataObject, root: etree._Element) -> None:
    candidates = elements(root)
    element = data.draw(st.sampled_from(candidates[1:] or [root]))
    target = data.draw(st.sampled_from(candidates))
    if element is not root and element not in target.iterancestors() and element is not target:
        target.append(element)


MUTATIONS: list[Mutation] = [
    drop_attribute,
    set_attribute,
    set_text,
    drop_element,
    duplicate_element,
    rename_element,
    move_element,
]


def mutate_tree(data: st.DataObject, text: str) -> bytes:
    """``text`` with one to four random tree mutations applied, serialised again."""
    # recover=True only for the seeds' undeclared prefixes (drake:), kept as written.
    parser = etree.XMLParser(remove_comments=True, recover=True)
    root = etree.fromstring(text.encode(), parser=parser)
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        mutation = data.draw(st.sampled_from(MUTATIONS), label="mutation")
        try:
            mutation(data, root)
        except ValueError:  # lxml refuses values that XML cannot hold (control characters)
            continue
    return etree.tostring(root)


@FUZZ_SETTINGS
@given(seed=st.sampled_from(URDF_SEEDS), data=st.data())
def test_mutated_urdf_loads_or_raises_model_error(
    seed: tuple[str, str], data: st.DataObject
) -> None:
    check_loads_or_model_error(mutate_tree(data, seed[1]), source=f"fuzz-{seed[0]}")


@FUZZ_SETTINGS
@given(seed=st.sampled_from(SDF_SEEDS), data=st.data())
def test_mutated_sdf_loads_or_raises_model_error(
    seed: tuple[str, str], data: st.DataObject
) -> None:
    check_loads_or_model_error(mutate_tree(data, seed[1]), source=f"fuzz-{seed[0]}")


# -- text mutations --------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(seed=st.sampled_from(URDF_SEEDS + SDF_SEEDS), data=st.data())
def test_mutated_text_loads_or_raises_model_error(
    seed: tuple[str, str], data: st.DataObject
) -> None:
    raw = seed[1].encode()
    cut = data.draw(st.integers(0, len(raw)), label="cut")
    kind = data.draw(st.sampled_from(["truncate", "insert", "replace"]), label="kind")
    junk = data.draw(st.binary(min_size=1, max_size=8), label="junk")
    if kind == "truncate":
        mutated = raw[:cut]
    elif kind == "insert":
        mutated = raw[:cut] + junk + raw[cut:]
    else:
        mutated = raw[:cut] + junk + raw[cut + len(junk) :]
    check_loads_or_model_error(mutated, source=f"text-{seed[0]}")


# -- targeted cases the mutations reach only rarely -----------------------------------------

URDF_TWO_LINKS = '<robot name="r"><link name="a"/><link name="b"/>{joints}</robot>'
SDF_TWO_LINKS = (
    '<sdf version="{version}"><model name="m"><link name="a"/><link name="b">{pose}</link>'
    "{joints}</model></sdf>"
)
URDF_REVOLUTE = (
    '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="{axis}"/>'
    '<limit effort="1" velocity="1"/></joint>'
)
SDF_JOINT = '<joint name="j" type="{kind}"><parent>a</parent><child>b</child>{body}</joint>'


EDGE_CASES = [
    pytest.param(
        '<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'
        '<joint name="j" type="fixed"><parent link="a"/><child link="b"/>'
        '<origin xyz="1e308 0 0"/></joint><joint name="k" type="fixed"><parent link="b"/>'
        '<child link="c"/><origin xyz="1e308 0 0"/></joint></robot>',
        id="urdf-origin-sum-overflows",
    ),
    pytest.param(
        URDF_TWO_LINKS.format(joints=URDF_REVOLUTE.format(axis="1e-320 0 0")),
        id="urdf-denormal-axis",
    ),
    pytest.param(
        URDF_TWO_LINKS.format(joints=URDF_REVOLUTE.format(axis="1e300 1e300 0")),
        id="urdf-huge-axis",
    ),
    pytest.param(
        URDF_TWO_LINKS.format(
            joints='<joint name="j" type="fixed"><parent link="a"/><child link="b"/>'
            '<origin quat_xyzw="0 0 0 0"/></joint>'
        ).replace('name="r"', 'name="r" version="1.1"'),
        id="urdf-zero-quaternion",
    ),
    pytest.param(
        SDF_TWO_LINKS.format(
            version="1.9",
            pose="",
            joints=SDF_JOINT.format(kind="revolute", body="<axis><xyz>1e300 1e300 0</xyz></axis>"),
        ),
        id="sdf-huge-axis",
    ),
    pytest.param(
        SDF_TWO_LINKS.format(
            version="1.9",
            pose='<pose rotation_format="quat_xyzw">0 0 0 0 0 0 0</pose>',
            joints=SDF_JOINT.format(kind="fixed", body=""),
        ),
        id="sdf-zero-quaternion",
    ),
    pytest.param(
        SDF_TWO_LINKS.format(
            version="1.6",
            pose="",
            joints=SDF_JOINT.format(
                kind="screw", body="<thread_pitch>0</thread_pitch><axis><xyz>0 0 1</xyz></axis>"
            ),
        ),
        id="sdf-zero-thread-pitch",
    ),
    pytest.param(
        SDF_TWO_LINKS.format(
            version="1.6",
            pose="",
            joints=SDF_JOINT.format(
                kind="screw",
                body="<thread_pitch>1e-320</thread_pitch><axis><xyz>0 0 1</xyz></axis>",
            ),
        ),
        id="sdf-denormal-thread-pitch",
    ),
    pytest.param(
        '<sdf version="1.9"><model name="m"><link name="a"/><link name="b">'
        '<pose>1e308 0 0 0 0 0</pose></link><link name="c"><pose>-1e308 0 0 0 0 0</pose>'
        '</link><joint name="j" type="fixed"><parent>a</parent><child>b</child></joint>'
        '<joint name="k" type="fixed"><parent>b</parent><child>c</child></joint></model></sdf>',
        id="sdf-pose-difference-overflows",
    ),
]


@pytest.mark.parametrize("document", EDGE_CASES)
def test_numeric_edge_cases_load_or_raise_model_error(document: str) -> None:
    check_loads_or_model_error(document, source="edge")
