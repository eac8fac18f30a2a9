"""The node's TF outputs: its own tree on ``/tf`` and ``/tf_static`` (as remapped), the global
tree of ``global_frame_prefix`` on the absolute ones (opened and closed as the settings ask),
the static set sent through the static union (``static_union``) and republished every
``static_republish_period`` s of the steady clock, the remote output's statics with it.

Which trees go where is ``node_core.tf_outputs``' policy; the publishers are
``tf_publishers``'. It may import rclpy, ``node_core`` and the adapter's ``part_host``,
``remote_tf``, ``static_union``, ``tf_publishers`` and ``timers``; ``node`` composes it, and
the joint-state inputs (``joint_state_inputs``) send their answers through it.
"""

from __future__ import annotations

from ..node_core.cdr import Publication
from ..node_core.parameters import Settings
from ..node_core.tf_outputs import global_tree_on
from .part_host import PartHost
from .remote_tf import RemoteTf
from .static_union import StaticUnionPart
from .tf_publishers import GlobalTree, StaticTfPublisher, TfPublisher
from .timers import RestartableTimer


class TfOutputs:
    """The TF outputs of ``host``'s node under ``settings`` (the start's): the statics' side is
    opened at once (the description's fixed transforms go out before the node makes its
    ``/tf`` publisher and its subscriptions, as in robot_state_publisher's constructor),
    ``/tf`` by ``open_tf``. The pipeline gives what they send; ``remote`` has its statics
    republished with them."""

    def __init__(
        self,
        host: PartHost,
        remote: RemoteTf,
        settings: Settings,
    ) -> None:
        node, pipeline, edges = host.node, host.pipeline, host.edges
        self._node, self._pipeline, self._now_ns = node, pipeline, host.now_ns
        self._remote = remote
        self._tf: TfPublisher | None = None
        #: The global tree's publishers (``global_frame_prefix`` set), else None.
        self.global_tree: GlobalTree | None = None
        self._static_timer = RestartableTimer(
            node, edges.timer("static republish", self.republish_statics)
        )
        self.tf_static = StaticTfPublisher(node)
        if global_tree_on(settings):
            self.global_tree = GlobalTree(node)
            self.tf_static.global_publisher = self.global_tree.tf_static
        try:
            #: The union of the graph's statics (``static_union``): it sends the static set.
            self.union = StaticUnionPart(node, pipeline, self.tf_static, edges)
        except BaseException:  # nothing of a refused start stays behind: not the global tree
            if self.global_tree is not None:
                self.global_tree.destroy()
            raise

    @property
    def tf(self) -> TfPublisher:
        """The ``/tf`` publisher (``open_tf`` made it)."""
        if self._tf is None:
            msg = "the /tf publisher is made by TfOutputs.open_tf"
            raise RuntimeError(msg)
        return self._tf

    def open_tf(self) -> None:
        """Make the ``/tf`` publisher (the pipeline's short way sends its bytes as they are),
        hand it the global tree's, and let the static union start."""
        self._tf = TfPublisher(self._node)
        self._pipeline.short_way = self._tf.raw
        self._attach_global_tree()
        self.union.update()

    def publish(self, publication: Publication | None) -> None:
        """Send ``publication`` (an answer of the pipeline; None: nothing) on ``/tf`` (and the
        global tree's), counted in the health report."""
        if publication is not None:
            self.tf.publish(publication)
            self._pipeline.health.published += 1

    def publish_statics(self) -> None:
        """Publish the complete static set of the current model under the current settings."""
        self.union.publish(self._pipeline.static_publication(self._now_ns()))

    def republish_statics(self) -> None:
        """Every static set again, as it was: ``/tf_static`` and the remote output's."""
        self.union.republish()
        self._remote.republish_statics()

    def restart_static_timer(self) -> None:
        """Republish the static set every ``static_republish_period`` s of the steady clock
        (a paused simulation must not stop it); never for 0."""
        self._static_timer.restart(self._pipeline.settings.static_republish_period)

    def switch_global_tree(self) -> None:
        """Open the global tree's publishers where the settings ask for a global tree, close
        them where they no longer do."""
        wanted = global_tree_on(self._pipeline.settings)
        if wanted and self.global_tree is None:
            self.global_tree = GlobalTree(self._node)
        elif not wanted and self.global_tree is not None:
            self.global_tree.destroy()
            self.global_tree = None
        self._attach_global_tree()
        self.union.writers_changed()

    def _attach_global_tree(self) -> None:
        """Hand the global tree's publishers (or None) to the node's tf publishers."""
        tree = self.global_tree
        self.tf_static.global_publisher = None if tree is None else tree.tf_static
        self.tf.global_publisher = None if tree is None else tree.tf

    def destroy(self) -> None:
        """The static union's node and the global tree's publishers destroyed (the node's own
        publishers go with the node)."""
        self.union.destroy()
        if self.global_tree is not None:
            self.global_tree.destroy()
            self.global_tree = None
