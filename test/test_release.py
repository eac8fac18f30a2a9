"""What a release needs (bloom for a ROS distro, a wheel for pip): licence, changelog, builds.

* LICENSE is the Apache License 2.0 text, the licence package.xml and setup.py declare.
* CHANGELOG.rst is in the ROS changelog format (as catkin_generate_changelog writes it and
  bloom reads it with catkin_pkg), with a section for the next release.
* pyproject.toml declares a build backend: ``python -m build --wheel`` and ``pip install .``
  build through it, and the result holds the package, its data files under
  ``share/joint_tf_publisher``, the console scripts and the optional extras.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from lxml import etree
from test_package_layout import NOT_SOURCE

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "joint_tf_publisher"
#: sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt
APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
BUILD_TIMEOUT_S = 600


def package_version() -> str:
    """The version package.xml declares."""
    version = etree.parse(str(ROOT / "package.xml")).getroot().findtext("version")
    assert version is not None
    return version


def source_copy(destination: Path) -> Path:
    """A copy of the repository's sources (no environments, caches or build output)."""
    shutil.copytree(
        ROOT, destination, ignore=shutil.ignore_patterns(*NOT_SOURCE, "*.egg-info", "*_cache")
    )
    return destination


def test_license_is_the_apache_2_text_package_xml_declares() -> None:
    license_text = (ROOT / "LICENSE").read_bytes()
    manifest = etree.parse(str(ROOT / "package.xml")).getroot()
    setup_license = subprocess.run(
        [sys.executable, "setup.py", "--license"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[-1]

    assert hashlib.sha256(license_text).hexdigest() == APACHE_2_SHA256
    assert manifest.findtext("license") == setup_license == "Apache-2.0"


# catkin_pkg's changelog reader calls a docutils API that newer docutils deprecates.
@pytest.mark.filterwarnings("ignore:nodes.Node.traverse")
def test_changelog_is_in_the_ros_format_with_a_section_for_the_next_release() -> None:
    from catkin_pkg.changelog import get_changelog_from_path

    changelog = get_changelog_from_path(str(ROOT / "CHANGELOG.rst"), PACKAGE)
    versions = [version for version, _date, _content in changelog.foreach_version()]
    text = (ROOT / "CHANGELOG.rst").read_text(encoding="utf-8")

    assert text.splitlines()[1] == f"Changelog for package {PACKAGE}"
    # catkin_prepare_release turns "Forthcoming" into "<version> (<date>)" when releasing.
    assert "Forthcoming" in text.splitlines()[4] or package_version() in versions
    assert all(version <= package_version() for version in versions)


def test_pyproject_declares_the_setuptools_backend_and_no_project_table() -> None:
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads TOML")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))

    assert pyproject["build-system"]["build-backend"] == "setuptools.build_meta"
    assert any(req.startswith("setuptools") for req in pyproject["build-system"]["requires"])
    # A [project] table would make setuptools take the metadata from here, not setup.py.
    assert "project" not in pyproject


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel ``python -m build --wheel`` makes from a copy of the sources."""
    scratch = tmp_path_factory.mktemp("wheel")
    source = source_copy(scratch / "src")
    result = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", scratch / "dist"]
        + [source],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    (built,) = (scratch / "dist").glob("*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_holds_the_package_data_files_scripts_and_licence(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        dist_info = f"{PACKAGE}-{package_version()}.dist-info"
        entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
        metadata = Parser().parsestr(archive.read(f"{dist_info}/METADATA").decode())
    share = f"{PACKAGE}-{package_version()}.data/data/share/{PACKAGE}"

    assert wheel.name.startswith(f"{PACKAGE}-{package_version()}-py3-none-any")
    assert {f"{PACKAGE}/__init__.py", f"{PACKAGE}/py.typed"} <= names
    assert {f"{share}/package.xml", f"{share}/launch/joint_tf_publisher.launch.py"} <= names
    assert any(name.endswith("/LICENSE") and dist_info in name for name in names)
    assert f"{PACKAGE} = {PACKAGE}.entry:node_main" in entry_points
    assert f"joint-tf-publisher = {PACKAGE}.entry:cli_main" in entry_points
    assert {"plot", "test", "xacro"} <= set(metadata.get_all("Provides-Extra") or [])
    requirements = metadata.get_all("Requires-Dist") or []
    assert any(r.startswith("matplotlib") and 'extra == "plot"' in r for r in requirements)
    assert any(r.startswith("pytest") and 'extra == "test"' in r for r in requirements)


INSTALLED_COPIES = (
    "import importlib.metadata as m; "
    "print(sorted(str(d.locate_file('')) for d in m.distributions() "
    "if d.metadata['Name'] in ('joint_tf_publisher', 'joint-tf-publisher')))"
)


def installed_copies() -> str:
    """Where this interpreter's environment has the package installed (pip's view)."""
    return subprocess.run(
        [sys.executable, "-c", INSTALLED_COPIES],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


@pytest.mark.slow
def test_pip_install_of_the_source_gives_a_working_command_line(tmp_path: Path) -> None:
    source = source_copy(tmp_path / "src")
    before = installed_copies()
    prefix = tmp_path / "prefix"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q"]
        # --ignore-installed: without it pip would first uninstall the venv's editable install.
        + ["--disable-pip-version-check", "--ignore-installed", "--prefix", str(prefix)]
        + [str(source)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert install.returncode == 0, f"{install.stdout}\n{install.stderr}"
    (site_packages,) = prefix.glob("lib/python*/site-packages")
    env = dict(os.environ, PYTHONPATH=str(site_packages))

    check = subprocess.run(
        [str(prefix / "bin" / "joint-tf-publisher"), "check", str(ROOT / "urdf" / "demo_arm.urdf")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    imported_from = subprocess.run(
        [sys.executable, "-c", "import joint_tf_publisher as p; print(p.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.strip()
    assert Path(imported_from) == site_packages / PACKAGE / "__init__.py"
    assert (prefix / "share" / PACKAGE / "package.xml").is_file()
    assert check.returncode == 0, check.stderr
    assert "demo_arm" in check.stdout
    assert installed_copies() == before  # the environment's own install is left alone
