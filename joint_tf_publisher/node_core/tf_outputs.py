"""Where the node's transforms go: its own tf topics and the global tree (no rclpy here).

- **Own output**, always: ``/tf`` and ``/tf_static`` as the node names them, so that the user's
  remappings move them, frames with ``frame_prefix``. Nav2's multi-robot launch runs each
  robot's nodes in the robot's namespace with ``/tf:=tf`` and ``/tf_static:=tf_static``: in
  namespace ``robot1`` the output is then ``/robot1/tf`` and ``/robot1/tf_static``, with the
  unprefixed frames the robot's own stack expects.
- **Global tree**, where ``global_frame_prefix`` is not empty: the same transforms, moving and
  static, also on the absolute ``GLOBAL_TF_TOPIC`` and ``GLOBAL_TF_STATIC_TOPIC`` whatever the
  remappings (the node's adapter publishes them without the user's remapping rules), frames
  with ``global_frame_prefix`` instead of ``frame_prefix`` (plain concatenation, as
  ``frame_prefix``): the one tree of every robot that fleet tools and RViz read. It costs one
  more serialisation of each message, not a second pipeline (``cdr.Publication`` carries the
  second layout).

Refused (``TfTopics.check``): both outputs on one topic with one prefix, which happens where the
node's own topics are not remapped and both prefixes are equal: every frame would go out twice
on that topic.
"""

from __future__ import annotations

from dataclasses import dataclass

from .parameters import ParameterRejected, Settings

#: The node's own tf topics as it names them (the user's remappings then apply).
TF_TOPIC = "/tf"
TF_STATIC_TOPIC = "/tf_static"
#: The global tree's topics: tf2's absolute names, never remapped.
GLOBAL_TF_TOPIC = "/tf"
GLOBAL_TF_STATIC_TOPIC = "/tf_static"
#: What the node's own topics are remapped with in Nav2's multi-robot launch (and a refusal
#: suggests), as ``ros2 run`` arguments.
NAMESPACED_TF_REMAPS = "-r /tf:=tf -r /tf_static:=tf_static"


def global_tree_on(settings: Settings) -> bool:
    """True if ``settings`` ask for the global tree (``global_frame_prefix`` not empty)."""
    return bool(settings.global_frame_prefix)


@dataclass(frozen=True)
class TfTopics:
    """The node's own tf topics as they resolve after the user's remappings (fully qualified
    names; fixed for the node's life, as remappings are)."""

    tf: str
    tf_static: str

    def shared_with_global_tree(self) -> list[str]:
        """The global tree's topics that the node's own output is on too."""
        pairs = ((self.tf, GLOBAL_TF_TOPIC), (self.tf_static, GLOBAL_TF_STATIC_TOPIC))
        return [own for own, global_topic in pairs if own == global_topic]

    def check(self, settings: Settings) -> None:
        """ParameterRejected where ``settings`` would put both outputs on one topic with one
        prefix: the global tree on, ``global_frame_prefix`` equal to ``frame_prefix``, and
        one of the node's own topics not remapped away from the global tree's."""
        if not global_tree_on(settings) or settings.global_frame_prefix != settings.frame_prefix:
            return
        shared = self.shared_with_global_tree()
        if shared:
            raise ParameterRejected(
                f"global_frame_prefix {settings.global_frame_prefix!r} equals frame_prefix and "
                f"the node's own output is on {' and '.join(shared)} already: the global tree "
                "would publish every frame there a second time. Give the global tree another "
                f"prefix, or remap the node's own topics ({NAMESPACED_TF_REMAPS}, as Nav2's "
                "multi-robot launch does)"
            )


#: The node's own tf topics where no remapping moves them.
NOT_REMAPPED = TfTopics(TF_TOPIC, TF_STATIC_TOPIC)
