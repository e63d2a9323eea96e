"""The cyclic garbage collector around bulk loads, which make many objects and no garbage cycles."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


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
