"""One SDFormat ``<model>`` into a ``RobotModel``: links, joints, frames and the TF tree.

Every pose is resolved at the zero configuration (``poses.PoseGraph``). Each model
``<frame>`` F (1.7+) is published as a link F hung by a fixed joint F from the link it is
attached to (a joint attaches to its child link, ``__model__`` to the canonical link), at
X_L_F, its pose in that link's frame; so ``robot.links``, ``link_fk`` and /tf_static carry it
like a URDF fixed-joint link. These links and joints follow the model's own in
``robot.links`` and ``robot.joints``, in file order.

Choices where the spec leaves one (README, "Joint semantics and choices", SDFormat): a joint
to ``world`` adds a link ``world`` at the model's ``<pose>``; the root and the tree follow
``tree.spanning_tree`` with the canonical link preferred; gearbox joints become mimic
couplings; ``thread_pitch`` is converted as libsdformat does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from lxml import etree

from ...arrays import Array
from ...errors import ModelError
from ...model.elements import Joint, Link, RobotModel
from ...model.loops import LoopJoint
from ...model.tree import spanning_tree
from ...model.validate import (
    LoopSite,
    check_follower_ranges,
    check_joint_links,
    check_loop_joints,
    check_mimics,
    check_unique_names,
    drop_unusable_mimics,
)
from ...transforms import inverse_pose
from .context import MODEL_FRAME, WORLD, Context, FileOrigin, line, read_version
from .gearbox import resolve_gearboxes
from .include import Includer
from .joints import build_joint
from .loops import loop_joint_from
from .models import ModelFrame, flatten
from .poses import Frame, PoseGraph, pose_in, read_pose
from .world import select_model


def robot_from_element(
    root: etree._Element,
    source: str,
    model_name: str | None = None,
    path: Path | None = None,
) -> RobotModel:
    """Build a Robot from a parsed ``<sdf>`` root: one model's links and joints, with its
    nested and included models.

    ``model_name`` picks a model by name (``world.select_model`` says which otherwise);
    ``path`` is the file the text was read from, where relative includes start (else the
    working directory). Raises ModelError naming file, line and element for anything invalid
    or unsupported (an unknown version or joint type, an include not found, ...).
    """
    version = read_version(root, source)
    ctx = Context(FileOrigin(source, version, path.parent if path is not None else None))
    includer = Includer(ctx, path)
    model = select_model(ctx, root, includer, model_name)
    includer.expand(model)
    flat = flatten(ctx, model)
    graph = PoseGraph(ctx)
    links = _read_links(ctx, graph, flat.links)
    _read_frames(ctx, graph, flat.frames)
    _read_model_frames(ctx, graph, flat.models)
    graph.canonical = flat.canonical
    link_names = {link.name for link in links}
    joint_elements = _read_joint_frames(ctx, graph, flat.joints, link_names)
    world_link = _add_world_link(ctx, graph, model, joint_elements)
    for frame in list(graph.frames.values()):  # every pose must resolve, used or not
        graph.in_model(frame.name, frame.element, f"{frame.kind} {frame.name!r}")
        if frame.kind == "frame":
            graph.attached_link(frame.name, frame.element, f"frame {frame.name!r}")

    joints: list[Joint] = []
    joint_poses: dict[str, Array] = {}
    for element in joint_elements:
        joint, X_M_J = build_joint(ctx, graph, element)
        joints.append(joint)
        joint_poses[joint.name] = X_M_J
    joints = resolve_gearboxes(ctx, graph, joints, joint_poses, joint_elements)
    all_links = ([world_link] if world_link else []) + links
    kept_links, kept_joints, loop_joints, root_link = _tree(
        ctx, graph, all_links, joints, joint_elements
    )
    for frame_link, frame_joint in _frame_attachments(ctx, graph, kept_links):
        kept_links[frame_link.name] = frame_link
        kept_joints[frame_joint.name] = frame_joint
    return RobotModel(
        name=model.get("name", ""),
        links=kept_links,
        joints=kept_joints,
        root=root_link,
        source=source,
        warnings=ctx.diag.warnings,
        loop_joints=loop_joints,
    )


def _tree(
    ctx: Context,
    graph: PoseGraph,
    links: list[Link],
    joints: list[Joint],
    elements: list[etree._Element],
) -> tuple[dict[str, Link], dict[str, Joint], tuple[LoopJoint, ...], str]:
    """The links and joints of the TF tree (``tree.spanning_tree``), the joints that close
    loops (``loops.loop_joint_from``) and the root; warnings name the unreachable links and
    the mimics of joints left out of the tree."""
    diag = ctx.diag
    check_unique_names(joints, "joint", diag)
    check_joint_links({link.name: link for link in links}, joints, diag)
    tree = spanning_tree([link.name for link in links], joints, preferred_root=graph.canonical)
    joints_by_name = {joint.name: joint for joint in joints}
    element_of = {element.get("name", "").strip(): element for element in elements}
    loop_joints = tuple(
        loop_joint_from(ctx, joints_by_name[name], element_of[name]) for name in tree.loop_joints
    )
    for name in tree.unreachable_links:
        diag.warn(
            f"not connected to root link {tree.root!r}; not published", None, f"link {name!r}"
        )
    kept_joints = {name: joints_by_name[name] for name in tree.tree_joints}
    kept_links = {link.name: link for link in links if link.name not in tree.unreachable_links}
    sites: dict[str, LoopSite] = {
        loop.name: (joints_by_name[loop.name].line, f"joint {loop.name!r}") for loop in loop_joints
    }
    check_loop_joints(kept_links, kept_joints, loop_joints, diag, sites)
    _drop_dangling_mimics(ctx, kept_joints, joints_by_name, {loop.name for loop in loop_joints})
    drop_unusable_mimics(kept_joints, diag)
    check_mimics(kept_joints, diag)
    check_follower_ranges(kept_joints, diag)
    return kept_links, kept_joints, loop_joints, tree.root


def _read_links(ctx: Context, graph: PoseGraph, elements: list[etree._Element]) -> list[Link]:
    """Register each ``<link>`` (pose relative to its model frame by default)."""
    links: list[Link] = []
    for element in elements:
        name = element.get("name", "").strip()
        if not name:
            raise ctx.error("<link> needs a 'name'", element, "link")
        pose, relative_to = read_pose(ctx, element, f"link {name!r}")
        relative_to = relative_to or ctx.scope_frame(element)
        graph.add(Frame("link", name, element, pose, relative_to))
        links.append(Link(name=name, line=line(element)))
    return links


def _read_frames(ctx: Context, graph: PoseGraph, elements: list[etree._Element]) -> None:
    """Register ``<frame>`` elements (1.7+, else ignored with a warning): pose relative to
    ``attached_to`` by default, which defaults to the model frame."""
    for element in elements:
        name = element.get("name", "").strip()
        if ctx.version(element) < (1, 7):
            ctx.warn("<frame> elements need SDFormat 1.7 or later; ignored", element, "frame")
            continue
        if not name:
            raise ctx.error("<frame> needs a 'name'", element, "frame")
        pose, relative_to = read_pose(ctx, element, f"frame {name!r}")
        attached_to = element.get("attached_to", "").strip() or ctx.scope_frame(element)
        frame = Frame("frame", name, element, pose, relative_to or attached_to, attached_to)
        graph.add(frame)


def _read_model_frames(ctx: Context, graph: PoseGraph, models: list[ModelFrame]) -> None:
    """Register the frames of nested models and merged includes: pose relative to the
    enclosing model's frame by default, attached to their canonical link."""
    for model in models:
        pose, relative_to = read_pose(ctx, model.element, f"model {model.name!r}")
        relative_to = relative_to or ctx.scope_frame(model.element)
        frame = Frame("model", model.name, model.element, pose, relative_to, model.canonical)
        frame.placement = model.placement
        graph.add(frame)


def _read_joint_frames(
    ctx: Context, graph: PoseGraph, elements: list[etree._Element], link_names: set[str]
) -> list[etree._Element]:
    """Register each joint frame (pose relative to the child frame by default), then check
    what ``<parent>`` and ``<child>`` name: a link (or ``world`` as parent) or any other frame
    of the model (a joint, a ``<frame>``, a nested model, ``__model__``), which
    ``build_joint`` resolves to its link as libsdformat's frame graph does. SDFormat allows
    frames there from 1.8; libsdformat, which converts older files to its own version, reads
    them in every version, and so does this reader."""
    for element in elements:
        name = element.get("name", "").strip()
        if not name:
            raise ctx.error("<joint> needs a 'name'", element, "joint")
        what = f"joint {name!r}"
        child = ctx.required_text(element, "child", what)
        ctx.required_text(element, "parent", what)
        pose, relative_to = read_pose(ctx, element, what)
        graph.add(Frame("joint", name, element, pose, relative_to or child))
    for element in elements:
        what = f"joint {element.get('name', '').strip()!r}"
        for role in ("parent", "child"):
            role_element = element.find(role)
            link = ctx.required_text(element, role, what)
            if link in link_names or (role == "parent" and link == WORLD):
                continue
            if link == element.get("name", "").strip():
                raise ctx.error(f"a joint cannot name itself as its {role}", role_element, what)
            if link == MODEL_FRAME or link in graph.frames:
                continue
            raise ctx.error(
                f"{role} {link!r} is not a link or frame of the model", role_element, what
            )
    return elements


def _add_world_link(
    ctx: Context, graph: PoseGraph, model: etree._Element, joint_elements: list[etree._Element]
) -> Link | None:
    """A link ``world`` (at the inverse of the model's ``<pose>``) if a joint's parent is world.

    The model's own ``<pose>`` and ``placement_frame`` are checked either way: what libsdformat
    rejects there but this reader can do without (a malformed pose not needed, ``relative_to``,
    an unknown placement frame) is left out with a warning naming its line."""
    world_parent = next(
        (
            parent
            for parent in (element.find("parent") for element in joint_elements)
            if parent is not None and (parent.text or "").strip() == WORLD
        ),
        None,
    )
    X_world_M = _top_model_pose(ctx, graph, model, needed=world_parent is not None)
    if world_parent is None:
        return None
    graph.set_world(inverse_pose(X_world_M))
    return Link(name=WORLD, line=line(world_parent))


def _top_model_pose(ctx: Context, graph: PoseGraph, model: etree._Element, needed: bool) -> Array:
    """X_world_M, the robot model's frame in the world (or in nothing: its ``<sdf>``).

    Its ``<pose>`` places its ``placement_frame`` if it names one. A malformed ``<pose>`` is an
    error if ``needed`` (a joint to world), else a warning; ``relative_to`` (which libsdformat
    refuses on a model in ``<sdf>``, and which names the world's frames, not read here, on a
    model in ``<world>``) and an unknown placement frame are ignored with a warning.
    """
    what = f"model {model.get('name')!r}"
    pose_element = model.find("pose")
    try:
        pose, relative_to = read_pose(ctx, model, what)
    except ModelError as error:
        if needed:
            raise
        ctx.warn(f"{error.reason}; unused (no joint to world), so ignored", pose_element, what)
        pose, relative_to = np.eye(4), None
    if relative_to is not None:
        in_world = (parent := model.getparent()) is not None and parent.tag == "world"
        why = (
            "names a frame of the world, which is not read: the pose is taken in the world frame"
            if in_world
            else "is not allowed on a model in <sdf> (libsdformat refuses it); ignored"
        )
        ctx.warn(f"relative_to {relative_to!r} {why}", pose_element, what)
    placement = model.get("placement_frame", "").strip()
    try:
        return graph.placed(pose, MODEL_FRAME, placement, model)
    except ModelError as error:
        ctx.warn(
            f"placement_frame {placement!r}: {error.reason}; ignored (libsdformat refuses it)",
            model,
            what,
        )
        return pose


def _frame_attachments(
    ctx: Context, graph: PoseGraph, links: dict[str, Link]
) -> list[tuple[Link, Joint]]:
    """Each model ``<frame>`` F (1.7+, file order) as a link F and a fixed joint F hanging it
    from the link it is attached to, so that it is published like a URDF fixed-joint link.

    The parent is the link F is ultimately attached to (``attached_link``: through joints,
    which attach to their child link, other frames, and ``__model__``, the canonical link), not
    the frame ``attached_to`` names; the joint's origin is X_L_F, F's pose in that link's frame
    at zero configuration. A frame whose link is left out of the TF tree is left out too, with
    a warning. Frame names are unique across links, joints and frames from 1.7, so the new
    names clash with nothing.
    """
    attachments: list[tuple[Link, Joint]] = []
    for frame in graph.frames.values():
        if frame.kind != "frame":
            continue
        what = f"frame {frame.name!r}"
        link = graph.attached_link(frame.name, frame.element, what)
        if not link:
            ctx.warn("fixed to a static model without links; not published", frame.element, what)
            continue
        if link not in links:
            ctx.warn(
                f"attached to link {link!r}, which is not in the TF tree; not published",
                frame.element,
                what,
            )
            continue
        X_M_L = graph.in_model(link, frame.element, what)
        X_M_F = graph.in_model(frame.name, frame.element, what)
        X_L_F = pose_in(X_M_L, X_M_F)
        if not np.all(np.isfinite(X_L_F)):
            raise ctx.error(
                f"the frame relative to link {link!r} is not finite (poses too large)",
                frame.element,
                what,
            )
        joint_line = line(frame.element)
        joint = Joint(
            name=frame.name,
            joint_type="fixed",
            parent=link,
            child=frame.name,
            origin=X_L_F,
            line=joint_line,
        )
        attachments.append((Link(name=frame.name, line=joint_line), joint))
    return attachments


def _drop_dangling_mimics(
    ctx: Context, kept: dict[str, Joint], every: dict[str, Joint], loop_names: set[str]
) -> None:
    """A mimic whose leader was left out of the tree (loop or unreachable) cannot be driven
    by a joint state: the mimic is ignored with a warning (docs/loops.md, "Mimics")."""
    for joint in kept.values():
        if joint.mimic is not None and joint.mimic.joint in every and joint.mimic.joint not in kept:
            why = (
                "a joint that closes a kinematic loop (robot.loop_joints), not a joint of the "
                "TF tree"
                if joint.mimic.joint in loop_names
                else "which is left out of the TF tree"
            )
            ctx.diag.warn(
                f"mimics joint {joint.mimic.joint!r}, {why}; the mimic is ignored",
                joint.mimic.line,
                f"joint {joint.name!r}",
            )
            joint.mimic = None
