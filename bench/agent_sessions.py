"""The benchmarked agent dir: the corpus generated once, its session files, an entry appended, its page."""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson
from output_folders import OUT, ROOT, made_once

__all__ = ["append_entry", "ensure_corpus", "last_line", "page_of", "page_shows", "session_files"]


def ensure_corpus(sessions: int, total_mb: float, seed: int, one_mb: float | None, plain: bool = False) -> Path:
    """The generated agent dir under bench/out, written once (the generator is deterministic); plain:
    pi's own sessions only, which pi-transcript reads whole (corpus.py --plain)."""
    from corpus import write_corpus

    name = f"corpus-{sessions}x{total_mb:g}mb-s{seed}" + (f"-one{one_mb:g}mb" if one_mb else "")
    name += "-plain" if plain else ""
    agent = OUT / name

    def write() -> None:
        started = time.perf_counter()
        write_corpus(agent, sessions=sessions, total_mb=total_mb, seed=seed, one_session_mb=one_mb, plain=plain)
        print(f"generated {agent.relative_to(ROOT)} in {time.perf_counter() - started:.0f} s")

    if not made_once(agent, write):
        print(f"reusing {agent.relative_to(ROOT)}")
    return agent


def session_files(agent: Path) -> list[Path]:
    """The sessions proper: *.jsonl directly in each project folder (sidecars sit one level deeper)."""
    return sorted((agent / "sessions").glob("*/*.jsonl"))


def last_line(path: Path) -> bytes:
    """The file's last non-empty line, read backwards in chunks (a line can hold megabytes of output)."""
    size = path.stat().st_size
    chunk = 1 << 16
    with open(path, "rb") as handle:
        while True:
            start = max(0, size - chunk)
            handle.seek(start)
            tail = handle.read().rstrip(b"\n")
            if b"\n" in tail or start == 0:
                return tail.rsplit(b"\n", 1)[-1]
            chunk *= 4


def append_entry(session: Path, token: str) -> None:
    """Append one valid v3 user message, a child of the last entry, as one write (as an agent does)."""
    last = orjson.loads(last_line(session))
    entry_id = os.urandom(4).hex()
    millis = int(time.time() * 1000)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(millis // 1000)) + f".{millis % 1000:03d}Z"
    record = {
        "type": "message",
        "id": entry_id,
        "parentId": last.get("id"),
        "timestamp": stamp,
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": f"one more thing {token}"}],
            "timestamp": millis,
        },
    }
    with open(session, "ab") as handle:
        handle.write(orjson.dumps(record) + b"\n")


def page_of(site: Path, session: Path) -> Path | None:
    found = sorted(site.glob(f"sessions/*/{session.stem}.html"))
    return found[0] if found else None


def page_shows(site: Path, session: Path, token: str) -> bool:
    page = page_of(site, session)
    return page is not None and token.encode() in page.read_bytes()
