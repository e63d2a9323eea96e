"""The collector paused for loads is always switched back as it was, whatever happens inside."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from sessions import branching_session

from sitegen.gcpause import collector_paused
from sitegen.render.export import load_transcript
from sitegen.site.manifest import SiteManifest


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
