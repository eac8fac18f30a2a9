"""The ROS 2 adapter: everything that imports rclpy or ROS messages (the node, its /tf and
/tf_static publishers). Import its modules directly: importing this package loads no rclpy."""
