"""What a build of the Prompts page keeps in this process for the next (watch), and its priming after start."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from sitegen.gcpause import collector_paused, file_as_old
from sitegen.history.session_index import read_session_index
from sitegen.history.store import Snapshot, read_store
from sitegen.site.prompts.rows import ChunkMaker, KeptRows
from sitegen.site.state.records import SessionRecord

__all__ = ["KEPT", "STATE", "Kept", "Primer", "kept_lock", "load_state", "prime_prompts"]

STATE = ".sitegen/prompts/state.json"


@dataclass(slots=True)
class Kept:
    """The last build's reads and rows, kept in this process for the next build (watch), which then
    reads and links only what changed; valid while the state file holds the same token."""

    token: str
    snapshots: dict[str, Snapshot]
    rows: KeptRows
    # False when primed (prime_prompts): the build that kept it last did not look at every stored
    # chunk, so the next one does.
    looked: bool = True


# By site folder. A build takes its entry out and puts a new one back only when it finished.
KEPT: dict[str, Kept] = {}
# Held by a build of the page and by priming: one at a time in a process (watch builds in its watcher
# thread and primes there too, but rebuild() may be called from any thread).
kept_lock = threading.Lock()


def load_state(site_dir: Path) -> Any:
    """The page's state file as the last build wrote it, or None."""
    try:
        return orjson.loads((site_dir / STATE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


@dataclass(frozen=True, slots=True)
class Primer:
    """What a build that found the page up to date (and so read nothing) knew: enough to make later
    what it would have kept had it read the stores (prime_prompts)."""

    stores: Sequence[Path]
    records: Sequence[SessionRecord]
    token: str

    def make(self) -> Kept | None:
        """Every store read whole and its rows made, as a build that reads them all makes them; None
        when a store is locked (what a build shows then is not what was read)."""
        made = KeptRows()
        maker = ChunkMaker(self.records, None, made, read_session_index(self.stores).titles)
        snapshots: dict[str, Snapshot] = {}
        for store in self.stores:
            read = read_store(store)
            if read.busy:
                return None
            deque(maker.begin(read.path, None, []), maxlen=0)
            deque(maker.chunks(read.prompts), maxlen=0)
            if read.snapshot is not None:
                snapshots[str(read.path)] = read.snapshot
        maker.finish()
        return Kept(self.token, snapshots, made, looked=False)


# By site folder: set by a build that found the page up to date with nothing kept, taken by a build
# that reads the stores (it keeps its own) or by prime_prompts.
PRIMERS: dict[str, Primer] = {}


def prime_prompts(site_dir: Path) -> bool:
    """Read the stores and make what a build keeps for the next, when the last build in this process
    found the page up to date and so read nothing: `watch` calls it after it started, so the first
    prompt after start is read and linked alone, as later ones are. False when nothing was primed."""
    with kept_lock:
        primer = PRIMERS.pop(str(site_dir), None)
        held = KEPT.get(str(site_dir))
        if primer is None or (held is not None and held.token == primer.token):
            return False
        # As a build: hundreds of thousands of rows and strings, none in a cycle, kept for long.
        with collector_paused():
            kept = primer.make()
            file_as_old()
        state = load_state(site_dir)
        # Another process may have built the site meanwhile: then what was read is not what it shows.
        if kept is None or not isinstance(state, dict) or state.get("token") != kept.token:
            return False
        KEPT[str(site_dir)] = kept
        return True
