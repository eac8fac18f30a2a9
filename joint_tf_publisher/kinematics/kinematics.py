"""``Kinematics``: one robot compiled once, the one object callers hold.

A thin facade over the package's parts, each compiled from the same ``Layout``:

- ``StateResolver`` (``state``): JointState input into a ``JointPositions`` vector;
- ``JointTransforms`` (``joint_transforms``): per-joint parent->child transforms to publish;
- ``MessagePlan`` (``message_plan``): per message shape, a JointState's values to the poses
  to publish, in one call;
- ``CfgReader`` (``cfg``): urdfpy-style cfg mappings into variable rows;
- ``SingleFk`` (``fk``) and ``BatchFk`` (``fk_batch``): link poses in the root frame.

Frames: every pose is T_a_b (frame b in frame a); FK poses are in the root link frame, in
metres. Quaternions are (x, y, z, w).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from ..arrays import Array, BoolArray, IndexArray
from ..bounded_cache import bounded_cache
from ..errors import LoopNotClosedError
from ..model.clamp_mode import ClampLike, ClampMode
from ..model.elements import Joint, RobotModel
from .cfg import CfgReader
from .fk import SingleFk
from .fk_batch import BatchFk
from .joint_state_names import MultiDofPlan
from .joint_transforms import JointTransforms
from .layout import compile_layout
from .loop_solver import LoopSolver
from .message_plan import MessagePlan, message_plan
from .state import JointPositions, StateResolver, Update

#: Up to this many configurations, batched FK composes all links at once by pointer jumping
#: (``SingleFk.link_poses_few``); beyond, joint by joint (``BatchFk``: less memory traffic).
FEW_CONFIGURATIONS = 16
#: ``link_fk_batch`` on a robot with loops solves its rows this many at a time: the walk's
#: work arrays (each step's link poses of every row it moves) stay bounded whatever N is
#: (#45 review: all rows at once held about four times the result, 15 GB for a million
#: configurations of the legged bench robot).
LOOP_BATCH_ROWS = 4096


class Kinematics:
    """A robot's tree compiled into numpy arrays (see the module docstring).

    Public: ``robot``, ``layout``, ``moving_joints``, ``fixed_joints``, ``variable_names``,
    ``link_names``; ``new_positions``, ``apply``, ``apply_multi_dof``, ``message_plans``,
    ``multi_dof_plan``, ``variable_values``, ``joint_poses``,
    ``fixed_transforms``, ``link_fk``, ``link_fk_batch``. Raises ModelError for an invalid model
    (``model.validate``).
    """

    def __init__(self, robot: RobotModel) -> None:
        self.robot = robot
        self.layout = compile_layout(robot)
        self.state = StateResolver(self.layout)
        self.transforms = JointTransforms(self.layout)
        self.cfg = CfgReader(self.layout)
        self.single_fk = SingleFk(self.layout)
        #: The solver of the robot's closed loops (None for a tree): ``loop_solver``.
        self.loops = (
            LoopSolver(self.layout, self.single_fk, robot.loop_joints)
            if robot.loop_joints
            else None
        )

    @cached_property
    def batch_fk(self) -> BatchFk:
        """FK of many configurations, built on first use: a node never batches, and one
        robot's ``BatchFk`` is some 50 kB (a humanoid's), which a fleet of robots multiplies."""
        return BatchFk(self.layout)

    @property
    def moving_joints(self) -> list[Joint]:
        """Non-fixed joints, parents before children (by depth): ``JointPositions`` order."""
        return self.layout.moving_joints

    @property
    def fixed_joints(self) -> list[Joint]:
        """Fixed joints in tree order: ``fixed_transforms`` order."""
        return self.layout.fixed_joints

    @property
    def variable_names(self) -> list[str]:
        """JointState names of the values a user sets (mimic followers left out)."""
        return self.layout.variable_names

    @property
    def link_names(self) -> list[str]:
        """Links in file order: the order of FK results."""
        return self.layout.link_names

    # -- joint state ---------------------------------------------------------------------------

    def new_positions(self) -> JointPositions:
        """A fresh state: every joint at zero (identity quaternions), nothing received."""
        return self.state.new_positions()

    def apply(
        self,
        positions: JointPositions,
        names: Sequence[str],
        values: Sequence[float] | Array,
        clamp: ClampLike = ClampMode.HARD,
        keep_plan: bool = True,
    ) -> Update:
        """Set values by JointState name; clamp; resolve mimic (``state``). ``clamp`` as
        ``ClampMode.of`` takes it (None: no clamping; ValueError for an unknown mode).
        ``keep_plan``: False for a one-off shape of names (a check), whose plan is not
        cached."""
        return self.state.apply(positions, names, values, ClampMode.of(clamp), keep_plan)

    def apply_multi_dof(
        self,
        positions: JointPositions,
        joint_names: Sequence[str],
        translations: Any,
        quaternions: Any,
        clamp: ClampLike = ClampMode.HARD,
    ) -> Update:
        """Set multi-DOF joints from MultiDOFJointState transforms (``state``)."""
        return self.state.apply_multi_dof(
            positions, joint_names, translations, quaternions, ClampMode.of(clamp)
        )

    def message_plans(
        self, clamp: ClampLike, publish_mask: BoolArray
    ) -> Callable[[tuple[str, ...]], MessagePlan]:
        """The ``MessagePlan`` of JointStates by their tuple of names, under ``clamp``,
        publishing the moving joints where ``publish_mask`` (M,) is True: a ``bounded_cache``
        of ``message_plan.message_plan``, so each shape is compiled once."""
        mode = ClampMode.of(clamp)
        mask = np.array(publish_mask, dtype=bool).reshape(len(self.layout.moving_joints))
        mask.flags.writeable = False

        def build(names: tuple[str, ...]) -> MessagePlan:
            return message_plan(self.state, self.transforms, names, mode, mask)

        return bounded_cache(build)

    def moved_joints(self, names: tuple[str, ...]) -> IndexArray:
        """The moving joints (indices into ``moving_joints``) a JointState with ``names``
        moves, by the name plan (``joint_state_names``: variable names, the bare names of
        multi-value joints, nested joints by their bare name) and their mimic followers: the
        joints the node's health counts as received from such a message. Not cached: for
        the offline doors (doctor --bag), which ask once."""
        return self.state.plans.once(names).moves

    def multi_dof_plan(self, joint_names: tuple[str, ...]) -> MultiDofPlan:
        """How MultiDOFJointStates with ``joint_names`` become JointState values
        (``joint_state_names.MultiDofPlan``: their variable names, the names of no joint that
        takes a transform, and ``values``), cached per tuple."""
        return self.state.plans.multi_dof(joint_names)

    def variable_values(self, positions: JointPositions) -> dict[str, float]:
        """Every moving joint's values by JointState name, followers included."""
        return self.state.variable_values(positions)

    # -- transforms for publishing -------------------------------------------------------------

    def joint_poses(self, positions: JointPositions, indices: Any) -> Array:
        """Parent->child poses (n, 7) of ``moving_joints[i]`` for each i in ``indices`` at the
        stored values (``Joint.child_pose``): rows [x, y, z, qx, qy, qz, qw] (metres; unit
        quaternion), the order of a ``geometry_msgs/Transform``."""
        return self.transforms.poses(positions.values, indices)

    def fixed_transforms(self) -> tuple[Array, Array]:
        """Translation (F, 3) in metres and quaternion (F, 4) x y z w of each fixed joint."""
        return self.transforms.fixed()

    # -- forward kinematics --------------------------------------------------------------------

    def link_fk(
        self, cfg: Mapping[Any, Any] | None = None, clamp: ClampLike = None
    ) -> dict[str, Array]:
        """Every link's pose (4, 4) in the root link frame, in file order.

        ``cfg`` maps joint names (or Joint objects, or MoveIt variable names) to values of the
        shapes ``Joint.motion`` takes; absent joints sit at zero; a value for a mimic follower
        is ignored (``cfg``). ``clamp`` is None, "hard" or "soft". Raises ValueError for
        unknown names and non-finite values. With closed loops, the loop joints not given in
        ``cfg`` are solved from the description's drawing (``loop_solver``), a loop joint's
        own value given in ``cfg`` held as the node holds it (``CfgReader.loop_values``,
        ``LoopSolver.holding``); raises ``LoopNotClosedError`` where they cannot close.
        """
        mode = ClampMode.of(clamp)
        values = self.cfg.single(cfg, mode)
        if self.loops is not None:
            given = self.cfg.given_slots(cfg or ())
            held = self.cfg.loop_values(cfg or {}, mode)
            solver = self.loops
            if held is not None:
                solver = solver.holding(held[0])
                solver.hold_values(held[1])
            values = solver.solve_from_drawing(values, given).values
        poses = self.single_fk.link_poses(values)
        # One row per link by construction; strict=True would cost ~2 us of a ~45 us call.
        return dict(zip(self.layout.link_names, poses, strict=False))

    def link_fk_batch(self, cfgs: Mapping[Any, Any], clamp: ClampLike = None) -> dict[str, Array]:
        """Every link's poses (N, 4, 4) in the root frame for N configurations.

        ``cfgs`` maps joint names to arrays with a leading batch axis N (N values for one-value
        joints, (N, ...) of ``Joint.motion``'s shapes for the others). With closed loops, as
        ``link_fk`` row by row, ``LOOP_BATCH_ROWS`` rows solved at once
        (``LoopSolver.solve_from_drawing_batch``: bounded work arrays for any N);
        ``LoopNotClosedError`` names the first row that cannot close (``row``).
        """
        mode = ClampMode.of(clamp)
        values = self.cfg.batch(cfgs, mode)
        if self.loops is not None:
            given = self.cfg.given_slots(cfgs)
            held = self.cfg.loop_values(cfgs, mode, values.shape[0])
            if held is not None:
                self._solve_holding(values, given, *held)
                return dict(zip(self.layout.link_names, self._batch_poses(values), strict=True))
            for first in range(0, values.shape[0], LOOP_BATCH_ROWS):
                rows = values[first : first + LOOP_BATCH_ROWS]  # a view: solved in place
                try:
                    self.loops.solve_from_drawing_batch(rows, given)
                except LoopNotClosedError as error:
                    error.row = first + (error.row or 0)
                    raise
        return dict(zip(self.layout.link_names, self._batch_poses(values), strict=True))

    def _solve_holding(self, rows: Array, given: BoolArray, held: BoolArray, loop: Array) -> None:
        """``link_fk_batch``'s rows (N, V) solved in place, one at a time as ``link_fk``, with
        the loop joints ``held`` (K,) at their values ``loop`` (N, K) (no closed form serves a
        held loop joint: ``LoopSolver.holding``); ``LoopNotClosedError`` names the row."""
        assert self.loops is not None
        solver = self.loops.holding(held)
        for row in range(rows.shape[0]):
            solver.hold_values(loop[row])
            try:
                rows[row] = solver.solve_from_drawing(rows[row], given).values
            except LoopNotClosedError as error:
                error.row = row
                raise

    def _batch_poses(self, values: Array) -> Array:
        """(L, N, 4, 4) link poses of variable rows (N, V), by the way that suits N."""
        if values.shape[0] == 0:  # no configuration: no pose (numpy cannot reshape (0,) to -1)
            poses: Array = np.empty((len(self.layout.link_names), 0, 4, 4))
        elif values.shape[0] == 1:
            poses = self.single_fk.link_poses(values[0])[:, None]
        elif values.shape[0] <= FEW_CONFIGURATIONS:
            poses = self.single_fk.link_poses_few(values)
        else:
            poses = self.batch_fk.link_poses(values)
        return poses
