"""What a running node holds: the modules its start and its JointState path load.

The node imports only what it runs (docs/node.md, "Memory"): a URDF robot loads neither the
SDFormat parser nor the command line, and nothing of numpy that the node does not call
(``numpy.random``, about 3 MB, and ``numpy.ma``, about 1.2 MB, once stayed loaded for one
check each). Checked in a fresh interpreter, without DDS: the node's modules, a model loaded
and configured as the node does it, JointStates through the pipeline (one clamped), their
bytes, and the check of the RMW's wire layout. numpy before 2.0 (Humble's, Jazzy's) loads
``numpy.random`` and ``numpy.ma`` with ``import numpy`` itself: there only what the node
loads beyond ``import numpy`` counts.
"""

from __future__ import annotations

import subprocess
import sys

from repo_paths import REPO_ROOT

#: Modules a node running a URDF robot must not hold.
NOT_LOADED = (
    "numpy.random",
    "numpy.ma",
    "joint_tf_publisher.description.sdf",
    "joint_tf_publisher.cli",
    "joint_tf_publisher.ros.waitset_loop",
)

SCRIPT = f"""
import logging, sys
import numpy as np
with_numpy = set(sys.modules)
from joint_tf_publisher.ros import runtime, tf_publishers
from joint_tf_publisher.health.reporting import Reporter
from joint_tf_publisher.node_core.cdr import JointStateReader
from joint_tf_publisher.node_core.parameters import Settings
from joint_tf_publisher.node_core.pipeline import JointStatePipeline, LoadedModel
from joint_tf_publisher.robot import Robot

text = open("test/urdf/arm_mimic_gripper.urdf").read()
reporter = Reporter(logging.getLogger("t"))
pipeline = JointStatePipeline(Settings(ignore_timestamp=True), reporter, lambda: 1)
pipeline.install(LoadedModel(Robot.from_xml_string(text), text))
kin = pipeline.model.kin
names = tuple(j.name for j in kin.moving_joints if j.mimic is None)
published = [
    pipeline.joint_state(10 + k, names, np.full(len(names), value))
    for k, value in enumerate((0.1, 99.0))
]
assert all(p is not None and p.to_bytes() for p in published)
assert pipeline.reporter.clamp_counts, "the second JointState is clamped"
assert tf_publishers.layout_matches_rmw()
loaded = [name for name in {NOT_LOADED!r} if name in set(sys.modules) - with_numpy]
print(" ".join(loaded))
"""


def test_a_urdf_node_loads_no_sdf_parser_no_cli_and_no_unused_numpy() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )

    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == []
