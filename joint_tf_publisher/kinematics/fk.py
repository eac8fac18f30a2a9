"""Forward kinematics of one or a few configurations: every link's pose in the root frame.

Each moving joint's child frame in its parent's anchor frame (``Layout``) is linear in the
joint's pose features f(v) (``model.motion_forms``):

    T_frame_child(v) = T_frame_parent @ origin @ motion(v) @ child_offset = f(v) @ basis

with a constant basis (F, 16) per joint, so one stacked product per motion form gives every
frame's pose in its parent frame. Those are composed by pruned pointer jumping: while step k
runs, every frame row holds its pose in its 2**k-th ancestor (the root if nearer), so
ceil(log2(depth)) products compose them all; one more places the links hanging from frames
through fixed joints. About 15 numpy calls whatever the model size (at ~1 us per numpy call,
Python overhead matters more than flops here).

Frames and units: poses T_root_link (4, 4), metres; values as ``Layout`` lays them out.
"""

from __future__ import annotations

import numpy as np

from ..arrays import Array, IndexArray
from ..model.motion_forms import Variables
from .layout import Layout

_IDENTITY = np.eye(4)


def pose_bases(layout: Layout) -> list[Array]:
    """Per form group, (J, F, 16): T_frame_child = pose_features @ basis for each joint."""
    bases = []
    for group in layout.groups:
        rows = []
        for i in group.joints.tolist():
            joint = layout.moving_joints[i]
            terms = layout.joint_types[i].motion_terms(joint)  # (F, 4, 4)
            rows.append((layout.front_pose(i) @ terms @ joint.child_offset).reshape(-1, 16))
        bases.append(np.array(rows).reshape(len(rows), group.form.pose_feature_count, 16))
    return bases


class _GroupProduct:
    """How single FK computes the frame rows of one form group (module docstring)."""

    def __init__(self, layout: Layout, group: int, basis: Array, with_root: bool) -> None:
        form_group = layout.groups[group]
        self.form = form_group.form
        self.fill = form_group.form.fill_pose_features
        self.slots = form_group.slots
        count = len(form_group.joints)
        # Single FK: the root's row (feature 0 is 1, the others 0, the basis the identity in
        # feature 0's row) rides along in the first group, so no separate call writes it.
        self.start = 1 if with_root else 0
        self.template = np.zeros((count + self.start, self.form.pose_feature_count))
        self.template[:, 0] = 1.0
        root_basis = np.zeros((1, self.form.pose_feature_count, 16))
        root_basis[0, 0] = _IDENTITY.reshape(16)
        self.basis = np.concatenate([root_basis, basis]) if with_root else basis
        rows = form_group.joints + 1  # work row of each joint's child frame
        self.rows = np.concatenate([[0], rows]).astype(np.intp) if with_root else rows
        # Rows 0..M in one block: write the product straight into the work array.
        self.contiguous = bool(np.array_equal(self.rows, np.arange(self.rows.size) + self.rows[0]))
        self.row_slice = slice(int(self.rows[0]), int(self.rows[0]) + self.rows.size)
        # Values to gather, variable by variable: (J,) for a one-value form, else (size, J).
        self.one_value = self.slots.shape[1] == 1
        self.gather = self.slots[:, 0].copy() if self.one_value else self.slots.T.copy()
        # Slots 0..V-1 of one value each: the vector itself, no gather.
        self.slots_are_values = self.one_value and np.array_equal(
            self.gather, np.arange(layout.num_values)
        )


class SingleFk:
    """Link poses of one configuration (``link_poses``) or a few (``link_poses_few``)."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.bases = pose_bases(layout)
        self._products = [
            _GroupProduct(layout, g, basis, with_root=g == 0) for g, basis in enumerate(self.bases)
        ]
        self._compile_jumps()

    def _compile_jumps(self) -> None:
        """The work-row layout: rows 0..M the root and frames, M+1..2M+1 a second copy of them
        for the pointer-jumping steps (each step writes into the other copy, so numpy never
        copies an operand that overlaps the output), then the F links hanging from a frame
        through fixed joints only."""
        layout = self.layout
        rows = len(layout.moving_joints) + 1
        depth = layout.frame_depth
        ancestor = np.concatenate([[0], layout.parent_frame]).astype(np.intp)
        location = np.arange(rows, dtype=np.intp)  # where each frame's latest pose is
        #: Per step: work rows of the ancestors to gather, rows read, rows written.
        self._jumps: list[tuple[IndexArray, slice, slice]] = []
        span = 1
        while True:
            start = int(np.searchsorted(depth, span, side="right"))  # first row deeper than span
            if start >= rows:
                break
            # Every row of the suffix was updated at each earlier step: all in one copy.
            source = int(location[start]) - start
            target = rows - source
            self._jumps.append(
                (
                    location[ancestor[start:]].copy(),
                    slice(source + start, source + rows),
                    slice(target + start, target + rows),
                )
            )
            location[start:] += target - source
            ancestor = ancestor[ancestor]
            span *= 2
        fixed = layout.fixed_links
        self._fixed_anchor_rows = location[layout.link_frame[fixed]].astype(np.intp)
        self._T_anchor_fixed = layout.T_frame_link[fixed].reshape(-1, 4, 4)
        # Work row of each link in file order (for one take() into the result).
        row_of_link = np.empty(len(layout.link_names), dtype=np.intp)
        row_of_link[layout.frame_link] = location
        row_of_link[fixed] = np.arange(len(fixed)) + 2 * rows
        self._row_of_link = row_of_link
        self._work_rows = 2 * rows + len(fixed)
        self._fixed_rows = slice(2 * rows, self._work_rows)

    def link_poses(self, values: Array) -> Array:
        """(L, 4, 4) link poses in the root frame, file order, for one variable vector (V,).

        The result is a fresh array (one take() from the work rows).
        """
        work = np.empty((self._work_rows, 4, 4))
        if not self._products:
            work[0] = _IDENTITY
        for product in self._products:
            if product.slots_are_values:
                variables: Variables = (values,)
            elif product.one_value:
                variables = (values[product.gather],)
            else:
                variables = values[product.gather]
            factors = product.template.copy()
            product.fill(variables, factors[product.start :])
            if product.contiguous:
                target = work[product.row_slice].reshape(-1, 1, 16)
                np.matmul(factors[:, None, :], product.basis, target)
            else:
                local = np.matmul(factors[:, None, :], product.basis)
                work[product.rows] = local.reshape(-1, 4, 4)
        matmul = np.matmul
        for ancestors, source, target_rows in self._jumps:
            matmul(work.take(ancestors, 0), work[source], work[target_rows])
        if self._T_anchor_fixed.size:
            matmul(
                work.take(self._fixed_anchor_rows, 0), self._T_anchor_fixed, work[self._fixed_rows]
            )
        poses: Array = work.take(self._row_of_link, 0)
        return poses

    def link_poses_few(self, values: Array) -> Array:
        """(L, N, 4, 4) link poses for a few variable rows (N, V), as ``link_poses``."""
        count = values.shape[0]
        work = np.empty((self._work_rows, count, 4, 4))
        work[0] = _IDENTITY
        for group, basis in zip(self.layout.groups, self.bases, strict=True):
            joints = len(group.joints)
            # (size, J N): each variable of every joint and configuration, joint by joint.
            variables = values[:, group.slots].transpose(2, 1, 0).reshape(-1, joints * count)
            features = group.form.pose_features(variables, joints * count)
            factors = features.reshape(joints, count, 1, -1)
            local = np.matmul(factors, basis[:, None])  # (J, N, 1, 16)
            work[group.joints + 1] = local.reshape(joints, count, 4, 4)
        for ancestors, source, target_rows in self._jumps:
            np.matmul(work.take(ancestors, 0), work[source], work[target_rows])
        if self._T_anchor_fixed.size:
            np.matmul(
                work.take(self._fixed_anchor_rows, 0),
                self._T_anchor_fixed[:, None],
                work[self._fixed_rows],
            )
        poses: Array = work.take(self._row_of_link, axis=0)
        return poses
