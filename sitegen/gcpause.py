"""The cyclic garbage collector paused or held off during bulk work that makes no cycles; the C heap trimmed."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["collector_paused", "file_as_old", "heap_frozen", "heap_trimmed", "imports_settled"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector: loading a session or the manifest makes hundreds of thousands of
    dicts and lists, and the collector would walk them again and again for nothing (a third of the
    time of a 50 MB load). Reference counting still frees everything as usual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def heap_frozen() -> Iterator[None]:
    """Move every object alive now out of the collector's reach until the block ends: a page render
    keeps its loaded transcript throughout, and full collections would walk all of it again and
    again. Nests: only the outermost block unfreezes (the freeze is process-wide)."""
    outermost = gc.get_freeze_count() == 0
    gc.freeze()
    try:
        yield
    finally:
        if outermost:
            gc.unfreeze()


@contextmanager
def imports_settled() -> Iterator[None]:
    """Imports make thousands of long-lived objects and no garbage: pause the collector while they
    run, then file what they made with the old objects, so the next young collection does not walk
    it all either (a tenth of a small rebuild went to such walks)."""
    with collector_paused():
        yield
        file_as_old()


def file_as_old() -> None:
    """File every object alive now with the oldest generation, without walking any (two list splices):
    after a pause that made a million long-lived objects (a loaded session), the collector's next young
    pass would walk them all, and the next middle one again, for no garbage."""
    if gc.get_freeze_count() == 0:  # no render holds the heap frozen
        gc.freeze()
        gc.unfreeze()  # the frozen objects join the oldest generation


def heap_trimmed() -> None:
    """Hand the C heap's free pages back to the system (glibc's malloc_trim; elsewhere nothing). Memory
    Python frees stays the process's until then: after the Prompts page of 2,000 sessions, 180 MB that
    the search export's forked processes would start from."""
    global _trim
    if _trim is None:
        import ctypes

        try:
            # The running process's own symbols, libc's among them (find_library would run ldconfig).
            _trim = ctypes.CDLL(None).malloc_trim
        except (OSError, AttributeError):
            _trim = False
    if _trim:
        _trim(0)


_trim: Any = None
