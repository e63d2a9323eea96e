"""The wheel carries what sitegen loads at run time: templates, static assets, demo sessions, py.typed."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from this checkout, once for both tests (a build takes seconds)."""
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
    )
    return next(dist.glob("sitegen-*.whl"))


def test_wheel_contains_templates_static_and_demo(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in (ROOT / "templates").glob("*.j2"):
        assert f"sitegen/templates/{template.name}" in names
    for asset in (ROOT / "static").iterdir():
        assert f"sitegen/static/{asset.name}" in names
    assert "sitegen/py.typed" in names
    assert any(n.startswith("sitegen/demo/pi/sessions/") and n.endswith(".jsonl") for n in names)
    assert any(n.startswith("sitegen/demo/odek/sessions/") for n in names)
    assert not any(n.startswith("tests/") for n in names)


def test_wheel_installs_and_finds_its_resources(wheel: Path, tmp_path: Path) -> None:
    """Resources load from inside the installed package, not from the checkout."""
    target = tmp_path / "installed"
    zipfile.ZipFile(wheel).extractall(target)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from sitegen.resources import resource_dir;"
        "print(resource_dir('templates')); print(resource_dir('static')); print(resource_dir('demo'))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(target)], check=True, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        assert line.startswith(str(target)), line
