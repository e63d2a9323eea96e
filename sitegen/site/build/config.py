"""What a build is asked to do and what it reports: its options, its result and its errors."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.errors import SitegenError

if TYPE_CHECKING:
    from sitegen.site.pages.early import LiveHooks

__all__ = [
    "OWNER_MARK",
    "POOL_MIN_JOBS",
    "BuildConfig",
    "BuildResult",
    "DiskFull",
    "ProgressCallback",
    "SiteError",
]

# The folder every site keeps its build state in; its presence says sitegen made the site.
OWNER_MARK = ".sitegen"
# Below this many sessions to render, a process pool costs more to start than it saves.
POOL_MIN_JOBS = 4

ProgressCallback = Callable[[int, int, str], None]


class SiteError(SitegenError):
    """The site cannot be built where asked (e.g. inside an agent dir)."""


class DiskFull(SiteError):
    """A write to the site failed for want of space: the build stops where it is."""

    def __init__(self, site: Path, reason: str) -> None:
        super().__init__(
            f"Build stopped: {reason} writing {site}. Every page there is whole and the indexes are the "
            "last build's; free some space and build again to finish"
        )


@dataclass(slots=True)
class BuildConfig:
    out: Path
    agent_dirs: list[Path] = field(default_factory=list)
    odek_dirs: list[Path] = field(default_factory=list)
    demo: bool = False
    jobs: int | None = None
    strict: bool = False
    # Read PI_CODING_AGENT_DIR / ~/.pi etc. besides the given dirs (off for --demo and in tests).
    use_default_dirs: bool = True
    profile: bool = False  # time each phase of the build (BuildResult.seconds)
    # sitegen watch's first build: shown as it goes when it is long (sitegen.site.pages.early).
    live: LiveHooks | None = None
    # Whether the Prompts page's rows stay in this process for its next build (watch's, a test's): off
    # for `sitegen build`, which makes no other; at 2,000 sessions they were 165 MB held to its end.
    keep_for_next: bool = True


@dataclass(slots=True)
class BuildResult:
    sessions: int = 0
    rendered: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    full: bool = False
    # Lines of the problems page that name no defect (a prompt store without history_fts): --strict passes.
    notes: list[str] = field(default_factory=list)
    # With BuildConfig.profile: seconds per phase (sitegen.timings.PHASES), summed over the processes.
    seconds: dict[str, float] = field(default_factory=dict)
    processes: int = 1

    @property
    def changed(self) -> bool:
        return bool(self.rendered or self.removed or self.written)
