"""`sitegen watch` on a cold site: when the home page, the newest sessions' pages and the whole site
are served, counted from the command's start (issue 19, point 2)."""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import orjson

__all__ = [
    "GOAL_FIRST_S",
    "ColdWatch",
    "activity_times",
    "best_cold",
    "cold_watch_rows",
    "measure_cold_watch",
    "set_activity_mtimes",
]

GOAL_FIRST_S = 1.0  # the home page and the newest sessions' pages, from start
# The home page lists this many newest sessions (sitegen.site.state.jobs.NEWEST_FIRST).
RECENT = 20
POLL_S = 0.01
TIMEOUT_S = 600.0
_SERVING = re.compile(rb"^Serving .* at http://[^:]+:(\d+)/")
_BUILT = re.compile(rb"^Built .* in ([\d.]+)s")


def _last_time_ms(path: Path) -> int:
    """The newest entry time of a session file (its last lines; the generator writes them in order)."""
    with open(path, "rb") as handle:
        handle.seek(max(0, path.stat().st_size - (1 << 20)))
        lines = handle.read().splitlines()
    for line in reversed(lines):
        try:
            stamp = orjson.loads(line).get("timestamp")
        except (orjson.JSONDecodeError, AttributeError):
            continue
        if isinstance(stamp, str):
            return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    return 0


def activity_times(sessions: list[Path]) -> dict[Path, int]:
    """Each session's last activity, in ms."""
    return {path: _last_time_ms(path) for path in sessions}


def set_activity_mtimes(sessions: list[Path]) -> None:
    """Give each session file the mtime an agent leaves it with: the time of its last entry (the
    generator writes them all at once, in an order of its own)."""
    for path, ms in activity_times(sessions).items():
        if ms:
            os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))


@dataclass(slots=True)
class ColdWatch:
    """Seconds from the command's start; None when it did not happen."""

    home: float | None = None  # GET / answered 200
    newest: float | None = None  # the newest session's page answered 200
    five: float | None = None  # the 5 newest
    recent: float | None = None  # the RECENT newest (all the home page lists)
    done: float | None = None  # "Built …" printed: every page, the indexes and search written
    build_s: float | None = None  # the build's own time, as watch prints it
    problem: str = ""
    served: dict[str, float] = field(default_factory=dict)
    newest_mb: float = 0.0  # the newest session's file


def _status(port: int, path: str) -> int:
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        connection.close()
        return response.status
    except OSError:
        return 0


def measure_cold_watch(
    sitegen: list[str], sessions: list[Path], agent: Path, site: Path, env: dict[str, str]
) -> ColdWatch:
    """Start `sitegen watch --port 0` on an empty site folder and poll until every mark is reached."""
    import shutil

    shutil.rmtree(site, ignore_errors=True)
    times = activity_times(sessions)
    newest = sorted(sessions, key=lambda path: (-times[path], str(path)))[:RECENT]
    result = ColdWatch(newest_mb=newest[0].stat().st_size / (1 << 20) if newest else 0.0)
    port: list[int] = []
    command = [*sitegen, "watch", "--port", "0", "--out", str(site), "--agent-dir", str(agent)]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=site.parent)

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            serving = _SERVING.match(line)
            if serving:
                port.append(int(serving.group(1)))
            built = _BUILT.match(line)
            if built:
                result.done = time.perf_counter() - started
                result.build_s = float(built.group(1))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    pages: dict[Path, str] = {}
    try:
        while result.done is None or result.recent is None:
            now = time.perf_counter() - started
            if now > TIMEOUT_S or process.poll() is not None:
                result.problem = f"watch ended or timed out (exit {process.poll()})"
                break
            if port and result.home is None and _status(port[0], "/") == 200:
                result.home = time.perf_counter() - started
            for session in newest:
                if session in pages or not port:
                    continue
                found = sorted(site.glob(f"sessions/*/{session.stem}.html"))
                if found and _status(port[0], "/" + str(found[0].relative_to(site))) == 200:
                    pages[session] = str(found[0].relative_to(site))
                    result.served[pages[session]] = time.perf_counter() - started
            if newest[0] in pages and result.newest is None:
                result.newest = result.served[pages[newest[0]]]
            if result.five is None and all(session in pages for session in newest[:5]):
                result.five = max(result.served[pages[session]] for session in newest[:5])
            if result.recent is None and len(pages) == len(newest):
                result.recent = max(result.served.values())
            time.sleep(POLL_S)
    finally:
        stop_watch(process, 30)
    return result


def stop_watch(process: subprocess.Popen[bytes], timeout: float) -> None:
    """Stop `sitegen watch` as a user does (Ctrl-C), killing it if it has not ended within timeout s."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def best_cold(runs: list[ColdWatch]) -> ColdWatch:
    """Each mark's best over the runs."""

    def low(values: list[float | None]) -> float | None:
        return min((v for v in values if v is not None), default=None)

    return ColdWatch(
        home=low([r.home for r in runs]),
        newest=low([r.newest for r in runs]),
        five=low([r.five for r in runs]),
        recent=low([r.recent for r in runs]),
        done=low([r.done for r in runs]),
        problem="; ".join(sorted({r.problem for r in runs if r.problem})),
    )


def cold_watch_rows(cold: ColdWatch) -> list[tuple[str, str, str, str]]:
    """The measure of `sitegen watch` on a cold site, as report rows."""
    rows = []
    for label, value, goal in (
        ("watch, cold: home page served", cold.home, GOAL_FIRST_S),
        ("watch, cold: newest page served", cold.newest, GOAL_FIRST_S),
        ("watch, cold: 5 newest served", cold.five, None),
        ("watch, cold: 20 newest served", cold.recent, None),
        ("watch, cold: all done", cold.done, None),
    ):
        goal_text = f"<= {goal} s" if goal is not None else "(report)"
        verdict = "n/a" if value is None else "" if goal is None else "ok" if value <= goal else "MISS"
        rows.append((label, "n/a" if value is None else f"{value:.2f} s", goal_text, verdict))
    if cold.problem:
        rows[-1] = (*rows[-1][:3], f"{rows[-1][3]} ({cold.problem})")
    return rows
