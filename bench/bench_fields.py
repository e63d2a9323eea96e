"""Build cost of very long names: a session whose model name, title, cwd and tool name are each
N characters, against the same session with short ones, built side by side in fresh processes.

Run: python bench/bench_fields.py [--chars 100000] [--runs 3]
Prints the median wall time of `sitegen build` of each and their ratio (issue 31: every per-field
cost linear, so the ratio stays a small multiple whatever N is)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from sessions import SessionBuilder, text, tool_call  # noqa: E402  (tests/ is not a package)


def write_agent(agent: Path, chars: int) -> None:
    """One project, one session of 40 turns whose names are `chars` characters long (0: short)."""

    def long(word: str) -> str:
        return word if chars == 0 else (word + " ") * (chars // (len(word) + 1)) + word[: chars % (len(word) + 1)]

    cwd = "/work/" + ("p" if chars == 0 else "x" * chars)
    model, tool = long("model"), long("tool")
    b = SessionBuilder(session_id="fields-1", cwd=cwd)
    b.add("session_info", "i0", None, name=long("title"))
    for turn in range(40):
        b.user(f"u{turn}", f"question {turn} about the parser")
        b.assistant(f"a{turn}", [text(f"answer {turn}"), tool_call(f"c{turn}", tool, path="x.py")], model=model)
        b.tool_result(f"r{turn}", f"c{turn}", tool, "output line\n" * 5)
    b.write(agent / "sessions" / "--work--" / "2026-01-01T00-00-00-000Z_fields-1.jsonl")


def build_seconds(agent: Path, out: Path) -> float:
    command = [sys.executable, "-m", "sitegen.cli", "build", "--agent-dir", str(agent), "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(out.parent / "home")}
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sitegen-fields-") as folder:
        base = Path(folder)
        write_agent(base / "short", 0)
        write_agent(base / "long", args.chars)
        times: dict[str, list[float]] = {"short": [], "long": []}
        for run in range(args.runs):
            for kind in ("short", "long"):  # side by side: the machine's load hits both alike
                times[kind].append(build_seconds(base / kind, base / f"site-{kind}-{run}"))
    short, long = statistics.median(times["short"]), statistics.median(times["long"])
    print(f"names of {args.chars:,} characters: build {long:.2f} s, short names {short:.2f} s")
    print(f"ratio {long / short:.2f} (median of {args.runs} cold builds each)")


if __name__ == "__main__":
    main()
