"""Where a ROS package's share folder is: the ament index, read as ament_index_python reads it.

Shared by the SDFormat reader (``package://`` URIs) and the node's allowed folders (the share
folders of the packages a start description names), and kept apart from both so that a URDF
node never loads the SDFormat reader to find a folder.
"""

from __future__ import annotations

import os
from pathlib import Path


def ament_share(package: str) -> Path | None:
    """``<prefix>/share/<package>`` of the first AMENT_PREFIX_PATH prefix indexing it
    (``ament_index_python.get_package_share_directory``); None where none does."""
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if not prefix:
            continue
        marker = Path(prefix, "share", "ament_index", "resource_index", "packages", package)
        if marker.is_file():
            return Path(prefix, "share", package)
    return None
