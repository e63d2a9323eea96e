"""Where a build's time goes, phase by phase, for `sitegen build --profile`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

__all__ = ["PHASES", "PhaseClock", "format_phases"]

# The phases a build reports, in pipeline order; a worker's time outside them is "other".
PHASES = (
    "plan",
    "load",
    "highlight",
    "markdown",
    "templates",
    "audit",
    "search",
    "prompts",
    "related",
    "stats",
    "problems",
    "projects",
    "all-sessions",
    "home",
    "write",
    "other",
)

P = ParamSpec("P")
R = TypeVar("R")


class PhaseClock:
    """Seconds per phase in one process. Phases nest, and time goes to the innermost open one: a phase
    counts its own time, less the phases it calls (markdown highlighting a fence counts it as highlight)."""

    def __init__(self, now: Callable[[], float] = time.perf_counter) -> None:
        self.now = now
        self.seconds: dict[str, float] = {}
        self._open: list[list[object]] = []  # [phase, since] per open phase, innermost last

    def enter(self, name: str) -> None:
        now = self.now()
        if self._open:
            self._charge(self._open[-1], now)
        self._open.append([name, now])

    def leave(self) -> None:
        now = self.now()
        self._charge(self._open.pop(), now)
        if self._open:
            self._open[-1][1] = now

    def _charge(self, opened: list[object], now: float) -> None:
        name, since = opened
        assert isinstance(name, str) and isinstance(since, float)
        self.seconds[name] = self.seconds.get(name, 0.0) + now - since
        opened[1] = now

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self.enter(name)
        try:
            yield
        finally:
            self.leave()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The block's time goes to no phase: work timed elsewhere (a worker's render, whose seconds
        come back with its outcome) is not counted twice."""
        now = self.now()
        if self._open:
            self._charge(self._open[-1], now)
        try:
            yield
        finally:
            if self._open:
                self._open[-1][1] = self.now()

    def timed(self, name: str, func: Callable[P, R]) -> Callable[P, R]:
        """func, with its time charged to a phase."""

        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            self.enter(name)
            try:
                return func(*args, **kwargs)
            finally:
                self.leave()

        return run

    def take(self) -> dict[str, float]:
        """The seconds so far, and a fresh start (one worker process renders many sessions)."""
        seconds, self.seconds = self.seconds, {}
        return seconds

    def add(self, seconds: Mapping[str, float]) -> None:
        for name, value in seconds.items():
            self.seconds[name] = self.seconds.get(name, 0.0) + value


def format_phases(seconds: Mapping[str, float], wall: float, processes: int) -> Iterable[str]:
    """The table `sitegen build --profile` prints: each phase's seconds (summed over the processes)
    and its share, then the total and the wall time."""
    total = sum(seconds.values())
    names = [name for name in PHASES if name in seconds] + sorted(set(seconds) - set(PHASES))
    yield f"{'phase':<12} {'seconds':>8} {'share':>6}"
    for name in names:
        share = seconds[name] / total if total else 0.0
        yield f"{name:<12} {seconds[name]:8.3f} {share:6.1%}"
    yield f"{'total':<12} {total:8.3f} {1:6.0%}  (summed over {processes} process{'es' if processes != 1 else ''})"
    yield f"{'wall':<12} {wall:8.3f}"
