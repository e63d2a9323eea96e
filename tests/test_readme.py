"""The README's two fresh-machine commands: CI runs the second one word for word, in a fresh venv."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    """The commands of the README's first bash block, without their comments."""
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.DOTALL)
    assert block is not None, "the README has no bash block of commands"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_readme_begins_with_an_install_and_run_command_and_a_test_command() -> None:
    run, test = readme_commands()
    assert run.startswith("pip install") and "sitegen" in run
    assert test.startswith("pip install -e '.[test]'") and "pytest" in test


def test_ci_runs_the_readme_test_command_in_a_fresh_venv() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    _, test = readme_commands()
    lines = [line.strip() for line in script.splitlines()]
    assert test in lines, "CI must run the README's test command word for word"
    venv = next(i for i, line in enumerate(lines) if line.startswith("python3 -m venv"))
    activate = next(i for i, line in enumerate(lines) if line.startswith("source ") and "/bin/activate" in line)
    assert venv < activate < lines.index(test), "the command must run inside a venv CI made fresh"
    assert "--system-site-packages" not in script


def test_readme_is_for_users_and_short() -> None:
    """Method and figures live in bench/README.md and the design in ARCHITECTURE.md, not in the README."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    for heading in ("## Commands", "## Where sessions are found", "## What the pages show", "## Long sessions"):
        assert heading in readme, heading
    for heading in ("## Faults", "## Privacy and safety", "## Performance", "## Testing"):
        assert heading in readme, heading
    assert "bench/README.md" in readme and "ARCHITECTURE.md" in readme


def test_architecture_names_every_stage_folder() -> None:
    architecture = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    package = ROOT / "sitegen"
    folders = sorted(p.parent.relative_to(package).as_posix() for p in package.rglob("__init__.py"))
    missing = [folder for folder in folders if folder != "." and f"{folder.split('/')[-1]}/" not in architecture]
    assert not missing, f"ARCHITECTURE.md does not name these stage folders: {missing}"
