"""3D pictures of a robot's skeleton with matplotlib (Agg, no display needed).

The skeleton: each link frame's origin as a point, each joint as a segment from its parent
link's origin to its child link's origin (coloured by joint type), and short RGB arrows for
each link frame's x, y and z axes. Coordinates are metres in the root link frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..arrays import Array
from ..model.elements import RobotModel

#: Segment colour per joint type (matplotlib colour names).
SEGMENT_COLOURS = {
    "fixed": "0.55",
    "revolute": "tab:blue",
    "continuous": "tab:purple",
    "prismatic": "tab:green",
    "planar": "tab:orange",
    "floating": "tab:red",
    "screw": "tab:cyan",
    "gearbox": "tab:brown",
    "revolute2": "navy",
    "universal": "navy",
    "ball": "tab:pink",
}

#: Link names are written beside their points up to this many links.
MAX_LABELLED_LINKS = 16


def _figure(width_in: float, height_in: float) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise RuntimeError("plot needs matplotlib (pip install matplotlib)") from None
    figure = Figure(figsize=(width_in, height_in))
    FigureCanvasAgg(figure)
    return figure


def scene_bounds(poses_list: Sequence[Mapping[str, Array]]) -> tuple[Array, float]:
    """Centre (3,) and half-width (m) of a cube holding every link origin of every pose set."""
    points = np.array([pose[:3, 3] for poses in poses_list for pose in poses.values()])
    low, high = points.min(axis=0), points.max(axis=0)
    half_width = max(float((high - low).max()) / 2.0, 0.05) * 1.1
    return (low + high) / 2.0, half_width


def draw_skeleton(
    axes: Any, robot: RobotModel, poses: Mapping[str, Array], axis_length_m: float, labels: bool
) -> None:
    """Draw links (points), joints (segments) and frame axes (RGB) of ``poses`` on 3D ``axes``."""
    for joint in robot.joints.values():
        start, end = poses[joint.parent][:3, 3], poses[joint.child][:3, 3]
        axes.plot(
            *np.stack([start, end]).T,
            color=SEGMENT_COLOURS.get(joint.joint_type, "k"),
            linewidth=2.0,
            linestyle="--" if joint.mimic is not None else "-",
        )
    origins = np.array([pose[:3, 3] for pose in poses.values()])
    axes.scatter(*origins.T, color="black", s=12, depthshade=False)
    root = poses[robot.root][:3, 3]
    axes.scatter(*root, color="black", marker="s", s=40, depthshade=False)
    for column, colour in enumerate(("red", "green", "blue")):
        directions = np.array([pose[:3, column] for pose in poses.values()]) * axis_length_m
        axes.quiver(*origins.T, *directions.T, color=colour, linewidth=1.0, arrow_length_ratio=0.0)
    if labels:
        for name, pose in poses.items():
            axes.text(*pose[:3, 3], f" {name}", fontsize=7, color="0.2")


def _frame_axes(axes: Any, centre: Array, half_width: float, elev: float, azim: float) -> None:
    for setter, middle in zip((axes.set_xlim, axes.set_ylim, axes.set_zlim), centre, strict=True):
        setter(middle - half_width, middle + half_width)
    axes.set_box_aspect((1.0, 1.0, 1.0))
    axes.set_xlabel("x [m]", fontsize=8)
    axes.set_ylabel("y [m]", fontsize=8)
    axes.set_zlabel("z [m]", fontsize=8)
    axes.tick_params(labelsize=7)
    axes.view_init(elev=elev, azim=azim)


def plot_poses(
    robot: RobotModel,
    poses_list: Sequence[Mapping[str, Array]],
    path: Path,
    titles: Sequence[str],
    labels: bool | None = None,
    elev: float = 25.0,
    azim: float = -60.0,
    dpi: int = 100,
) -> None:
    """Save one 3D panel per pose set, side by side, to ``path`` (format from its suffix).

    All panels share one cube of space so the poses compare. ``labels`` None writes link names
    for robots of at most ``MAX_LABELLED_LINKS`` links, and only in a single panel.
    """
    count = len(poses_list)
    if count == 0:
        raise ValueError("nothing to plot")
    if labels is None:
        labels = count == 1 and len(robot.links) <= MAX_LABELLED_LINKS
    figure = _figure(5.0 * count if count > 1 else 6.5, 5.0 if count > 1 else 6.0)
    centre, half_width = scene_bounds(poses_list)
    for index, (poses, title) in enumerate(zip(poses_list, titles, strict=True)):
        axes = figure.add_subplot(1, count, index + 1, projection="3d")
        draw_skeleton(axes, robot, poses, axis_length_m=0.12 * half_width, labels=labels)
        _frame_axes(axes, centre, half_width, elev, azim)
        axes.set_title(title, fontsize=9)
    figure.suptitle(robot.name, fontsize=11)
    figure.tight_layout()
    figure.savefig(str(path), dpi=dpi)
