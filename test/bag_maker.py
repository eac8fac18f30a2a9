"""Bags for the tests and the bench, made with rosbags' writer (no ROS): a robot's joint
states swept through its joints, its description, and whatever else a test adds."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rosbags.interfaces import Qos
from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from joint_tf_publisher import Robot
from joint_tf_publisher.cli.bag.qos import tf_qos, tf_static_qos

STORE = get_typestore(Stores.ROS2_JAZZY)
JOINT_STATE = "sensor_msgs/msg/JointState"
MULTI_DOF_JOINT_STATE = "sensor_msgs/msg/MultiDOFJointState"
TF_MESSAGE = "tf2_msgs/msg/TFMessage"
STRING = "std_msgs/msg/String"
#: 2026-01-01 in ns: log times and stamps of the recordings (wall time).
T0_NS = 1_767_225_600 * 1_000_000_000


def stamp(ns: int) -> Any:
    return STORE.types["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9)


def joint_state(stamp_ns: int, names: Sequence[str], positions: Sequence[float]) -> bytes:
    """A serialized sensor_msgs/JointState."""
    import numpy as np

    header = STORE.types["std_msgs/msg/Header"](stamp=stamp(stamp_ns), frame_id="")
    message = STORE.types[JOINT_STATE](
        header=header,
        name=list(names),
        position=np.asarray(positions, dtype=np.float64),
        velocity=np.zeros(0),
        effort=np.zeros(0),
    )
    return bytes(STORE.serialize_cdr(message, JOINT_STATE))


def multi_dof_joint_state(
    stamp_ns: int,
    names: Sequence[str],
    poses: Sequence[Sequence[float]],
    little_endian: bool = True,
) -> bytes:
    """A serialized sensor_msgs/MultiDOFJointState: one (x, y, z, qx, qy, qz, qw) row of
    ``poses`` a name, zero twists; big endian bytes when ``little_endian`` is False."""
    types = STORE.types
    transforms = [
        types["geometry_msgs/msg/Transform"](
            translation=types["geometry_msgs/msg/Vector3"](x=row[0], y=row[1], z=row[2]),
            rotation=types["geometry_msgs/msg/Quaternion"](x=row[3], y=row[4], z=row[5], w=row[6]),
        )
        for row in poses
    ]
    zero = types["geometry_msgs/msg/Vector3"](x=0.0, y=0.0, z=0.0)
    message = types[MULTI_DOF_JOINT_STATE](
        header=types["std_msgs/msg/Header"](stamp=stamp(stamp_ns), frame_id="odom"),
        joint_names=list(names),
        transforms=transforms,
        twist=[types["geometry_msgs/msg/Twist"](linear=zero, angular=zero) for _ in poses],
        wrench=[],
    )
    return bytes(STORE.serialize_cdr(message, MULTI_DOF_JOINT_STATE, little_endian=little_endian))


def transform(
    stamp_ns: int,
    parent: str,
    child: str,
    xyz: Sequence[float],
    xyzw: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
) -> Any:
    """A TransformStamped (identity rotation unless ``xyzw`` says another)."""
    types = STORE.types
    header = types["std_msgs/msg/Header"](stamp=stamp(stamp_ns), frame_id=parent)
    return types["geometry_msgs/msg/TransformStamped"](
        header=header,
        child_frame_id=child,
        transform=types["geometry_msgs/msg/Transform"](
            translation=types["geometry_msgs/msg/Vector3"](x=xyz[0], y=xyz[1], z=xyz[2]),
            rotation=types["geometry_msgs/msg/Quaternion"](
                x=xyzw[0], y=xyzw[1], z=xyzw[2], w=xyzw[3]
            ),
        ),
    )


def tf_message(transforms: Iterable[Any]) -> bytes:
    return bytes(
        STORE.serialize_cdr(STORE.types[TF_MESSAGE](transforms=list(transforms)), TF_MESSAGE)
    )


def string(text: str) -> bytes:
    return bytes(STORE.serialize_cdr(STORE.types[STRING](data=text), STRING))


@dataclass
class Topic:
    """A topic of a recording: type and the QoS it was recorded with; ``key``: how messages
    name its connection where a topic has two (a merged recording), else its name."""

    name: str
    msgtype: str
    qos: list[Qos] = field(default_factory=list)
    key: str = ""


def write_bag(
    path: Path,
    storage: str,
    topics: Sequence[Topic],
    messages: Iterable[tuple[str, int, bytes]],
    compression: str = "",
) -> Path:
    """A bag at ``path`` of ``messages`` (topic name or key, log time ns, bytes) on ``topics``;
    ``compression``: rosbag2's ``file`` or ``message`` (zstd), "" for none."""
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    writer = Writer(path, version=9, storage_plugin=plugin)
    if compression:
        writer.set_compression(CompressionMode[compression.upper()], CompressionFormat.ZSTD)
    with writer:
        connections = {
            topic.key or topic.name: writer.add_connection(
                topic.name, topic.msgtype, typestore=STORE, offered_qos_profiles=topic.qos
            )
            for topic in topics
        }
        for name, time_ns, data in messages:
            writer.write(connections[name], time_ns, data)
    return path


def sweep(
    robot: Robot, count: int, rate_hz: float, start_ns: int = T0_NS
) -> list[tuple[int, dict[str, float]]]:
    """``count`` joint configurations of ``robot``'s moving, non-mimic single-value joints
    (each a sine within its limits), with their stamps (ns) at ``rate_hz``."""
    joints = moving_joints(robot)
    states = []
    for k in range(count):
        t = k / rate_hz
        values = {}
        for i, joint in enumerate(joints):
            low, high = -1.0, 1.0
            if joint.limit is not None and joint.joint_type != "continuous":
                low, high = joint.limit.lower, joint.limit.upper
            mid, half = (low + high) / 2, (high - low) / 2
            values[joint.name] = mid + 0.9 * half * math.sin(0.7 * t + i)
        states.append((start_ns + round(k * 1e9 / rate_hz), values))
    return states


def moving_joints(robot: Robot) -> list[Any]:
    return [
        joint
        for joint in robot.joints.values()
        if joint.joint_type in ("revolute", "continuous", "prismatic") and joint.mimic is None
    ]


def recording(
    path: Path,
    robot_file: Path,
    storage: str = "sqlite3",
    count: int = 50,
    rate_hz: float = 100.0,
    description: bool = True,
    extra_topics: Sequence[Topic] = (),
    extra: Iterable[tuple[str, int, bytes]] = (),
    compression: str = "",
) -> tuple[Path, list[tuple[int, dict[str, float]]]]:
    """A recording of ``robot_file``'s joint states (and its description on
    /robot_description at the first log time, latched); the states written."""
    robot = Robot.load(robot_file)
    states = sweep(robot, count, rate_hz)
    topics = [Topic("/joint_states", JOINT_STATE), *extra_topics]
    messages = [("/joint_states", t, joint_state(t, list(v), list(v.values()))) for t, v in states]
    if description:
        topics.append(Topic("/robot_description", STRING, [tf_static_qos()]))
        messages.append(("/robot_description", T0_NS, string(robot_file.read_text())))
    messages += list(extra)
    messages.sort(key=lambda item: item[1])
    return write_bag(path, storage, topics, messages, compression), states


__all__ = ["tf_qos", "tf_static_qos"]
