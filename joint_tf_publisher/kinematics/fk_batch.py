"""Forward kinematics of many configurations: joint by joint on (N, 4, 4) stacks.

Beyond a few configurations, composing joint by joint moves less memory than pointer jumping:
each moving joint's child pose is its parent's pose times its local pose f(v) @ basis (the
bases of ``fk``), written straight into the result. Configurations go in chunks of
``BATCH_CHUNK``, so that a chunk's features and (n, 4, 4) stacks stay in cache while every
link of the chunk is computed.

Frames and units: poses T_root_link, metres; values as ``Layout`` lays them out.
"""

from __future__ import annotations

import numpy as np

from ..arrays import Array
from .fk import pose_bases
from .layout import Layout

#: Configurations computed at a time (cache-sized working arrays).
BATCH_CHUNK = 2048
_IDENTITY = np.eye(4)


class BatchFk:
    """Link poses of N configurations (``link_poses``)."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.bases = pose_bases(layout)
        #: Per moving joint, parents first: (group, row in group, parent frame, child link,
        #: parent frame's link).
        self._steps = [
            (
                int(layout.group_of[i]),
                int(layout.row_in_group[i]),
                int(layout.parent_frame[i]),
                int(layout.frame_link[i + 1]),
                int(layout.frame_link[layout.parent_frame[i]]),
            )
            for i in range(len(layout.moving_joints))
        ]
        #: Per link hanging through fixed joints: (link, its frame's link or -1 for the root).
        self._fixed = [
            (k, int(layout.frame_link[layout.link_frame[k]]) if layout.link_frame[k] else -1)
            for k in layout.fixed_links
        ]

    def link_poses(self, values: Array) -> Array:
        """(L, N, 4, 4) link poses in the root frame for variable rows (N, V), file order."""
        rows = values.shape[0]
        # One variable per contiguous row (no copy when values is already a transposed view):
        # reading a column of (N, V) rows would touch a new cache line per configuration.
        columns = np.ascontiguousarray(values.T)
        poses = np.empty((len(self.layout.link_names), rows, 4, 4))
        for begin in range(0, rows, BATCH_CHUNK):
            end = min(begin + BATCH_CHUNK, rows)
            self._chunk(columns[:, begin:end], poses[:, begin:end])
        return poses

    def _local_poses(self, columns: Array) -> list[Array]:
        """Per form group, (J, n, F) pose features of its joints for variables (V, n).

        Each is a view of a feature-major (F, J, n) buffer: the feature functions then write
        contiguous rows, and each joint's (n, F) block is still one matrix for BLAS.
        """
        count = columns.shape[1]
        features = []
        for group in self.layout.groups:
            joints, size = group.slots.shape
            # (size, J n): each variable of every joint and configuration, joint by joint.
            variables = columns[group.slots].transpose(1, 0, 2).reshape(size, joints * count)
            buffer = np.empty((group.form.pose_feature_count, joints, count))
            by_row = buffer.reshape(-1, joints * count).T  # (J n, F), feature-major memory
            by_row[:, 0] = 1.0
            group.form.fill_pose_features(variables, by_row)
            features.append(buffer.transpose(1, 2, 0))
        return features

    def _chunk(self, columns: Array, poses: Array) -> None:
        """Fill ``poses`` (L, n, 4, 4) from variables (V, n): joint by joint, then fixed links."""
        layout = self.layout
        count = columns.shape[1]
        features = self._local_poses(columns)
        local = np.empty((count, 16))
        for group, row, parent, child, parent_link in self._steps:
            target = poses[child].reshape(count, 16) if parent == 0 else local
            np.matmul(features[group][row], self.bases[group][row], out=target)
            if parent != 0:
                np.matmul(poses[parent_link], local.reshape(count, 4, 4), out=poses[child])
        poses[layout.frame_link[0]] = _IDENTITY
        for k, frame_link in self._fixed:
            if frame_link < 0:
                poses[k] = layout.T_frame_link[k]
            else:
                source = poses[frame_link].reshape(count * 4, 4)
                np.matmul(source, layout.T_frame_link[k], out=poses[k].reshape(count * 4, 4))
