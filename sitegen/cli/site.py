"""The site commands' bodies (build, watch): the site's lock, signals, progress and the report."""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import typer

from sitegen.cli.common import fail, open_in_browser
from sitegen.site.state.lock import Holder

__all__ = ["BuildOptions", "Stopped", "run_build", "run_watch", "stopped_by_signals"]


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread as Ctrl-C's KeyboardInterrupt is, so a build
    ends the same way: workers stopped, progress kept. `code` is the shell's 128 + signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.code = 128 + signum


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise Stopped(signum)


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP stop the block as Ctrl-C does (and their handlers are restored after)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    kinds = [signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    previous = {kind: signal.signal(kind, _raise_stopped) for kind in kinds}
    try:
        yield
    finally:
        for kind, handler in previous.items():
            signal.signal(kind, handler)


def _interrupted(stop: KeyboardInterrupt) -> typer.Exit:
    return fail("Build interrupted", getattr(stop, "code", 130))


def _waiting(out: Path) -> Callable[[Holder | None], None]:
    def say(holder: Holder | None) -> None:
        who = holder.describe() if holder is not None else "another process"
        typer.echo(f"Waiting for {who} to finish with {out} (Ctrl-C to give up)", err=True)

    return say


@dataclass(slots=True)
class BuildOptions:
    out: Path
    agent_dir: list[Path]
    odek_dir: list[Path]
    demo: bool = False
    jobs: int | None = None
    strict: bool = False
    open_site: bool = False
    profile: bool = False
    wait: bool = True


def run_build(options: BuildOptions) -> None:
    from sitegen.site.build.pipeline import BuildConfig, build_site, claim_site
    from sitegen.site.state.progress import Progress

    out = options.out
    started = time.perf_counter()
    config = BuildConfig(
        out=out,
        agent_dirs=options.agent_dir,
        odek_dirs=options.odek_dir,
        demo=options.demo,
        jobs=options.jobs,
        profile=options.profile,
        keep_for_next=False,
    )
    try:
        with (
            stopped_by_signals(),
            claim_site(config, wait=options.wait, on_wait=_waiting(out)),
            Progress(sys.stderr) as progress,
        ):
            result = build_site(config, on_progress=progress.update)
    except KeyboardInterrupt as stop:
        raise _interrupted(stop) from None
    for problem in result.problems:
        typer.echo(f"problem: {problem}", err=True)
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)
    if result.sessions == 0 and not options.demo:
        typer.echo("No sessions found (~/.pi/agent, ~/.omp/agent, ~/.xcsh/agent, ~/.odek/sessions).", err=True)
        typer.echo("Try `sitegen build --demo` for the bundled sample sessions, or pass --agent-dir.", err=True)
    elapsed = time.perf_counter() - started
    if result.changed:
        typer.echo(
            f"Built {out}: {result.sessions} sessions, {len(result.rendered)} rendered, "
            f"{len(result.removed)} removed, {len(result.problems)} problems in {elapsed:.2f}s"
        )
    else:
        typer.echo(f"{out} is up to date ({result.sessions} sessions, {elapsed:.2f}s)")
    if options.profile:
        from sitegen.timings import format_phases

        for line in format_phases(result.seconds, elapsed, result.processes):
            typer.echo(line)
    if options.open_site:
        open_in_browser(str(out / "index.html"))
    if options.strict and result.problems:
        raise typer.Exit(1)


def run_watch(options: BuildOptions, host: str, port: int) -> None:
    import ipaddress

    from sitegen.site.build.pipeline import BuildConfig, claim_site
    from sitegen.site.live.watch import LiveSite, WatchEvent
    from sitegen.site.state.progress import Progress

    progress = Progress(sys.stderr)

    def report(event: WatchEvent) -> None:
        progress.clear()  # a long first build is served as it goes: its messages go under the bar
        if event.kind != "unchanged":
            typer.echo(event.message, err=event.kind in ("failed", "warning"))
        if event.kind == "serving" and options.open_site:
            open_in_browser(live.url)

    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        typer.echo(f"Warning: serving on {host}: other machines on the network can read your sessions.", err=True)
    out = options.out
    config = BuildConfig(out=out, agent_dirs=options.agent_dir, odek_dirs=options.odek_dir, demo=options.demo)
    with (
        stopped_by_signals(),
        claim_site(config, "sitegen watch", wait=options.wait, on_wait=_waiting(out)),
        LiveSite(config, host=host, port=port, report=report) as live,
    ):
        try:
            with progress:
                live.start(on_progress=progress.update)
            live.wait()
        except KeyboardInterrupt as stop:
            # Ctrl-C right after "Serving …" (the build done) stops watch as it would a moment later.
            if not live.built:
                raise _interrupted(stop) from None
    typer.echo("Stopped.")
