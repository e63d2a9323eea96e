"""The collector paused for loads is always switched back as it was, whatever happens inside."""

from __future__ import annotations

import gc
import platform
from pathlib import Path

import pytest
from sessions import branching_session

from sitegen import gcpause
from sitegen.gcpause import collector_paused, heap_frozen, heap_trimmed, imports_settled
from sitegen.render.export import load_transcript
from sitegen.site.state.manifest import SiteManifest


def test_collector_paused_restores_the_collector_even_after_an_error() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        assert not gc.isenabled()
        raise RuntimeError("load failed")
    assert gc.isenabled()
    gc.disable()  # switched off by the caller: left off
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_loads_leave_the_collector_on(tmp_path: Path) -> None:
    load_transcript(branching_session().write(tmp_path / "s.jsonl"))
    assert gc.isenabled()
    (tmp_path / ".sitegen").mkdir()
    (tmp_path / ".sitegen" / "manifest.json").write_text("{broken")
    assert SiteManifest.load(tmp_path).sessions == {}
    assert gc.isenabled()


def test_settled_imports_leave_the_collector_as_they_found_it() -> None:
    with imports_settled():
        assert not gc.isenabled()
        made = [[index] for index in range(5000)]
    # What the block made was filed with the old objects, not left for the next young collection.
    assert gc.isenabled() and gc.get_freeze_count() == 0 and gc.get_count()[0] < 1000
    with heap_frozen():
        with imports_settled():
            made.append([])
        # A render's frozen heap stays frozen: what was frozen is in no generation the collector walks.
        # (Not by the freeze count: a frozen object that another thread frees leaves the count.)
        walked = {id(thing) for generation in range(3) for thing in gc.get_objects(generation=generation)}
        assert id(made) not in walked


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_the_heap_is_trimmed_by_glibcs_malloc_trim() -> None:
    heap_trimmed()
    assert gcpause._trim is not False and gcpause._trim.__name__ == "malloc_trim"
    heap_trimmed()  # found once, called again
