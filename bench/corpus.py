"""Generate realistic pi/omp-family sessions (JSONL, blobs, artifacts, subagent sidecars) for benchmarks."""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

# Run as `python bench/corpus.py`, loaded by its path (the tests) or imported as bench.corpus: the
# generator's modules sit beside this file, and sitegen (not installed) in the repo root.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
if str(Path(__file__).resolve().parent.parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus_basics import BASE_MS, MB, PROJECTS, SessionInfo
from corpus_session import write_session
from corpus_storage import agent_dir_of, encode_cwd
from corpus_text import project_vocab

__all__ = [
    "PROJECTS",
    "SessionInfo",
    "encode_cwd",
    "main",
    "project_vocab",
    "session_sizes",
    "write_big_session",
    "write_corpus",
    "write_session",
]


def session_sizes(
    count: int, total_bytes: int, seed: int, one_bytes: int | None = None, sigma: float = 1.0
) -> list[int]:
    """Log-normal sizes summing to about total_bytes; with one_bytes, one session of that size among them."""
    rng = random.Random(f"sizes:{seed}")
    others = count - 1 if one_bytes else count
    raw = [rng.lognormvariate(0.0, sigma) for _ in range(others)]
    budget = max(0, total_bytes - (one_bytes or 0))
    factor = budget / sum(raw) if raw else 0.0
    sizes = [max(8_000, int(r * factor)) for r in raw]
    if one_bytes:
        sizes.insert(rng.randint(0, len(sizes)), one_bytes)
    return sizes


def write_corpus(
    agent_dir: Path,
    *,
    sessions: int,
    total_mb: float,
    seed: int,
    one_session_mb: float | None = None,
    plain: bool = False,
) -> list[SessionInfo]:
    """Write a corpus of sessions across several projects under agent_dir (plain: see write_session)."""
    one = int(one_session_mb * MB) if one_session_mb else None
    sizes = session_sizes(sessions, int(total_mb * MB), seed, one)
    rng = random.Random(f"corpus:{seed}")
    starts = sorted(BASE_MS + rng.randint(0, 120 * 86_400_000) for _ in sizes)
    infos = []
    for index, (size, start) in enumerate(zip(sizes, starts, strict=True)):
        # A few projects get most sessions, as on a real machine.
        cwd = rng.choices(PROJECTS, weights=(8, 5, 3, 3, 1, 1))[0]
        infos.append(
            write_session(
                agent_dir, seed=seed * 1_000_003 + index, target_bytes=size, cwd=cwd, start_ms=start, plain=plain
            )
        )
    return infos


def write_big_session(
    path: Path,
    target_mb: float = 50.0,
    seed: int = 0,
    deep_chain: bool = True,
    *,
    entries: int = 20_000,
    chain_depth: int = 31_000,
    logs: int = 0,
    subagents: int = 0,
) -> SessionInfo:
    """One large session of about target_mb with about `entries` real entries; with deep_chain, small
    marker entries make the main chain (root to the last entry) at least chain_depth entries deep.
    logs and subagents, when given, ask for about that many bash logs (`N.bash.log`) and subagent runs
    (`<i>-<Name>.md` with its transcript `<i>-<Name>.jsonl`) in the artifact folder, spread evenly
    through the session (a task call runs 1.5 subagents on average), as a long omp session has them."""
    target = int(target_mb * MB)
    every: dict[str, int] = {}
    if logs:
        every["artifact"] = max(1, target // logs)
    if subagents:
        every["subagent"] = max(1, int(target * 1.5) // subagents)
    return write_session(
        agent_dir_of(path),
        seed=seed,
        target_bytes=target,
        cwd="/home/dev/work/monorepo",
        start_ms=BASE_MS,
        path=path,
        chain_depth=chain_depth if deep_chain else 0,
        # Markers are small: leave them about a twentieth of the bytes.
        avg_entry_bytes=max(200, int(target * (0.95 if deep_chain else 1.0)) // max(1, entries)),
        every=every,
    )


def _summary(infos: Sequence[SessionInfo], seconds: float) -> str:
    sizes = sorted(info.bytes for info in infos)
    total = sum(sizes)
    lines = [
        f"{len(infos)} sessions, {total / MB:.1f} MB in {seconds:.1f} s",
        f"size MB: median {statistics.median(sizes) / MB:.2f}, p90 {sizes[int(len(sizes) * 0.9)] / MB:.2f}, "
        f"max {sizes[-1] / MB:.2f}, min {sizes[0] / MB:.3f}",
        f"entries {sum(i.entries for i in infos)}, branches {sum(i.branches for i in infos)}, "
        f"compactions {sum(i.compactions for i in infos)}, labels {sum(i.labels for i in infos)}, "
        f"images {sum(i.images for i in infos)}, artifacts {sum(i.artifacts for i in infos)}, "
        f"subagents {sum(i.subagents for i in infos)}",
    ]
    projects: dict[str, int] = {}
    for info in infos:
        projects[info.cwd] = projects.get(info.cwd, 0) + 1
    lines += [f"  {count:4d}  {cwd}" for cwd, count in sorted(projects.items(), key=lambda kv: -kv[1])]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("agent_dir", type=Path, help="agent dir to write (sessions/ and blobs/ go inside)")
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--total-mb", type=float, default=120.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--one-session-mb", type=float, default=None, help="make one session about this big")
    parser.add_argument("--big-mb", type=float, default=None, help="write only one big deep-chain session")
    parser.add_argument("--logs", type=int, default=0, help="with --big-mb: about this many bash logs")
    parser.add_argument("--subagents", type=int, default=0, help="with --big-mb: about this many subagent runs")
    parser.add_argument(
        "--plain", action="store_true", help="plain pi sessions only (no omp title lines, subagents, artifacts, blobs)"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.big_mb:
        target = args.agent_dir / "sessions" / encode_cwd("/home/dev/work/monorepo") / "big.jsonl"
        info = write_big_session(target, args.big_mb, args.seed, logs=args.logs, subagents=args.subagents)
        print(
            f"{info.path}: {info.bytes / MB:.1f} MB, {info.entries} entries ({info.markers} markers), "
            f"main chain {info.main_depth} deep; {info.artifacts} logs, {info.subagents} subagent runs"
        )
        return 0
    infos = write_corpus(
        args.agent_dir,
        sessions=args.sessions,
        total_mb=args.total_mb,
        seed=args.seed,
        one_session_mb=args.one_session_mb,
        plain=args.plain,
    )
    print(_summary(infos, time.perf_counter() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
