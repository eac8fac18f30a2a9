"""Attachments: robot descriptions composed into one URDF (a gripper on an arm's flange).

An ``Attachment`` is a description (URDF or SDFormat text, or a .urdf, .sdf or .xacro file)
hung from a link of the robot (or of an earlier attachment) by a fixed joint named
``<prefix><name>_mount`` at ``origin`` (x y z roll pitch yaw in the parent link frame,
metres and radians). ``compose`` returns the composed robot as URDF text: the base's
``<robot>`` with, for each attachment in order, its links, joints and materials, renamed with
its ``prefix``, and the mount joint. That text is what the node publishes on
``robot_description`` (RViz's RobotModel and MoveIt read it) and what it parses into the
model it publishes transforms of, so both always agree.

Each part is parsed alone first, by the package's own parser, so an error in it names its
own file (or ``attachments.<name>.description``) and line; what only the composition can get
wrong (a name used twice, a parent no part has) is refused naming the attachment and the
name. A URDF part keeps its visuals, collisions and inertials (relative mesh paths of a file
become ``file://`` URIs, as RViz cannot know the file's folder); an SDFormat part, which URDF
cannot quote, is written as URDF links and joints from its model (no visuals), and so must use
URDF's joint types. A part's loop joints (docs/loops.md) are written as ``<loop_joint>``
elements, renamed with the prefix, whichever spelling the part used. A part's other top-level
elements (``<transmission>``, ``<gazebo>``, ``<ros2_control>``) are left out: they name joints
by their unprefixed names. No rclpy here.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from lxml import etree

from ..arrays import Array
from ..errors import ModelError
from ..model.elements import Joint, RobotModel
from ..model.loops import LoopJoint
from ..transforms import matrix_to_rpy
from .files import FileRefused
from .loader import expand_xacro, load_string
from .paths import expand_user
from .xmlio import drop_root_namespace, parse_xml, read_description

#: The fields of an attachment, as its ``attachments.<name>.<field>`` parameters name them.
ATTACHMENT_FIELDS = ("description", "file", "parent", "origin", "prefix")
#: The URDF joint types; an SDFormat part's joints must be of these to be written as URDF.
URDF_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
#: What the composed text's parse errors name as their source.
COMPOSED_SOURCE = "composed description"


@dataclass(frozen=True)
class Attachment:
    """One description hung from a link of the robot by a fixed joint.

    Exactly one of ``description`` (URDF or SDFormat text) and ``file`` (a path) is set.
    ``origin``: x y z (metres) roll pitch yaw (radians) of the attachment's root link in the
    ``parent`` link frame. ``prefix`` is prepended to every link, joint and material name of
    the attachment and to its mount joint's name.
    """

    name: str
    parent: str
    description: str = ""
    file: str = ""
    origin: tuple[float, float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    prefix: str = ""

    @property
    def mount_joint(self) -> str:
        """The name of the fixed joint that holds the attachment: ``<prefix><name>_mount``."""
        return f"{self.prefix}{self.name}_mount"

    @property
    def source(self) -> str:
        """Where the attachment's text comes from, as errors name it."""
        return self.file or f"attachments.{self.name}.description"

    def check(self) -> None:
        """ModelError unless the attachment is complete (description xor file, a parent, six
        finite origin values), naming its parameter."""
        where = f"attachments.{self.name}"
        if bool(self.description.strip()) == bool(self.file.strip()):
            raise ModelError(
                "give exactly one of description and file "
                f"({'both are' if self.file.strip() else 'neither is'} set)",
                source=where,
            )
        if not self.parent.strip():
            raise ModelError("empty: name the link it hangs from", source=f"{where}.parent")
        if len(self.origin) != 6 or not np.all(np.isfinite(self.origin)):
            raise ModelError(
                f"must be 6 finite numbers (x y z roll pitch yaw), got {list(self.origin)}",
                source=f"{where}.origin",
            )


def compose(
    base_text: str | bytes,
    attachments: Sequence[Attachment],
    base_source: str = "robot_description",
    model_name: str | None = None,
    base_path: Path | None = None,
) -> str:
    """The base description with ``attachments`` hung from it, as URDF text.

    Without attachments the base text is returned as given (SDFormat stays SDFormat). With
    some, an SDFormat base is written as URDF from its model (``model_name`` picks its
    model), as a URDF robot cannot hold SDFormat. Raises ModelError naming the part, its
    line and element, or the attachment and the name that clashes.
    """
    if not attachments:
        return base_text if isinstance(base_text, str) else base_text.decode()
    robot = _part_element(base_text, base_source, model_name, base_path)
    names = _Names.of(robot)
    hung: set[str] = set()
    for attachment in attachments:
        attachment.check()
        if attachment.name in hung:
            raise ModelError(f"names {attachment.name!r} twice", source="attachments")
        _hang(robot, names, attachment, _attachment_element(attachment))
        hung.add(attachment.name)
    return '<?xml version="1.0"?>\n' + etree.tostring(robot, encoding="unicode") + "\n"


# -- the parts ------------------------------------------------------------------------------


def _attachment_element(attachment: Attachment) -> etree._Element:
    """The attachment's ``<robot>`` element (read from its file or text; checked by the
    package's parser first, so its errors name its own source and line)."""
    if not attachment.file:
        return _part_element(
            attachment.description, attachment.source, None, None, loops_as_elements=True
        )
    path = expand_user(attachment.file, f"attachments.{attachment.name}.file")
    try:
        if path.suffix == ".xacro":
            text: str | bytes = expand_xacro(path)
            source = f"{path} (expanded)"
        else:
            text, source = read_description(path), str(path)
    except FileRefused as err:  # the file itself (xacro's errors name their own file, line)
        raise ModelError(
            f"cannot read {path}: {err.why}", source=f"attachments.{attachment.name}.file"
        ) from None
    robot = _part_element(text, source, None, path, loops_as_elements=True)
    _anchor_meshes(robot, path.resolve().parent)
    return robot


def _part_element(
    text: str | bytes,
    source: str,
    model_name: str | None,
    path: Path | None,
    loops_as_elements: bool = False,
) -> etree._Element:
    """A part's ``<robot>`` element: its own for URDF, written from its model for SDFormat.

    With ``loops_as_elements`` (an attachment, whose ``<gazebo>`` is left out), a URDF part's
    loop joints written in ``<gazebo>`` are added as ``<loop_joint>`` elements."""
    model = load_string(text, source=source, model_name=model_name, path=path)
    root = drop_root_namespace(parse_xml(text, source))
    if root.tag != "robot":
        return urdf_from_model(model)
    if loops_as_elements:
        written = {element.get("name") for element in root.iterchildren("loop_joint")}
        root.extend(
            loop_joint_element(loop) for loop in model.loop_joints if loop.name not in written
        )
    return root


def _anchor_meshes(robot: etree._Element, folder: Path) -> None:
    """Mesh file names relative to ``folder`` (no URI scheme) made ``file://`` URIs."""
    for mesh in robot.iter("mesh"):
        filename = mesh.get("filename", "")
        if filename and "://" not in filename:
            mesh.set("filename", (folder / filename).resolve().as_uri())


# -- hanging one part -----------------------------------------------------------------------


@dataclass
class _Names:
    """The link, joint and material names of the composed robot so far."""

    links: set[str]
    joints: set[str]
    materials: dict[str, bytes]  # name -> canonical XML of its top-level definition

    @classmethod
    def of(cls, robot: etree._Element) -> _Names:
        return cls(
            {link.get("name", "") for link in robot.findall("link")},
            {
                joint.get("name", "")
                for joint in (*robot.findall("joint"), *robot.findall("loop_joint"))
            },
            {
                material.get("name", ""): etree.tostring(material, method="c14n")
                for material in robot.findall("material")
            },
        )


def _hang(
    robot: etree._Element, names: _Names, attachment: Attachment, part: etree._Element
) -> None:
    """Append ``part``'s links, joints and materials (renamed) and the mount joint to
    ``robot``. ModelError for a clash or a missing parent."""
    where = f"attachments.{attachment.name}"
    prefix = attachment.prefix
    if attachment.parent not in names.links:
        close = difflib.get_close_matches(attachment.parent, sorted(names.links), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ModelError(
            f"no link {attachment.parent!r} in the robot or an earlier attachment{hint}",
            source=f"{where}.parent",
        )
    links = [copy.deepcopy(link) for link in part.findall("link")]
    joints = [copy.deepcopy(joint) for joint in part.findall("joint")]
    loops = [copy.deepcopy(loop) for loop in part.findall("loop_joint")]
    materials = [copy.deepcopy(material) for material in part.findall("material")]
    children = {child.get("link") for joint in joints for child in joint.findall("child")}
    roots = [link.get("name", "") for link in links if link.get("name") not in children]
    for element in (*links, *joints, *loops):
        element.set("name", prefix + element.get("name", ""))
    for loop in loops:
        for end in (*loop.findall("link1"), *loop.findall("link2")):
            end.set("link", prefix + end.get("link", ""))
    for joint in joints:
        for end in (*joint.findall("parent"), *joint.findall("child")):
            end.set("link", prefix + end.get("link", ""))
        for mimic in joint.findall("mimic"):
            mimic.set("joint", prefix + mimic.get("joint", ""))
    # Materials the part defines (at the top, or in a visual with a colour or texture) take
    # the prefix wherever they are named; a name it only refers to stays, for the robot's.
    defined = {material.get("name", "") for material in materials}
    defined |= {material.get("name", "") for material in part.iter("material") if len(material)}
    for material in materials:
        material.set("name", prefix + material.get("name", ""))
    for link in links:
        for reference in link.iter("material"):
            if reference.get("name", "") in defined:
                reference.set("name", prefix + reference.get("name", ""))
    link_names = [link.get("name", "") for link in links]
    joint_names = [joint.get("name", "") for joint in (*joints, *loops)] + [attachment.mount_joint]
    _refuse_clash(where, "link", link_names, names.links)
    _refuse_clash(where, "joint", joint_names, names.joints)
    kept_materials = []
    for material in materials:
        name = material.get("name", "")
        canonical = etree.tostring(material, method="c14n")
        if name in names.materials:
            if names.materials[name] != canonical:
                raise ModelError(
                    f"material {name!r} is defined differently in the robot or an earlier "
                    "attachment (give this attachment a prefix)",
                    source=where,
                )
            continue  # the same definition: urdfdom refuses a material defined twice
        names.materials[name] = canonical
        kept_materials.append(material)
    mount = etree.Element("joint", name=attachment.mount_joint, type="fixed")
    etree.SubElement(mount, "parent", link=attachment.parent)
    etree.SubElement(mount, "child", link=prefix + roots[0])
    x, y, z, roll, pitch, yaw = attachment.origin
    etree.SubElement(mount, "origin", xyz=f"{x!r} {y!r} {z!r}", rpy=f"{roll!r} {pitch!r} {yaw!r}")
    if len(robot):
        robot[-1].tail = "\n  "
    comment = etree.Comment(
        comment_text(f"attachment {attachment.name!r} from {attachment.source}")
    )
    for element in (comment, *kept_materials, *links, mount, *joints, *loops):
        element.tail = "\n  "
        robot.append(element)
    robot[-1].tail = "\n"
    names.links.update(link_names)
    names.joints.update(joint_names)


def comment_text(text: str) -> str:
    """``text`` as the body of an XML comment, between spaces: a character XML cannot hold
    (a control character in a file name) as ``\\xNN``, each ``-`` that follows a ``-`` as
    ``%2D`` (XML forbids ``--`` in a comment: ``gripper--v2.urdf`` reads
    ``gripper-%2Dv2.urdf``)."""
    shown = "".join(
        char if char.isprintable() or char in "\t\n" else f"\\x{ord(char):02x}" for char in text
    )
    while "--" in shown:
        shown = shown.replace("--", "-%2D")
    return f" {shown} "


def _refuse_clash(where: str, kind: str, new: list[str], taken: set[str]) -> None:
    """ModelError naming the first of ``new`` already in ``taken``."""
    for name in new:
        if name in taken:
            raise ModelError(
                f"{kind} {name!r} is already in the robot or an earlier attachment "
                "(give this attachment another prefix)",
                source=where,
            )


# -- an SDFormat model as URDF ----------------------------------------------------------------


def urdf_from_model(model: RobotModel) -> etree._Element:
    """``model``'s links and joints as a URDF ``<robot>`` element (no visuals: the model has
    none). A joint whose child link frame is not its joint frame (SDFormat's link poses) is
    written with that offset folded into its origin and axis where the motion allows (fixed
    and prismatic joints; revolute ones whose offset lies on the axis), else as the joint to
    a link ``<joint>_frame`` and a fixed joint ``<joint>_child_offset`` from it to the child.
    ModelError for a joint type beyond URDF's six."""
    robot = etree.Element("robot", name=model.name)
    for link in model.links.values():
        etree.SubElement(robot, "link", name=link.name)
    for joint in model.joints.values():
        robot.extend(_urdf_joints(joint, model.source))
    robot.extend(loop_joint_element(loop) for loop in model.loop_joints)
    etree.indent(robot)
    return robot


def loop_joint_element(loop: LoopJoint) -> etree._Element:
    """``loop`` as a URDF ``<loop_joint>`` element (docs/loops.md), which reads back into the
    same LoopJoint: its type, both frames, its axis and its limits where it has any."""
    element = etree.Element("loop_joint", name=loop.name, type=loop.type.value)
    for tag, link, pose in (
        ("link1", loop.link1, loop.link1_to_joint),
        ("link2", loop.link2, loop.link2_to_joint),
    ):
        side = _origin(pose)
        side.tag = tag
        side.set("link", link)
        element.append(side)
    if loop.type.has_axis:
        etree.SubElement(element, "axis", xyz=_numbers(loop.axis.tolist()))
    bounds = {
        name: repr(value)
        for name, value in (("lower", loop.lower), ("upper", loop.upper))
        if value is not None
    }
    if bounds:
        etree.SubElement(element, "limit", bounds)
    return element


def _urdf_joints(joint: Joint, source: str) -> list[etree._Element]:
    """The URDF elements of ``joint`` (see ``urdf_from_model``)."""

    def refuse(reason: str) -> ModelError:
        return ModelError(reason, source=source, line=joint.line, element=f"joint {joint.name!r}")

    if joint.joint_type not in URDF_JOINT_TYPES:
        raise refuse(f"type {joint.joint_type!r} has no URDF form (a composed description is URDF)")
    limit = joint.limit
    ranged = limit is not None and limit.has_position_range
    kind = joint.joint_type
    if kind == "revolute" and not ranged:
        kind = "continuous"
    if kind == "prismatic" and not ranged:
        raise refuse("a prismatic joint without a range has no URDF form")
    origin, axis, child = joint.origin, joint.axis, joint.child
    extra: list[etree._Element] = []
    if not np.allclose(joint.child_offset, np.eye(4)):
        folded = _folded_child_offset(joint)
        if folded is not None:
            origin, axis = folded
        else:
            child = f"{joint.name}_frame"
            extra.append(etree.Element("link", name=child))
            offset = etree.Element("joint", name=f"{joint.name}_child_offset", type="fixed")
            etree.SubElement(offset, "parent", link=child)
            etree.SubElement(offset, "child", link=joint.child)
            offset.append(_origin(joint.child_offset))
            extra.append(offset)
    element = etree.Element("joint", name=joint.name, type=kind)
    etree.SubElement(element, "parent", link=joint.parent)
    etree.SubElement(element, "child", link=child)
    element.append(_origin(origin))
    if kind != "fixed":
        etree.SubElement(element, "axis", xyz=_numbers(axis.tolist()))
    if limit is not None and kind in ("revolute", "prismatic", "continuous"):
        attributes = {"effort": _finite(limit.effort), "velocity": _finite(limit.velocity)}
        if kind != "continuous":
            attributes.update(lower=_finite(limit.lower), upper=_finite(limit.upper))
        etree.SubElement(element, "limit", attributes)
    if joint.dynamics is not None:
        etree.SubElement(
            element,
            "dynamics",
            damping=repr(joint.dynamics.damping),
            friction=repr(joint.dynamics.friction),
        )
    if joint.mimic is not None:
        etree.SubElement(
            element,
            "mimic",
            joint=joint.mimic.joint,
            multiplier=repr(joint.mimic.multiplier),
            offset=repr(joint.mimic.offset),
        )
    return [element, *extra]


def _folded_child_offset(joint: Joint) -> tuple[Array, Array] | None:
    """(origin, axis) of a URDF joint moving the child as ``joint`` does, its child offset
    folded in: origin O C and axis R_C^T a, since C^-1 M(q) C is the motion about (along)
    R_C^T a when C's translation lies on the axis (any translation for a prismatic joint).
    None where no such joint exists (a revolute joint's offset off its axis, planar,
    floating)."""
    offset = joint.child_offset
    rotation, translation = offset[:3, :3], offset[:3, 3]
    kind = joint.joint_type
    on_axis = np.allclose(np.cross(translation, joint.axis), 0.0, atol=1e-12)
    if kind in ("fixed", "prismatic") or (kind in ("revolute", "continuous") and on_axis):
        return joint.origin @ offset, rotation.T @ joint.axis
    return None


def _origin(pose: Array) -> etree._Element:
    """A URDF ``<origin>`` of a (4, 4) pose."""
    xyz = _numbers(pose[:3, 3].tolist())
    return etree.Element("origin", xyz=xyz, rpy=_numbers(matrix_to_rpy(pose[:3, :3]).tolist()))


def _finite(value: float) -> str:
    """A limit as URDF writes it: SDFormat's unlimited effort or velocity (infinite in the
    model) as the largest double, since urdfdom refuses ``inf``."""
    return repr(float(np.clip(value, -np.finfo(float).max, np.finfo(float).max)))


def _numbers(values: Sequence[float]) -> str:
    return " ".join(repr(float(value)) for value in values)
