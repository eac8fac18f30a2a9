"""Recordings: ``joint-tf-publisher bag repair`` and ``doctor --bag``.

A front door around the node's engine (``node_core``), split by concern as rosbags is:
``errors`` (``BagError``), ``settings`` (names, storages, compressions, batches), ``types``
(type names, the rosbags type store), ``qos`` (rosbags' profiles of ``node_core.qos``),
``reader`` (the input bag) and ``writer`` (the output bag, written by ``writer_process``: the
``rosbags`` library, imported when a command runs; the node never imports it), ``messages``
(the few messages the repair looks into), ``repair`` (a bag's joint states run through
``JointStatePipeline`` as the node would have live) and ``command`` (its command line). The
doctor's view of a recording is ``doctor.recording``.
"""
