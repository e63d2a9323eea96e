"""The build's worker processes: one session each at a time, gone with the build, a death costing one session."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import TracebackType

from sitegen.errors import SitegenError
from sitegen.site.state.jobs import RenderJob, RenderOutcome
from sitegen.undo import Journal

__all__ = ["WorkerPool", "death_reason", "forward_logged"]

# How often a worker checks that the build that started it is still there (where the kernel cannot
# be asked to end it with its parent, and in case its parent was a fork server).
PARENT_CHECK_S = 0.2
# The signals that stop a build (sitegen.cli.site.stopped_by_signals, and Ctrl-C).
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
# prctl(2): ask the kernel for a signal when the parent dies.
_PR_SET_PDEATHSIG = 1
# A session whose worker died is tried once more, in a fresh worker, before it becomes a problem.
ATTEMPTS = 2


def death_reason(exitcode: int | None) -> str:
    """Why a worker process ended, in words (its exit code: minus the signal that ended it)."""
    if exitcode is None:
        return "it stopped answering"
    if exitcode == -signal.SIGKILL:
        return "it was killed (SIGKILL; most often the system ran out of memory)"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"it was killed ({name})"
    return f"it exited with code {exitcode}"


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie has ended; it only waits to be reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # there, but not ours to signal
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rpartition(b")")[2].split()[0]
    except (OSError, IndexError):
        return True  # no /proc: kill's answer stands
    return state not in (b"Z", b"X")


def _die_with(build_pid: int, forked_by_build: bool) -> None:
    """End this worker when the build process ends, however it ends: the kernel sends SIGKILL on
    Linux; elsewhere (and behind a fork server) a thread notices the parent is gone."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    parent = os.getppid()
    # The build may have died before prctl took effect: then this worker was handed on already.
    if (forked_by_build and parent != build_pid) or not _alive(build_pid):
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent and _alive(build_pid):
            time.sleep(PARENT_CHECK_S)
        os._exit(1)

    threading.Thread(target=watch, name="sitegen-parent-watch", daemon=True).start()


def _serve(conn: Connection, build_pid: int, forked_by_build: bool, journal: str | None) -> None:
    """A worker's life: render the jobs it is sent, one at a time, until told to stop; within a
    rebuild that can be undone, its writes keep what they replace in the same journal."""
    # Ctrl-C reaches the whole process group: the build stops its workers itself. Ignored before the
    # stop signals are let in (the build held them while it forked us), so one that came meanwhile is dropped.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    _die_with(build_pid, forked_by_build)
    if journal is not None:
        with Journal(Path(journal)).active():
            _render_jobs(conn)
    else:
        _render_jobs(conn)


def _render_jobs(conn: Connection) -> None:
    from sitegen.site.build.worker import render_job
    from sitegen.site.state.lock import close_inherited_locks

    close_inherited_locks()
    logged = _Forwarded()
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        outcome = render_job(job)
        outcome.logged, logged.records = logged.records, []
        conn.send(outcome)


class _Forwarded(logging.Handler):
    """In a worker: sitegen's warnings, kept for the outcome instead of shown (the build shows them:
    a worker's output would go wherever its start left it, if anywhere)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[tuple[str, int, str]] = []
        root = logging.getLogger("sitegen")
        for handler in list(root.handlers):  # the command line's, copied by fork
            root.removeHandler(handler)
        root.addHandler(self)
        root.propagate = False

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.name, record.levelno, record.getMessage()))


def forward_logged(outcome: RenderOutcome) -> None:
    """Log what the worker logged for this outcome, in this process."""
    for name, level, message in outcome.logged:
        logging.getLogger(name).log(level, "%s", message)


@dataclass(slots=True)
class _Worker:
    process: BaseProcess
    conn: Connection
    job: RenderJob | None = None


class WorkerPool:
    """Up to `size` worker processes; `run` yields each job's outcome as it comes. Leaving the `with`
    block, however it is left, kills every worker at once, so none writes after the build ends."""

    def __init__(self, size: int, context: BaseContext, journal: Journal | None = None) -> None:
        self.size = size
        self.context = context
        self.journal = str(journal.root) if journal is not None else None
        self.workers: list[_Worker] = []

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close(kill=kind is not None)

    def close(self, kill: bool = True) -> None:
        for worker in self.workers:
            if kill:
                with contextlib.suppress(OSError, ValueError):
                    worker.process.kill()
            else:
                with contextlib.suppress(OSError, ValueError):
                    worker.conn.send(None)
        for worker in self.workers:
            worker.process.join()
            worker.conn.close()
            with contextlib.suppress(ValueError):
                worker.process.close()
        self.workers = []

    def start(self) -> None:
        """Start every worker now (run starts them as it needs them)."""
        while len(self.workers) < self.size:
            self._start()

    def _start(self) -> _Worker:
        context = self._context_now()
        ours, theirs = context.Pipe()
        forks = context.get_start_method() == "fork"
        process = context.Process(  # type: ignore[attr-defined]
            target=_serve,
            # A fork server's children are not the build's own: their parent is the server.
            args=(theirs, os.getpid(), forks, self.journal),
            name="sitegen-worker",
            daemon=True,
        )
        # A stop signal landing during a fork would be raised inside Python's at-fork hooks, which
        # print and drop it (the build went on); held until the worker is counted, it stops the build
        # here, and leaving the pool kills this worker with the others. Only where this process forks:
        # a fork server started now would keep them held, and so would all it forks later.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS if forks else ())
        try:
            process.start()
            theirs.close()  # so the worker's end closes with the worker, and later workers do not hold it
            worker = _Worker(process, ours)
            self.workers.append(worker)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        return worker

    def _context_now(self) -> BaseContext:
        """How to start a worker now: fork is given up for a fork server once this process runs other
        threads (a watch serves its first pages from threads once the first workers are up). A child
        forked then could inherit a lock one of them held, and hang on it; a worker started in place
        of one that died comes from a fork server then, as do all after it."""
        if self.context.get_start_method() == "fork" and threading.active_count() > 1:
            self.context = multiprocessing.get_context("forkserver")
        return self.context

    def _retire(self, worker: _Worker) -> int | None:
        """Forget a dead worker; its exit code."""
        worker.process.join(1)
        code = worker.process.exitcode
        worker.conn.close()
        self.workers.remove(worker)
        with contextlib.suppress(ValueError):
            worker.process.close()
        return code

    def _send(self, worker: _Worker, job: RenderJob) -> bool:
        try:
            worker.conn.send(job)
        except (OSError, ValueError):  # it died while idle
            self._retire(worker)
            return False
        worker.job = job
        return True

    def run(self, jobs: Sequence[RenderJob]) -> Iterator[RenderOutcome]:
        """Each job's outcome in the order they finish; a job whose worker died is sent once more, to
        a fresh worker, then comes back as a problem that says how the worker died."""
        queue: deque[RenderJob] = deque(jobs)
        attempts: dict[str, int] = {}
        while queue or any(w.job is not None for w in self.workers):
            idle = [w for w in self.workers if w.job is None]
            lost = 0
            while queue and (idle or len(self.workers) < self.size):
                job = queue.popleft()
                if self._send(idle.pop() if idle else self._start(), job):
                    attempts[job.source] = attempts.get(job.source, 0) + 1
                    continue
                queue.appendleft(job)
                lost += 1
                if lost > self.size:
                    raise SitegenError("The build's worker processes end as soon as they start; try --jobs 1")
            busy = [w for w in self.workers if w.job is not None]
            ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy]))
            for worker in busy:
                current = worker.job
                if current is None or (worker.conn not in ready and worker.process.sentinel not in ready):
                    continue
                outcome: RenderOutcome | None = None
                with contextlib.suppress(EOFError, OSError):
                    if worker.conn.poll():
                        outcome = worker.conn.recv()
                if outcome is not None:
                    worker.job = None
                    yield outcome
                    continue
                reason = death_reason(self._retire(worker))
                if attempts[current.source] < ATTEMPTS and self._send(self._start(), current):
                    attempts[current.source] += 1
                    continue
                yield RenderOutcome(
                    key=current.key,
                    source=current.source,
                    problem=f"The worker process rendering it died twice; the second time {reason}",
                )
