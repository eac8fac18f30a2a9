"""SDFormat 1.4 to 1.11 robot descriptions: one ``<model>`` into a ``Robot``.

Frames (all poses are resolved at the zero configuration, where SDFormat places every link at
its ``<pose>``):

- ``X_M_f``: pose of frame f in the model frame M. A link's ``<pose>`` is relative to M, a
  joint's to its child link, a ``<frame>``'s to the frame it is attached to (M by default);
  from 1.7, ``relative_to`` names another link, joint or ``<frame>`` (or ``__model__``).
- A joint's axes: up to 1.4 in M; 1.5 and 1.6 in the joint frame unless
  ``<use_parent_model_frame>``; from 1.7 in the frame named by ``<xyz expressed_in>`` (the joint
  frame by default). They are stored in the joint frame.
- ``Joint.origin`` is the joint frame in the parent link frame, ``Joint.child_offset`` the child
  link in the joint frame, so ``T_parent_child(q) = origin @ motion(q) @ child_offset``.
- Each model ``<frame>`` F (1.7+) is published as a link F hung by a fixed joint F from the
  link it is attached to (a joint attaches to its child link, ``__model__`` to the canonical
  link), at X_L_F, its pose in that link's frame; so ``robot.links``, ``link_fk`` and
  /tf_static carry it like a URDF fixed-joint link. These links and joints follow the model's
  own in ``robot.links`` and ``robot.joints``, in file order.

Choices where the spec leaves one (README, "Joint semantics and choices", SDFormat): the model
is the first ``<model>`` (of ``<sdf>`` or its ``<world>``) unless named; a joint to ``world``
adds a link ``world`` at the model's ``<pose>``; the root and the tree follow
``tree.spanning_tree`` with the canonical link preferred; gearbox joints become mimic
couplings; ``thread_pitch`` is converted as libsdformat does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from lxml import etree
from numpy.typing import NDArray

from ..errors import Diagnostics, ModelError
from ..model.elements import Dynamics, Joint, Limit, Link, Mimic, RobotModel
from ..model.tree import spanning_tree
from ..model.validate import check_joint_links, check_mimics, check_unique_names
from ..transforms import inverse_pose, quaternion_to_matrix, unit_and_norm, xyz_rpy_to_matrix
from .xmlio import line_of

Array = NDArray[np.float64]

#: SDFormat versions read, as written in ``<sdf version>``.
SUPPORTED_VERSIONS = ("1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "1.10", "1.11")

#: SDFormat joint types read (SDFormat has no planar or floating joint).
SDF_JOINT_TYPES = (
    "fixed",
    "revolute",
    "continuous",
    "prismatic",
    "screw",
    "gearbox",
    "revolute2",
    "universal",
    "ball",
)

#: Joint types that move along or about ``<axis>`` (and ``<axis2>`` for the two-axis ones).
_AXIS_TYPES = ("revolute", "continuous", "prismatic", "screw", "gearbox", "revolute2", "universal")
_TWO_AXIS_TYPES = ("revolute2", "universal")

#: Limits at or beyond this magnitude mean "unlimited" (the pre-1.10 default is +-1e16).
UNLIMITED = 1e16

MODEL_FRAME = "__model__"
WORLD = "world"

#: Cosine above which two axes count as parallel (gearbox axis matching).
_PARALLEL_COS = 1.0 - 1e-6


@dataclass
class _Frame:
    """A node of the pose graph: ``pose`` is this frame in frame ``relative_to`` (None: M)."""

    kind: str  # "link", "joint" or "frame"
    name: str
    element: etree._Element
    pose: Array
    relative_to: str | None


class _Parser:
    """Reads one ``<model>``; holds the version, the pose graph and the diagnostics."""

    def __init__(self, model: etree._Element, version: tuple[int, int], diag: Diagnostics):
        self.model = model
        self.version = version
        self.diag = diag
        self.frames: dict[str, _Frame] = {}
        self.canonical = ""  # the canonical link's name, once the links are read
        self._resolved: dict[str, Array] = {MODEL_FRAME: np.eye(4)}
        self._resolving: list[str] = []

    # -- small readers ---------------------------------------------------------------------

    def error(
        self, message: str, element: etree._Element | None, what: str | None = None
    ) -> ModelError:
        return self.diag.error(message, _line(element), what)

    def warn(self, message: str, element: etree._Element | None, what: str | None = None) -> None:
        self.diag.warn(message, _line(element), what)

    def numbers(
        self, element: etree._Element, count: int | tuple[int, ...], what: str, finite: bool = True
    ) -> list[float]:
        """The whitespace-separated numbers of ``element``'s text; ModelError if malformed."""
        words = (element.text or "").split()
        counts = (count,) if isinstance(count, int) else count
        if len(words) not in counts:
            wanted = " or ".join(str(c) for c in counts)
            raise self.error(
                f"<{element.tag}> needs {wanted} numbers, got {len(words)}", element, what
            )
        try:
            values = [float(word) for word in words]
        except ValueError:
            raise self.error(
                f"<{element.tag}> is not a list of numbers: {(element.text or '').strip()!r}",
                element,
                what,
            ) from None
        for value in values:
            if math.isnan(value) or (finite and math.isinf(value)):
                raise self.error(f"<{element.tag}> must be finite, got {value}", element, what)
        return values

    def number(
        self, parent: etree._Element, tag: str, default: float, what: str, finite: bool = True
    ) -> float:
        element = parent.find(tag)
        if element is None:
            return default
        return self.numbers(element, 1, what, finite=finite)[0]

    def flag(self, parent: etree._Element, tag: str, what: str) -> bool:
        element = parent.find(tag)
        if element is None:
            return False
        text = (element.text or "").strip().lower()
        if text in ("1", "true"):
            return True
        if text in ("0", "false"):
            return False
        raise self.error(f"<{tag}> must be true or false, got {text!r}", element, what)

    def required_text(self, parent: etree._Element, tag: str, what: str) -> str:
        element = parent.find(tag)
        text = (element.text or "").strip() if element is not None else ""
        if not text:
            raise self.error(f"missing <{tag}>", element if element is not None else parent, what)
        return text

    # -- poses -----------------------------------------------------------------------------

    def pose(self, owner: etree._Element, what: str) -> tuple[Array, str | None]:
        """``owner``'s ``<pose>`` as (X_relative_to_owner, relative_to or None for default)."""
        element = owner.find("pose")
        if element is None:
            return np.eye(4), None
        relative_to = element.get("relative_to", "").strip() or None
        if relative_to is not None and self.version < (1, 7):
            self.warn("'relative_to' needs SDFormat 1.7 or later; ignored", element, what)
            relative_to = None
        if element.get("frame", "").strip():
            raise self.error(
                "<pose frame=...> (SDFormat 1.5/1.6) is not supported; use "
                "SDFormat 1.7 'relative_to'",
                element,
                what,
            )
        if not (element.text or "").strip():
            return np.eye(4), relative_to
        rotation_format = element.get("rotation_format", "euler_rpy")
        if self.version < (1, 9):
            rotation_format = "euler_rpy"
        if rotation_format == "quat_xyzw":
            values = self.numbers(element, 7, what)
            pose = np.eye(4)
            try:
                pose[:3, :3] = quaternion_to_matrix(values[3:])
            except ValueError:
                raise self.error("<pose> quaternion has zero norm", element, what) from None
            pose[:3, 3] = values[:3]
            return pose, relative_to
        if rotation_format != "euler_rpy":
            raise self.error(
                f"<pose rotation_format={rotation_format!r}>: expected 'euler_rpy' or 'quat_xyzw'",
                element,
                what,
            )
        values = self.numbers(element, 6, what)
        rpy = values[3:]
        if self.version >= (1, 9) and element.get("degrees", "false").strip() in ("true", "1"):
            rpy = [math.radians(angle) for angle in rpy]
        return xyz_rpy_to_matrix(values[:3], rpy), relative_to

    def add_frame(self, frame: _Frame) -> None:
        """Register a named frame of the pose graph; names are unique across kinds from 1.7."""
        earlier = self.frames.get(frame.name)
        if earlier is not None:
            if earlier.kind == frame.kind:
                raise self.error(
                    f"duplicate {frame.kind} name (first defined at line {_line(earlier.element)})",
                    frame.element,
                    f"{frame.kind} {frame.name!r}",
                )
            if self.version >= (1, 7):
                raise self.error(
                    f"name {frame.name!r} is already used by {earlier.kind} at "
                    f"line {_line(earlier.element)}; SDFormat 1.7 needs unique "
                    "frame names",
                    frame.element,
                    f"{frame.kind} {frame.name!r}",
                )
            return  # before 1.7 links and joints may share names; poses never refer to them
        if frame.name in (MODEL_FRAME, WORLD):
            raise self.error(
                f"the name {frame.name!r} is reserved",
                frame.element,
                f"{frame.kind} {frame.name!r}",
            )
        self.frames[frame.name] = frame

    def in_model(self, name: str, element: etree._Element | None, what: str) -> Array:
        """X_M_name: the pose of frame ``name`` in the model frame at zero configuration."""
        known = self._resolved.get(name)
        if known is not None:
            return known
        frame = self.frames.get(name)
        if frame is None:
            raise self.error(f"unknown frame {name!r}", element, what)
        if name in self._resolving:
            loop = " -> ".join(self._resolving[self._resolving.index(name) :] + [name])
            raise self.error(
                f"poses are relative to each other in a cycle: {loop}",
                frame.element,
                f"{frame.kind} {name!r}",
            )
        self._resolving.append(name)
        relative_to = frame.relative_to or MODEL_FRAME
        pose_element = frame.element.find("pose")
        reference = self.in_model(
            relative_to,
            pose_element if pose_element is not None else frame.element,
            f"{frame.kind} {name!r}",
        )
        self._resolving.pop()
        pose = reference @ frame.pose
        self._resolved[name] = pose
        return pose

    def attached_link(self, name: str, element: etree._Element | None, what: str) -> str:
        """The link a frame is attached to: a link itself, a joint's child link, a
        ``<frame>``'s ``attached_to`` (the model frame by default), the canonical link for
        the model frame."""
        seen: list[str] = []
        while True:
            if name in seen:
                loop = " -> ".join(seen[seen.index(name) :] + [name])
                raise self.error(
                    f"frames are attached to each other in a cycle: {loop}", element, what
                )
            seen.append(name)
            if name == MODEL_FRAME:
                name = self.canonical
                continue
            frame = self.frames.get(name)
            if frame is None:
                raise self.error(f"unknown frame {name!r}", element, what)
            if frame.kind == "link":
                return name
            if frame.kind == "joint":
                name = (frame.element.findtext("child") or "").strip()
            else:
                name = frame.element.get("attached_to", "").strip() or MODEL_FRAME


def _line(element: etree._Element | None) -> int | None:
    """The source line of ``element``, if known."""
    return line_of(element) if element is not None else None


def _version(root: etree._Element, diag: Diagnostics) -> tuple[int, int]:
    text = root.get("version", "").strip()
    if text not in SUPPORTED_VERSIONS:
        shown = repr(text) if text else "missing"
        raise diag.error(
            f"SDFormat version {shown}; supported: {', '.join(SUPPORTED_VERSIONS)}",
            _line(root),
            "<sdf>",
        )
    major, minor = text.split(".")
    return int(major), int(minor)


def _select_model(
    root: etree._Element, diag: Diagnostics, model_name: str | None
) -> etree._Element:
    """The ``<model>`` to read: named, else the first under ``<sdf>`` or its ``<world>``s."""
    models = list(root.findall("model")) + list(root.findall("world/model"))
    if model_name is not None:
        for model in models:
            if model.get("name") == model_name:
                return model
        names = ", ".join(repr(m.get("name")) for m in models) or "none"
        raise diag.error(f"no <model> named {model_name!r} (models: {names})", _line(root), "<sdf>")
    if models:
        return models[0]
    include = root.find("include")
    if include is None:
        include = root.find("world/include")
    if include is not None:
        raise diag.error(
            "<include> is not supported: expand included models into the file "
            "(e.g. with 'gz sdf -p')",
            _line(include),
            "<include>",
        )
    world = root.find("world")
    if world is not None:
        raise diag.error(
            "world has no <model>; a robot description needs one",
            _line(world),
            f"world {world.get('name')!r}",
        )
    raise diag.error("no <model> in the description", _line(root), "<sdf>")


def robot_from_element(
    root: etree._Element, source: str, model_name: str | None = None
) -> RobotModel:
    """Build a Robot from a parsed ``<sdf>`` root: one model's links and joints.

    ``model_name`` picks a model by name; by default the first. Raises ModelError naming
    source, line and element for anything invalid or unsupported (nested models,
    ``<include>``, a world without a model, an unknown version or joint type).
    """
    diag = Diagnostics(source)
    version = _version(root, diag)
    model = _select_model(root, diag, model_name)
    model_label = f"model {model.get('name')!r}"
    for tag in ("model", "include"):
        nested = model.find(tag)
        if nested is not None:
            kind = "nested models are" if tag == "model" else "<include> is"
            raise diag.error(
                f"{kind} not supported; flatten the model into one <model>",
                _line(nested),
                f"{tag} {nested.get('name', '')!r}".strip(),
            )
    parser = _Parser(model, version, diag)
    if version < (1, 7) and model.find("frame") is not None:
        parser.warn(
            "<frame> elements need SDFormat 1.7 or later; ignored", model.find("frame"), model_label
        )

    links = _read_links(parser)
    if not links:
        raise diag.error("model has no links", _line(model), model_label)
    if version >= (1, 7):
        _read_frames(parser)
    parser.canonical = _canonical_link(parser, links)
    joint_elements = _read_joint_frames(parser, {link.name for link in links})
    world_link = _add_world_link(parser, joint_elements)
    for frame in list(parser.frames.values()):  # every pose must resolve, used or not
        parser.in_model(frame.name, frame.element, f"{frame.kind} {frame.name!r}")
        if frame.kind == "frame":
            parser.attached_link(frame.name, frame.element, f"frame {frame.name!r}")

    joints: list[Joint] = []
    joint_poses: dict[str, Array] = {}
    for element in joint_elements:
        joint, X_M_J = _build_joint(parser, element)
        joints.append(joint)
        joint_poses[joint.name] = X_M_J
    joints = _resolve_gearboxes(parser, joints, joint_poses, joint_elements)

    all_links = ([world_link] if world_link else []) + links
    check_unique_names(joints, "joint", diag)
    check_joint_links({link.name: link for link in all_links}, joints, diag)
    canonical = parser.canonical
    tree = spanning_tree([link.name for link in all_links], joints, preferred_root=canonical)
    joints_by_name = {joint.name: joint for joint in joints}
    parent_in_tree = {joints_by_name[n].child: n for n in tree.tree_joints}
    for name in tree.loop_joints:
        joint = joints_by_name[name]
        diag.warn(
            f"closed kinematic chain: left out of the TF tree, as link {joint.child!r} "
            f"already hangs from joint {parent_in_tree.get(joint.child, '?')!r}",
            joint.line,
            f"joint {name!r}",
        )
    for name in tree.unreachable_links:
        diag.warn(
            f"not connected to root link {tree.root!r}; not published", None, f"link {name!r}"
        )
    kept_joints = {name: joints_by_name[name] for name in tree.tree_joints}
    kept_links = {link.name: link for link in all_links if link.name not in tree.unreachable_links}
    _drop_dangling_mimics(parser, kept_joints, joints_by_name)
    check_mimics(kept_joints, diag)
    for frame_link, frame_joint in _frame_attachments(parser, kept_links):
        kept_links[frame_link.name] = frame_link
        kept_joints[frame_joint.name] = frame_joint
    return RobotModel(
        name=model.get("name", ""),
        links=kept_links,
        joints=kept_joints,
        root=tree.root,
        source=source,
        warnings=diag.warnings,
    )


def _read_links(parser: _Parser) -> list[Link]:
    links: list[Link] = []
    for element in parser.model.findall("link"):
        name = element.get("name", "").strip()
        if not name:
            raise parser.error("<link> needs a 'name'", element, "link")
        pose, relative_to = parser.pose(element, f"link {name!r}")
        parser.add_frame(_Frame("link", name, element, pose, relative_to))
        links.append(Link(name=name, line=_line(element)))
    return links


def _read_frames(parser: _Parser) -> None:
    """Register ``<frame>`` elements (1.7+): pose relative to ``attached_to`` by default."""
    for element in parser.model.findall("frame"):
        name = element.get("name", "").strip()
        if not name:
            raise parser.error("<frame> needs a 'name'", element, "frame")
        pose, relative_to = parser.pose(element, f"frame {name!r}")
        attached_to = element.get("attached_to", "").strip() or None
        parser.add_frame(_Frame("frame", name, element, pose, relative_to or attached_to))


def _pose_in(X_M_A: Array, X_M_B: Array) -> Array:
    """X_A_B, frame B's pose in frame A, from both poses in the model frame M.

    Poses so large that the product overflows give inf or NaN entries without a numpy
    warning: each caller checks the result and raises a ModelError naming the element.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        X_A_B: Array = inverse_pose(X_M_A) @ X_M_B
    return X_A_B


def _frame_attachments(parser: _Parser, links: dict[str, Link]) -> list[tuple[Link, Joint]]:
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
    for frame in parser.frames.values():
        if frame.kind != "frame":
            continue
        what = f"frame {frame.name!r}"
        link = parser.attached_link(frame.name, frame.element, what)
        if link not in links:
            parser.warn(
                f"attached to link {link!r}, which is not in the TF tree; not published",
                frame.element,
                what,
            )
            continue
        X_M_L = parser.in_model(link, frame.element, what)
        X_M_F = parser.in_model(frame.name, frame.element, what)
        X_L_F = _pose_in(X_M_L, X_M_F)
        if not np.all(np.isfinite(X_L_F)):
            raise parser.error(
                f"the frame relative to link {link!r} is not finite (poses too large)",
                frame.element,
                what,
            )
        line = _line(frame.element)
        joint = Joint(
            name=frame.name,
            joint_type="fixed",
            parent=link,
            child=frame.name,
            origin=X_L_F,
            line=line,
        )
        attachments.append((Link(name=frame.name, line=line), joint))
    return attachments


def _read_joint_frames(parser: _Parser, link_names: set[str]) -> list[etree._Element]:
    """Register each joint frame (pose relative to the child link by default)."""
    elements = list(parser.model.findall("joint"))
    for element in elements:
        name = element.get("name", "").strip()
        if not name:
            raise parser.error("<joint> needs a 'name'", element, "joint")
        what = f"joint {name!r}"
        child = parser.required_text(element, "child", what)
        parent = parser.required_text(element, "parent", what)
        frames_allowed = parser.version >= (1, 8)  # 1.8+: a joint may name a <frame>
        for role, link in (("parent", parent), ("child", child)):
            if link in link_names or (role == "parent" and link == WORLD):
                continue
            known = parser.frames.get(link)
            if not (frames_allowed and known is not None and known.kind == "frame"):
                kind = "a link or frame" if frames_allowed else "a link"
                raise parser.error(
                    f"{role} {link!r} is not {kind} of the model", element.find(role), what
                )
        pose, relative_to = parser.pose(element, what)
        parser.add_frame(_Frame("joint", name, element, pose, relative_to or child))
    return elements


def _add_world_link(parser: _Parser, joint_elements: list[etree._Element]) -> Link | None:
    """A link ``world`` (at the inverse of the model's ``<pose>``) if a joint's parent is world."""
    for element in joint_elements:
        parent = element.find("parent")
        if parent is not None and (parent.text or "").strip() == WORLD:
            model_pose, _ = parser.pose(parser.model, f"model {parser.model.get('name')!r}")
            parser._resolved[WORLD] = inverse_pose(model_pose)
            return Link(name=WORLD, line=_line(parent))
    return None


def _canonical_link(parser: _Parser, links: list[Link]) -> str:
    """The model's canonical link: ``canonical_link`` (1.7+), else the first link."""
    name = parser.model.get("canonical_link", "").strip()
    if not name or parser.version < (1, 7):
        return links[0].name
    if name not in {link.name for link in links}:
        raise parser.error(
            f"canonical_link {name!r} is not a link of the model",
            parser.model,
            f"model {parser.model.get('name')!r}",
        )
    return name


def _build_joint(parser: _Parser, element: etree._Element) -> tuple[Joint, Array]:
    """One ``<joint>`` as a model.Joint, and its frame X_M_J in the model frame."""
    name = element.get("name", "").strip()
    what = f"joint {name!r}"
    joint_type = element.get("type", "").strip()
    if joint_type not in SDF_JOINT_TYPES:
        raise parser.error(
            f"unknown joint type {joint_type!r}; SDFormat types: {', '.join(SDF_JOINT_TYPES)}",
            element,
            what,
        )
    parent = parser.required_text(element, "parent", what)
    child = parser.required_text(element, "child", what)
    X_M_J = parser.in_model(name, element, what)
    # A joint naming a <frame> (1.8+) connects the links those frames are attached to.
    if parent != WORLD:
        parent = parser.attached_link(parent, element.find("parent"), what)
    child = parser.attached_link(child, element.find("child"), what)
    X_M_parent = parser.in_model(parent, element.find("parent"), what)
    X_M_child = parser.in_model(child, element.find("child"), what)
    origin = _pose_in(X_M_parent, X_M_J)
    child_offset = _pose_in(X_M_J, X_M_child)
    if not (np.all(np.isfinite(origin)) and np.all(np.isfinite(child_offset))):
        raise parser.error(
            "the joint frame relative to its links is not finite (poses too large)", element, what
        )
    joint = Joint(
        name=name,
        joint_type=joint_type,
        parent=parent,
        child=child,
        origin=origin,
        child_offset=child_offset,
        line=_line(element),
    )
    if joint_type in _AXIS_TYPES:
        axis_element = element.find("axis")
        joint.axis, joint.limit, joint.dynamics = _read_axis(parser, element, "axis", X_M_J)
        if axis_element is not None:
            joint.mimic = _read_mimic(parser, axis_element, what)
        if joint_type in _TWO_AXIS_TYPES or joint_type == "gearbox":
            joint.axis2, joint.limit2, _ = _read_axis(parser, element, "axis2", X_M_J)
            axis2_element = element.find("axis2")
            if axis2_element is not None and axis2_element.find("mimic") is not None:
                raise parser.error(
                    "<mimic> under <axis2> is not supported (a joint follows "
                    "one leader with one value)",
                    axis2_element.find("mimic"),
                    what,
                )
        if joint_type in _TWO_AXIS_TYPES:
            if joint.mimic is not None:
                raise parser.error(
                    f"<mimic> on a {joint_type} joint is not supported",
                    element.find("axis/mimic"),
                    what,
                )
            _check_two_axes(parser, joint, element)
        if joint_type == "revolute" and _unlimited(joint.limit):
            joint.joint_type = "continuous"
        if joint_type == "screw":
            joint.screw_pitch = _screw_pitch(parser, element, what)
    return joint, X_M_J


def _read_axis(
    parser: _Parser, joint_element: etree._Element, tag: str, X_M_J: Array
) -> tuple[Array, Limit, Dynamics | None]:
    """``<axis>`` or ``<axis2>``: the unit axis in the joint frame, its limit and dynamics."""
    what = f"joint {joint_element.get('name')!r}"
    element = joint_element.find(tag)
    axis = np.array([0.0, 0.0, 1.0])
    limit = _read_limit(parser, None, what)
    if element is None:
        return axis, limit, None
    xyz = element.find("xyz")
    if xyz is not None:
        written = np.array(parser.numbers(xyz, 3, what), dtype=np.float64)
        unit, norm = unit_and_norm(written)
        if unit is None or norm < 1e-12:
            raise parser.error(f"<{tag}><xyz> is zero", xyz, what)
        if abs(norm - 1.0) > 1e-6:
            parser.warn(
                f"<{tag}><xyz> {written.tolist()} is not a unit vector; normalised", xyz, what
            )
        axis = unit
        R_M_J = X_M_J[:3, :3]
        if parser.version < (1, 5):
            axis = R_M_J.T @ axis  # SDFormat 1.4: axes are in the model frame
        elif parser.version < (1, 7):
            if parser.flag(element, "use_parent_model_frame", what):
                axis = R_M_J.T @ axis
        else:
            expressed_in = xyz.get("expressed_in", "").strip()
            if expressed_in:
                R_M_E = parser.in_model(expressed_in, xyz, what)[:3, :3]
                axis = R_M_J.T @ R_M_E @ axis
    limit = _read_limit(parser, element.find("limit"), what, tag)
    dynamics = None
    dyn = element.find("dynamics")
    if dyn is not None:
        dynamics = Dynamics(
            damping=parser.number(dyn, "damping", 0.0, what),
            friction=parser.number(dyn, "friction", 0.0, what),
            spring_reference=parser.number(dyn, "spring_reference", 0.0, what),
            spring_stiffness=parser.number(dyn, "spring_stiffness", 0.0, what),
        )
    return axis, limit, dynamics


def _read_limit(
    parser: _Parser, element: etree._Element | None, what: str, axis_tag: str = "axis"
) -> Limit:
    """``<limit>`` of ``<axis>`` or ``<axis2>``: +-1e16 or beyond is unlimited (inf); a negative
    effort or velocity (not enforced) becomes inf. Defaults are the spec's: unlimited. Absent
    bounds, or lower above upper, leave that axis unclamped (``Joint.variable_limits``)."""

    def value(tag: str, default: float) -> float:
        if element is None:
            return default
        return parser.number(element, tag, default, what, finite=False)

    lower, upper = value("lower", -math.inf), value("upper", math.inf)
    effort, velocity = value("effort", math.inf), value("velocity", math.inf)
    lower = -math.inf if lower <= -UNLIMITED else lower
    upper = math.inf if upper >= UNLIMITED else upper
    effort = math.inf if effort < 0 else effort
    velocity = math.inf if velocity < 0 else velocity
    if element is not None and lower > upper:
        unclamped = "the joint is" if axis_tag == "axis" else "its second axis is"
        parser.warn(
            f"<{axis_tag}><limit> lower {lower} is above upper {upper}; {unclamped} not clamped",
            element,
            what,
        )
    return Limit(
        effort=effort,
        velocity=velocity,
        lower=lower,
        upper=upper,
        has_position_range=math.isfinite(lower) or math.isfinite(upper),
    )


def _unlimited(limit: Limit | None) -> bool:
    return limit is None or (math.isinf(limit.lower) and math.isinf(limit.upper))


def _read_mimic(parser: _Parser, axis_element: etree._Element, what: str) -> Mimic | None:
    """``<axis><mimic joint axis>`` (1.11).

    follower = multiplier * (leader - reference) + offset, stored as a Mimic with offset
    ``offset - multiplier * reference``.
    """
    element = axis_element.find("mimic")
    if element is None:
        return None
    if parser.version < (1, 11):
        parser.warn("<mimic> needs SDFormat 1.11 or later; ignored", element, what)
        return None
    leader = element.get("joint", "").strip()
    if not leader:
        raise parser.error("<mimic> needs a 'joint'", element, what)
    leader_axis = element.get("axis", "axis").strip()
    if leader_axis != "axis":
        raise parser.error(
            f"<mimic axis={leader_axis!r}>: only a leader's first axis ('axis') is supported",
            element,
            what,
        )
    multiplier = parser.number(element, "multiplier", 1.0, what)
    offset = parser.number(element, "offset", 0.0, what)
    reference = parser.number(element, "reference", 0.0, what)
    return Mimic(
        joint=leader,
        multiplier=multiplier,
        offset=offset - multiplier * reference,
        line=_line(element),
    )


def _check_two_axes(parser: _Parser, joint: Joint, element: etree._Element) -> None:
    assert joint.axis2 is not None
    cosine = abs(float(joint.axis @ joint.axis2))
    if cosine > _PARALLEL_COS:
        raise parser.error(
            "<axis> and <axis2> are parallel; a two-axis joint needs two directions",
            element,
            f"joint {joint.name!r}",
        )
    if joint.joint_type == "universal" and cosine > 1e-6:
        parser.warn(
            "universal joint axes are not orthogonal (used as given)",
            element,
            f"joint {joint.name!r}",
        )


def _screw_pitch(parser: _Parser, element: etree._Element, what: str) -> float:
    """Metres of travel per radian, positive right-handed, from the file's pitch.

    ``<screw_thread_pitch>`` (1.10+) is metres per revolution, right-handed: p / (2 pi).
    ``<thread_pitch>`` (all versions) is radians per metre, positive LEFT-handed; libsdformat
    converts it to -2 pi / thread_pitch metres per revolution, so -1 / thread_pitch here.
    With neither, libsdformat's default of 1 metre per revolution applies.
    """
    new = element.find("screw_thread_pitch")
    if new is not None:
        if parser.version < (1, 10):
            parser.warn("<screw_thread_pitch> is SDFormat 1.10+; read anyway", new, what)
        return parser.numbers(new, 1, what)[0] / (2.0 * math.pi)
    old = element.find("thread_pitch")
    if old is not None:
        thread_pitch = parser.numbers(old, 1, what)[0]
        if thread_pitch == 0.0 or not math.isfinite(1.0 / thread_pitch):
            raise parser.error(
                f"<thread_pitch> {thread_pitch!r} (radians per metre) gives no finite pitch",
                old,
                what,
            )
        return -1.0 / thread_pitch
    return 1.0 / (2.0 * math.pi)


def _resolve_gearboxes(
    parser: _Parser,
    joints: list[Joint],
    joint_poses: dict[str, Array],
    elements: list[etree._Element],
) -> list[Joint]:
    """Turn each gearbox joint into a mimic coupling (README: "gearbox coupling").

    theta_1 = angle of the parent link P relative to the reference body R about ``<axis>``;
    theta_2 = angle of the child link C relative to R about ``<axis2>``; theta_2 =
    -ratio * theta_1. The leader is the revolute joint R -> P. If a revolute joint R -> C
    exists, it becomes a mimic of the leader and the gearbox joint itself is not published;
    otherwise the gearbox joint is re-hung from R (parent R, rotating C about ``<axis2>``)
    as a mimic of the leader. Signs follow from comparing the axes in the model frame.
    """
    by_element = {element.get("name", "").strip(): element for element in elements}
    result = list(joints)
    for gearbox in joints:
        if gearbox.joint_type != "gearbox":
            continue
        element = by_element[gearbox.name]
        what = f"joint {gearbox.name!r}"
        reference = parser.required_text(element, "gearbox_reference_body", what)
        ref_element = element.find("gearbox_reference_body")
        ratio = parser.number(element, "gearbox_ratio", 1.0, what)
        if gearbox.mimic is not None:
            raise parser.error("a gearbox joint cannot also have a <mimic>", element, what)
        leader = _revolute_between(joints, reference, gearbox.parent, gearbox)
        if leader is None:
            raise parser.error(
                f"gearbox needs a revolute joint from reference body "
                f"{reference!r} to parent link {gearbox.parent!r}",
                ref_element,
                what,
            )
        X_M_G = joint_poses[gearbox.name]
        assert gearbox.axis2 is not None
        sign1 = _axis_sign(
            parser,
            X_M_G[:3, :3] @ gearbox.axis,
            joint_poses[leader.name][:3, :3] @ leader.axis,
            element,
            f"<axis> and joint {leader.name!r}'s axis",
            what,
        )
        follower = _revolute_between(joints, reference, gearbox.child, gearbox)
        if follower is not None:
            if follower.mimic is not None:
                raise parser.error(
                    f"joint {follower.name!r} already has a <mimic>; it cannot "
                    "also follow this gearbox",
                    element,
                    what,
                )
            sign2 = _axis_sign(
                parser,
                X_M_G[:3, :3] @ gearbox.axis2,
                joint_poses[follower.name][:3, :3] @ follower.axis,
                element,
                f"<axis2> and joint {follower.name!r}'s axis",
                what,
            )
            follower.mimic = Mimic(
                joint=leader.name, multiplier=-ratio * sign1 * sign2, line=_line(element)
            )
            result.remove(gearbox)
            continue
        X_M_R = parser.in_model(reference, ref_element, what)
        gearbox.parent = reference
        gearbox.origin = inverse_pose(X_M_R) @ X_M_G
        gearbox.axis = gearbox.axis2
        gearbox.limit = gearbox.limit2
        gearbox.mimic = Mimic(joint=leader.name, multiplier=-ratio * sign1, line=_line(element))
    return result


def _revolute_between(joints: list[Joint], parent: str, child: str, exclude: Joint) -> Joint | None:
    for joint in joints:
        if (
            joint is not exclude
            and joint.parent == parent
            and joint.child == child
            and joint.joint_type in ("revolute", "continuous")
        ):
            return joint
    return None


def _axis_sign(
    parser: _Parser, axis_a: Array, axis_b: Array, element: etree._Element, pair: str, what: str
) -> float:
    cosine = float(axis_a @ axis_b)
    if abs(cosine) >= _PARALLEL_COS:
        return 1.0 if cosine > 0 else -1.0
    parser.warn(f"{pair} are not parallel; the coupling uses the joint's own angle", element, what)
    return 1.0


def _drop_dangling_mimics(parser: _Parser, kept: dict[str, Joint], every: dict[str, Joint]) -> None:
    """A mimic whose leader was left out of the tree (loop or unreachable) cannot be driven."""
    for joint in kept.values():
        if joint.mimic is not None and joint.mimic.joint in every and joint.mimic.joint not in kept:
            parser.diag.warn(
                f"mimics joint {joint.mimic.joint!r}, which is left out of the "
                "TF tree; the mimic is ignored",
                joint.mimic.line,
                f"joint {joint.name!r}",
            )
            joint.mimic = None
