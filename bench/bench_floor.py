"""The floor of a cold build: the steps every feature needs, each done at C speed and nothing else,
on bench_build's corpus, beside pi-transcript `--all` measured in the same run.

What it times (in this process, best of --runs): reading and hashing every session file, parsing
every line with orjson, the search postings of every entry (tokenising every word, then one step per
term and entry), compressing the snippets, HTML-escaping and encoding every entry's text, and writing
those bytes in as many files as the site has pages. No highlighting, markdown, templates, models,
related lists, stats or subagent pages' frames: a build cannot cost less than this."""

from __future__ import annotations

import argparse
import gc
import hashlib
import shutil
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
from bench_export import child_env, pi_transcript_command, run_measured

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
AGENT = HERE / "out" / "build" / "agent"
CORES = 2
SITE_PAGES = 759  # the bench corpus's site: 200 sessions, 548 subagent transcripts, the prompts page


def _documents(agent: Path) -> tuple[list[Path], list[list[Any]]]:
    """Every session and subagent file, and each one's search entries (made untimed)."""
    sys.path.insert(0, str(ROOT))
    from sitegen.session.artifacts import subagent_transcripts
    from sitegen.site.search import extract_search_entries
    from sitegen.transcript.load import load_transcript

    files: list[Path] = []
    documents: list[list[Any]] = []
    for session in sorted((agent / "sessions").glob("*/*.jsonl")):
        transcript = load_transcript(session)
        files.append(session)
        documents.append(extract_search_entries(transcript))
        if transcript.artifacts_dir is not None and transcript.artifacts_dir.is_dir():
            for sidecar in subagent_transcripts(transcript.artifacts_dir):
                files.append(sidecar.path)
                documents.append(extract_search_entries(load_transcript(sidecar.path)))
    return files, documents


def _best(runs: int, step: Callable[[], object]) -> float:
    """The step's least CPU time over runs, with the collector off (as the build runs its hot loops)."""
    times = []
    for _ in range(runs):
        gc.disable()
        started = time.process_time()
        step()
        times.append(time.process_time() - started)
        gc.enable()
    return min(times)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--agent", type=Path, default=AGENT, help="default: bench_build's corpus")
    parser.add_argument("--pi-transcript", help="pi-transcript binary (default: the reference install)")
    args = parser.parse_args(argv)
    if not (args.agent / "sessions").is_dir():
        print(f"no sessions under {args.agent}: run bench/bench_build.py once first", file=sys.stderr)
        return 2
    from sitegen.site.postings import postings_of

    files, documents = _documents(args.agent)
    entries = [entry for document in documents for entry in document]
    texts = [entry.terms or entry.text for entry in entries]
    size = sum(path.stat().st_size for path in files)
    print(f"{len(files)} session and subagent files, {size / 1e6:.1f} MB; {len(entries):,} search entries")
    blobs = [path.read_bytes() for path in files]

    def escape() -> list[str]:
        return [text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for text in texts]

    escaped = escape()
    encoded = [text.encode("utf-8", "surrogatepass") for text in escaped]
    out = Path(tempfile.mkdtemp(prefix="bench-floor-"))

    def write() -> None:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        per_page = len(encoded) // SITE_PAGES + 1
        for number, start in enumerate(range(0, len(encoded), per_page)):
            (out / f"{number}.html").write_bytes(b"".join(encoded[start : start + per_page]))

    steps: list[tuple[str, Callable[[], object]]] = [
        ("read every file", lambda: [path.read_bytes() for path in files]),
        ("hash every file (SHA-256)", lambda: [hashlib.sha256(blob).digest() for blob in blobs]),
        ("parse every line (orjson)", lambda: [[orjson.loads(line) for line in b.splitlines() if line] for b in blobs]),
        ("search postings of every entry", lambda: [postings_of(document) for document in documents]),
        ("compress the snippets (zlib 3)", lambda: zlib.compress(orjson.dumps([e.text for e in entries]), 3)),
        ("escape every entry's text for HTML", escape),
        ("encode it as UTF-8", lambda: [text.encode("utf-8", "surrogatepass") for text in escaped]),
        (f"write it in {SITE_PAGES} files", write),
    ]
    total = 0.0
    heading = f"step (CPU seconds, best of {args.runs})"
    print(f"\n{heading:44} {'s':>7}")
    for name, step in steps:
        seconds = _best(args.runs, step)
        total += seconds
        print(f"{name:44} {seconds:7.2f}")
    shutil.rmtree(out, ignore_errors=True)
    print(f"{'floor, in all':44} {total:7.2f}")
    shared = f"floor on {CORES} cores, perfectly shared"
    print(f"{shared:44} {total / CORES:7.2f}")
    command = pi_transcript_command(args.pi_transcript)
    if command is None:
        print("\npi-transcript not found: no ratio (npm install @psg2/pi-transcript, or --pi-transcript)")
        return 0
    best_wall = best_cpu = float("inf")
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="bench-floor-pt-") as tmp:
            home = Path(tmp)
            (home / ".pi" / "agent").mkdir(parents=True)
            (home / ".pi" / "agent" / "sessions").symlink_to(args.agent.resolve() / "sessions")
            run = run_measured([*command, "--all", "-o", str(home / "out"), "--no-open"], env=child_env(home), cwd=home)
        best_wall, best_cpu = min(best_wall, run.seconds), min(best_cpu, run.cpu)
    print(f"\npi-transcript --all: {best_wall:.2f} s wall, {best_cpu:.2f} s CPU (best of {args.runs})")
    print(f"floor on {CORES} cores / pi-transcript wall: {total / CORES / best_wall:.2f} x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
