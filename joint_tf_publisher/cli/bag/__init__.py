"""Recordings: ``joint-tf-publisher bag repair`` and ``doctor --bag``.

A front door around the node's engine (``node_core``): ``storage`` reads and writes rosbag2
bags (the ``rosbags`` library, imported when a command runs; the node never imports it),
``messages`` decodes and encodes the few messages the repair looks into (``types``: the
rosbags type store they use), ``repair`` runs a bag's joint states through
``JointStatePipeline`` as the node would have live, and ``command`` is its command line.
The doctor's view of a recording is ``doctor.recording``.
"""
