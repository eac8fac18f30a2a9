"""A URDF ``<robot>`` element: its links, its joints (``joints``), the assembled RobotModel,
and the joints that close kinematic loops (``loops``' ``<loop_joint>``, ``gazebo_loops``'
``<gazebo><joint>``)."""

from __future__ import annotations

from lxml import etree

from ...errors import Diagnostics
from ...model.elements import Joint, Link, RobotModel
from ...model.loops import LoopJoint
from ...model.validate import LoopSite, assemble_robot, check_loop_count, check_loop_joints
from ..xmlio import line_of
from .context import Context, read_version, required_name
from .joints import parse_joint
from .loops import loop_joint_label, parse_loop_joint


def robot_from_element(root: etree._Element, source: str = "<string>") -> RobotModel:
    """The Robot described by a parsed URDF ``<robot>`` element; ModelError if invalid."""
    diag = Diagnostics(source)
    if root.tag != "robot":
        raise diag.error(f"root element is <{root.tag}>, expected <robot>", line_of(root))
    version = read_version(root, diag)
    ctx = Context(diag, version)
    name = required_name(root, ctx, None, empty_ok=True)
    links: list[Link] = []
    link_elements: dict[str, etree._Element] = {}
    joints: list[Joint] = []
    loop_joints: list[LoopJoint] = []
    sites: dict[str, LoopSite] = {}
    xacro_warned = False
    for element in root:
        tag: object = element.tag
        if not isinstance(tag, str):
            continue  # comments, processing instructions, entity references
        if tag == "link":
            links.append(Link(name=required_name(element, ctx, None), line=line_of(element)))
            link_elements.setdefault(links[-1].name, element)
        elif tag == "joint":
            joints.append(parse_joint(element, ctx))
        elif tag == "loop_joint":
            check_loop_count(
                len(loop_joints) + 1,
                diag,
                line_of(element),
                loop_joint_label(element.get("name", "").strip()),
            )
            loop_joints.append(parse_loop_joint(element, ctx))
            sites[loop_joints[-1].name] = (line_of(element), loop_joint_label(loop_joints[-1].name))
        elif "xacro" in (etree.QName(tag).namespace or "") and not xacro_warned:
            xacro_warned = True
            diag.warn(
                f"unexpanded xacro element <xacro:{etree.QName(tag).localname}> ignored; "
                "expand the file with xacro first (Robot.load does so for .xacro files)",
                line_of(element),
            )
    robot = assemble_robot(name, links, joints, diag, line_of(root))
    gazebo_joints = gazebo_joint_elements(root)
    # Counted before any is read: each costs a pose graph's work (0.75 ms; 20,000 took 7 s).
    for count, element in enumerate(gazebo_joints, start=len(loop_joints) + 1):
        check_loop_count(
            count, diag, line_of(element), f"joint {element.get('name', '').strip()!r}"
        )
    for element in gazebo_joints:
        sites[element.get("name", "").strip()] = (
            line_of(element),
            f"joint {element.get('name', '').strip()!r}",
        )
    if gazebo_joints:
        # The SDFormat reader, loaded only for a URDF that closes a loop the Gazebo way (a
        # URDF node holds no SDFormat parser otherwise: test/ros/test_node_imports.py).
        from .gazebo_loops import gazebo_loop_joints

        loop_joints.extend(gazebo_loop_joints(robot, link_elements, gazebo_joints))
    check_loop_joints(robot.links, robot.joints, loop_joints, diag, sites)
    robot.loop_joints = tuple(loop_joints)
    return robot


def gazebo_joint_elements(root: etree._Element) -> list[etree._Element]:
    """The ``<joint>`` elements of the ``<gazebo>`` elements without ``reference`` (the ones
    Gazebo copies into the model), in file order."""
    return [
        joint
        for gazebo in root.iterchildren("gazebo")
        if gazebo.get("reference") is None
        for joint in gazebo.iterchildren("joint")
    ]
