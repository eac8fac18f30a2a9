"""Closing kinematic loops: the passive joints solved so that every loop joint closes.

A loop joint (``model.loops.LoopJoint``) joins two links the tree already connects; the tree
joints between them (the loop's cycle) and the loop joint's own motion make the loop. Tree
joints of a cycle that no source gives are *passive*: ``LoopSolver.solve`` finds their values;
given joints (a value received or written in a cfg, mimic followers of given leaders) are held
exactly. The residual of each loop joint compares its two frames, each carried by its link's
pose (root frame, metres and radians):

- position (3 rows): frame origin on link1's side minus link2's (prismatic: the part normal to
  the axis only, so the joint may slide);
- orientation (3 rows, fixed and prismatic): vee of the skew part of R1 R2^T (the rotation
  vector at small angles);
- axis (3 rows, revolute and continuous): axis on link1's side cross axis on link2's side.

Ball joints have the position rows only. The solver is Levenberg-Marquardt over the passive
values with the analytic Jacobian: each passive revolute joint's twist (world axis w through
point o: angular velocity w, point velocity w x (p - o)) and each prismatic joint's (velocity
w), from the same FK that places the links. It runs until the residual stops falling (near
machine precision where the loop can close, not stopping at the tolerance); the tolerance only
decides what is reported as not closed. Passive values stay inside their limits (each step is
projected onto them), so where a closing solution inside the limits exists near the start, the
solver finds it; a passive value at a limit that a step would push beyond is held there and
the others' step solved without it, so a loop that cannot close inside the limits ends at
the least gap they allow.

Supported passive joints: revolute, continuous, prismatic (and their mimic followers, whose
leader then is the passive value). Other tree joints on a cycle (ball, planar, floating ...)
are held at their value.

A loop joint whose own value is given (``LoopJoint.motion``) is held at it: ``holding`` gives
the solver in which those loop joints are fixed ones, their link1 frame moved by the motion at
their value (``hold_values``), so the loop closes with them there (pinned, or over-determined
where the given tree joints already determine it: the least-squares fit).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple, cast

import numpy as np

from ..arrays import Array, BoolArray, IndexArray
from ..bounded_cache import bounded_cache
from ..errors import LoopNotClosedError
from ..model.clamp_mode import ClampMode
from ..model.loops import LoopJoint, LoopJointType
from .fk import SingleFk
from .float_trace import MISS
from .layout import Layout, follower_levels
from .loop_batch import close_rows
from .loop_dyad import CrankSlider, Dyad
from .loop_program import ClosedForm, FormErrors, FormProgram
from .loop_rod import BallRod

#: Loop types whose frames must share their axis line (origins and axis).
_AXIS_TYPES = (LoopJointType.REVOLUTE, LoopJointType.CONTINUOUS)
#: Loop types whose frames must share their orientation.
_ORIENTATION_TYPES = (LoopJointType.FIXED, LoopJointType.PRISMATIC)
#: Tree joint types the solver moves as passive joints: rotation about or travel along an axis.
_REVOLUTE_TREE_TYPES = ("revolute", "continuous")
_PRISMATIC_TREE_TYPES = ("prismatic",)

#: Largest step of the given values between two solves of a stateless call (rad or m): a
#: stateless solve walks from the drawing to the given values in steps this size at most, so
#: it stays on the drawing's branch.
CONTINUATION_STEP = 0.25
#: Most continuation steps of a stateless solve: a given value far from the drawing (a
#: prismatic joint's 1e308 m; an angle's whole turns are left out first) walks in longer steps,
#: not in unbounded time.
MAX_CONTINUATION_STEPS = 64
#: Levenberg-Marquardt iterations per solve, at most.
MAX_ITERATIONS = 60
#: For cross products: each component's next and the one after (cyclically).
_NEXT = np.array([1, 2, 0], dtype=np.intp)
_AFTER = np.array([2, 0, 1], dtype=np.intp)
#: Squared residual (m^2 + rad^2) below which a solve stops: machine precision for a loop of
#: metres.
_CONVERGED_COST = 1e-30
#: Below this squared residual (a residual of 1e-13) a solve ends: round-off, not the loop,
#: is what remains.
_ROUND_OFF_COST = 1e-26
#: A kept step that lowers the squared residual by less than this fraction of it ends a
#: solve whose residual stays (the least-squares minimum of a loop that cannot close).
_STALLED = 1e-6
#: The squared residual (a residual of 1e-6) at which a continuation step on the way to the
#: given values ends (``solve_from_drawing``).
_ON_THE_WAY_COST = 1e-12


@dataclass(frozen=True)
class LoopTolerance:
    """How far apart a loop joint's frames may stay and still count as closed."""

    position_m: float = 1e-6
    angle_rad: float = 1e-6


@dataclass(frozen=True)
class LoopSolution:
    """One solve: the variable vector (V,) with the passive values solved, and per loop joint
    (``LoopSolver.loop_joints`` order) how far apart its frames stay (m, rad) and whether that
    is within the tolerance. ``over_determined``: the given joints leave the passive ones fewer
    degrees of freedom than the loops constrain (the values are the least-squares fit)."""

    values: Array
    position_error_m: Array
    angle_error_rad: Array
    closed: BoolArray
    over_determined: bool
    iterations: int

    @property
    def all_closed(self) -> bool:
        """True when every loop joint closes within the tolerance."""
        return bool(self.closed.all())


class _Frames(NamedTuple):
    """Each loop joint's frame (K, 4, 4) on link1's and link2's side (root frame), and its
    axis (K, 3) there."""

    frame1: Array
    frame2: Array
    axis1: Array
    axis2: Array


@dataclass(frozen=True)
class PassivePlan:
    """The passive variables of one set of given slots: (P,) slots, their limits, (2K, P, C)
    the map from cycle-joint twists to each loop's link1 and link2 sides, and whether the loops
    are over-determined."""

    slots: IndexArray
    lower: Array
    upper: Array
    sides: Array
    over_determined: bool
    #: (n,) the moving joints the passive values move (cycle joints, followers included).
    joints: IndexArray
    #: One closed form a loop (``ClosedForm``, loop joint order) where every loop's passive
    #: joints have one and no passive joint moves two loops; else empty.
    forms: tuple[ClosedForm, ...] = ()
    #: The forms' links and (n, 4, 2) points and axes in them (``placing_links``,
    #: ``placing_columns``), all forms' in one: one product places them all.
    placing_links: IndexArray = field(default_factory=lambda: np.empty(0, dtype=np.intp))
    #: Whether a passive slot has a limit (a closed form's result is checked against it).
    limited: bool = False
    placing_columns: Array = field(default_factory=lambda: np.empty((0, 4, 2)))
    #: The forms compiled to straight-line float code (``loop_program``), None without
    #: forms or where a joint on their way is not one it moves.
    program: FormProgram | None = None


def _cross(a: Array, b: Array) -> Array:
    """Cross products along the last axis (numpy's ``np.cross`` costs ~10 us a call)."""
    last = a.ndim - 1
    product: Array = a.take(_NEXT, last) * b.take(_AFTER, last)
    product -= a.take(_AFTER, last) * b.take(_NEXT, last)
    return product


def _tree_path(layout: Layout, link: str) -> list[str]:
    """Names of the tree joints from the root down to ``link``."""
    parent_joint = {joint.child: joint for joint in layout.robot.joints.values()}
    path: list[str] = []
    while link in parent_joint:
        joint = parent_joint[link]
        path.append(joint.name)
        link = joint.parent
    return path[::-1]


class LoopSolver:
    """Solves the passive joints of one robot's loops (module docstring).

    Built once per robot from its ``Layout`` and ``SingleFk``; ``solve`` (warm start from the
    values given) and ``solve_from_drawing`` (stateless: from the description's drawing).
    """

    def __init__(
        self,
        layout: Layout,
        single_fk: SingleFk,
        loop_joints: tuple[LoopJoint, ...],
        tolerance: LoopTolerance | None = None,
    ) -> None:
        self.layout = layout
        self.single_fk = single_fk
        self.loop_joints = loop_joints
        #: The loop joints as read (a held one's own type; ``holding``).
        self._sources = loop_joints
        self.tolerance = tolerance or LoopTolerance()
        link_index = {name: k for k, name in enumerate(layout.link_names)}
        links1 = [link_index[j.link1] for j in loop_joints]
        links2 = [link_index[j.link2] for j in loop_joints]
        count = len(loop_joints)
        #: (2K,) link1 of each loop joint, then link2; (2K, 4, 4) the joint frame in each.
        self._links = np.array(links1 + links2, dtype=np.intp)
        self._T_link_joint = np.array(
            [j.link1_to_joint for j in loop_joints] + [j.link2_to_joint for j in loop_joints]
        ).reshape(2 * count, 4, 4)
        axes = np.array([np.asarray(j.axis, dtype=np.float64) for j in loop_joints]).reshape(
            count, 3
        )
        self._axes = np.concatenate((axes, axes))[..., None]  # (2K, 3, 1)
        self._is_prismatic = np.array(
            [j.type is LoopJointType.PRISMATIC for j in loop_joints], dtype=np.float64
        )
        self._any_prismatic = bool(self._is_prismatic.any())
        orientation = np.array([float(j.type in _ORIENTATION_TYPES) for j in loop_joints])
        uses_axis = np.array([float(j.type in _AXIS_TYPES) for j in loop_joints])
        #: Per loop joint, 1 where its type has the orientation (axis) rows, else 0; None
        #: where no loop joint has them (the rows are left out).
        self._orientation_weight = orientation[:, None] if orientation.any() else None
        self._axis_weight = uses_axis[:, None] if uses_axis.any() else None
        self._uses_axis = uses_axis > 0
        self._has_angle = np.maximum(orientation, uses_axis)
        self._compile_cycles()
        self.plan = bounded_cache(self._make_plan)
        self._levels = follower_levels(layout.followers)
        #: The solver with the loop joints of a (K,) bool mask's bytes held (``holding``).
        self._holding = bounded_cache(self._make_holding)
        #: Loop joints held at a value (``holding``'s solvers), and their frames in link1
        #: before the motion (the file's).
        self._held = np.zeros(count, dtype=bool)
        self._link1_to_joint = self._T_link_joint[:count].copy()

    def holding(self, held: BoolArray) -> LoopSolver:
        """This solver where no loop joint is ``held`` (K,); else the solver (made once per
        mask) in which those loop joints are held at a value (``hold_values``): each one a
        fixed loop joint whose frame in link1 is moved by its motion at that value."""
        if not held.any():
            return self
        return self._holding(held.tobytes())

    def _make_holding(self, held: bytes) -> LoopSolver:
        mask = np.frombuffer(held, dtype=bool).copy()
        joints = tuple(
            replace(joint, type=LoopJointType.FIXED) if hold else joint
            for joint, hold in zip(self.loop_joints, mask.tolist(), strict=True)
        )
        solver = LoopSolver(self.layout, self.single_fk, joints, self.tolerance)
        solver._held = mask
        solver._sources = self.loop_joints
        return solver

    def hold_values(self, values: Array) -> None:
        """The held loop joints' values (K,) (rad or m; ``holding``): each one's frame in
        link1 is the file's moved by ``LoopJoint.motion`` at its value."""
        for k in np.flatnonzero(self._held).tolist():
            self._T_link_joint[k] = self._link1_to_joint[k] @ self._sources[k].motion(values[k])

    # -- structure -------------------------------------------------------------------------

    def _compile_cycles(self) -> None:
        """The moving tree joints on each loop's cycle: which side, their twists' sources, and
        the passive variable (root mimic leader's slot, multiplier) each moves with."""
        layout = self.layout
        sides: dict[int, dict[int, float]] = {}
        for k, joint in enumerate(self.loop_joints):
            path1 = _tree_path(layout, joint.link1)
            path2 = _tree_path(layout, joint.link2)
            common = 0
            while common < min(len(path1), len(path2)) and path1[common] == path2[common]:
                common += 1
            for name, sign in [(n, 1.0) for n in path1[common:]] + [
                (n, -1.0) for n in path2[common:]
            ]:
                index = layout.moving_index.get(name)
                if index is None:
                    continue  # a fixed joint
                if layout.moving_joints[index].joint_type in (
                    _REVOLUTE_TREE_TYPES + _PRISMATIC_TREE_TYPES
                ):
                    sides.setdefault(index, {})[k] = sign
        cycle = sorted(sides)
        self._cycle_joints = np.array(cycle, dtype=np.intp)
        link_index = {name: k for k, name in enumerate(layout.link_names)}
        joints = [layout.moving_joints[i] for i in cycle]
        self._cycle_child = np.array([link_index[j.child] for j in joints], dtype=np.intp)
        #: Per cycle joint, how many tree joints are above its child (0: the root's).
        self._depth = [len(_tree_path(layout, j.child)) for j in joints]
        self._cycle_inverse_offset = np.array(
            [np.linalg.inv(j.child_offset) for j in joints]
        ).reshape(len(joints), 4, 4)
        self._cycle_axis = np.array([j.axis for j in joints]).reshape(len(joints), 3, 1)
        self._cycle_revolute = np.array(
            [[j.joint_type in _REVOLUTE_TREE_TYPES] for j in joints], dtype=bool
        ).reshape(len(joints), 1)
        signs = np.zeros((len(self.loop_joints), len(cycle)))
        for c, index in enumerate(cycle):
            for k, value in sides[index].items():
                signs[k, c] = value
        #: (K, C) +1 where a cycle joint moves link1's side of loop joint k, -1 link2's.
        self._sign: Array = signs
        # Each cycle joint's root leader slot and the multiplier from that leader to it.
        follower_of = {f.joint: f for f in layout.followers}
        roots: list[int] = []
        multipliers: list[float] = []
        angles = np.zeros(layout.num_values, dtype=bool)
        for index in cycle:
            multiplier = 1.0
            while index in follower_of:
                multiplier *= follower_of[index].multiplier
                index = follower_of[index].leader
            roots.append(int(layout.slot[index]))
            multipliers.append(multiplier)
            angles[layout.slot[index]] = (
                layout.moving_joints[index].joint_type in _REVOLUTE_TREE_TYPES
            )
        #: (V,) True at the candidate slots that are angles (whole turns change no pose).
        self._angle_slots: BoolArray = angles
        self._cycle_root = np.array(roots, dtype=np.intp)
        self._cycle_multiplier = np.array(multipliers)
        #: Variable slots that can be passive (the root leaders of the cycles' joints).
        self.candidate_slots: IndexArray = np.array(sorted(set(roots)), dtype=np.intp)

    def passive_slots(self, given: BoolArray) -> IndexArray:
        """The passive variable slots when ``given`` (V,) marks the slots a source gives."""
        slots: IndexArray = self.candidate_slots[~given[self.candidate_slots]]
        return slots

    def _map(self, slots: IndexArray) -> Array:
        """(2K, P, C) maps from cycle-joint twists to each loop's link1 frames (rows 0..K-1)
        and link2 frames (K..2K-1)."""
        column = {int(s): p for p, s in enumerate(slots.tolist())}
        to_variable = np.zeros((len(self._cycle_root), len(slots)))
        for c, root in enumerate(self._cycle_root.tolist()):
            if root in column:
                to_variable[c, column[root]] = self._cycle_multiplier[c]
        side1 = (self._sign > 0)[:, :, None] * to_variable[None]  # (K, C, P)
        side2 = (self._sign < 0)[:, :, None] * to_variable[None]
        sides: Array = np.concatenate((side1, side2)).transpose(0, 2, 1).copy()
        return sides

    def _make_plan(self, passive: bytes) -> PassivePlan:
        """The ``PassivePlan`` of the passive slots ``passive`` (an IndexArray's bytes)."""
        slots = np.frombuffer(passive, dtype=np.intp).copy()
        lower, upper = self.layout.ranges[ClampMode.HARD]
        sides = self._map(slots)
        forms = self._closed_forms(slots)
        return PassivePlan(
            slots=slots,
            lower=lower[slots].copy(),
            upper=upper[slots].copy(),
            sides=sides,
            over_determined=self._over_determined(sides),
            joints=self._cycle_joints[np.isin(self._cycle_root, slots)],
            forms=forms,
            limited=bool(np.isfinite(lower[slots]).any() or np.isfinite(upper[slots]).any()),
            placing_links=np.concatenate(
                [form.placing_links for form in forms] or [np.empty(0, dtype=np.intp)]
            ),
            placing_columns=np.concatenate(
                [form.placing_columns for form in forms] or [np.empty((0, 4, 2))]
            ),
            program=FormProgram.of(self.layout, forms),
        )

    def _closed_forms(self, slots: IndexArray) -> tuple[ClosedForm, ...]:
        """A closed form for each loop (``loop_dyad``, ``loop_rod``) where each passive slot
        moves one cycle joint (no follower) of one loop only, and each loop's are a planar
        dyad, a slider-crank's rod and slider or a ball rod; else none (whether the axes are
        parallel or meet is checked per solve, and the limits on the result:
        ``close_in_closed_form``)."""
        by_loop: list[list[tuple[int, int]]] = [[] for _ in self.loop_joints]
        for slot in slots.tolist():
            moved = np.flatnonzero(self._cycle_root == slot)
            if moved.size != 1 or self._cycle_multiplier[moved[0]] != 1.0:
                return ()
            column = int(moved[0])
            loops = np.flatnonzero(self._sign[:, column])
            if loops.size != 1:
                return ()
            by_loop[int(loops[0])].append((slot, column))
        forms = []
        for k, passive in enumerate(by_loop):
            form = self._closed_form_of(k, passive)
            if form is None:
                return ()
            forms.append(form)
        return tuple(forms)

    def _closed_form_of(self, k: int, passive: list[tuple[int, int]]) -> ClosedForm | None:
        """The closed form of loop ``k`` whose passive (slot, cycle column) pairs are
        ``passive``: a planar dyad (revolute loop joint, one passive joint a side) or a ball
        rod (ball loop joint, two passive joints on one side, one on the other); else None."""
        count = len(self.loop_joints)
        link1_side = [pair for pair in passive if self._sign[k, pair[1]] > 0]
        link2_side = [pair for pair in passive if self._sign[k, pair[1]] < 0]
        sides = (
            (self._links[k], self._T_link_joint[k]),
            (self._links[count + k], self._T_link_joint[count + k]),
        )
        kind = self.loop_joints[k].type
        revolute = [bool(self._cycle_revolute[column, 0]) for _, column in passive]
        if kind in _AXIS_TYPES and len(link1_side) == 1 and len(link2_side) == 1:
            first, second = link1_side[0], link2_side[0]
            form = Dyad
            if not all(revolute):  # a slider-crank: the rod's side first
                if not any(revolute):
                    return None
                form = CrankSlider
                if not self._cycle_revolute[first[1], 0]:
                    first, second = second, first
                    sides = (sides[1], sides[0])
            return form(
                slots=(first[0], second[0]),
                children=(int(self._cycle_child[first[1]]), int(self._cycle_child[second[1]])),
                inverse_offsets=(
                    self._cycle_inverse_offset[first[1]],
                    self._cycle_inverse_offset[second[1]],
                ),
                joint_axes=(self._cycle_axis[first[1], :, 0], self._cycle_axis[second[1], :, 0]),
                links=(int(sides[0][0]), int(sides[1][0])),
                T_link_joint=(sides[0][1], sides[1][1]),
                axis=self._axes[k, :, 0],
            )
        if kind is not LoopJointType.BALL or len(passive) != 3 or not all(revolute):
            return None
        if len(link1_side) == 2 and len(link2_side) == 1:
            pair, single, rod, circle = link1_side, link2_side[0], sides[0], sides[1]
        elif len(link2_side) == 2 and len(link1_side) == 1:
            pair, single, rod, circle = link2_side, link1_side[0], sides[1], sides[0]
        else:
            return None
        outer, inner = sorted(pair, key=lambda entry: self._depth[entry[1]])
        if self._depth[outer[1]] == self._depth[inner[1]]:
            return None
        chosen = (outer, inner, single)
        return BallRod(
            slots=(outer[0], inner[0], single[0]),
            links=(
                *(int(self._cycle_child[entry[1]]) for entry in chosen),
                int(rod[0]),
                int(circle[0]),
            ),
            frames=(*(self._cycle_inverse_offset[entry[1]] for entry in chosen), rod[1], circle[1]),
            axes=tuple(self._cycle_axis[entry[1], :, 0] for entry in chosen),
        )

    def _over_determined(self, sides: Array) -> bool:
        """True when the passive joints' Jacobian has a lower rank than every cycle joint's,
        at the drawing moved a little (a generic configuration: not a singular one)."""
        values = self.layout.zero_values.copy()
        generator = np.random.default_rng(45)
        values[self.candidate_slots] += generator.uniform(-0.1, 0.1, self.candidate_slots.size)
        self._resolve(values)
        poses = self.single_fk.link_poses(values)
        frames = self._frames(poses)
        full = self._jacobian(poses, frames, self._map(self.candidate_slots))
        passive = self._jacobian(poses, frames, sides)
        return bool(_rank(passive) < _rank(full))

    # -- one solve -------------------------------------------------------------------------

    def _resolve(self, values: Array) -> None:
        """Set the mimic followers of ``values`` (V,) from their leaders, in place."""
        for level in self._levels:
            values[level.slots] = level.multipliers * values[level.leader_slots] + level.offsets

    def _frames(self, poses: Array) -> _Frames:
        """Each loop joint's frame on link1's side and on link2's, and its axis there."""
        frames = np.matmul(poses.take(self._links, 0), self._T_link_joint)
        axes = np.matmul(frames[:, :3, :3], self._axes)[..., 0]
        count = len(self.loop_joints)
        return _Frames(frames[:count], frames[count:], axes[:count], axes[count:])

    def _residual(self, poses: Array) -> tuple[Array, _Frames]:
        """(K, 3 B) residual rows of each loop joint (module docstring: the blocks its types
        need), unused rows zero; and the frames they came from."""
        frames = self._frames(poses)
        frame1, frame2, axis1 = frames.frame1, frames.frame2, frames.axis1
        offset = frame1[:, :3, 3] - frame2[:, :3, 3]
        if self._any_prismatic:
            along = np.sum(axis1 * offset, axis=1) * self._is_prismatic
            offset = offset - along[:, None] * axis1
        blocks = [offset]
        if self._orientation_weight is not None:
            relative = np.matmul(frame1[:, :3, :3], frame2[:, :3, :3].transpose(0, 2, 1))
            skew = relative - relative.transpose(0, 2, 1)
            orientation = 0.5 * skew.reshape(-1, 9)[:, [7, 2, 3]]
            blocks.append(orientation * self._orientation_weight)
        if self._axis_weight is not None:
            blocks.append(_cross(axis1, frames.axis2) * self._axis_weight)
        rows: Array = np.concatenate(blocks, axis=1) if len(blocks) > 1 else offset
        return rows, frames

    def _jacobian(self, poses: Array, frames: _Frames, sides: Array) -> Array:
        """(K 3 B, P) derivative of the residual rows by the passive values, from the cycle
        joints' twists (``sides``: (2K, P, C), link1's side then link2's)."""
        joint_frames = np.matmul(poses.take(self._cycle_child, 0), self._cycle_inverse_offset)
        axes = np.matmul(joint_frames[:, :3, :3], self._cycle_axis)[..., 0]  # (C, 3)
        revolute = self._cycle_revolute
        twists = np.empty((axes.shape[0], 6))
        twists[:, :3] = axes * revolute
        # Velocity of the point at the origin: -w x o (revolute), w (prismatic).
        twists[:, 3:] = np.where(revolute, _cross(joint_frames[:, :3, 3], axes), axes)
        moved = np.matmul(sides, twists)  # (2K, P, 6)
        count = len(self.loop_joints)
        angular1, angular2 = moved[:count, :, :3], moved[count:, :, :3]
        points = np.concatenate((frames.frame1[:, :3, 3], frames.frame2[:, :3, 3]))
        velocity = moved[:, :, 3:] + _cross(moved[:, :, :3], points[:, None])
        d_offset = velocity[:count] - velocity[count:]  # (K, P, 3)
        axis1 = frames.axis1[:, None]
        blocks = []
        if self._any_prismatic:
            offset = (frames.frame1[:, :3, 3] - frames.frame2[:, :3, 3])[:, None]
            d_axis1 = _cross(angular1, axis1)
            # d/dq of (I - a a^T) d = (I - a a^T) d' - (a' a^T + a a'^T) d.
            normal = (
                d_offset
                - np.sum(axis1 * d_offset, axis=-1, keepdims=True) * axis1
                - np.sum(axis1 * offset, axis=-1, keepdims=True) * d_axis1
                - np.sum(d_axis1 * offset, axis=-1, keepdims=True) * axis1
            )
            blocks.append(np.where(self._is_prismatic[:, None, None], normal, d_offset))
        else:
            blocks.append(d_offset)
        if self._orientation_weight is not None:
            blocks.append((angular1 - angular2) * self._orientation_weight[:, None])
        if self._axis_weight is not None:
            axis2 = frames.axis2[:, None]
            d_axes = _cross(_cross(angular1, axis1), axis2) + _cross(axis1, _cross(angular2, axis2))
            blocks.append(d_axes * self._axis_weight[:, None])
        rows = np.concatenate(blocks, axis=-1) if len(blocks) > 1 else blocks[0]  # (K, P, 3B)
        passive, width = rows.shape[1], rows.shape[2]
        jacobian: Array = rows.transpose(0, 2, 1).reshape(count * width, passive)
        return jacobian

    def errors(self, poses: Array) -> tuple[Array, Array]:
        """(K,) position (m) and angle (rad) errors of each loop joint at link ``poses``: the
        angle between the axes (revolute, continuous) or the frames (fixed, prismatic)."""
        return self._errors(*self._residual(poses))

    def _errors(self, rows: Array, frames: _Frames) -> tuple[Array, Array]:
        """``errors`` from the residual ``rows`` and the ``frames`` they came from."""
        with np.errstate(over="ignore"):  # inf m apart (a given value of 1e308)
            position = np.sqrt(np.sum(rows[:, :3] ** 2, axis=1))
        if not self._has_angle.any():
            return position, np.zeros_like(position)
        rotation1, rotation2 = frames.frame1[:, :3, :3], frames.frame2[:, :3, :3]
        # sin: the rows' norm; cos: the axes' dot product, or (trace(R1 R2^T) - 1) / 2.
        sines = np.sqrt(np.sum(rows[:, 3:] ** 2, axis=1))
        trace = np.sum(rotation1 * rotation2, axis=(1, 2))
        cosines = np.where(
            self._uses_axis, np.sum(frames.axis1 * frames.axis2, axis=1), 0.5 * (trace - 1.0)
        )
        angle: Array = np.arctan2(sines, cosines) * self._has_angle
        return position, angle

    def plan_for(self, given: BoolArray) -> PassivePlan:
        """The passive joints' plan (cached) when ``given`` (V,) marks the slots given."""
        return self.plan(self.passive_slots(given).tobytes())

    def solve(
        self,
        values: Array,
        given: BoolArray,
        max_iterations: int = MAX_ITERATIONS,
        plan: PassivePlan | None = None,
    ) -> LoopSolution:
        """The passive values that close the loops, starting from ``values`` (V,) (the warm
        start), the slots where ``given`` (V,) is True held, in at most ``max_iterations``
        (``plan``: ``plan_for(given)``, if the caller has it). ``values`` is not changed."""
        if plan is None:
            plan = self.plan_for(given)
        solved = values.copy()
        if plan.forms:
            errors = self.close_by_forms(solved, plan)
            if errors is not None:
                return self._closed_form(solved, plan, *errors)
        iterations, last = self._minimise(solved, plan, max_iterations=max_iterations)
        return self._solution(solved, plan, iterations, last)

    def solve_from_drawing(self, values: Array, given: BoolArray) -> LoopSolution:
        """As ``solve`` starting from the description's drawing (passive values at zero, or
        their mimic offsets): the given values walk there from the drawing in steps of at most
        ``CONTINUATION_STEP``, so the result is on the drawing's branch. Raises
        ``LoopNotClosedError`` where the loops cannot close (not over-determined ones, whose
        least-squares fit is returned)."""
        plan = self.plan(self.passive_slots(given).tobytes())
        drawing = self.layout.zero_values
        target = values.copy()
        moving = self.candidate_slots[given[self.candidate_slots]]
        change, walk = self._walk(target, moving)
        steps = int(walk)
        solved = target.copy()
        solved[plan.slots] = drawing[plan.slots]
        iterations = 0
        last = None
        for step in range(1, steps + 1):
            # The last step is the given values themselves (the same poses as the walk's end).
            solved[moving] = (
                target[moving] if step == steps else drawing[moving] + step / steps * change
            )
            self._resolve(solved)
            if plan.forms and self._closed_step(solved, plan):
                last = None
                continue
            # On the way, near is enough (the next step starts there); the last one is exact.
            goal = _ROUND_OFF_COST if step == steps else _ON_THE_WAY_COST
            done, last = self._minimise(solved, plan, goal)
            iterations += done
        solution = self._solution(solved, plan, iterations, last)
        if not solution.all_closed and not solution.over_determined:
            raise self.not_closed_error(solution)
        return solution

    def close_by_forms(self, values: Array, plan: PassivePlan) -> FormErrors | None:
        """``close_in_closed_form`` at ``values``: by the plan's compiled forms
        (``loop_program``) where a trace of theirs covers these values, else from one FK of
        the robot (the same forms, the same rules: limits, mimic followers)."""
        program = plan.program
        if program is not None:
            before = values.copy() if plan.limited else values
            outcome = program.run(values)
            if outcome is not MISS:
                return self._within_limits(values, before, plan, cast("FormErrors | None", outcome))
        return self.close_in_closed_form(values, plan, self.single_fk.link_poses(values))

    def _walk(self, target: Array, moving: IndexArray) -> tuple[Array, IndexArray]:
        """The walk of the stateless solve to the values ``target`` (..., V): the change of
        the given slots ``moving`` from the drawing (whole turns left out) and the
        continuation steps it takes (...), each at most ``CONTINUATION_STEP``, at most
        ``MAX_CONTINUATION_STEPS``."""
        change = _without_whole_turns(
            target[..., moving] - self.layout.zero_values[moving], self._angle_slots[moving]
        )
        distance = np.max(np.abs(change), axis=-1, initial=0.0)
        with np.errstate(over="ignore"):  # a prismatic joint's 1e308 m: infinite, then 64
            walk = np.ceil(np.minimum(distance / CONTINUATION_STEP, MAX_CONTINUATION_STEPS))
        steps: IndexArray = np.maximum(1, walk).astype(np.intp)
        return change, steps

    def solve_from_drawing_batch(self, rows: Array, given: BoolArray) -> None:
        """``solve_from_drawing`` for each of ``rows`` (N, V), in place, with the same walk
        (each row's own steps), each step's closed forms run for all its rows at once: the
        plan's compiled traces over arrays (``loop_batch.close_rows``). A row no trace covers
        at a step, where a form does not apply, that leaves a loop beyond the tolerance or a
        passive joint beyond its limits, and every row of a robot without compiled forms, is
        solved by ``solve_from_drawing`` from its own values (as ``link_fk``). Raises
        ``LoopNotClosedError`` for the first row whose loops cannot close, its ``row`` set."""
        plan = self.plan(self.passive_slots(given).tobytes())
        target = rows.copy()
        general = np.ones(rows.shape[0], dtype=bool)
        if plan.program is not None and rows.shape[0]:
            general = self._walk_in_closed_form(rows, given, plan, plan.program)
        for row in np.flatnonzero(general).tolist():
            try:
                rows[row] = self.solve_from_drawing(target[row], given).values
            except LoopNotClosedError as error:
                error.row = row
                raise
        return None

    def _walk_in_closed_form(
        self, rows: Array, given: BoolArray, plan: PassivePlan, program: FormProgram
    ) -> BoolArray:
        """``solve_from_drawing_batch``'s walk by the compiled forms, in place; (N,) True
        at the rows it could not solve (left for the general way)."""
        drawing = self.layout.zero_values
        target = rows.copy()
        moving = self.candidate_slots[given[self.candidate_slots]]
        change, steps = self._walk(target, moving)
        rows[:, plan.slots] = drawing[plan.slots]
        failed = np.zeros(rows.shape[0], dtype=bool)
        tolerance = self.tolerance
        for step in range(1, int(steps.max()) + 1):
            active = np.flatnonzero((steps >= step) & ~failed)
            if not active.size:
                break
            done = steps[active] == step
            walked = drawing[moving] + (step / steps[active])[:, None] * change[active]
            solved = rows[active]
            # The last step is the given values themselves (as ``solve_from_drawing``).
            solved[:, moving] = np.where(done[:, None], target[active][:, moving], walked)
            self._resolve_rows(solved)
            closed = close_rows(program, np.ascontiguousarray(solved.T))
            solved = closed.values.T
            # As ``_closed_step``: an error that is not a number is not closed.
            ok = closed.covered & (closed.position_m <= tolerance.position_m).all(axis=0)
            ok &= (closed.angle_rad <= tolerance.angle_rad).all(axis=0)
            if plan.limited:
                passive = solved[:, plan.slots]
                ok &= ~((passive < plan.lower) | (passive > plan.upper)).any(axis=1)
            self._resolve_rows(solved)
            rows[active] = solved
            failed[active[~ok]] = True
        return failed

    def _resolve_rows(self, rows: Array) -> None:
        """``_resolve`` for each of ``rows`` (N, V), in place."""
        for level in self._levels:
            rows[:, level.slots] = level.multipliers * rows[:, level.leader_slots] + level.offsets

    def close_in_closed_form(
        self, values: Array, plan: PassivePlan, poses: Array
    ) -> FormErrors | None:
        """Each loop's passive values of ``values`` (V,) moved in place by its closed form
        (``plan.forms``), from the link ``poses`` at ``values`` (one FK: a form moves no other
        loop's points), mimic followers after them; per loop the position (m) and angle (rad)
        errors left, or None, ``values`` untouched, where a form does not apply."""
        before = values.copy()
        positions_m: list[float] = []
        angles_rad: list[float] = []
        placing = np.matmul(poses.take(plan.placing_links, 0)[:, :3], plan.placing_columns)
        placed = placing.transpose(0, 2, 1).tolist()
        first = 0
        for form in plan.forms:
            last = first + len(form.placing_links)
            errors = form.solve_placed(values, placed[first:last])
            first = last
            if errors is None:
                values[:] = before
                return None
            positions_m.append(errors[0])
            angles_rad.append(errors[1])
        return self._within_limits(values, before, plan, (positions_m, angles_rad))

    def _within_limits(
        self, values: Array, before: Array, plan: PassivePlan, errors: FormErrors | None
    ) -> FormErrors | None:
        """``errors`` of the forms that moved ``values`` from ``before``, mimic followers set
        after them; None, ``values`` back at ``before``, where a passive value lies outside
        its limits (the solver's projected search then) or a form did not apply."""
        if errors is None:
            return None
        if plan.limited:
            solved = values[plan.slots]
            if ((solved < plan.lower) | (solved > plan.upper)).any():
                values[:] = before  # outside a limit: the solver's projected search
                return None
        self._resolve(values)
        return errors

    def _closed_step(self, values: Array, plan: PassivePlan) -> bool:
        """One continuation step of ``solve_from_drawing`` by the closed forms: True where
        they close every loop within the tolerance, else False, ``values`` untouched."""
        before = values.copy()
        errors = self.close_by_forms(values, plan)
        if errors is None:
            return False
        tolerance = self.tolerance
        closed = all(e <= tolerance.position_m for e in errors[0]) and all(
            e <= tolerance.angle_rad for e in errors[1]
        )
        if not closed:  # (an error that is not a number is not closed)
            values[:] = before
            return False
        return True

    def _closed_form(
        self,
        values: Array,
        plan: PassivePlan,
        position_m: Sequence[float],
        angle_rad: Sequence[float],
    ) -> LoopSolution:
        """The solution the closed forms gave (no iteration), with the errors they leave
        (per loop joint)."""
        tolerance = self.tolerance
        position, angle = np.array(position_m), np.array(angle_rad)
        closed = (position <= tolerance.position_m) & (angle <= tolerance.angle_rad)
        return LoopSolution(values, position, angle, closed, plan.over_determined, 0)

    def not_closed_error(self, solution: LoopSolution) -> LoopNotClosedError:
        """The typed error naming the loop joint of ``solution`` that stays apart the most."""
        tolerance = self.tolerance
        scaled = np.maximum(
            solution.position_error_m / tolerance.position_m,
            solution.angle_error_rad / tolerance.angle_rad,
        )
        worst = int(np.argmax(scaled))
        joint = self.loop_joints[worst]
        return LoopNotClosedError(
            joint.name,
            joint.where,
            float(solution.position_error_m[worst]),
            float(solution.angle_error_rad[worst]),
        )

    def _solution(
        self,
        values: Array,
        plan: PassivePlan,
        iterations: int,
        last: tuple[Array, _Frames] | None,
    ) -> LoopSolution:
        """The solution at ``values`` (``last``: the residual rows and frames there, None:
        computed here)."""
        if last is None:
            position, angle = self.errors(self.single_fk.link_poses(values))
        else:
            position, angle = self._errors(*last)
        closed = (position <= self.tolerance.position_m) & (angle <= self.tolerance.angle_rad)
        return LoopSolution(values, position, angle, closed, plan.over_determined, iterations)

    def _minimise(
        self,
        values: Array,
        plan: PassivePlan,
        goal: float = _ROUND_OFF_COST,
        max_iterations: int = MAX_ITERATIONS,
    ) -> tuple[int, tuple[Array, _Frames] | None]:
        """Levenberg-Marquardt on ``values``' passive slots, in place; the iterations run and
        the link poses at the result (None: no passive slot, not computed).

        Each step solves (J^T J + damping I) step = -J^T r, projected onto the limits (a value
        at a limit that it pushes beyond held, the others' step solved without it); it is
        kept if the squared residual falls (damping / 10), else the damping grows x10. A kept
        step that cut the residual a hundredfold keeps its Jacobian for the next step (near
        the solution J hardly changes; Newton's rate holds), else J is computed anew. Stops
        when the squared residual is below ``goal`` (round-off by default), when a step
        lowers it by less than ``_STALLED`` of it (a least-squares minimum), when no step makes
        it fall any more, or after ``max_iterations``.
        """
        slots = plan.slots
        if slots.size == 0:
            return 0, None
        fk = self.single_fk.link_poses
        poses = fk(values)
        rows, frames = self._residual(poses)
        residual = rows.reshape(-1)
        with np.errstate(over="ignore"):
            cost = float(residual @ residual)
        if not math.isfinite(cost):
            # Frames metres apart by 1e154 or more (a given value of 1e308): no step is
            # finite; the loop is reported open at the start.
            return 0, (rows, frames)
        damping = 1e-9
        identity = np.eye(slots.size)
        jacobian: Array | None = None
        normal = identity
        reused = False  # the Jacobian is one of an earlier point
        trial = values.copy()
        iterations = 0
        while iterations < max_iterations and cost > _CONVERGED_COST:
            iterations += 1
            if jacobian is None:
                jacobian = self._jacobian(poses, frames, plan.sides)
                normal = jacobian.T @ jacobian
                reused = False
            step = _bounded_step(
                normal + damping * identity,
                jacobian.T @ residual,
                values[slots],
                plan,
            )
            trial[:] = values
            trial[slots] = np.clip(values[slots] - step, plan.lower, plan.upper)
            self._resolve(trial)
            trial_poses = fk(trial)
            trial_rows, trial_frames = self._residual(trial_poses)
            trial_residual = trial_rows.reshape(-1)
            trial_cost = float(trial_residual @ trial_residual)
            if trial_cost < cost:
                moved = float(np.max(np.abs(trial[slots] - values[slots])))
                values[:] = trial
                poses, residual, frames = trial_poses, trial_residual, trial_frames
                improvement = cost - trial_cost
                if trial_cost > 1e-4 * cost:
                    jacobian = None
                reused = True
                cost = trial_cost
                damping = max(damping * 0.1, 1e-15)
                # No step left, or a least-squares fit that no longer moves (a loop that
                # cannot close, an over-determined one): its minimum is found.
                if moved < 1e-15 or improvement <= _STALLED * trial_cost:
                    break
                if trial_cost < goal:
                    break
            else:
                if cost < _ROUND_OFF_COST:
                    break
                damping = max(damping, 1e-9) * 10.0
                if reused:
                    jacobian = None
                if damping > 1e10:
                    break
        return iterations, (residual.reshape(rows.shape), frames)


def _bounded_step(damped: Array, gradient: Array, current: Array, plan: PassivePlan) -> Array:
    """The step (P,) (rad or m, subtracted from the passive values ``current``) of the damped
    normal equations ``damped`` step = ``gradient``, with every passive value at a limit of
    ``plan`` that the step would push beyond held there and the others' step solved without
    it: the step of the problem at the limit (a free step clipped there moves the others as if
    the held one moved, and the search crawls along the limit)."""
    step: Array = np.linalg.solve(damped, gradient).astype(np.float64, copy=False)
    if not plan.limited:
        return step
    pinned = ((current <= plan.lower) & (step > 0.0)) | ((current >= plan.upper) & (step < 0.0))
    if pinned.any():
        free = ~pinned
        step = np.zeros(step.shape)
        step[free] = np.linalg.solve(damped[np.ix_(free, free)], gradient[free])
    return step


def _without_whole_turns(change: Array, angles: BoolArray) -> Array:
    """``change`` (rad or m) with the whole turns of an angle (where ``angles``) beyond one
    left out, the direction kept: a crank's 1000 rad walks 0.97 rad, its 6 rad walks 6 rad.
    Computed from the sine and cosine (so the poses at the end are those of ``change``)."""
    wrapped = np.arctan2(np.sin(change), np.cos(change))
    wrapped += np.where((wrapped < 0.0) != (change < 0.0), np.copysign(2.0 * math.pi, change), 0.0)
    result: Array = np.where(angles & (np.abs(change) > 2.0 * math.pi), wrapped, change)
    return result


def _rank(matrix: Array) -> int:
    """Numerical rank of ``matrix``: singular values above 1e-9 of the largest."""
    if matrix.size == 0:
        return 0
    singular = np.linalg.svd(matrix, compute_uv=False)
    return int(np.sum(singular > 1e-9 * max(float(singular[0]), 1e-300)))
