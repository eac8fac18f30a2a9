"""Joint-state health, in one place and without rclpy: the model the node feeds
(``model``), the robot's facts it is judged against (``facts``) and the throttled log lines
about joint states the node cannot use as given (``reporting``). The node's /diagnostics
publisher (``ros.diagnostics``) and ``joint-tf-publisher doctor`` read the same model."""
