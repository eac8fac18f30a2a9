"""Robot descriptions to models: hardened XML (``xmlio``), URDF (``urdf``), SDFormat (``sdf``),
and the entry points that detect the format and expand xacro (``loader``)."""

from .loader import expand_xacro, load_file, load_string

__all__ = ["expand_xacro", "load_file", "load_string"]
