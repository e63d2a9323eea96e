"""Build progress for the CLI: a bar that redraws on a terminal, plain lines otherwise (CI logs)."""

from __future__ import annotations

import time
from types import TracebackType
from typing import TextIO

__all__ = ["Progress", "progress_text"]

BAR_WIDTH = 30
# Plain output prints a line at most this often, so CI logs stay short.
PLAIN_INTERVAL_S = 2.0


def progress_text(done: int, total: int) -> str:
    """The build's progress in words: the terminal's line and the home page's note say the same."""
    return f"{done} of {total} session{'s' if total != 1 else ''} written"


class Progress:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self._last = 0.0
        self._drawn = False

    def update(self, done: int, total: int, label: str) -> None:
        now = time.monotonic()
        if self.tty:
            filled = BAR_WIDTH * done // max(total, 1)
            bar = "#" * filled + "-" * (BAR_WIDTH - filled)
            self.stream.write(f"\r[{bar}] {progress_text(done, total)} {label[:40]:<40}")
            self.stream.flush()
            self._drawn = True
        elif done == total or now - self._last >= PLAIN_INTERVAL_S:
            self.stream.write(f"{progress_text(done, total)}\n")
            self._last = now

    def clear(self) -> None:
        """Take the bar off the terminal's line, so that a message can go there (the next update
        draws it again below)."""
        if self._drawn:
            self.stream.write("\r" + " " * (BAR_WIDTH + 80) + "\r")
            self.stream.flush()
            self._drawn = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
