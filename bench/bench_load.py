"""Time and measure loading a ~50 MB session: plain orjson per line against load_raw and open_session."""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

# Run as `python bench/bench_load.py`: the repo root is not on sys.path then, and sitegen is not installed.
if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sitegen.session.context import build_session_context
from sitegen.session.load import load_raw
from sitegen.session.session import open_session

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
MB = 1024 * 1024
# The goals the lead set: open_session within 1.5x of bare parsing, and peak memory under 3x the file.
GOAL_TIME_RATIO = 1.5
GOAL_MEMORY_RATIO = 3.0


def reference(path: Path) -> int:
    """The floor: read the file and orjson.loads every line, keeping the parsed records."""
    records: list[Any] = []
    append = records.append
    loads = orjson.loads
    with open(path, "rb") as handle:
        for line in handle:
            append(loads(line))
    return len(records)


def with_context(path: Path) -> int:
    """open_session, then the main chain and the model context at the default leaf."""
    session = open_session(path)
    depth = len(session.tree.path_to(session.tree.default_leaf))
    context = build_session_context(session.entries, by_id=session.by_id)
    print(f"depth={depth} context_messages={len(context.messages)}", file=sys.stderr)
    return depth


STEPS: dict[str, Callable[[Path], object]] = {
    "baseline": lambda path: None,
    "reference": reference,
    "load_raw": lambda path: load_raw(path),
    "open_session": lambda path: open_session(path),
    "open+context": with_context,
}
ROWS = ("reference", "load_raw", "open_session", "open+context")


def child(step: str, path: Path) -> None:
    """Run one step in this fresh process; print its time and this process's peak RSS as JSON."""
    started = time.perf_counter()
    result = STEPS[step](path)
    seconds = time.perf_counter() - started
    # Linux reports ru_maxrss in KiB.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "peak": peak}))
    del result


def run_child(step: str, path: Path) -> dict[str, float]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", step, str(path)]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    if done.stderr.strip():
        print(f"  [{step}] {done.stderr.strip()}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def ensure_session(target_mb: float, seed: int, regenerate: bool) -> Path:
    """The big session under bench/out, generated once and reused (the generator is deterministic)."""
    from corpus import encode_cwd, write_big_session

    folder = OUT / f"big-{target_mb:g}mb-s{seed}"
    path = folder / "sessions" / encode_cwd("/home/dev/work/monorepo") / "big.jsonl"
    if path.exists() and not regenerate:
        print(f"reusing {path.relative_to(HERE.parent)}")
        return path
    started = time.perf_counter()
    info = write_big_session(path, target_mb, seed, deep_chain=True)
    print(
        f"generated {path.relative_to(HERE.parent)} in {time.perf_counter() - started:.1f} s: "
        f"{info.entries} entries ({info.markers} markers), main chain {info.main_depth} deep"
    )
    return path


def measure(path: Path, runs: int) -> None:
    size = path.stat().st_size
    best: dict[str, dict[str, float]] = {}
    # Interleave the steps so a noisy neighbour on the machine hurts them all alike.
    for _ in range(runs):
        for step in ("baseline", *ROWS):
            result = run_child(step, path)
            kept = best.setdefault(step, dict(result))
            kept["seconds"] = min(kept["seconds"], result["seconds"])
            kept["peak"] = min(kept["peak"], result["peak"])
    base_peak = best["baseline"]["peak"]
    ref_seconds = best["reference"]["seconds"]
    print(f"\nfile {size / MB:.1f} MB; best of {runs}; baseline (interpreter + imports) {base_peak / MB:.0f} MB")
    print(f"{'step':<14} {'seconds':>8} {'x ref':>7} {'peak MB':>8} {'x file':>7}")
    for step in ROWS:
        seconds = best[step]["seconds"]
        peak = max(0.0, best[step]["peak"] - base_peak)
        print(f"{step:<14} {seconds:8.3f} {seconds / ref_seconds:7.2f} {peak / MB:8.1f} {peak / size:7.2f}")
    seconds = best["open_session"]["seconds"] / ref_seconds
    memory = max(0.0, best["open_session"]["peak"] - base_peak) / size
    print(
        f"\nopen_session: time {seconds:.2f}x reference (goal < {GOAL_TIME_RATIO}) "
        f"{'ok' if seconds < GOAL_TIME_RATIO else 'MISSED'}; "
        f"memory {memory:.2f}x file (goal < {GOAL_MEMORY_RATIO}) "
        f"{'ok' if memory < GOAL_MEMORY_RATIO else 'MISSED'}"
    )


def profile(path: Path, step: str) -> None:
    """cProfile one step in this process and print where the time goes."""
    profiler = cProfile.Profile()
    profiler.runcall(STEPS[step], path)
    stats = pstats.Stats(profiler).strip_dirs()
    stats.sort_stats("tottime").print_stats(15)
    stats.sort_stats("cumulative").print_stats(15)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=50.0, help="size of the generated session")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--regenerate", action="store_true", help="write the session again")
    parser.add_argument("--session", type=Path, help="measure this file instead of the generated one")
    parser.add_argument("--profile", choices=sorted(STEPS), help="cProfile one step instead of measuring")
    parser.add_argument("--child", nargs=2, metavar=("STEP", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return 0
    # The children must not inherit a profiler or a tracer that would skew their figures.
    os.environ.pop("PYTHONTRACEMALLOC", None)
    path = args.session or ensure_session(args.mb, args.seed, args.regenerate)
    if args.profile:
        profile(path, args.profile)
    else:
        measure(path, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
