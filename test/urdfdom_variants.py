"""URDF texts for the differential test against urdfdom, and how both parsers read them.

The texts are the project's own URDFs plus variants generated from them and from
``BASE_URDF`` (a robot that writes every element and attribute of the URDF spec), the same
for the same seed. Each variant changes one thing, and its ``kind`` says what:

- an attribute of the spec absent, or in one of its ``*_FORMS``: unusual but legal, malformed,
  not finite, zero; a link or joint renamed (with or without its references);
- an element of the spec removed, repeated, emptied, or given unknown content or a comment;
- an element or attribute added where the base has none (a joint element on another joint
  type, URDF 1.1's ``quat_xyzw`` and capsule, URDF 1.2's limit extras, under each version);
- the document: encoding, prolog, DOCTYPE and entities, CDATA, comments, processing
  instructions, namespaces declared and undeclared, unexpanded xacro, ``version``, XML that
  is not well-formed;
- the tree and the mimic graph (cycles, two parents, a second root, mimic loops...);

and PAIRS variants stack two legal unusual forms. urdfdom reads each text through its own
``check_urdf`` program (from the ``cmeel-urdfdom`` wheel that ``pin`` brings into the dev
environment), one run per text: it exits 0 and prints the link tree when urdfdom loads it.

Run this file to print the figures and disagreements for docs/urdf-compatibility.md:

    .venv/bin/python test/urdfdom_variants.py
"""

from __future__ import annotations

import copy
import os
import random
import re
import subprocess
import sys
import sysconfig
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree
from repo_paths import REPO_ROOT

from joint_tf_publisher import ModelError, Robot

SEED = 20261123
#: Pairs of legal unusual forms on BASE_URDF, and random changes of each own description.
PAIRS = 60
OWN_VARIANTS = 20
#: Bytes of check_urdf's printout after which its tree is taken to print without end.
MAX_PRINTOUT = 1 << 20
ENDLESS_TREE = "check_urdf prints the tree without end (the joints form a cycle)"

# A robot with every URDF element and attribute written once (visual, collision, inertial and
# materials included: urdfdom reads them, this package skips them), every joint type, a mimic
# pair whose follower range lies inside its own limits, a transmission and a gazebo block.
BASE_URDF = """<?xml version="1.0"?>
<robot name="variant_bot">
  <material name="blue">
    <color rgba="0 0 0.8 1"/>
  </material>
  <link name="base_link">
    <inertial>
      <origin xyz="0 0 0.05" rpy="0 0 0"/>
      <mass value="2.5"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.02"/>
    </inertial>
    <visual name="base_visual">
      <origin xyz="0 0 0.05" rpy="0 0 0"/>
      <geometry>
        <box size="0.3 0.2 0.1"/>
      </geometry>
      <material name="blue"/>
    </visual>
    <collision name="base_collision">
      <origin xyz="0 0 0.05" rpy="0 0 0"/>
      <geometry>
        <cylinder radius="0.15" length="0.1"/>
      </geometry>
    </collision>
  </link>
  <link name="shoulder">
    <visual>
      <geometry>
        <sphere radius="0.05"/>
      </geometry>
      <material name="grey">
        <color rgba="0.5 0.5 0.5 1"/>
        <texture filename="package://variant_bot/textures/grey.png"/>
      </material>
    </visual>
    <collision>
      <geometry>
        <mesh filename="package://variant_bot/meshes/shoulder.stl" scale="1 1 1"/>
      </geometry>
    </collision>
  </link>
  <link name="upper_arm"/>
  <link name="slider"/>
  <link name="finger_left"/>
  <link name="finger_right"/>
  <link name="wheel"/>
  <link name="platform"/>
  <link name="drone"/>
  <link name="tool"/>
  <joint name="shoulder_joint" type="revolute">
    <origin xyz="0 0 0.1" rpy="0 0 0.5"/>
    <parent link="base_link"/>
    <child link="shoulder"/>
    <axis xyz="0 0 1"/>
    <calibration rising="0.1" falling="-0.1"/>
    <dynamics damping="0.7" friction="0.1"/>
    <limit lower="-2.5" upper="2.5" effort="30" velocity="1.5"/>
    <safety_controller soft_lower_limit="-2.4" soft_upper_limit="2.4" k_position="15"
        k_velocity="10"/>
  </joint>
  <joint name="elbow_joint" type="continuous">
    <origin xyz="0.05 0 0.2" rpy="0.3 -0.2 0.1"/>
    <parent link="shoulder"/>
    <child link="upper_arm"/>
    <axis xyz="0 1 0"/>
    <dynamics damping="0.2"/>
  </joint>
  <joint name="slide_joint" type="prismatic">
    <origin xyz="0 0 0.3" rpy="0 1.5708 0"/>
    <parent link="upper_arm"/>
    <child link="slider"/>
    <axis xyz="1 0 0"/>
    <limit lower="0" upper="0.2" effort="50" velocity="0.3"/>
  </joint>
  <joint name="finger_left_joint" type="prismatic">
    <origin xyz="0 0.02 0.05"/>
    <parent link="slider"/>
    <child link="finger_left"/>
    <axis xyz="0 1 0"/>
    <limit lower="0" upper="0.04" effort="20" velocity="0.1"/>
  </joint>
  <joint name="finger_right_joint" type="prismatic">
    <origin xyz="0 -0.02 0.05"/>
    <parent link="slider"/>
    <child link="finger_right"/>
    <axis xyz="0 -1 0"/>
    <limit lower="0" upper="0.04" effort="20" velocity="0.1"/>
    <mimic joint="finger_left_joint" multiplier="1" offset="0"/>
  </joint>
  <joint name="wheel_joint" type="continuous">
    <origin xyz="-0.1 0 0" rpy="1.5708 0 0"/>
    <parent link="base_link"/>
    <child link="wheel"/>
    <axis xyz="0 0 1"/>
  </joint>
  <joint name="platform_joint" type="planar">
    <origin xyz="0 0 -0.05"/>
    <parent link="base_link"/>
    <child link="platform"/>
    <axis xyz="0 0 1"/>
  </joint>
  <joint name="drone_joint" type="floating">
    <origin xyz="1 0 1" rpy="0 0 0"/>
    <parent link="base_link"/>
    <child link="drone"/>
  </joint>
  <joint name="tool_joint" type="fixed">
    <origin xyz="0 0 0.08" rpy="3.14159 0 0"/>
    <parent link="slider"/>
    <child link="tool"/>
  </joint>
  <transmission name="shoulder_transmission">
    <type>transmission_interface/SimpleTransmission</type>
    <joint name="shoulder_joint">
      <hardwareInterface>hardware_interface/PositionJointInterface</hardwareInterface>
    </joint>
    <actuator name="shoulder_motor">
      <mechanicalReduction>50</mechanicalReduction>
    </actuator>
  </transmission>
  <gazebo reference="shoulder">
    <material>Gazebo/Blue</material>
  </gazebo>
</robot>
"""

#: Where each attribute of the URDF spec is written, and the form of its value.
ATTRIBUTES: tuple[tuple[str, str, str], ...] = (
    ("/robot", "name", "name"),
    ("/robot/material", "name", "name"),
    ("/robot/material/color", "rgba", "vector4"),
    ("link", "name", "link name"),
    ("link/inertial/origin", "xyz", "vector3"),
    ("link/inertial/origin", "rpy", "vector3"),
    ("link/inertial/mass", "value", "number"),
    *(("link/inertial/inertia", f"i{a}", "number") for a in ("xx", "xy", "xz", "yy", "yz", "zz")),
    ("link/visual", "name", "name"),
    ("link/visual/origin", "xyz", "vector3"),
    ("link/visual/origin", "rpy", "vector3"),
    ("link/visual/geometry/box", "size", "vector3"),
    ("link/visual/geometry/sphere", "radius", "number"),
    ("link/visual/material", "name", "name"),
    ("link/visual/material/color", "rgba", "vector4"),
    ("link/visual/material/texture", "filename", "name"),
    ("link/collision", "name", "name"),
    ("link/collision/origin", "xyz", "vector3"),
    ("link/collision/geometry/cylinder", "radius", "number"),
    ("link/collision/geometry/cylinder", "length", "number"),
    ("link/collision/geometry/mesh", "filename", "name"),
    ("link/collision/geometry/mesh", "scale", "vector3"),
    ("joint", "name", "joint name"),
    ("joint", "type", "joint type"),
    ("joint/origin", "xyz", "vector3"),
    ("joint/origin", "rpy", "vector3"),
    ("joint/parent", "link", "link reference"),
    ("joint/child", "link", "link reference"),
    ("joint/axis", "xyz", "vector3"),
    ("joint/calibration", "rising", "number"),
    ("joint/calibration", "falling", "number"),
    ("joint/dynamics", "damping", "number"),
    ("joint/dynamics", "friction", "number"),
    ("joint/limit", "lower", "number"),
    ("joint/limit", "upper", "number"),
    ("joint/limit", "effort", "number"),
    ("joint/limit", "velocity", "number"),
    ("joint/mimic", "joint", "joint reference"),
    ("joint/mimic", "multiplier", "number"),
    ("joint/mimic", "offset", "number"),
    ("joint/safety_controller", "soft_lower_limit", "number"),
    ("joint/safety_controller", "soft_upper_limit", "number"),
    ("joint/safety_controller", "k_position", "number"),
    ("joint/safety_controller", "k_velocity", "number"),
)

#: Elements of the URDF spec that variants remove, repeat, empty or give unknown content.
ELEMENTS = (
    "material",
    "link",
    "link/inertial",
    "link/inertial/origin",
    "link/inertial/mass",
    "link/inertial/inertia",
    "link/visual",
    "link/visual/geometry",
    "link/visual/geometry/box",
    "link/visual/material",
    "link/collision",
    "link/collision/geometry",
    "joint",
    "joint/origin",
    "joint/parent",
    "joint/child",
    "joint/axis",
    "joint/calibration",
    "joint/dynamics",
    "joint/limit",
    "joint/mimic",
    "joint/safety_controller",
    "transmission",
    "gazebo",
)

# Values by form: "legal" are unusual but valid spellings; "malformed" are not numbers (or
# not the right count); "non-finite" are NaN and infinities.
NUMBER_FORMS = {
    "legal": (" 0.5", "0.5 ", "+0.5", ".5", "5e-1", "5E-01", "0.50000", "00.5", "-0", "1."),
    "malformed": ("abc", "0.5.1", "1,5", "0x1p-1", "${pi/2}", "0.5 0.5", "--1", "1e"),
    "empty": ("",),
    "non-finite": ("nan", "NaN", "inf", "-inf", "Infinity", "1e999"),
}
VECTOR3_FORMS = {
    "legal": ("0  0  1", " 0 0 1 ", "0\t0\t1", "0\n0\n1", "+0 -0 1.", "0 0 1e0", ".0 .0 1.0"),
    "malformed": ("0 0", "0 0 1 0", "0,0,1", "a b c", "0 0 1x"),
    "empty": ("",),
    "non-finite": ("nan 0 1", "0 inf 1", "0 0 -inf"),
    "zero": ("0 0 0",),
}
VECTOR4_FORMS = {
    "legal": ("0  0 1 1", " 0 0 1 1 ", "0\t0\t1\t1", "+0 -0 1. 1"),
    "malformed": ("0 0 1", "0 0 1 1 1", "0,0,1,1", "a b c d"),
    "empty": ("",),
    "non-finite": ("nan 0 1 1", "0 inf 1 1"),
    "zero": ("0 0 0 0",),
}
NAME_FORMS = {
    "legal": ("with space", "ünïcödé_名前", "a/b:c.d-e", "x" * 300, "&lt;&amp;&gt;", "&#x41;B"),
    "empty": ("",),
}
TYPE_FORMS = {
    "legal": (" revolute ", "revolute\n"),
    "malformed": ("Revolute", "hinge", "REVOLUTE"),
    "empty": ("",),
}
#: Forms of the attributes that name another link or joint.
REFERENCE_FORMS = ("missing", "self", "empty")
#: Forms of a link's or joint's own name (renames keep or break its references).
RENAME_FORMS = ("renamed with its references", "renamed, references not", "empty")


VERSIONS = ("1.0", "1.1", "1.2", "1", "2.0", "1.0.0", " 1.0", "1.3", "x.y", "1.10", "01.0", "")


def forms_of(value_form: str) -> tuple[str, ...]:
    """The forms an attribute of ``value_form`` is tried in (``absent`` for every one)."""
    if value_form in ("link reference", "joint reference"):
        return ("absent", *REFERENCE_FORMS)
    if value_form in ("link name", "joint name"):
        return ("absent", *RENAME_FORMS)
    return ("absent", *VALUE_FORMS[value_form])


VALUE_FORMS = {
    "number": NUMBER_FORMS,
    "vector3": VECTOR3_FORMS,
    "vector4": VECTOR4_FORMS,
    "name": NAME_FORMS,
    "joint type": TYPE_FORMS,
}


@dataclass(frozen=True)
class Variant:
    """One URDF text: what it was made from (``origin``) and what was done to it (``kind``)."""

    name: str
    kind: str
    text: bytes
    origin: str = "BASE_URDF"


@dataclass
class Reading:
    """How one parser read a text: accepted or not, and the tree it found."""

    accepted: bool
    robot_name: str = ""
    root: str = ""
    edges: frozenset[tuple[str, str]] = field(default_factory=frozenset)
    message: str = ""
    robot: Robot | None = None


# -- urdfdom's check_urdf, and this package --------------------------------------------------


def find_check_urdf() -> tuple[Path, Path] | None:
    """(check_urdf, its library folder) in the cmeel prefix of this Python's site-packages."""
    for scheme_path in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        prefix = Path(scheme_path) / "cmeel.prefix"
        binary = prefix / "bin" / "check_urdf"
        if binary.is_file():
            return binary, prefix / "lib"
    return None


def read_with_urdfdom(text: bytes, check_urdf: tuple[Path, Path], folder: Path) -> Reading:
    """Run check_urdf on ``text`` (written to a file in ``folder``); its tree as a Reading.

    Where urdfdom accepts a cycle of joints, check_urdf prints the tree without end: the
    printout is cut at MAX_PRINTOUT bytes and the Reading (accepted) says so in its message.
    """
    binary, lib = check_urdf
    path = folder / "variant.urdf"
    path.write_bytes(text)
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(lib), env.get("LD_LIBRARY_PATH")]))
    with subprocess.Popen(
        [str(binary), str(path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env
    ) as process:
        assert process.stdout is not None
        printout = process.stdout.read(MAX_PRINTOUT)
        endless = len(printout) == MAX_PRINTOUT
        if endless:
            process.kill()
        returncode = process.wait(timeout=60)
    output = printout.decode("utf-8", errors="replace")
    if endless:
        return Reading(True, message=ENDLESS_TREE)
    if returncode != 0 or "Successfully Parsed XML" not in output:
        return Reading(False, message=output.strip())
    return parse_check_urdf_tree(output)


def parse_check_urdf_tree(output: str) -> Reading:
    """check_urdf's printout: robot name, root link, then ``child(n):  name`` lines indented
    by four spaces a level."""
    name = re.search(r"^robot name is: (.*)$", output, re.MULTILINE)
    root = re.search(r"^root Link: (.*) has \d+ child\(ren\)$", output, re.MULTILINE)
    assert name is not None and root is not None, output
    edges: set[tuple[str, str]] = set()
    parents = [root.group(1)]
    for match in re.finditer(r"^( +)child\(\d+\):  (.*)$", output, re.MULTILINE):
        depth = len(match.group(1)) // 4
        del parents[depth:]
        edges.add((parents[-1], match.group(2)))
        parents.append(match.group(2))
    return Reading(True, name.group(1), root.group(1), frozenset(edges))


def read_with_this_package(text: bytes) -> Reading:
    """``Robot.from_xml_string`` on ``text`` as a Reading (the robot kept for kinematics)."""
    try:
        robot = Robot.from_xml_string(text)
    except ModelError as exc:
        return Reading(False, message=exc.reason)
    edges = frozenset((joint.parent, joint.child) for joint in robot.joints.values())
    return Reading(True, robot.name, robot.root, edges, robot=robot)


# -- the texts ---------------------------------------------------------------------------------


def own_descriptions() -> list[Variant]:
    """The project's own URDFs (the .xacro one expanded by xacro), as they are."""
    from joint_tf_publisher.description.loader import expand_xacro

    found: list[Variant] = []
    own = sorted((REPO_ROOT / "test" / "urdf").iterdir()) + [REPO_ROOT / "urdf" / "demo_arm.urdf"]
    for path in own:
        if path.suffix == ".urdf":
            text = path.read_bytes()
        elif path.name.endswith(".urdf.xacro"):
            text = expand_xacro(path).encode()
        else:
            continue
        relative = str(path.relative_to(REPO_ROOT))
        found.append(Variant(relative, "own description", text, relative))
    return found


#: A change of a text: (text, rng, choice) -> (kind, new text), None where it does not apply.
Change = Callable[[bytes, random.Random, str], "tuple[str, bytes] | None"]


def make_variants(seed: int = SEED) -> list[Variant]:
    """Every change of ``systematic_changes`` once on BASE_URDF (where it applies), PAIRS
    pairs of legal unusual forms on BASE_URDF, OWN_VARIANTS random changes of each own
    description; the same list for the same seed."""
    rng = random.Random(seed)
    made: list[tuple[str, tuple[str, bytes] | None]] = []
    base = BASE_URDF.encode()
    for change, choice in systematic_changes():
        made.append(("BASE_URDF", change(base, rng, choice)))
    for _ in range(PAIRS):
        first = legal_change(base, rng)
        second = legal_change(first[1], rng) if first is not None else None
        if first is not None and second is not None:
            made.append(("BASE_URDF", (f"{first[0]} + {second[0]}", second[1])))
    changes = list(systematic_changes())
    for own in own_descriptions():
        for _ in range(OWN_VARIANTS):
            change, choice = rng.choice(changes)
            made.append((own.origin, change(own.text, rng, choice)))
    found = [(origin, result) for origin, result in made if result is not None]
    return [
        Variant(f"v{number:03d}", kind, text, origin)
        for number, (origin, (kind, text)) in enumerate(found)
    ]


def systematic_changes() -> Iterator[tuple[Change, str]]:
    """Every (change, choice): each attribute in each form, each element change, each added
    element under each version, each document change, each tree change."""
    for index, (_, _, value_form) in enumerate(ATTRIBUTES):
        for form in forms_of(value_form):
            yield attribute_change, f"{index}:{form}"
    for path in ELEMENTS:
        for what in ELEMENT_CHANGES:
            yield element_change, f"{path}:{what}"
    for what in ADDED_CHANGES:
        for version in ("", "1.0", "1.1", "1.2"):
            yield added_change, f"{what}:{version}"
    for kind in DOCUMENT_CHANGES:
        yield document_change, kind
    for version in VERSIONS:
        yield document_change, f"version:{version}"
    for broken in NOT_WELL_FORMED:
        yield document_change, f"not well-formed:{broken}"
    for what in TREE_CHANGES:
        yield tree_change, what


def legal_change(text: bytes, rng: random.Random) -> tuple[str, bytes] | None:
    """An unusual but legal form of an attribute, or a legal document change."""
    if rng.random() < 0.6:
        index = rng.choice(
            [i for i, (_, _, form) in enumerate(ATTRIBUTES) if "legal" in VALUE_FORMS.get(form, {})]
        )
        return attribute_change(text, rng, f"{index}:legal")
    return document_change(text, rng, rng.choice(PAIRED_DOCUMENT_CHANGES))


def parse(text: bytes) -> etree._ElementTree:
    """``text`` (well-formed) as a tree to change; recover=True keeps undeclared prefixes as
    they are written (``drake:x``), and entity references stay references."""
    parser = etree.XMLParser(recover=True, resolve_entities=False, remove_blank_text=False)
    return etree.ElementTree(etree.fromstring(text, parser))


def serialize(tree: etree._ElementTree) -> bytes:
    return etree.tostring(tree, xml_declaration=True, encoding="UTF-8")


def elements_at(tree: etree._ElementTree, path: str) -> list[etree._Element]:
    """Elements at ``path`` (absolute, or relative to the ``<robot>`` element)."""
    xpath = path if path.startswith("/") else f"/robot/{path}"
    return [e for e in tree.xpath(xpath) if isinstance(e, etree._Element)]


def joint_child(joint: etree._Element) -> str:
    child = joint.find("child")
    return child.get("link", "") if child is not None else ""


# -- attributes --------------------------------------------------------------------------------


def attribute_change(text: bytes, rng: random.Random, choice: str) -> tuple[str, bytes] | None:
    """Attribute ``ATTRIBUTES[i]`` (choice ``"i:form"``) absent or in that form."""
    index, form = choice.split(":", 1)
    path, attribute, value_form = ATTRIBUTES[int(index)]
    tree = parse(text)
    candidates = [e for e in elements_at(tree, path) if e.get(attribute) is not None]
    if not candidates:
        return None
    element = rng.choice(candidates)
    where = f"<{path.rsplit('/', 1)[-1]}> {attribute}"
    if form == "absent":
        del element.attrib[attribute]
        return f"{where}: absent", serialize(tree)
    if value_form in ("link name", "joint name"):
        return renamed(tree, element, rng, form)
    if value_form in ("link reference", "joint reference"):
        if form == "self":  # a mimic of its own joint; a joint from (or to) its own child
            joint = element.getparent()
            assert joint is not None
            value = joint.get("name", "") if attribute == "joint" else joint_child(joint)
        else:
            value = {"empty": "", "missing": "no_such_thing"}[form]
        element.set(attribute, value)
        return f"{where}: {form}", serialize(tree)
    value = rng.choice(VALUE_FORMS[value_form][form])
    if value_form == "joint type" and form == "legal":
        value = value.replace("revolute", element.get("type", "fixed"))
    placeholder = "@@VALUE@@"
    element.set(attribute, placeholder)
    # Written into the text as is, so that entity and character references stay references.
    new_text = serialize(tree).replace(placeholder.encode(), value.encode())
    shown = value if len(value) < 24 else value[:8] + "..."
    return f"{where}: {form} {shown!r}", new_text


def renamed(
    tree: etree._ElementTree, element: etree._Element, rng: random.Random, form: str
) -> tuple[str, bytes]:
    """A link or joint renamed (or its name emptied) where it is defined and, but for
    "renamed, references not", everywhere it is referenced."""
    old = element.get("name", "")
    kind = "link" if element.tag == "link" else "joint"
    keep_references = form != "renamed, references not"
    if form == "empty":
        new = ""
    elif keep_references:
        new = rng.choice(NAME_FORMS["legal"][:4])
    else:
        new = old + "_x"
    element.set("name", new)
    if keep_references:
        references = (
            [("joint/parent", "link"), ("joint/child", "link"), ("gazebo", "reference")]
            if kind == "link"
            else [("joint/mimic", "joint"), ("transmission/joint", "name")]
        )
        for path, attribute in references:
            for reference in elements_at(tree, path):
                if reference.get(attribute) == old:
                    reference.set(attribute, new)
    return f"<{kind}> name: {form}", serialize(tree)


# -- elements ----------------------------------------------------------------------------------

ELEMENT_CHANGES = (
    "removed",
    "repeated",
    "emptied",
    "given an unknown child",
    "given an unknown attribute",
    "given a comment",
    "given text",
)


def element_change(text: bytes, rng: random.Random, choice: str) -> tuple[str, bytes] | None:
    """An element of the spec (choice ``"path:what"``) changed as ELEMENT_CHANGES says."""
    path, what = choice.rsplit(":", 1)
    tree = parse(text)
    candidates = elements_at(tree, path)
    if not candidates:
        return None
    element = rng.choice(candidates)
    parent = element.getparent()
    assert parent is not None
    if what == "removed":
        parent.remove(element)
    elif what == "repeated":
        element.addnext(copy.deepcopy(element))
    elif what == "emptied":
        element.attrib.clear()
        for child in list(element):
            element.remove(child)
        element.text = None
    elif what == "given an unknown child":
        etree.SubElement(element, "unknown_element", {"value": "1"}).text = "x"
    elif what == "given an unknown attribute":
        element.set("unknown_attribute", "1")
    elif what == "given a comment":
        element.insert(0, etree.Comment(" a comment <inside> & "))
    else:
        element.text = "\n  some text & more\n  "
    return f"<{path.rsplit('/', 1)[-1]}> {what}", serialize(tree)


#: Joint elements copied into a joint that has none (of another type, often).
OPTIONAL_JOINT_ELEMENTS = (
    "origin",
    "axis",
    "calibration",
    "dynamics",
    "limit",
    "safety_controller",
)
ADDED_CHANGES = (
    *(f"joint element {tag}" for tag in OPTIONAL_JOINT_ELEMENTS),
    "quat_xyzw",
    "quat_xyzw and rpy",
    "limit extras",
    "capsule",
)


def added_change(text: bytes, rng: random.Random, choice: str) -> tuple[str, bytes] | None:
    """Something written where the text has none (choice ``"what:version"``): a joint element
    on a joint without it, URDF 1.1's quat_xyzw or capsule, URDF 1.2's limit extras; the
    version (if any) set on ``<robot>``."""
    what, version = choice.rsplit(":", 1)
    tree = parse(text)
    root = tree.getroot()
    if version:
        if root.get("version") is not None:
            return None
        root.set("version", version)
    shown = f" under version {version}" if version else ""
    if what.startswith("joint element "):
        tag = what.removeprefix("joint element ")
        sources = elements_at(tree, f"joint/{tag}")
        targets = [j for j in elements_at(tree, "joint") if j.find(tag) is None]
        if not sources or not targets:
            return None
        target = rng.choice(targets)
        target.append(copy.deepcopy(rng.choice(sources)))
        return f"<{tag}> added to a {target.get('type')} joint{shown}", serialize(tree)
    if what.startswith("quat_xyzw"):
        origins = elements_at(tree, "joint/origin")
        if not origins:
            return None
        origin = rng.choice(origins)
        origin.set("quat_xyzw", rng.choice(("0 0 0 1", "0 0 0.7071068 0.7071068", "0 0 1 1")))
        if what == "quat_xyzw":
            origin.attrib.pop("rpy", None)
        else:
            origin.set("rpy", origin.get("rpy", "0 0 0"))
        return f"<origin> {what}{shown}", serialize(tree)
    if what == "limit extras":
        limits = elements_at(tree, "joint/limit")
        if not limits:
            return None
        limit = rng.choice(limits)
        for attribute in rng.sample(("acceleration", "deceleration", "jerk"), 2):
            limit.set(attribute, rng.choice(("2.5", "-1", "0")))
        return f"<limit> acceleration, deceleration or jerk{shown}", serialize(tree)
    geometries = elements_at(tree, "link/visual/geometry")
    geometries += elements_at(tree, "link/collision/geometry")
    if not geometries:
        return None
    geometry = rng.choice(geometries)
    for child in list(geometry):
        geometry.remove(child)
    etree.SubElement(geometry, "capsule", {"radius": "0.05", "length": "0.2"})
    return f"<capsule> geometry{shown}", serialize(tree)


# -- the document ------------------------------------------------------------------------------


def root_name_end(text: bytes) -> int:
    match = re.search(rb"<robot\b", text)
    assert match is not None
    return match.end()


def on_root(text: bytes, attributes: bytes) -> bytes:
    end = root_name_end(text)
    return text[:end] + attributes + text[end:]


def insert_before_root(text: bytes, markup: bytes) -> bytes:
    start = root_name_end(text) - len(b"<robot")
    return text[:start] + markup + text[start:]


def with_entity(text: bytes, rng: random.Random) -> bytes | None:
    """A DOCTYPE declaring an entity that gives a joint's ``<origin xyz>``."""
    tree = parse(text)
    origins = [o for o in elements_at(tree, "joint/origin") if o.get("xyz") is not None]
    if not origins:
        return None
    origin = rng.choice(origins)
    value = origin.get("xyz", "").encode()
    origin.set("xyz", "@@ENTITY@@")
    replaced = serialize(tree).replace(b"@@ENTITY@@", b"&value;")
    return insert_before_root(
        replaced, b'<!DOCTYPE robot [\n  <!ENTITY value "' + value + b'">\n]>\n'
    )


def with_character_references(text: bytes, rng: random.Random) -> bytes | None:
    """Digits of number attributes written as character references (&#48; is "0")."""
    return re.sub(rb'( xyz="| rpy="| effort=")(\d)', lambda m: m[1] + b"&#%d;" % m[2][0], text)


def with_cdata(text: bytes, rng: random.Random) -> bytes | None:
    tree = parse(text)
    targets = elements_at(tree, "link") + elements_at(tree, "joint")
    for element in rng.sample(targets, min(3, len(targets))):
        element.text = etree.CDATA(" <not markup> & ")
    return serialize(tree)


def with_comments(text: bytes, rng: random.Random) -> bytes | None:
    return re.sub(rb"(/>|</\w+>)(\s*<)", rb"\1<!-- c -->\2", text, count=20)


def with_extension(text: bytes, rng: random.Random, declared: bool) -> bytes | None:
    """Drake-style extension markup: an element at the top, one in a joint, attributes."""
    tree = parse(text)
    namespace = "http://drake.mit.edu"
    root = tree.getroot()
    top = etree.SubElement(
        root, f"{{{namespace}}}collision_filter_group", nsmap={"drake": namespace}
    )
    top.set("name", "group")
    etree.SubElement(top, f"{{{namespace}}}member", {"link": "x"})
    for limit in elements_at(tree, "joint/limit")[:3]:
        limit.set(f"{{{namespace}}}acceleration", "8.5")
    for joint in elements_at(tree, "joint")[:2]:
        etree.SubElement(joint, f"{{{namespace}}}rotor_inertia", {"value": "0.1"})
    declaration = f' xmlns:drake="{namespace}"'.encode()
    serialized = serialize(tree).replace(declaration, b"")
    return on_root(serialized, declaration) if declared else serialized


def with_xacro(text: bytes, rng: random.Random) -> bytes | None:
    tree = parse(text)
    namespace = "http://www.ros.org/wiki/xacro"
    element = etree.Element(f"{{{namespace}}}property", {"name": "p", "value": "1"})
    tree.getroot().insert(0, element)
    return serialize(tree)


def as_utf16(text: bytes, rng: random.Random) -> bytes | None:
    declared = re.sub(rb'encoding="[^"]*"', b'encoding="UTF-16"', text)
    return declared.decode("utf-8").encode("utf-16")


DocumentChange = Callable[[bytes, random.Random], "bytes | None"]
LEGAL_DOCUMENT_CHANGES: dict[str, DocumentChange] = {
    "no XML declaration": lambda t, r: re.sub(rb"^<\?xml[^>]*\?>\s*", b"", t),
    "standalone declaration": lambda t, r: re.sub(
        rb"^<\?xml[^>]*\?>", b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>', t
    ),
    "UTF-8 byte order mark": lambda t, r: b"\xef\xbb\xbf" + t,
    "CRLF line ends": lambda t, r: t.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"),
    "comment before the root": lambda t, r: insert_before_root(t, b"<!-- before -->\n"),
    "processing instruction before the root": lambda t, r: insert_before_root(
        t, b"<?robot-tool x?>\n"
    ),
    "processing instruction in the robot": lambda t, r: t.replace(
        b"</robot>", b"<?robot-tool x?>\n</robot>"
    ),
    "DOCTYPE with an internal entity": with_entity,
    "character references in attributes": with_character_references,
    "CDATA in elements": with_cdata,
    "comments between elements": with_comments,
    "declared extension namespace": lambda t, r: with_extension(t, r, declared=True),
    "undeclared extension prefix": lambda t, r: with_extension(t, r, declared=False),
    "default namespace on the root": lambda t, r: on_root(t, b' xmlns="http://www.ros.org"'),
    "UTF-16 document": as_utf16,
    "unexpanded xacro element": with_xacro,
}
DOCUMENT_CHANGES = tuple(LEGAL_DOCUMENT_CHANGES)
#: Document changes that a second change can follow (it reads and writes UTF-8).
PAIRED_DOCUMENT_CHANGES = tuple(c for c in DOCUMENT_CHANGES if c != "UTF-16 document")
#: XML that is not well-formed: libxml2 refuses all of it, TinyXML2 only some.
NOT_WELL_FORMED: dict[str, Callable[[bytes], bytes]] = {
    "raw ampersand": lambda t: t.replace(b'name="', b'name="a&b', 1),
    "undefined entity": lambda t: t.replace(b'name="', b'name="&unknown;', 1),
    "duplicate attribute": lambda t: re.sub(rb'(<link name="[^"]*")', rb'\1 name="d"', t, count=1),
    "unclosed element": lambda t: re.sub(rb"<link ([^>]*)/>", rb"<link \1>", t, count=1),
    "mismatched end tag": lambda t: t.replace(b"</robot>", b"</robt>"),
    "truncated": lambda t: t[: len(t) * 2 // 3],
    "less-than in an attribute": lambda t: t.replace(b'name="', b'name="a<b', 1),
    "unquoted attribute": lambda t: re.sub(rb'type="(\w+)"', rb"type=\1", t, count=1),
    "second root element": lambda t: t + b'\n<robot name="other"><link name="o"/></robot>\n',
}


def document_change(text: bytes, rng: random.Random, choice: str) -> tuple[str, bytes] | None:
    """A change of the whole document (choice: a LEGAL_DOCUMENT_CHANGES key,
    ``"version:<v>"`` or ``"not well-formed:<how>"``)."""
    if choice.startswith("version:"):
        version = choice.removeprefix("version:")
        if re.search(rb'<robot[^>]* version="', text):
            return None
        return f"version {version!r}", on_root(text, f' version="{version}"'.encode())
    if choice.startswith("not well-formed:"):
        how = choice.removeprefix("not well-formed:")
        return f"not well-formed XML: {how}", NOT_WELL_FORMED[how](text)
    changed = LEGAL_DOCUMENT_CHANGES[choice](text, rng)
    if changed is None or changed == text:
        return None
    return choice, changed


# -- the tree and the mimic graph --------------------------------------------------------------

TREE_CHANGES = (
    "second root link",
    "joint back from a child to its parent (cycle)",
    "link with two parent joints",
    "joint from a link to itself",
    "duplicate link",
    "duplicate joint",
    "mimic of a missing joint",
    "mimic of itself",
    "mimic cycle",
    "mimic of a fixed joint",
    "mimic on a planar joint",
    "follower range outside its limits",
    "no links",
    "one link, no joints",
    "one link named '', no joints",
    "robot without name",
)


def tree_change(text: bytes, rng: random.Random, what: str) -> tuple[str, bytes] | None:
    """A change of the link/joint tree or of the mimic graph (``what``: TREE_CHANGES)."""
    tree = parse(text)
    root = tree.getroot()
    joints = elements_at(tree, "joint")
    links = elements_at(tree, "link")
    if what.startswith("mimic") or what.startswith("follower"):
        return mimic_change(tree, rng, what, joints)
    if what == "second root link":
        root.append(etree.Element("link", {"name": "lonely"}))
    elif what.startswith("joint back") and joints:
        joint = rng.choice(joints)
        back = etree.SubElement(root, "joint", {"name": "back_joint", "type": "fixed"})
        etree.SubElement(back, "parent", {"link": joint_child(joint)})
        parent = joint.find("parent")
        assert parent is not None
        etree.SubElement(back, "child", {"link": parent.get("link", "")})
    elif what == "link with two parent joints" and len(joints) > 1:
        first, second = rng.sample(joints, 2)
        child = second.find("child")
        assert child is not None
        child.set("link", joint_child(first))
    elif what == "joint from a link to itself" and joints:
        joint = rng.choice(joints)
        parent = joint.find("parent")
        assert parent is not None
        parent.set("link", joint_child(joint))
    elif what in ("duplicate link", "duplicate joint"):
        pool = links if what == "duplicate link" else joints
        copied = copy.deepcopy(rng.choice(pool))
        root.append(copied)
    elif what == "no links":
        for element in links + joints:
            root.remove(element)
    elif what.startswith("one link"):
        for element in joints + links[1:]:
            root.remove(element)
        if "''" in what:
            links[0].set("name", "")
    elif what == "robot without name":
        root.attrib.pop("name", None)
    else:
        return None
    return what, serialize(tree)


def mimic_change(
    tree: etree._ElementTree, rng: random.Random, what: str, joints: list[etree._Element]
) -> tuple[str, bytes] | None:
    """A ``<mimic>`` added that names a missing joint, itself, a cycle partner, a fixed
    joint, or that sits on a planar joint; or a follower driven outside its own limits."""
    moving = [j for j in joints if j.get("type") in ("revolute", "continuous", "prismatic")]
    limited = [j for j in moving if j.find("limit") is not None and j.get("type") != "continuous"]
    fixed = [j for j in joints if j.get("type") == "fixed"]
    planar = [j for j in joints if j.get("type") == "planar"]
    pairs = {
        "mimic of a missing joint": (moving, None),
        "mimic of itself": (moving, "self"),
        "mimic of a fixed joint": (moving, fixed),
        "mimic on a planar joint": (planar, moving),
        "mimic cycle": (moving, moving),
        "follower range outside its limits": (limited, limited),
    }
    followers, leaders = pairs[what]
    if not followers or (isinstance(leaders, list) and not leaders):
        return None
    follower = rng.choice(followers)
    if leaders is None:
        leader_name = "no_such_joint"
    elif leaders == "self":
        leader_name = follower.get("name", "")
    else:
        options = [j for j in leaders if j is not follower]
        if not options:
            return None
        leader = rng.choice(options)
        leader_name = leader.get("name", "")
        if what == "mimic cycle":
            set_mimic(leader, follower.get("name", ""), "1")
    set_mimic(follower, leader_name, "-3" if what.startswith("follower") else "1")
    return what, serialize(tree)


def set_mimic(joint: etree._Element, leader: str, multiplier: str) -> None:
    for old in joint.findall("mimic"):
        joint.remove(old)
    etree.SubElement(joint, "mimic", {"joint": leader, "multiplier": multiplier, "offset": "0"})


# -- comparison --------------------------------------------------------------------------------

CATEGORIES = ("accepted by both", "refused by both", "urdfdom only", "ours only")


@dataclass
class Comparison:
    """Both readings of one text."""

    variant: Variant
    urdfdom: Reading
    ours: Reading

    @property
    def category(self) -> str:
        """Which of CATEGORIES the text falls in ("urdfdom only": only urdfdom accepts it)."""
        return {
            (True, True): "accepted by both",
            (False, False): "refused by both",
            (True, False): "urdfdom only",
            (False, True): "ours only",
        }[(self.urdfdom.accepted, self.ours.accepted)]


def compare_all(
    variants: list[Variant], check_urdf: tuple[Path, Path], folder: Path
) -> list[Comparison]:
    """Each text read by urdfdom (one check_urdf run each) and by this package."""
    return [
        Comparison(v, read_with_urdfdom(v.text, check_urdf, folder), read_with_this_package(v.text))
        for v in variants
    ]


def figures(comparisons: list[Comparison]) -> str:
    """The agreement figure, one line, as docs/urdf-compatibility.md quotes it."""
    counts = Counter(c.category for c in comparisons)
    return f"{len(comparisons)} texts: " + ", ".join(
        f"{counts[category]} {category}" for category in CATEGORIES
    )


def tree_mismatches(comparisons: list[Comparison]) -> list[str]:
    """Texts both accept whose robot name, root link or (parent, child) link pairs differ."""
    found = []
    for c in comparisons:
        if c.category != "accepted by both" or c.urdfdom.message == ENDLESS_TREE:
            continue
        for what, ours, theirs in (
            ("name", c.ours.robot_name, c.urdfdom.robot_name),
            ("root", c.ours.root, c.urdfdom.root),
            ("edges", c.ours.edges, c.urdfdom.edges),
        ):
            if ours != theirs:
                found.append(f"{c.variant.name} {c.variant.kind}: {what} {ours!r} != {theirs!r}")
    return found


def main() -> int:
    check_urdf = find_check_urdf()
    if check_urdf is None:
        print("check_urdf not found (pip install pin, or cmeel-urdfdom)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as folder:
        comparisons = compare_all(own_descriptions() + make_variants(), check_urdf, Path(folder))
    print(figures(comparisons))
    for line in tree_mismatches(comparisons):
        print("tree differs:", line)
    for category in ("urdfdom only", "ours only"):
        print(f"\n{category}:")
        for c in comparisons:
            if c.category == category:
                theirs = c.urdfdom.message.splitlines()[:1] if category == "ours only" else []
                print(f"- {c.variant.kind} [{c.variant.origin}]: {c.ours.message or theirs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
