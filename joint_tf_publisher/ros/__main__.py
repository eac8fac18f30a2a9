"""``python -m joint_tf_publisher.ros``: the node, run as its console script runs it."""

import sys

from ..entry import node_main

sys.exit(node_main())
