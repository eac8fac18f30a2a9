"""Benchmarks of joint_tf_publisher against its peers: ``python -m bench`` (``make bench``)."""
