"""Joint-state health, in one place and without rclpy: the model the node feeds
(``model``), the robot's facts it is judged against (``facts``), the words of every fact
(``wording``) and the throttled log lines about joint states the node cannot use as given
(``reporting``). The node's /diagnostics publisher (``ros.diagnostics``) publishes the model's
report; ``joint-tf-publisher doctor`` says the same facts with the same words and levels."""
