"""The bag commands' one error, ``BagError``, and the check that ``rosbags`` is installed.

Imports nothing of the package: every bag module raises from here.
"""

from __future__ import annotations

#: How to install what the bag commands need, in one line.
INSTALL_HINT = (
    "the bag commands need the rosbags library: pip install rosbags "
    "(or pip install 'joint_tf_publisher[bag]')"
)


class BagError(RuntimeError):
    """A bag that cannot be read or written; the text says which and why (exit status 1)."""


def rosbags_installed() -> None:
    """BagError with ``INSTALL_HINT`` unless rosbags imports."""
    try:
        import rosbags.rosbag2  # noqa: F401
    except ImportError:
        raise BagError(INSTALL_HINT) from None
