"""The ROS 2 adapter: the modules that import rclpy or ROS messages (the node, its spin loop,
its /tf, /tf_static and /diagnostics publishers, the QoS profiles, the demo source). Their
policy lives in ``node_core`` and ``health``, which import no rclpy. Import its modules
directly: importing this package loads no rclpy."""
