"""``joint-tf-publisher doctor``: listen to a running system, say what is wrong and what to do.

One package: the subcommand (``command``), the ROS listening (``listener``, the one module of
the command line that imports rclpy, loaded only when the doctor runs), what was heard and
found (``observation``), the reasoning (``analysis``, ``tree``) and the report (``report``)."""
