"""ament_python packaging for joint_tf_publisher.

Data files are installed under ``share/joint_tf_publisher`` where ``ros2 launch`` and
``ros2 pkg prefix`` look for them; setup.cfg puts the executables in
``lib/joint_tf_publisher`` where ``ros2 run`` looks for them.
"""

from __future__ import annotations

from glob import glob

from setuptools import find_packages, setup

PACKAGE_NAME = "joint_tf_publisher"
SHARE_DIR = f"share/{PACKAGE_NAME}"


def files_matching(*patterns: str) -> list[str]:
    """Sorted repository-relative paths matching any of ``patterns`` (relative to setup.py)."""
    return sorted({path for pattern in patterns for path in glob(pattern)})


setup(
    name=PACKAGE_NAME,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE_NAME, f"{PACKAGE_NAME}.*"]),
    package_data={PACKAGE_NAME: ["py.typed"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE_NAME}"]),
        (SHARE_DIR, ["package.xml"]),
        (f"{SHARE_DIR}/launch", files_matching("launch/*.launch.py", "launch/*.launch.xml")),
        (f"{SHARE_DIR}/config", files_matching("config/*.yaml", "config/*.rviz")),
        (f"{SHARE_DIR}/urdf", files_matching("urdf/*.urdf", "urdf/*.xacro", "urdf/*.sdf")),
    ],
    # The oldest supported distro's system packages (Humble, Ubuntu 22.04: numpy 1.21.5,
    # lxml 4.8.0); `make compat` runs the core tests with them.
    install_requires=["setuptools", "numpy>=1.21", "lxml>=4.8"],
    # Optional parts. `colcon test` runs pytest because the "test" extra names it (without,
    # colcon falls back to unittest and finds no test). `graph` needs Graphviz's `dot`
    # program, which is not on PyPI (Debian/Ubuntu: apt install graphviz; rosdep key
    # graphviz); `.dot` output works without it.
    extras_require={
        "plot": ["matplotlib>=3.5"],
        "xacro": ["xacro>=2.0"],
        "params": ["pyyaml>=5.4"],
        # `bag repair` and `doctor --bag` (docs/recordings.md): no rosdep key, see package.xml.
        "bag": ["rosbags>=0.10", "pyyaml>=5.4"],
        "test": ["pytest>=7", "hypothesis>=6", "scipy>=1.8", "pyyaml>=5.4"],
    },
    zip_safe=True,
    maintainer="joint_tf_publisher developers",
    maintainer_email="joint_tf_publisher@example.com",
    description="Robot description (URDF or SDFormat) plus joint states to tf2 transforms.",
    license="Apache-2.0",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [
            # The ROS executable: `ros2 run joint_tf_publisher joint_tf_publisher`.
            f"{PACKAGE_NAME} = {PACKAGE_NAME}.entry:node_main",
            # Many robots' nodes in one process: `ros2 run joint_tf_publisher joint_tf_fleet`.
            f"joint_tf_fleet = {PACKAGE_NAME}.entry:fleet_main",
            # The command line tool (check, fk, run, ...).
            f"joint-tf-publisher = {PACKAGE_NAME}.entry:cli_main",
        ],
    },
)
