"""``joint-tf-publisher plot``: pictures of the skeleton with the expected size and content."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="plot needs matplotlib")
from matplotlib.image import imread  # noqa: E402
from repo_paths import REPO_ROOT  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402
from joint_tf_publisher.cli.main import main  # noqa: E402
from joint_tf_publisher.cli.plot import scene_bounds  # noqa: E402

DEMO_ARM = str(REPO_ROOT / "urdf" / "demo_arm.urdf")


def coloured_pixels(pixels: np.ndarray, channel: int) -> int:
    """Pixels where ``channel`` (0 red, 1 green, 2 blue) clearly dominates the others."""
    rgb = pixels[..., :3]
    others = np.delete(rgb, channel, axis=2)
    return int(np.sum(rgb[..., channel] - others.max(axis=2) > 0.3))


def test_plot_png_size_and_content(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pose.png"
    assert main(["plot", DEMO_ARM, "elbow_joint=1.0", "-o", str(out), "--dpi", "60"]) == 0
    assert "wrote" in capsys.readouterr().out
    pixels = imread(str(out))
    assert pixels.shape[:2] == (360, 390)  # 6 x 6.5 inches at 60 dpi
    assert (pixels[..., :3] < 0.2).any()  # black link points and text
    # The RGB frame axes are drawn.
    assert coloured_pixels(pixels, 0) > 10
    assert coloured_pixels(pixels, 1) > 10


def test_plot_configuration_changes_the_picture(tmp_path: Path) -> None:
    first, second = tmp_path / "a.png", tmp_path / "b.png"
    assert main(["plot", DEMO_ARM, "-o", str(first), "--dpi", "40", "--no-labels"]) == 0
    assert (
        main(
            [
                "plot",
                DEMO_ARM,
                "shoulder_lift_joint=1.2",
                "-o",
                str(second),
                "--dpi",
                "40",
                "--no-labels",
            ]
        )
        == 0
    )
    assert not np.array_equal(imread(str(first)), imread(str(second)))


def test_plot_sweep_is_a_strip(tmp_path: Path) -> None:
    out = tmp_path / "sweep.png"
    assert main(["plot", DEMO_ARM, "--sweep", "3", "-o", str(out), "--dpi", "40"]) == 0
    pixels = imread(str(out))
    assert pixels.shape[:2] == (200, 600)  # 3 panels of 5 x 5 inches at 40 dpi
    for third in np.array_split(pixels, 3, axis=1):
        assert (third[..., :3] < 0.2).any()


@pytest.mark.parametrize(("suffix", "magic"), [("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_plot_vector_formats(tmp_path: Path, suffix: str, magic: bytes) -> None:
    out = tmp_path / f"pose.{suffix}"
    assert (
        main(["plot", str(REPO_ROOT / "test" / "urdf" / "all_joint_types.urdf"), "-o", str(out)])
        == 0
    )
    assert out.read_bytes().startswith(magic)


def test_scene_bounds_hold_every_link() -> None:
    robot = Robot.load(DEMO_ARM)
    poses = [robot.link_fk(), robot.link_fk({"shoulder_lift_joint": 1.5})]
    centre, half_width = scene_bounds(poses)
    points = np.array([pose[:3, 3] for p in poses for pose in p.values()])
    assert np.all(np.abs(points - centre) <= half_width)


def test_plot_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["plot", DEMO_ARM, "--sweep", "1", "-o", str(tmp_path / "x.png")])
    assert exited.value.code == 2
    assert "--sweep needs at least 2 frames" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["plot", DEMO_ARM, "wrist=1", "-o", str(tmp_path / "x.png")])
    assert "unknown joint 'wrist'" in capsys.readouterr().err
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='r'>\n<link name='a'/>\n<link name='a'/>\n</robot>\n")
    assert main(["plot", str(bad), "-o", str(tmp_path / "x.png")]) == 1
    assert capsys.readouterr().err.startswith(f"{bad}:3: ")
    assert not (tmp_path / "x.png").exists()


def test_elev_and_azim_set_the_view_from_25_and_minus_60_by_default(tmp_path: Path) -> None:
    """cli.md: ``--elev`` and ``--azim`` set the view (degrees): each changes the picture;
    the defaults (elevation 25, azimuth -60) draw the same picture as given explicitly."""
    pictures = {}
    for name, view in (
        ("default", []),
        ("explicit", ["--elev", "25", "--azim", "-60"]),
        ("elev", ["--elev", "80"]),
        ("azim", ["--azim", "30"]),
    ):
        out = tmp_path / f"{name}.png"
        assert main(["plot", DEMO_ARM, "-o", str(out), "--dpi", "40", *view]) == 0
        pictures[name] = imread(str(out))
    assert np.array_equal(pictures["default"], pictures["explicit"])
    assert not np.array_equal(pictures["default"], pictures["elev"])
    assert not np.array_equal(pictures["default"], pictures["azim"])
    assert not np.array_equal(pictures["elev"], pictures["azim"])
