"""Render a long page in two halves on two cores: a forked child renders the second half."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["can_fork", "render_in_two", "split_by_weight"]

T = TypeVar("T")


def can_fork() -> bool:
    """fork is only safe in a single-threaded POSIX process (the CLI's export, not the live server)."""
    return hasattr(os, "fork") and sys.platform != "darwin" and threading.active_count() == 1


def split_by_weight(items: Sequence[T], weight: Callable[[T], int]) -> int:
    """The index that splits items into two halves of about equal total weight."""
    weights = [weight(item) for item in items]
    half = sum(weights) / 2
    running = 0
    for index, value in enumerate(weights):
        running += value
        if running >= half:
            return index + 1
    return len(items)


def render_in_two(render: Callable[[Sequence[T]], str], first: Sequence[T], second: Sequence[T]) -> str:
    """render(first) + render(second), the second computed in a forked child at the same time."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child, which leaves through os._exit
        code = 1
        try:
            os.close(read_fd)
            data = render(second).encode("utf-8", "surrogatepass")
            with os.fdopen(write_fd, "wb") as pipe:
                pipe.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    try:
        head = render(first)
    finally:
        with os.fdopen(read_fd, "rb") as pipe:
            tail = pipe.read()
        _, status = os.waitpid(pid, 0)
    if status != 0:
        # The child failed (out of memory, a bug): render the half here rather than lose it.
        return head + render(second)
    return head + tail.decode("utf-8", "surrogatepass")
