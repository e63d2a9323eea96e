"""Refresh everything that depends on the installed pygments and markdown-it-py: the lexer priority table,
the golden pages, and the record of which releases the goldens were made with.

Run after moving the ranges in pyproject.toml to a new release (in a venv that has it installed):

    python -m tools.refresh_goldens

then review `git diff` of tests/golden (zcat the pages) before committing.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRIORITY_MODULE = ROOT / "sitegen" / "render" / "lexer_priority.py"
VERSIONS_FILE = ROOT / "tests" / "golden" / "versions.json"
# The libraries whose releases change a page's bytes (highlighting tables, markdown HTML).
GOLDEN_LIBRARIES = ("pygments", "markdown-it-py")


def lexer_priorities() -> dict[str, float]:
    """Lexer class name -> priority, for the installed pygments' lexers that claim file names."""
    from sitegen.render.base._internals import lexer_mapping

    priorities = {}
    for class_name, (module, _name, aliases, patterns, _mimes) in lexer_mapping().items():
        priority = getattr(getattr(importlib.import_module(module), class_name), "priority", 0)
        if aliases and patterns and priority:
            priorities[class_name] = priority
    return dict(sorted(priorities.items()))


def write_priority_module() -> None:
    text = PRIORITY_MODULE.read_text(encoding="utf-8")
    head, _, _ = text.partition("PYGMENTS_VERSION = ")
    rows = "".join(f'    "{name}": {priority!r},\n' for name, priority in lexer_priorities().items())
    body = (
        f'PYGMENTS_VERSION = "{version("pygments")}"\n\n'
        "# Lexer class name -> priority, for the lexers that have a file name pattern and a priority other\n"
        "# than 0.\n"
        f"PRIORITIES: dict[str, float] = {{\n{rows}}}\n"
    )
    PRIORITY_MODULE.write_text(head + body, encoding="utf-8")


def main() -> int:
    write_priority_module()
    VERSIONS_FILE.write_text(
        json.dumps({name: version(name) for name in GOLDEN_LIBRARIES}, indent=2) + "\n", encoding="utf-8"
    )
    env = {"SITEGEN_UPDATE_GOLDEN": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "tests/test_golden.py"]
    return subprocess.run(command, cwd=ROOT, env={**os.environ, **env}, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
