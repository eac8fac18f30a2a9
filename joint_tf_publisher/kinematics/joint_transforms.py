"""Per-joint transforms, what the node publishes: T_parent_child of each joint as a
translation (metres) and a unit quaternion (x, y, z, w; its sign as the closed form gives it:
q and -q are the same rotation).

For a moving joint, T_parent_child(v) = origin @ motion(v) @ child_offset. With the motion
written as terms weighted by features (``model.motion_forms``), both parts are linear in the
joint's transform features t(v):

    translation = sum_k t_k (origin @ M_k @ child_offset)[:3, 3]   (k over the pose features)
    quaternion  = q_origin * (sum_k t_k Q_k) * q_offset = sum_k t_k L(q_origin) R(q_offset) Q_k

so each joint gets a constant basis (T, 7) and the transforms of many joints of one form are
one stacked product [t] @ basis. Fixed joints' transforms are constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays import Array, ComplexArray, IndexArray
from ..bounded_cache import bounded_cache
from ..model.motion_forms import MotionForm, Variables
from ..transforms import matrices_to_quaternions, matrix_to_quaternion, quaternion_product_matrices
from .layout import Layout


def transform_basis(layout: Layout, index: int) -> Array:
    """(T, 7) basis of moving joint ``index``: [translation (3), quaternion (4)] = t @ basis."""
    joint = layout.moving_joints[index]
    kind = layout.joint_types[index]
    form = kind.form
    basis = np.zeros((form.transform_feature_count, 7))
    motion_terms = kind.motion_terms(joint)
    poses = joint.origin @ motion_terms @ joint.child_offset  # (F, 4, 4)
    np.add.at(basis[:, :3], list(form.pose_in_transform), poses[:, :3, 3])
    left, _ = quaternion_product_matrices(matrix_to_quaternion(joint.origin[:3, :3]))
    _, right = quaternion_product_matrices(matrix_to_quaternion(joint.child_offset[:3, :3]))
    basis[:, 3:] = kind.quaternion_terms(joint) @ (left @ right).T
    return basis


@dataclass(frozen=True)
class _GroupRows:
    """The rows of one transforms call that belong to one form group.

    The result rows are ``constant + sum_k features[k] * terms[k]``, each (n, 7): the basis
    rows of the constant feature (pose feature 0, always 1), and those of each other
    feature whose basis is not zero for these joints (``used``). A pair of them that are
    cos and sin of one angle a (the form's ``trigonometric_pairs``) is one complex term
    instead: cos a T_cos + sin a T_sin = Re(exp(i a) (T_cos - i T_sin)), two numpy calls
    fewer. A revolute joint of a URDF (no child offset) needs one such pair: cos and sin of
    half its angle.
    """

    form: MotionForm
    #: Rows of the result: a slice where they are contiguous (computed straight into the
    #: result), else an index array.
    rows: slice | IndexArray
    #: Values to read: (n,) for a one-value form, else (size, n); a slice where contiguous.
    slots: slice | IndexArray
    constant: Array  # (n, 7)
    used: tuple[int, ...]  # features with a non-zero basis, the constant and pairs left out
    terms: tuple[Array, ...]  # (n, 7) each, for ``used``
    #: Per trigonometric pair used: (scale, complex terms (n, 7)).
    rotations: tuple[tuple[float, ComplexArray], ...]


def _group_rows(
    form: MotionForm, rows: slice | IndexArray, slots: IndexArray, bases: Array
) -> _GroupRows:
    """``_GroupRows`` of joints with ``bases`` (n, T, 7), reading their values at ``slots``."""
    constant_feature = form.pose_in_transform[0]
    used = [
        k
        for k in range(form.transform_feature_count)
        if k != constant_feature and bool(np.any(bases[:, k, :]))
    ]
    rotations = []
    for cos_index, sin_index, scale in form.trigonometric_pairs:
        if cos_index in used and sin_index in used:
            used.remove(cos_index)
            used.remove(sin_index)
            rotations.append((scale, bases[:, cos_index, :] - 1j * bases[:, sin_index, :]))
    return _GroupRows(
        form=form,
        rows=rows,
        slots=_as_slice(slots) if slots.ndim == 1 else slots,
        constant=bases[:, constant_feature, :].copy(),
        used=tuple(used),
        terms=tuple(bases[:, k, :].copy() for k in used),
        rotations=tuple(rotations),
    )


def _as_slice(index: IndexArray) -> slice | IndexArray:
    """``index`` (1-D) as a slice where it counts up by one (a cheaper read and write), else
    as it is."""
    if index.size and bool(np.array_equal(index, np.arange(index[0], index[0] + index.size))):
        return slice(int(index[0]), int(index[0]) + index.size)
    return index


class JointTransforms:
    """Closed-form parent->child transforms of a layout's joints."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        #: Per form group: (J, T, 7) bases of its joints.
        self.bases = [
            np.array([transform_basis(layout, int(i)) for i in group.joints]).reshape(
                len(group.joints), group.form.transform_feature_count, 7
            )
            for group in layout.groups
        ]
        self._plan_of_key = bounded_cache(self._make_plan)
        poses = np.array([joint.child_pose() for joint in layout.fixed_joints]).reshape(-1, 4, 4)
        self._fixed_translations = poses[:, :3, 3].copy()
        self._fixed_quaternions = matrices_to_quaternions(poses[:, :3, :3])

    def plan(self, indices: Any) -> PosePlan:
        """How the poses of ``moving_joints[i]`` for each i in ``indices`` are computed: per
        group present, its rows, slots and terms (cached per index set)."""
        return self._plan_of_key(np.asarray(indices, dtype=np.intp).reshape(-1).tobytes())

    def _make_plan(self, key: bytes) -> PosePlan:
        """The ``PosePlan`` of the index set whose bytes (intp) are ``key``."""
        index = np.frombuffer(key, dtype=np.intp)
        layout = self.layout
        groups = layout.group_of[index]
        parts = []
        for g, group in enumerate(layout.groups):
            rows = np.flatnonzero(groups == g)
            if not rows.size:
                continue
            members = layout.row_in_group[index[rows]]
            slots = group.slots[members]
            parts.append(
                _group_rows(
                    group.form,
                    _as_slice(rows),
                    slots[:, 0].copy() if slots.shape[1] == 1 else slots.T.copy(),
                    self.bases[g][members],
                )
            )
        return PosePlan(index.size, tuple(parts))

    def transforms(self, values: Array, indices: Any) -> tuple[Array, Array]:
        """Translations (n, 3) in metres and unit quaternions (n, 4) x y z w of
        ``moving_joints[i]`` for each i in ``indices``, at the variable vector ``values``.

        Stored quaternions are unit (``apply`` normalises them); the features normalise them
        again, as ``Joint.child_pose`` does, so that a vector written by hand gives its pose.
        """
        poses = self.poses(values, indices)
        return poses[:, :3], poses[:, 3:]

    def poses(self, values: Array, indices: Any) -> Array:
        """``transforms`` as one array (n, 7): translation x y z (metres), then quaternion
        x y z w per row, the order of a ``geometry_msgs/Transform`` on the wire."""
        return poses_of(self.plan(indices), values)

    def fixed(self) -> tuple[Array, Array]:
        """Translation (F, 3) in metres and quaternion (F, 4) x y z w of each fixed joint."""
        return self._fixed_translations.copy(), self._fixed_quaternions.copy()


@dataclass(frozen=True)
class PosePlan:
    """The poses of one index set: ``count`` rows, computed by ``parts`` (one per group)."""

    count: int
    parts: tuple[_GroupRows, ...]


def poses_of(plan: PosePlan, values: Array) -> Array:
    """The poses (n, 7) of ``plan``'s joints at the variable vector ``values``: translation
    x y z (metres), quaternion x y z w."""
    result = np.empty((plan.count, 7))
    for part in plan.parts:
        if isinstance(part.rows, slice):
            _rows(part, values, result[part.rows])
        else:
            result[part.rows] = _rows(part, values, np.empty((part.constant.shape[0], 7)))
    return result


def _rows(part: _GroupRows, values: Array, out: Array) -> Array:
    """``out`` (n, 7) filled with [translation, quaternion] of the joints of ``part`` at the
    variable vector ``values``."""
    gathered = values[part.slots]
    first = gathered if gathered.ndim == 1 else gathered[0]
    if part.rotations:
        scale, rotation = part.rotations[0]
        turned = np.exp(first * (1j * scale))[:, None] * rotation
        np.add(turned.real, part.constant, out=out)
        for scale, rotation in part.rotations[1:]:
            out += (np.exp(first * (1j * scale))[:, None] * rotation).real
    else:
        np.copyto(out, part.constant)
    if part.used:
        variables: Variables = (gathered,) if gathered.ndim == 1 else gathered
        features = part.form.transform_features_at(variables, first.shape[0], part.used)
        for feature, term in zip(features, part.terms, strict=True):
            out += feature[:, None] * term
    return out
