"""The distribution: ``python -m build`` makes an sdist and a wheel an index accepts, holding what the package needs.

The wheel installed into a fresh environment with its extras is served and called by ``nox -s
package`` (``tests/package_smoke.py``); these tests check the files themselves.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.version import Version

import flask_mcp

ROOT = Path(__file__).resolve().parent.parent

#: Keep a Changelog's kinds of change, the only subsections a release may have.
CHANGE_KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """The sdist, the wheel and what the build printed."""
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return sdist, wheel, run.stdout + run.stderr


def test_the_build_warns_of_nothing(built: tuple[Path, Path, str]) -> None:
    # setuptools warns, among others, of a data folder the wheel would leave out.
    assert [line for line in built[2].splitlines() if line.startswith("WARNING")] == []


def test_twine_accepts_both(built: tuple[Path, Path, str]) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(built[0]), str(built[1])],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_wheel_holds_every_file_of_the_package(built: tuple[Path, Path, str]) -> None:
    package = ROOT / "flask_mcp"
    wanted = {
        path.relative_to(ROOT).as_posix()
        for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in {".pyc", ".pyo"}
    }
    with zipfile.ZipFile(built[1]) as wheel:
        names = set(wheel.namelist())
    assert wanted - names == set()
    # The templates, the official schemas and the typing marker among them, not only modules.
    assert {"flask_mcp/py.typed", "flask_mcp/official_schema/2026-07-28/schema.json"} <= names
    assert any(name.startswith("flask_mcp/oauth/templates/") for name in names)
    assert any(name.startswith("flask_mcp/transport/templates/") for name in names)


def test_the_wheel_says_its_version_extras_and_license(built: tuple[Path, Path, str]) -> None:
    with zipfile.ZipFile(built[1]) as wheel:
        (metadata_name,) = [name for name in wheel.namelist() if name.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(wheel.read(metadata_name).decode())
        names = wheel.namelist()
    assert metadata["Version"] == flask_mcp.__version__
    assert f"-{flask_mcp.__version__}-" in built[1].name
    assert {"redis", "oauth", "otel", "sdk"} <= set(metadata.get_all("Provides-Extra") or [])
    assert any(name.endswith("licenses/LICENSE") for name in names)


def test_the_sdist_can_rebuild_and_test_itself(built: tuple[Path, Path, str]) -> None:
    with tarfile.open(built[0]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {"CHANGELOG.md", "LICENSE", "README.md", "setup.cfg", "pyproject.toml", "noxfile.py"} <= names
    assert {"tests/conftest.py", "docs/conf.py", "examples/quickstart/app.py"} <= names
    assert not any("__pycache__" in name for name in names)


def test_the_changelog_keeps_a_changelog() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[([^\]]+)\](.*)$", text, re.MULTILINE)
    assert releases[0] == ("Unreleased", ""), "the newest section is [Unreleased]"
    for version, rest in releases[1:]:
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
        assert re.fullmatch(r" - \d{4}-\d{2}-\d{2}", rest), f"{version} has its date"
    kinds = set(re.findall(r"^### (.+)$", text, re.MULTILINE))
    assert kinds <= CHANGE_KINDS
    released = [Version(version) for version, _ in releases[1:]]
    assert released == sorted(released, reverse=True)
    # The package's version is the newest release, or the one being prepared.
    assert not released or Version(flask_mcp.__version__) >= released[0]
