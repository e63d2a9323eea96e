"""The cyclic garbage collector paused or held off during bulk work that makes no garbage cycles."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused", "heap_frozen"]


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
