"""Lint and types are part of the suite, so CI holds the code to them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed (pip install -e '.[test]')")
def test_ruff_is_clean() -> None:
    result = subprocess.run(["ruff", "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]


def test_mypy_strict_is_clean() -> None:
    pytest.importorskip("mypy")
    result = subprocess.run([sys.executable, "-m", "mypy", "sitegen"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]


def _eslint() -> str | None:
    """eslint from $SITEGEN_ESLINT (.ci/run installs it from npm), else from PATH."""
    return os.environ.get("SITEGEN_ESLINT") or shutil.which("eslint")


def test_page_scripts_pass_eslint() -> None:
    """The page's scripts declare every name they use and share one global, window.sitegen."""
    eslint = _eslint()
    if eslint is None:
        if os.environ.get("CI"):
            pytest.fail("eslint is missing: .ci/run installs it (npm install eslint@9) and sets SITEGEN_ESLINT")
        pytest.skip("eslint is not installed (npm install eslint@9; set SITEGEN_ESLINT to its bin/eslint)")
    result = subprocess.run(
        [eslint, "--config", "eslint.config.mjs", "--max-warnings", "0", "static/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]


def test_page_scripts_share_one_global() -> None:
    """No script sets a window.sitegen* global of its own (the lint rule, checked without node too)."""
    offenders = []
    for script in sorted((ROOT / "static").glob("*.js")):
        for number, line in enumerate(script.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\bwindow\.sitegen[A-Z]\w*", line):
                offenders.append(f"{script.name}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_page_scripts_make_the_namespace_before_using_it() -> None:
    """Each script that uses window.sitegen makes it first (scripts load in any order)."""
    for script in sorted((ROOT / "static").glob("*.js")):
        text = script.read_text(encoding="utf-8")
        if text.startswith("/*"):  # the opening comment may name the namespace
            text = text[text.index("*/") + 2 :]
        lines = text.splitlines()
        uses = [n for n, line in enumerate(lines) if "window.sitegen." in line]
        if uses:
            made = [n for n, line in enumerate(lines) if line == "window.sitegen = window.sitegen || {};"]
            assert made and made[0] < uses[0], f"{script.name} uses window.sitegen before making it"
