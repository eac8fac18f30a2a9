"""The bag commands' settings: what a bag folder is named by, the storages and compressions
written, how the writer's messages are batched.

Imports nothing of the package (and not rosbags): plain values the reader (``reader``), the
writer (``writer``) and the command line (``command``) share.
"""

from __future__ import annotations

from dataclasses import dataclass

#: A bag folder's description of itself, and the key rosbag2 writes at its top.
METADATA = "metadata.yaml"
METADATA_KEY = "rosbag2_bagfile_information"
#: Largest metadata.yaml read to decide whether a folder is a bag (a split bag of a long
#: recording lists thousands of files in a few hundred KB).
MAX_METADATA_BYTES = 16 * 1024 * 1024
#: The storages ``--storage`` takes, as rosbag2 names them.
STORAGES = ("sqlite3", "mcap")
#: Messages sent to the writing process at a time, at most (a few MB of joint states and TF:
#: memory stays flat).
WRITE_BATCH = 256
#: Bytes of messages sent to the writing process at a time, at most (a batch of camera
#: images is sent at this size, not at 256 of them: 6 MB images were 1.5 GB a batch); a
#: message larger than this alone is a batch of its own.
WRITE_BATCH_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class Compression:
    """A rosbag2 bag's compression: ``mode`` ``file`` (each file compressed whole) or
    ``message`` (each message), as its metadata.yaml names them, or ``storage`` (the
    storage's own: MCAP's compressed chunks); ``format`` ``zstd``."""

    mode: str
    format: str


#: MCAP's chunks compressed with zstd: what rosbag2's MCAP plugin writes by default (libmcap's
#: writer options, which its ``none`` preset leaves as they are).
MCAP_CHUNKS = Compression("storage", "zstd")


def output_compression(given: Compression | None, storage: str) -> Compression | None:
    """The compression of a bag written in ``storage`` from one compressed ``given``: the
    input's rosbag2 compression where it has one (a compressed recording stays compressed
    alike), else MCAP's zstd chunks for MCAP (rosbag2's default; about a third of the bytes
    for joint states and their TF), else none (sqlite3 has no compression of its own)."""
    if given is not None:
        return given
    return MCAP_CHUNKS if storage == "mcap" else None
