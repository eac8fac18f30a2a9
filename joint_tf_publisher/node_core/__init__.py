"""The node's policy without rclpy: joint states in, TFMessages out.

What the ROS node (``ros.node``) decides, as plain Python that tests drive without DDS: the
pipeline from a JointState to the /tf and /tf_static messages (``pipeline``), the rate limiter,
which topic gave each joint (``joint_sources``), the parameters' table and validation
(``parameters``, ``zeros``), the wire layouts of the two hot messages (``cdr``) and the stop
signals. Nothing here imports rclpy or a ROS message package."""
