"""sitegen watch: build, serve, and rebuild on every change to the sessions, telling open pages to reload."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType

from sitegen.errors import SitegenError
from sitegen.history.store import HISTORY_FILE, store_fingerprint
from sitegen.resources import resource_dir
from sitegen.session.discover import agent_dirs, env_session_dirs, given_dirs
from sitegen.session.places import REGISTRY_DIR, registered_sessions, state_dirs
from sitegen.site.build.pipeline import BuildConfig, BuildResult, ProgressCallback, build_site
from sitegen.site.live.serve import WAIT_TIMEOUT_S, SiteApp, SiteServer, SiteVersion
from sitegen.site.pages.early import LiveHooks
from sitegen.site.state.sources import demo_dirs
from sitegen.undo import Journal

__all__ = ["BuildFunction", "LiveSite", "Reporter", "WatchError", "WatchEvent", "history_paths", "watch_paths"]

log = logging.getLogger("sitegen.watch")

BuildFunction = Callable[[BuildConfig, ProgressCallback | None], BuildResult]

# watchfiles yields once nothing changed for STEP ms, or after DEBOUNCE ms of steady changes; an appended
# line is one write, so the reload goes out about STEP ms plus the build after it.
DEBOUNCE_MS = 50
STEP_MS = 25
# How long Ctrl-C waits for a running rebuild before leaving it behind.
STOP_WAIT_S = 5.0
# How often an idle watcher wakes up (it notices the stop event every STEP_MS regardless).
WATCH_TICK_MS = 200


class WatchError(SitegenError):
    """Watching the session folders failed (e.g. too many inotify watches)."""


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """Something the CLI may show: kind is "serving", "built", "unchanged", "failed" or "warning"."""

    kind: str
    message: str
    result: BuildResult | None = None
    seconds: float = 0.0
    changes: tuple[str, ...] = field(default_factory=tuple)


Reporter = Callable[[WatchEvent], None]


def _in_checkout() -> bool:
    """True when templates/ and static/ are the checkout's own (editable install), not the wheel's copies."""
    package = Path(__file__).resolve().parents[2]  # sitegen/site/live/watch.py -> sitegen/
    return package not in resource_dir("templates").parents


def watch_paths(config: BuildConfig) -> list[Path]:
    """The existing folders whose changes can change the site: sessions, blobs, odek stores, templates."""
    if config.demo:
        pi_dirs, odek_dirs = demo_dirs()
        flat: list[Path] = []
    elif config.use_default_dirs:
        pi_dirs = agent_dirs(given_dirs(config.agent_dirs))
        odek_dirs = [*given_dirs(config.odek_dirs), Path.home() / ".odek" / "sessions"]
        flat = env_session_dirs()
    else:
        pi_dirs, odek_dirs = given_dirs(config.agent_dirs), given_dirs(config.odek_dirs)
        flat = []
    paths: list[Path] = []
    for agent in pi_dirs:
        sessions = agent / "sessions"
        # Until sessions/ exists, watch the agent dir so its creation is seen.
        paths.append(sessions if sessions.is_dir() else agent)
        paths.append(agent / "blobs")
    # Sessions omp keeps outside its sessions folder: the registry, and the folders of those it lists.
    paths += [state / REGISTRY_DIR for state, _ in state_dirs(pi_dirs)]
    paths += [path.parent for path, _ in registered_sessions(pi_dirs)]
    paths += odek_dirs + flat
    if _in_checkout():
        paths += [resource_dir("templates"), resource_dir("static")]
    unique: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            unique.setdefault(path.resolve(), None)
    return list(unique)


def history_paths(config: BuildConfig) -> list[Path]:
    """Where the agent dirs' prompt stores are or would be: watched by polling, as SQLite writes its
    WAL in place (and creates it only when the agent opens the store)."""
    if config.demo:
        return []  # the demo's store is made from its sessions, which are watched
    given = given_dirs(config.agent_dirs)
    return [folder / HISTORY_FILE for folder in (agent_dirs(given) if config.use_default_dirs else given)]


class LiveSite:
    """One build loop driven by one watcher, and a server showing the last good build.

    `start()` builds once (errors propagate) and starts serving and watching; `wait()` blocks until
    Ctrl-C or `stop()`; `stop()` ends the watcher, the event streams and the server, joining every thread.
    """

    def __init__(
        self,
        config: BuildConfig,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        build: BuildFunction = build_site,
        report: Reporter | None = None,
        paths: Sequence[Path] | None = None,
        debounce_ms: int = DEBOUNCE_MS,
        step_ms: int = STEP_MS,
        wait_timeout: float = WAIT_TIMEOUT_S,
    ) -> None:
        self.config = config
        self.version = SiteVersion()
        self._build = build
        self._report = report
        self._paths = list(paths) if paths is not None else None
        self._debounce_ms = debounce_ms
        self._step_ms = step_ms
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._watch_error: str | None = None
        # Set once the watches are in place, a catch-up build has run and what the next build reuses
        # is made (tests and benches wait on it).
        self.watching = threading.Event()
        self.built = False  # the first build is done
        self.server = SiteServer(SiteApp(config.out, self.version, wait_timeout=wait_timeout), host, port)
        self._stores = history_paths(config)
        self._stores_seen = self._stores_stamp()

    @property
    def url(self) -> str:
        return self.server.url

    def start(self, on_progress: ProgressCallback | None = None) -> BuildResult:
        """Build the site (reporting to on_progress), then serve it and watch; returns the first build's
        result. A long first build is served as it goes: from the moment its home page is written and
        its workers are started (forked before the server's threads exist: much cheaper than a fork
        server), each page as soon as it is written; a page not written yet says it is being built."""
        try:
            self._stores_seen = self._stores_stamp()
            hooks = LiveHooks(ready=self._serve, published=self.version.publish)
            started = time.perf_counter()
            result = self._build(replace(self.config, live=hooks), on_progress)
            self.version.publish(None if result.full else result.written, None)
            self.built = True  # before saying so: Ctrl-C from then on stops watch, not the build
            if self.server.started:  # served as it went: say when it is done
                seconds = time.perf_counter() - started
                message = (
                    f"Built {self.config.out} in {seconds:.2f}s: {len(result.rendered)} rendered, "
                    f"{len(result.problems)} problems"
                )
                self._emit(WatchEvent("built", message, result, seconds))
            self._serve()
            self._start_watcher()
        except BaseException:
            self.stop()
            raise
        return result

    def _serve(self) -> None:
        if not self.server.started:
            self.server.start()
            self._emit(WatchEvent("serving", f"Serving {self.config.out} at {self.url} (Ctrl-C to stop)"))

    def rebuild(self, changes: Collection[str] = ()) -> BuildResult | None:
        """One turn of the build loop: hold requests, build, then show the new site or keep the old one."""
        ticket = self.version.begin()
        started = time.perf_counter()
        shown = tuple(sorted(changes))
        with self._lock:
            # Kept until the rebuild is done, so a failure half way puts back the last complete site.
            journal = Journal(self.config.out)
            try:
                self._stores_seen = self._stores_stamp()
                with journal.active():
                    result = self._build(self.config, None)
            except Exception as error:
                try:
                    journal.rollback()
                except OSError:
                    log.error("The files this rebuild changed could not all be put back", exc_info=True)
                seconds = time.perf_counter() - started
                message = str(error) if isinstance(error, SitegenError) else f"{type(error).__name__}: {error}"
                text = f"Rebuild failed, still serving the last good site: {message}"
                # A bug's traceback goes to the log whoever listens; a SitegenError's message is complete.
                if not isinstance(error, SitegenError):
                    log.error("%s", text, exc_info=True)
                elif self._report is None:
                    log.error("%s", text)
                self.version.failed(ticket, message)
                self._emit(WatchEvent("failed", text, None, seconds, shown))
                return None
            journal.commit()
        seconds = time.perf_counter() - started
        self.version.succeeded(ticket, None if result.full else result.written)
        if result.changed:
            message = (
                f"Rebuilt in {seconds:.2f}s: {len(result.rendered)} rendered, {len(result.removed)} removed, "
                f"{len(result.problems)} problems"
            )
            self._emit(WatchEvent("built", message, result, seconds, shown))
        else:
            self._emit(WatchEvent("unchanged", f"No change to the site ({seconds:.2f}s)", result, seconds, shown))
        return result

    def wait(self) -> None:
        """Block until stop() or Ctrl-C, then stop everything; raises WatchError if the watcher died."""
        try:
            while not self._stop.wait(0.5):
                watcher = self._watcher
                if watcher is not None and not watcher.is_alive():
                    break
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()
        if self._watch_error is not None:
            raise WatchError(f"Watching stopped: {self._watch_error}")

    def stop(self) -> None:
        """Stop watching and serving; safe to call more than once."""
        self._stop.set()
        # The server first: it releases requests held for a build that may still be running.
        self.server.close()
        watcher = self._watcher
        if watcher is not None and watcher is not threading.current_thread():
            watcher.join(STOP_WAIT_S)
            if watcher.is_alive():
                # A long rebuild cannot be interrupted; its files are each complete, so it may end with the process.
                self._emit(WatchEvent("warning", "A rebuild is still running; it is abandoned"))
            self._watcher = None

    def __enter__(self) -> LiveSite:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def _emit(self, event: WatchEvent) -> None:
        if self._report is not None:
            self._report(event)

    def _stores_stamp(self) -> list[list[int]]:
        return [store_fingerprint(path) for path in self._stores]

    def _prime(self) -> None:
        """A first build that found the site up to date read nothing of the prompt stores: read them
        now, while nothing is held, so the first prompt after start is read and linked alone, as
        later ones are (here, in the watcher's thread: no thread more, and changes seen meanwhile
        are built once it is done)."""
        from sitegen.site.prompts.kept import prime_prompts

        try:
            prime_prompts(self.config.out)
        except Exception:
            # Only a cost: the next build that reads the stores reads them whole, as without it.
            log.debug("priming the prompt stores failed", exc_info=True)

    def _start_watcher(self) -> None:
        paths = self._paths if self._paths is not None else watch_paths(self.config)
        if not paths:
            self._emit(WatchEvent("warning", "Nothing to watch: no session folder exists yet; serving only"))
            return
        self._watcher = threading.Thread(target=self._watch, args=(paths,), name="sitegen-watch", daemon=True)
        self._watcher.start()

    def _watch(self, paths: list[Path]) -> None:
        from watchfiles import watch

        try:
            for changes in watch(
                *paths,
                debounce=self._debounce_ms,
                step=self._step_ms,
                stop_event=self._stop,
                raise_interrupt=False,
                # An empty yield now and then marks the moment the watches are in place (`watching`).
                yield_on_timeout=True,
                rust_timeout=WATCH_TICK_MS,
            ):
                if not self.watching.is_set():
                    # Catch up with what changed during the first build, before the watches were in place.
                    self.rebuild({path for _, path in changes})
                    self._prime()
                    self.watching.set()
                elif changes:
                    self.rebuild({path for _, path in changes})
                elif self._stores_stamp() != self._stores_seen:
                    self.rebuild({str(path) for path in self._stores})
        except Exception as error:
            log.debug("the watcher stopped", exc_info=True)
            self._watch_error = f"{type(error).__name__}: {error}"
            self._stop.set()
