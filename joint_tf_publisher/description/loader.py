"""Pick the parser for a robot description: URDF or SDFormat text, or a file (xacro expanded)."""

from __future__ import annotations

from pathlib import Path

from ..errors import ModelError
from ..model.elements import RobotModel
from .xmlio import drop_root_namespace, line_of, parse_xml, read_description, written_tag


def load_string(
    text: str | bytes,
    source: str = "<string>",
    model_name: str | None = None,
    path: Path | None = None,
) -> RobotModel:
    """Parse URDF (root ``<robot>``) or SDFormat (root ``<sdf>``) text into a Robot.

    The root element may carry a namespace (``<robot xmlns="...">``): it is dropped from the
    root and the elements in the same namespace (``xmlio.drop_root_namespace``). ``path`` is
    the file the text came from: SDFormat ``<include>``s of relative paths start from its
    folder (else from the working directory).
    """
    root = drop_root_namespace(parse_xml(text, source))
    tag = root.tag if isinstance(root.tag, str) else ""
    if tag == "robot":
        from .urdf import robot_from_element

        return robot_from_element(root, source)
    if tag == "sdf":
        from .sdf import robot_from_element as sdf_robot_from_element

        return sdf_robot_from_element(root, source, model_name=model_name, path=path)
    raise ModelError(
        f"root element is <{written_tag(root)}>, expected <robot> (URDF) or <sdf> (SDFormat)",
        source=source,
        line=line_of(root),
    )


def load_file(path: Path, model_name: str | None = None) -> RobotModel:
    """Read a .urdf, .sdf or .xacro file (xacro expanded with the ``xacro`` package)."""
    source = str(path)
    try:
        if path.suffix == ".xacro":
            text: str | bytes = expand_xacro(path)
            # Line numbers then count in xacro's output, not in the .xacro file: say so.
            expanded = f"{source} (expanded)"
            return load_string(text, source=expanded, model_name=model_name, path=path)
        text = read_description(path)
    except OSError as exc:
        raise ModelError(f"cannot read file: {exc.strerror}", source=source) from None
    return load_string(text, source=source, model_name=model_name, path=path)


def expand_xacro(path: Path) -> str:
    """Expanded URDF text of a .xacro file; ModelError if xacro is missing or fails."""
    try:
        import xacro
    except ImportError:
        raise ModelError(
            "reading .xacro files needs the 'xacro' package (pip install xacro)", source=str(path)
        ) from None
    try:
        document = xacro.process_file(str(path))
    except Exception as exc:  # xacro raises many types; report them all as model errors
        reason = " ".join(str(exc).split())  # xacro's messages span lines; keep one
        raise ModelError(f"xacro failed: {reason}", source=str(path)) from None
    return str(document.toxml())
