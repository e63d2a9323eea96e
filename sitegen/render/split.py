"""Render a long page in two halves on two cores: a forked child renders the second half."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence

from sitegen.gcpause import heap_frozen

__all__ = ["can_fork", "render_in_two", "split_by_weight"]

_BLOCK = 1 << 20


def can_fork() -> bool:
    """fork is only safe in a single-threaded POSIX process (the CLI's export, not the live server)."""
    return hasattr(os, "fork") and sys.platform != "darwin" and threading.active_count() == 1


def split_by_weight(weights: Sequence[int], head_start: int = 0) -> int:
    """The index that splits items of these weights into two halves of about equal total weight, the
    first half's counted from head_start (work its process does besides)."""
    half = (sum(weights) + head_start) / 2
    running = head_start
    for index, value in enumerate(weights):
        running += value
        if running >= half:
            return index + 1
    return len(weights)


def render_in_two(first: Callable[[], Iterator[bytes]], second: Callable[[], Iterator[bytes]]) -> Iterator[bytes]:
    """The chunks of first(), then those of second(), which a forked child renders at the same time
    into a temporary file: neither process ever holds a whole half of the page."""
    # Frozen, what both processes hold at the fork is never walked by the child's collections, which
    # would copy every memory page it sits on. The child leaves through os._exit, never thawing.
    with tempfile.TemporaryFile() as spool, heap_frozen():
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child, which leaves through os._exit
            code = 1
            try:
                for chunk in second():
                    spool.write(chunk)
                spool.flush()
                code = 0
            finally:
                os._exit(code)
        status = None
        try:
            yield from first()
            _, status = os.waitpid(pid, 0)
            if status != 0:
                # The child failed (out of memory, a bug): render the half here rather than lose it.
                yield from second()
                return
            spool.seek(0)
            while block := spool.read(_BLOCK):
                yield block
        finally:
            if status is None:  # abandoned or failed half way: the child's work is not wanted
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
