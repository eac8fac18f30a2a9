"""A URDF ``<robot>`` element: its links, its joints (``joints``), the assembled RobotModel."""

from __future__ import annotations

from lxml import etree

from ...errors import Diagnostics
from ...model.elements import Joint, Link, RobotModel
from ...model.validate import assemble_robot
from ..xmlio import line_of
from .context import Context, read_version, required_name
from .joints import parse_joint


def robot_from_element(root: etree._Element, source: str = "<string>") -> RobotModel:
    """The Robot described by a parsed URDF ``<robot>`` element; ModelError if invalid."""
    diag = Diagnostics(source)
    if root.tag != "robot":
        raise diag.error(f"root element is <{root.tag}>, expected <robot>", line_of(root))
    version = read_version(root, diag)
    ctx = Context(diag, version)
    name = required_name(root, ctx, None, empty_ok=True)
    links: list[Link] = []
    joints: list[Joint] = []
    xacro_warned = False
    for element in root:
        tag: object = element.tag
        if not isinstance(tag, str):
            continue  # comments, processing instructions, entity references
        if tag == "link":
            links.append(Link(name=required_name(element, ctx, None), line=line_of(element)))
        elif tag == "joint":
            joints.append(parse_joint(element, ctx))
        elif "xacro" in (etree.QName(tag).namespace or "") and not xacro_warned:
            xacro_warned = True
            diag.warn(
                f"unexpanded xacro element <xacro:{etree.QName(tag).localname}> ignored; "
                "expand the file with xacro first (Robot.load does so for .xacro files)",
                line_of(element),
            )
    return assemble_robot(name, links, joints, diag, line_of(root))
