"""The ROS 2 node: robot description + joint states -> /tf and /tf_static. Its composition.

What the node does with joint states (rate limiting, stamps, clamping, reports) is
``pipeline.JointStatePipeline``; its parameters are the table in ``parameters``, and what a
change of them asks is planned, validated whole, by ``parameter_changes.plan_change`` (all
rclpy-free, in ``node_core``); how it runs (signals, spin loop) is ``runtime``. This module
makes the node's parts, declares its parameters (``parameter_declarations``, the attachments'
and ``zeros.<joint>`` here), applies each planned change to the parts it concerns, and
installs each new model.

The parts, each with its entities and callbacks: the joint-state inputs
(``joint_state_inputs``: ``joint_states``, the ``source_list`` topics,
``multi_dof_joint_states``, the default positions, ``loop_joint_states``), the description
input (``description_input``: the parameter, the file watched, or the ``robot_description``
topic), the TF outputs (``tf_outputs``: ``/tf``, ``/tf_static``, the global tree, the static
union), the remote output (``remote_tf``) and the health report on ``/diagnostics``
(``diagnostics``). docs/node.md describes the topics with their QoS. It may import every
module of ``ros/`` but ``runtime`` and ``fleet`` (which import it).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rcl_interfaces.srv import SetParametersAtomically
from rclpy.exceptions import (
    InvalidParameterTypeException,
    InvalidParameterValueException,
)
from rclpy.node import Node
from rclpy.parameter import Parameter

from ..description.compose import ATTACHMENT_FIELDS
from ..description.files import reading_under
from ..errors import ModelError
from ..health.reporting import Reporter
from ..node_core.attachments import plan_attachment_request
from ..node_core.callback_edge import CallbackEdge
from ..node_core.names import NODE_NAME
from ..node_core.parameter_changes import ParameterChange, plan_change
from ..node_core.parameter_keys import counted, unknown_parameters, warnings
from ..node_core.parameters import (
    ATTACHMENT_PARAMETERS,
    ATTACHMENTS,
    REMOTE_FIELDS,
    ZEROS_DESCRIPTION,
    ZEROS_PREFIX,
    ParameterRejected,
    Settings,
    check_array_type,
    parameter_name,
    split_attachment_parameter,
)
from ..node_core.pipeline import JointStatePipeline, LoadedModel, Reconfigured
from ..node_core.zeros import declared_zeros
from .description_input import DescriptionInput
from .diagnostics import DiagnosticsPublisher
from .edges import Edges
from .joint_state_inputs import JointStateInputs, check_source_topics
from .parameter_declarations import (
    StartupError,
    declare_parameters,
    rclpy_reason,
    typed_parameter,
)
from .part_host import PartHost
from .remote_tf import RemoteTf
from .static_union import StaticUnionPart
from .tf_outputs import TfOutputs
from .tf_publishers import own_topics


class JointTfPublisher(Node):
    """robot_state_publisher's job for URDF and SDFormat robots, with every joint type.

    Raises StartupError (from the constructor) for an unusable start: empty or invalid
    ``robot_description``, or an out-of-range parameter.
    """

    def __init__(self, *, stopped: Callable[[], bool] | None = None, **kwargs: Any) -> None:
        """``stopped``: the process's stop flag (a wait for a xacro expansion and the
        ``zeros.<joint>`` declarations give up when it turns true); ``kwargs``: rclpy's
        ``Node``'s."""
        super().__init__(NODE_NAME, **kwargs)
        #: The stop flag (``runtime``'s stop signals; never, for a node without one).
        self._stopped = stopped or _never
        try:
            self._start()
        except BaseException:
            # A node refused at start leaves nothing behind in its process: not its latched
            # /tf_static and robot_description (published before a zeros.<joint> is
            # checked), nor the global tree's node.
            self.destroy_node()
            raise

    def _start(self) -> None:
        """Everything the constructor does after rclpy's: parameters, model, publishers,
        subscriptions, timers (StartupError for an unusable start)."""
        values = declare_parameters(self)
        #: The attachments.<name>.<field> parameters declared (those of the listed names).
        self._attachments_declared: set[str] = set()
        #: Where the node's own /tf and /tf_static go (after the user's remappings).
        self._own_topics = own_topics(self)
        try:
            for name, value in values.items():
                check_array_type(name, value)
            names = Settings.from_values({ATTACHMENTS: values[ATTACHMENTS]}).attachments
            values.update(self._declare_attachments({name: {} for name in names}, at_start=True))
            settings = Settings.from_values(values)
            self._own_topics.check(settings)
        except ParameterRejected as err:
            raise StartupError(str(err)) from None
        except InvalidParameterTypeException as err:
            raise StartupError(str(err)) from None
        self.pipeline = JointStatePipeline(settings, Reporter(self.get_logger()), self._now_ns)
        #: Every callback rclpy calls into the node is guarded by these (``edges``).
        self._edges = Edges(
            CallbackEdge(self.pipeline.health, self.pipeline.reporter), self.context
        )
        self._edges.rclpy_services(self)  # its parameter services
        #: What each part is given (``part_host``): this node, its pipeline, edges and clock.
        parts = PartHost(self, self.pipeline, self._edges, self._now_ns)
        #: The remote output (``remote.frames``): its publishers and timer (``remote_tf``).
        self._remote = RemoteTf(
            self, self.pipeline, self._own_topics, self._now_ns, self._edges.timer
        )
        try:
            #: The description input (``description_input``): its source, file watch, topic.
            self._description = DescriptionInput(
                parts,
                self._stopped,
                self._replace_model,
                str(values["robot_description"] or ""),
                settings,
            )
            model = self._description.start_model
            check_source_topics(self, settings.source_list, settings.publish_loop_joint_states)
            self._remote.check(settings, model)
            StaticUnionPart.check(settings)
        except (ParameterRejected, ModelError) as err:
            raise StartupError(str(err)) from None

        # As in robot_state_publisher's constructor, the description and the fixed transforms
        # go out once the model is built and checked, before the node makes its /tf and
        # /diagnostics publishers and its subscriptions (a few ms each at start).
        #: The TF outputs (``tf_outputs``): /tf and /tf_static, the global tree, the static
        #: union and the statics' republication.
        self._outputs = TfOutputs(parts, self._remote, settings)
        self._description.open_topic(settings.description_from_topic)
        if model is not None:
            self._install(model)
        else:
            self.get_logger().info("waiting for the robot description on topic robot_description")
        self._outputs.open_tf()
        #: The zeros.<joint> parameters declared (one per moving joint of the model).
        self._zeros_declared: set[str] = set()
        self.add_on_set_parameters_callback(self._edges.parameters(self._on_set_parameters))
        self.create_service(
            SetParametersAtomically,
            "~/set_attachments",
            self._edges.service("set_attachments", self._on_set_attachments),
        )
        self._diagnostics = DiagnosticsPublisher(
            self, self.pipeline.health, self.pipeline.reporter, self._edges.timer
        )
        #: The joint-state inputs (``joint_state_inputs``): subscriptions, timer, clock jump.
        self._inputs = JointStateInputs(parts, self._outputs, self._diagnostics, settings)
        self._outputs.restart_static_timer()
        if model is not None:
            try:
                self._declare_zeros(model, at_start=True)
            except InvalidParameterValueException as err:
                raise StartupError(rclpy_reason(err)) from None
        self._inputs.restart_default_timer()
        self._diagnostics.restart(settings.diagnostic_period)
        self._description.follow(announce=True)
        self._warn_unknown_parameters(pending_zeros=model is None)

    def _warn_unknown_parameters(self, pending_zeros: bool) -> None:
        """Warn once per key given for this node (params file, ``-p``) that it does not
        declare, naming the close matches (``parameter_keys``); counted in the health report.
        ``pending_zeros``: no model yet (from the topic), so its ``zeros.<joint>`` are
        not declared yet and not judged.

        The keys are rclpy's ``Node._parameter_overrides``: what rcl gave this node from
        every source (the context's and the node's own arguments, each params file's
        sections that name the node and its wildcards, ``-p``), the dict
        ``declare_parameter`` reads. rclpy has no public accessor for it (since Foxy);
        reading the files again with ``rclpy.parameter.parameter_dict_from_yaml_file``
        would miss ``-p`` and a fleet's per-robot arguments and read each file twice."""
        overrides: dict[str, Any] = getattr(self, "_parameter_overrides", {})
        declared = self.list_parameters([], 0).names
        unknown = unknown_parameters(
            sorted(overrides),
            set(declared),
            known_prefixes=(ZEROS_PREFIX,) if pending_zeros else (),
        )
        for line in warnings(unknown):
            self.get_logger().warning(line)
        self.pipeline.health.unknown_parameters = counted(unknown)

    @property
    def settings(self) -> Settings:
        """The current settings (parameters other than the description)."""
        return self.pipeline.settings

    def _now_ns(self) -> int:
        nanoseconds: int = self.get_clock().now().nanoseconds
        return nanoseconds

    # -- parameters -----------------------------------------------------------------------------

    def _plan(self, values: dict[str, Any]) -> ParameterChange:
        """The change ``values`` (parameter name -> value) asks of this node, validated whole
        (``plan_change``); ParameterRejected or ModelError with the reason."""
        return plan_change(
            self.settings,
            self.pipeline.model,
            values,
            self._description.load,
            self._description.described,
            self._attachments_declared,
            tf_topics=self._own_topics,
        )

    def _on_set_parameters(self, parameters: list[Parameter[Any]]) -> SetParametersResult:
        """Validate a parameter change as a whole (``plan_change``), then apply it whole."""
        values = {parameter.name: parameter.value for parameter in parameters}
        try:
            for name, value in values.items():
                check_array_type(name, value)
            with reading_under(self._description.file_rules):
                change = self._plan(values)
            if change.sources_changed:
                check_source_topics(
                    self, change.settings.source_list, change.settings.publish_loop_joint_states
                )
            if REMOTE_FIELDS.keys() & values.keys():
                self._remote.check(change.settings, None)
            StaticUnionPart.check(change.settings)
        except (ParameterRejected, ModelError) as err:
            reason = str(err)
            self.get_logger().warning(f"parameter change rejected: {reason}")
            return SetParametersResult(successful=False, reason=reason)
        self._apply(change, values.keys())
        return SetParametersResult(successful=True)

    def _apply(self, change: ParameterChange, setting: AbstractSet[str]) -> None:
        """Apply a validated change: a new model installed (and its ``zeros.<joint>``
        declared), else the settings configured; then the description file watched (or no
        longer), the timers and subscriptions it asks for. ``setting``: the parameters the
        change sets (a field of a name it removes that it also sets stays declared, unused:
        rclpy stores it once this callback returns)."""
        settings = change.settings
        self._description.adopt(change.described)
        removed = set(self.settings.attachments) - set(settings.attachments)
        if change.model is not None:
            changes = self._replace_model(change.model, settings)
        else:
            changes = self.pipeline.configure(settings)
            if changes.switch_global_tree:
                self._outputs.switch_global_tree()
            if changes.republish_statics:
                self._outputs.publish_statics()
        self._description.follow(announce=change.model is not None)
        if changes.restart_default_timer:
            self._inputs.restart_default_timer()
        if changes.restart_diagnostic_timer:
            self._diagnostics.restart(settings.diagnostic_period)
        if changes.restart_static_timer:
            self._outputs.restart_static_timer()
        if change.sources_changed:
            self._inputs.subscribe_sources(settings.source_list)
        self._remote.update()
        self._outputs.union.update()
        for name in sorted(removed):  # their parameters go with them
            for field in ATTACHMENT_FIELDS:
                parameter = parameter_name(name, field)
                if parameter in self._attachments_declared and parameter not in setting:
                    self._attachments_declared.discard(parameter)
                    self.undeclare_parameter(parameter)

    def _on_set_attachments(
        self,
        request: SetParametersAtomically.Request,
        response: SetParametersAtomically.Response,
    ) -> SetParametersAtomically.Response:
        """``~/set_attachments``: ``attachments.names`` and ``attachments.<name>.<field>``
        parameters set in one step, those of names new to the node too (rclpy sets no
        undeclared parameter): validated as a whole first; then the new names' parameters
        are declared (unused until listed), and the rest set atomically."""
        values = {msg.name: Parameter.from_parameter_msg(msg).value for msg in request.parameters}
        try:
            request_plan = plan_attachment_request(
                values, self.settings.attachments, self._attachments_declared
            )
            with reading_under(self._description.file_rules):
                self._plan(values)
        except (ParameterRejected, ModelError) as err:
            reason = str(err)
            self.get_logger().warning(f"attachment change rejected: {reason}")
            response.result = SetParametersResult(successful=False, reason=reason)
            return response
        fields: dict[str, dict[str, Any]] = {}
        for parameter, value in request_plan.declare.items():
            name, field = split_attachment_parameter(parameter)
            fields.setdefault(name, {})[field] = value
        self._declare_attachments(fields, at_start=False)
        response.result = self.set_parameters_atomically(
            [typed_parameter(name, value) for name, value in request_plan.set_atomically.items()]
        )
        return response

    def _declare_attachments(
        self, fields: dict[str, dict[str, Any]], at_start: bool
    ) -> dict[str, Any]:
        """Declare ``attachments.<name>.<field>`` for each name of ``fields`` and each field
        not declared yet, at the value ``fields`` gives, else (None) ``at_start`` the value
        given at start, or the field's default (a request to ``~/set_attachments`` gives
        the whole attachment: what it leaves out is the default, as it was validated); their
        values by parameter name."""
        values: dict[str, Any] = {}
        for name, given in fields.items():
            for field, (default, description) in ATTACHMENT_PARAMETERS.items():
                parameter = parameter_name(name, field)
                if parameter in self._attachments_declared:
                    continue
                value = given.get(field)
                descriptor = ParameterDescriptor(
                    description=description, dynamic_typing=field == "origin"
                )
                self.declare_parameter(
                    parameter,
                    default if value is None else value,
                    descriptor,
                    ignore_override=not at_start,
                )
                self._attachments_declared.add(parameter)
                values[parameter] = self.get_parameter(parameter).value
        return values

    def _declare_zeros(self, model: LoadedModel, at_start: bool) -> None:
        """Declare ``zeros.<joint>`` for every moving joint of ``model`` that is no mimic
        follower (a value given at start is read then, and checked by ``_on_set_parameters``);
        undeclare those of joints it does not have. A value given at start that the model
        refuses: InvalidParameterValueException ``at_start``, else (a new description) an
        error logged and the parameter left unset."""
        defaults = {
            ZEROS_PREFIX + joint: value for joint, value in declared_zeros(model.kin).items()
        }
        for name in sorted(self._zeros_declared - defaults.keys()):
            self.undeclare_parameter(name)
        self._zeros_declared &= defaults.keys()
        descriptor = ParameterDescriptor(description=ZEROS_DESCRIPTION, dynamic_typing=True)
        # Each declaration is a parameter change of its own (checked by _on_set_parameters;
        # a change of zeros alone only sets the start values of joints never received).
        for name in sorted(defaults.keys() - self._zeros_declared):
            if at_start and self._stopped():
                # A big robot's declarations take seconds (3000 joints: 8 s): a stop gives
                # the start up, as a wait for xacro does (the fleet's end waits for its start).
                raise StartupError("the node is stopping: its start given up")
            try:
                self.declare_parameter(name, defaults[name], descriptor)
            except InvalidParameterValueException as err:
                if at_start:
                    raise
                self.get_logger().error(f"{name} left at its default: {rclpy_reason(err)}")
                self.declare_parameter(name, defaults[name], descriptor, ignore_override=True)
            self._zeros_declared.add(name)

    # -- model ----------------------------------------------------------------------------------

    def _replace_model(self, model: LoadedModel, settings: Settings) -> Reconfigured:
        """Make ``model`` (prepared with ``settings``) current: the install path, then its
        ``zeros.<joint>`` parameters; a description refused before is no longer reported."""
        changes = self._install(model, settings)
        self._declare_zeros(model, at_start=False)
        self.pipeline.health.refused_description = None
        return changes

    def _install(self, model: LoadedModel, settings: Settings | None = None) -> Reconfigured:
        """Make ``model`` current (under ``settings`` if given): publish its description
        (parameter mode) and statics; what else the change of settings asks of the node."""
        changes = self.pipeline.install(model, settings)
        if changes.switch_global_tree:
            self._outputs.switch_global_tree()
        self._description.publish(model)
        self._outputs.publish_statics()
        self._remote.update()
        kin = model.kin
        self.get_logger().info(
            f"robot {model.robot.name!r}: {len(kin.moving_joints)} moving joints, "
            f"{len(kin.fixed_joints)} fixed joints"
        )
        return changes

    def destroy_node(self) -> None:
        """Destroy the node, and the global tree's publishers and the static union's node
        with it (and stop a xacro expansion its file watch started)."""
        description = getattr(self, "_description", None)  # None: a start refused before it
        if description is not None:
            description.close()
        outputs = getattr(self, "_outputs", None)  # None: a start refused before them
        if outputs is not None:
            outputs.destroy()
        super().destroy_node()


def _never() -> bool:
    return False
