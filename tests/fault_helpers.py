"""Helpers for the fault tests: the CLI in its own process, its worker processes, a generated corpus."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson
import pytest
from site_helpers import _Links

# The console entry, as `sitegen` runs it (build ends through os._exit).
CLI = [sys.executable, "-c", "import sys; from sitegen.cli import main; sys.exit(main())"]
# Long enough for the slowest machine to get there; nothing here measures speed.
DEADLINE_S = 30.0

needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")


def write_corpus(agent: Path, sessions: int, total_mb: float, seed: int) -> None:
    """The bench corpus generator's sessions (several projects, subagents, artifacts)."""
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    try:
        from bench.corpus import write_corpus as generate
    finally:
        sys.path.remove(str(root))
    generate(agent, sessions=sessions, total_mb=total_mb, seed=seed)


def start_cli(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )


def run_cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=DEADLINE_S * 4)


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process; None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])


def children(pid: int) -> list[int]:
    """The live processes whose parent is pid."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[1] == pid and stat[0] != "Z":
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """Running (a zombie has ended: it only waits for its parent to read its exit code)."""
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def wait_until(condition: Callable[[], bool], what: str, deadline: float = DEADLINE_S) -> None:
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def pages(site: Path) -> list[Path]:
    return sorted(site.glob("sessions/*/*.html"))


def wait_for_workers(process: subprocess.Popen[str], count: int = 2) -> list[int]:
    """Once the build renders in its worker processes: their pids."""
    wait_until(lambda: len(children(process.pid)) >= count or process.poll() is not None, "the workers")
    assert process.poll() is None, process.communicate()
    return children(process.pid)


def all_gone(pids: Sequence[int], deadline: float = 1.0) -> bool:
    """Whether every process ends within the deadline (polled; a generous machine-independent bound
    is not what is tested: the kernel ends them at once)."""
    end = time.monotonic() + deadline
    while any(alive(pid) for pid in pids):
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def finish(process: subprocess.Popen[str], workers: Sequence[int] = ()) -> str:
    """The stopped build's stderr, once it ended (and its stray workers, if any, are killed so that
    they do not hold its pipes open: that would fail the test rather than hang it)."""
    try:
        _, stderr = process.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        for pid in workers:
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
        _, stderr = process.communicate()
    return stderr


def manifest_data(site: Path) -> dict[str, Any]:
    """The site's manifest as it is on disk now (it is replaced whole, so always readable)."""
    try:
        data: dict[str, Any] = orjson.loads((site / ".sitegen" / "manifest.json").read_bytes())
    except OSError:
        return {}
    return data


def recorded(site: Path) -> int:
    """How many sessions the manifest on disk has a page for."""
    return sum(1 for entry in manifest_data(site).get("sessions", {}).values() if entry.get("record"))


def reachable_problems(site: Path) -> list[str]:
    """From the home page, through every link to a page of the site: links to files that are not
    there, and pages that are not whole (a page ends with </html>)."""
    problems: list[str] = []
    seen: set[Path] = set()
    queue = [(site / "index.html").resolve()]
    while queue:
        page = queue.pop()
        if page in seen:
            continue
        seen.add(page)
        html = page.read_text(encoding="utf-8")
        where = page.relative_to(site.resolve())
        if not html.rstrip().endswith("</html>"):
            problems.append(f"{where}: not whole")
        parser = _Links()
        parser.feed(html)
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith(("data:", "//")) or not parts.path:
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if not target.exists():
                problems.append(f"{where}: {link}")
            elif target.suffix == ".html":
                queue.append(target)
    return problems


def temporaries(site: Path) -> list[Path]:
    """Files of writes that never finished."""
    return [path for path in site.rglob(".sitegen-*.tmp")]


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """24 generated sessions in several projects (subagents, artifacts): a few seconds to build on
    two workers, so there is time to stop the build in the middle. Tests copy it to change it."""
    agent = tmp_path_factory.mktemp("corpus") / "agent"
    write_corpus(agent, sessions=24, total_mb=2, seed=7)
    return agent


def copy_corpus(corpus: Path, target: Path) -> Path:
    shutil.copytree(corpus, target)
    return target
