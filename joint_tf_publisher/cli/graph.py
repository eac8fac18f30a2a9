"""The kinematic tree as a Graphviz graph: links as nodes, joints as labelled edges.

``robot_to_dot`` writes DOT text with numpy only; ``render_dot`` turns it into SVG, PNG or PDF
with Graphviz's ``dot`` program (Debian package ``graphviz``). Edge labels give the joint's
name, type, axis and limits (radians or metres), its safety (soft) limits and its mimic rule.
A loop joint (closing a kinematic loop) is drawn apart: a bold dashed line from link1 to link2
without an arrow, which does not rank the links (the tree alone lays the graph out).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..model.elements import RobotModel
from .describe import joint_details, loop_details

#: Output formats by file suffix; ``dot`` is the DOT text itself.
FORMATS = ("svg", "png", "pdf", "dot")

#: Edge colour per joint type (fixed joints grey, moving joints coloured).
EDGE_COLOURS = {
    "fixed": "gray55",
    "revolute": "royalblue3",
    "continuous": "darkviolet",
    "prismatic": "forestgreen",
    "planar": "darkorange3",
    "floating": "orangered3",
    "screw": "teal",
    "gearbox": "sienna",
    "revolute2": "navy",
    "universal": "navy",
    "ball": "deeppink3",
}


def quote(text: str) -> str:
    """``text`` as a DOT double-quoted string (backslashes and quotes escaped)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def robot_to_dot(robot: RobotModel) -> str:
    """DOT text of the robot's tree: one node per link, one labelled edge per joint.

    The root link is drawn as a double box; edges run parent to child, coloured by joint type,
    dashed for mimic joints and dotted for fixed ones; loop joints are bold, dashed, without
    arrows and out of the layout's ranking (module docstring).
    """
    title = f"{robot.name}: {len(robot.links)} links, {len(robot.joints)} joints"
    if robot.loop_joints:
        title += f", {len(robot.loop_joints)} loop joint(s)"
    lines = [
        f"digraph {quote(robot.name)} {{",
        "  rankdir=TB;",
        f"  label={quote(title)};",
        '  labelloc=t; fontname="Helvetica"; fontsize=14;',
        '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", fontname="Helvetica",'
        " fontsize=11];",
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for name in robot.links:
        extra = ', peripheries=2, fillcolor="#d7e4f7"' if name == robot.root else ""
        lines.append(f"  {quote(name)} [label={quote(name)}{extra}];")
    for joint in robot.joints.values():
        label = "\\n".join(
            [quote(joint.name)[1:-1], joint.joint_type]
            + [quote(d)[1:-1] for d in joint_details(joint)]
        )
        colour = EDGE_COLOURS.get(joint.joint_type, "black")
        style = (
            "dashed"
            if joint.mimic is not None
            else ("dotted" if joint.joint_type == "fixed" else "solid")
        )
        lines.append(
            f"  {quote(joint.parent)} -> {quote(joint.child)} "
            f'[label="{label}", color={colour}, fontcolor={colour}, style={style}];'
        )
    for loop in robot.loop_joints:
        details = loop_details(loop)
        label = "\\n".join(
            [quote(loop.name)[1:-1], f"loop joint ({details[0]})"]
            + [quote(d)[1:-1] for d in details[1:]]
        )
        colour = EDGE_COLOURS.get(loop.type.value, "black")
        lines.append(
            f"  {quote(loop.link1)} -> {quote(loop.link2)} "
            f'[label="{label}", color={colour}, fontcolor={colour}, style="dashed,bold", '
            "dir=none, constraint=false];"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def output_format(path: Path) -> str:
    """The Graphviz format named by ``path``'s suffix; ValueError if not one of ``FORMATS``."""
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(
            f"cannot tell the format of {str(path)!r}: use a name ending in "
            + ", ".join(f".{f}" for f in FORMATS)
        )
    return fmt


def render_dot(dot_text: str, path: Path) -> None:
    """Write ``dot_text`` to ``path``, rendered by Graphviz's ``dot`` unless ``path`` is .dot.

    Raises ValueError for an unknown suffix, RuntimeError if ``dot`` is missing or fails.
    """
    fmt = output_format(path)
    if fmt == "dot":
        path.write_text(dot_text, encoding="utf-8")
        return
    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError(
            "Graphviz's 'dot' program is not installed (Debian: apt-get install "
            "graphviz); write a .dot file instead"
        )
    result = subprocess.run(
        [dot, f"-T{fmt}", "-o", str(path)],
        input=dot_text.encode("utf-8"),
        capture_output=True,
        check=False,
        timeout=120,
    )
    if result.returncode != 0:
        raise RuntimeError(f"dot failed: {result.stderr.decode(errors='replace').strip()}")
