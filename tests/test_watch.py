"""sitegen watch: what is watched, the build loop on changes, failed rebuilds, Ctrl-C, and the real build."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
import urllib.request
from pathlib import Path

import orjson
import pytest
from site_helpers import make_session, written_on_reload

from sitegen.errors import SitegenError
from sitegen.resources import resource_dir
from sitegen.site.build.pipeline import BuildConfig, BuildResult, ProgressCallback
from sitegen.site.live.watch import LiveSite, WatchError, WatchEvent, watch_paths


class FakeBuild:
    """Counts calls and writes index.html with the call number; raises `fail` when set."""

    def __init__(self) -> None:
        self.calls = 0
        self.fail: Exception | None = None
        self.changed = True
        self.called = threading.Condition()
        self.progress: list[ProgressCallback | None] = []

    def __call__(self, config: BuildConfig, progress: ProgressCallback | None) -> BuildResult:
        with self.called:
            self.calls += 1
            self.progress.append(progress)
            self.called.notify_all()
        if self.fail is not None:
            raise self.fail
        if not self.changed:
            return BuildResult(sessions=1)
        config.out.mkdir(parents=True, exist_ok=True)
        (config.out / "index.html").write_text(f"<body>ZZ_BUILD_{self.calls}_ZZ</body>", encoding="utf-8")
        return BuildResult(sessions=1, rendered=["s"], written=["index.html"])

    def wait_for(self, calls: int, timeout: float = 10.0) -> bool:
        with self.called:
            return self.called.wait_for(lambda: self.calls >= calls, timeout)


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    folder = tmp_path / "agent"
    make_session(folder, "/work/alpha", "sess-alpha", "alpha")
    return folder


def _live(tmp_path: Path, agent: Path, build: FakeBuild, events: list[WatchEvent]) -> LiveSite:
    config = BuildConfig(out=tmp_path / "site", agent_dirs=[agent], use_default_dirs=False, jobs=1)
    return LiveSite(config, port=0, build=build, report=events.append, paths=[agent / "sessions"], wait_timeout=5)


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as reply:
        body: bytes = reply.read()
        return body


def test_watch_paths(tmp_path: Path, agent: Path) -> None:
    (agent / "blobs").mkdir()
    odek = tmp_path / "odek"
    odek.mkdir()
    config = BuildConfig(
        out=tmp_path / "site",
        agent_dirs=[agent, tmp_path / "missing"],
        odek_dirs=[odek],
        use_default_dirs=False,
    )
    paths = watch_paths(config)
    assert paths[:3] == [(agent / "sessions").resolve(), (agent / "blobs").resolve(), odek.resolve()]
    assert not any("missing" in str(p) for p in paths)
    # From a source checkout, template and asset edits rebuild the site too.
    if "site-packages" not in str(resource_dir("templates")):
        assert resource_dir("templates").resolve() in paths


def test_watch_paths_before_sessions_exist(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    paths = watch_paths(BuildConfig(out=tmp_path / "site", agent_dirs=[agent], use_default_dirs=False))
    assert paths[0] == agent.resolve()
    demo = watch_paths(BuildConfig(out=tmp_path / "site", demo=True))
    assert any(p.name == "sessions" and "demo" in str(p) for p in demo)


def test_a_change_runs_the_build_once_more(tmp_path: Path, agent: Path) -> None:
    build, events = FakeBuild(), []
    with _live(tmp_path, agent, build, events) as live:
        seen: list[int] = []
        first = live.start(on_progress=lambda done, total, key: seen.append(done))
        assert build.calls == 1 and first.written == ["index.html"]
        assert build.progress[0] is not None
        assert b"ZZ_BUILD_1_ZZ" in _get(live.url)
        assert live.watching.wait(5)
        # Once watching, one catch-up build covers changes made during the first one.
        assert build.calls == 2 and build.progress[1] is None  # rebuilds draw no progress bar
        token = live.version.token
        session = next((agent / "sessions").rglob("*.jsonl"))
        with session.open("ab") as handle:
            handle.write(b'{"type": "message", "id": "partial')  # a line still being written
        assert build.wait_for(3)
        deadline = time.monotonic() + 5
        while live.version.token == token and time.monotonic() < deadline:
            time.sleep(0.01)
        assert live.version.token != token
        assert b"ZZ_BUILD_3_ZZ" in _get(live.url)
    assert [e.kind for e in events] == ["serving", "built", "built"]
    assert events[-1].changes == (str(session),)
    assert not [t for t in threading.enumerate() if t.name.startswith("sitegen-")]


def test_failed_rebuild_keeps_serving_and_says_why(
    tmp_path: Path, agent: Path, caplog: pytest.LogCaptureFixture
) -> None:
    build, events = FakeBuild(), []
    with _live(tmp_path, agent, build, events) as live:
        live.start()
        token = live.version.token
        build.fail = SitegenError("ZZ_CANNOT_BUILD_ZZ")
        with caplog.at_level(logging.ERROR, logger="sitegen.watch"):
            assert live.rebuild() is None
        # The reporter (the CLI) says it; logging would say it twice.
        assert "ZZ_CANNOT_BUILD_ZZ" not in caplog.text
        assert events[-1].kind == "failed" and "ZZ_CANNOT_BUILD_ZZ" in events[-1].message
        assert live.version.failure == "ZZ_CANNOT_BUILD_ZZ" and live.version.token == token
        assert b"ZZ_BUILD_1_ZZ" in _get(live.url)  # the last good site, at once

        # A bug is reported the same way, with its traceback in the log.
        build.fail = KeyError("ZZ_BUG_ZZ")
        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="sitegen.watch"):
            live.rebuild()
        assert live.version.failure is not None and "KeyError" in live.version.failure
        assert "ZZ_BUG_ZZ" in caplog.text and caplog.records[-1].exc_info is not None

        build.fail = None
        result = live.rebuild()
        assert result is not None and live.version.failure is None and live.version.token != token
        assert events[-1].kind == "built"


def test_unchanged_build_does_not_reload(tmp_path: Path, agent: Path) -> None:
    build, events = FakeBuild(), []
    with _live(tmp_path, agent, build, events) as live:
        live.start()
        token = live.version.token
        build.changed = False
        live.rebuild({"x"})
        assert live.version.token == token and events[-1].kind == "unchanged"


def test_first_build_error_propagates_and_cleans_up(tmp_path: Path, agent: Path) -> None:
    build, events = FakeBuild(), []
    build.fail = SitegenError("ZZ_FIRST_ZZ")
    live = _live(tmp_path, agent, build, events)
    with pytest.raises(SitegenError, match="ZZ_FIRST_ZZ"):
        live.start()
    assert not [t for t in threading.enumerate() if t.name.startswith("sitegen-")]


def test_ctrl_c_stops_cleanly(tmp_path: Path, agent: Path) -> None:
    build, events = FakeBuild(), []
    live = _live(tmp_path, agent, build, events)
    live.start()
    assert live.watching.wait(5)
    # An open event stream must not keep the server from stopping.
    stream = urllib.request.urlopen(f"{live.url}__sitegen__/events?since={live.version.token}", timeout=5)
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    started = time.perf_counter()
    live.wait()
    assert time.perf_counter() - started < 5
    assert not [t for t in threading.enumerate() if t.name.startswith("sitegen-")]
    stream.close()


def test_without_a_reporter_failures_are_logged(tmp_path: Path, agent: Path, caplog: pytest.LogCaptureFixture) -> None:
    build = FakeBuild()
    config = BuildConfig(out=tmp_path / "site", agent_dirs=[agent], use_default_dirs=False)
    with LiveSite(config, port=0, build=build, paths=[]) as live:
        live.start()
        build.fail = SitegenError("ZZ_LOUD_ZZ")
        with caplog.at_level(logging.ERROR, logger="sitegen.watch"):
            live.rebuild()
    assert "ZZ_LOUD_ZZ" in caplog.text


def test_a_dead_watcher_ends_wait_with_an_error(tmp_path: Path, agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import watchfiles

    def broken(*paths: object, **options: object) -> None:
        raise OSError("ZZ_INOTIFY_LIMIT_ZZ")

    monkeypatch.setattr(watchfiles, "watch", broken)
    live = _live(tmp_path, agent, FakeBuild(), [])
    live.start()
    with pytest.raises(WatchError, match="ZZ_INOTIFY_LIMIT_ZZ"):
        live.wait()
    assert not [t for t in threading.enumerate() if t.name.startswith("sitegen-")]


def test_appended_line_reloads_with_the_real_build(tmp_path: Path, agent: Path) -> None:
    config = BuildConfig(out=tmp_path / "site", agent_dirs=[agent], use_default_dirs=False, jobs=1)
    events: list[WatchEvent] = []
    with LiveSite(config, port=0, report=events.append) as live:
        first = live.start()
        page = next(p for p in first.written if p.startswith("sessions/") and p.endswith(".html"))
        assert live.watching.wait(5)
        stream = urllib.request.urlopen(f"{live.url}__sitegen__/events?since={live.version.token}", timeout=10)
        session = next((agent / "sessions").rglob("*.jsonl"))
        line = {
            "type": "message",
            "id": "zzappend",
            "parentId": "r1",
            "timestamp": "2026-01-01T00:10:00.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "ZZ_APPENDED_ZZ"}]},
        }
        with session.open("ab") as handle:
            handle.write(orjson.dumps(line) + b"\n")
        written = written_on_reload(stream)
        stream.close()
        assert page in written and "index.html" in written
        assert b"ZZ_APPENDED_ZZ" in _get(live.url + page)
    assert events[-1].kind == "built"
