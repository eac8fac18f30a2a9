"""URDF ``<gazebo><joint>``: an SDFormat joint written in a URDF to close a kinematic loop
(the Gazebo tutorial's way: Gazebo converts the URDF to SDFormat, copies the elements of each
``<gazebo>`` without ``reference`` into the model, and so reads the joint as SDFormat).

Each such joint connects two links of the URDF tree, so it closes a loop: it is read with this
package's SDFormat joint reader (``sdf.joints.build_joint``, ``sdf.loops.loop_joint_from``)
over a pose graph of the URDF's links at their drawing (``model.loops.drawing_poses``): its
``<pose>`` in the child link's frame (or ``relative_to`` a link), its axis in the joint frame,
or in the model frame (the root link's) with SDF 1.6 ``<use_parent_model_frame>``, or in
``expressed_in``'s frame (1.7+). Which SDFormat version a converted URDF has depends on the
Gazebo release (Gazebo classic 11: 1.6; Gazebo Sim: 1.9 and later); a joint is read as 1.6
where it writes ``<use_parent_model_frame>``, else as 1.11. Units: metres and radians.
"""

from __future__ import annotations

from lxml import etree

from ...model.drawing import drawing_poses
from ...model.elements import RobotModel
from ...model.loops import LoopJoint
from ..sdf.context import MODEL_FRAME, WORLD, Context, FileOrigin
from ..sdf.joints import build_joint
from ..sdf.loops import loop_joint_from
from ..sdf.poses import Frame, PoseGraph, read_pose

#: The SDFormat versions a ``<gazebo><joint>`` is read as (module docstring).
SDF_1_6 = (1, 6)
SDF_LATEST = (1, 11)


def gazebo_loop_joints(
    robot: RobotModel, link_elements: dict[str, etree._Element], joints: list[etree._Element]
) -> tuple[LoopJoint, ...]:
    """The ``<gazebo><joint>`` elements ``joints`` of the URDF read as ``robot`` (whose links
    were written as ``link_elements``), as LoopJoints. Raises ModelError naming the file, line
    and joint for what the SDFormat reader refuses, or a parent or child that is not a link of
    the URDF. Warnings are added to ``robot.warnings``."""
    if not joints:
        return ()
    ctx = Context(FileOrigin(robot.source, SDF_LATEST, None))
    graph = PoseGraph(ctx)
    graph.canonical = robot.root
    for name, T_root_link in drawing_poses(robot.joints, robot.root).items():
        if name == WORLD:  # a URDF's fixed-base link "world", a reserved name in SDFormat
            graph.set_world(T_root_link)
        else:
            graph.add(Frame("link", name, link_elements[name], T_root_link, MODEL_FRAME))
    for element in joints:
        if element.find("axis/use_parent_model_frame") is not None:
            ctx.set_origin(element, FileOrigin(robot.source, SDF_1_6, None))
        name = element.get("name", "").strip()
        what = f"joint {name!r}"
        if not name:
            raise ctx.error("<gazebo><joint> needs a 'name'", element, "joint")
        for role in ("parent", "child"):
            link = ctx.required_text(element, role, what)
            if link not in robot.links:
                raise ctx.error(
                    f"{role} {link!r} is not a link of the URDF", element.find(role), what
                )
        pose, relative_to = read_pose(ctx, element, what)
        child = ctx.required_text(element, "child", what)
        graph.add(Frame("joint", name, element, pose, relative_to or child))
    loops = []
    for element in joints:
        joint, _ = build_joint(ctx, graph, element)
        loops.append(loop_joint_from(ctx, joint, element))
    robot.warnings.extend(ctx.diag.warnings)
    return tuple(loops)
