"""The topics of a recorded robot: the node's topic names resolved in its namespace, as rcl
resolves them for a node run there (``--ros-args -r __ns:=/robot1``, a launch file's
``namespace=``), and where its transforms went.

- ``joint_states``, ``multi_dof_joint_states``, ``robot_description`` and the relative
  ``source_list`` entries are relative names: under the namespace (``/robot1/joint_states``);
  an absolute ``source_list`` entry stays as it is.
- ``/tf`` and ``/tf_static`` are the node's absolute names (tf2's): a namespace does not move
  them. Nav2's multi-robot layout remaps them into the namespace (``/tf:=tf``,
  ``/tf_static:=tf_static``): a recording holding ``<ns>/tf`` or ``<ns>/tf_static`` was made
  so, and the robot's transforms are read from and written to those.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from ...node_core.names import absolute_namespace, namespace_refusal


@dataclass(frozen=True)
class RobotTopics:
    """A recorded robot's topics (fully qualified); ``namespace`` "" for the root."""

    namespace: str
    joint_states: str
    multi_dof_joint_states: str
    robot_description: str
    tf: str
    tf_static: str

    def resolved(self, name: str) -> str:
        """A topic name the node was given (``source_list``): relative names under the
        namespace, absolute ones as they are."""
        if name.startswith("/"):
            return name
        return f"{self.namespace}/{name}"


def robot_topics(namespace: str, recorded: Collection[str] = ()) -> RobotTopics:
    """The topics of a robot whose node ran in ``namespace`` ("" or ``/`` for the root;
    ``robot1`` and ``/robot1`` alike), its transforms in that namespace where the
    ``recorded`` topics have them there (see the module docstring). ValueError for a
    namespace that is not one."""
    ns = ""
    if namespace.strip("/"):
        checked = absolute_namespace(namespace)
        if checked is None:
            raise ValueError(namespace_refusal(namespace, root_refused=False))
        ns = checked
    tf_ns = ns if ns and ({f"{ns}/tf", f"{ns}/tf_static"} & set(recorded)) else ""
    return RobotTopics(
        namespace=ns,
        joint_states=f"{ns}/joint_states",
        multi_dof_joint_states=f"{ns}/multi_dof_joint_states",
        robot_description=f"{ns}/robot_description",
        tf=f"{tf_ns}/tf",
        tf_static=f"{tf_ns}/tf_static",
    )
