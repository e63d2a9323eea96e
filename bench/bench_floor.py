"""The floor of a cold build: the steps every feature needs, each done the cheapest way we know and
nothing else, on bench_build's corpus, beside pi-transcript `--all` measured in the same run.

What it times (in this process, the collector off, best of --runs each): starting Python and importing
the build, reading and hashing every session file, parsing every line with orjson, the search index
as the build makes it in SQLite FTS5 (every entry's text stored per document, then every segment's
FTS5 table filled and its vocabulary exported: sitegen/site/search/store.py), compressing the
snippets, escaping and encoding every entry's text, and writing it in one file per session and
subagent page. No highlighting, markdown, templates, models, related lists or stats: a build cannot
cost less than this. The old Python postings (tokenising and counting in C, one Python step per term
and entry) are timed too, for comparison, and not counted in the floor."""

from __future__ import annotations

import argparse
import gc
import hashlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson
from bench_export import child_env, pi_transcript_command, run_measured

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
AGENT = HERE / "out" / "build" / "agent"
CORES = 2
sys.path.insert(0, str(ROOT))

from sitegen.session.artifacts import subagent_transcripts  # noqa: E402
from sitegen.site.search import index as search  # noqa: E402
from sitegen.site.search import store as search_store  # noqa: E402
from sitegen.site.search.index import SearchEntry, extract_search_entries  # noqa: E402
from sitegen.transcript.load import load_transcript  # noqa: E402


def _documents(agent: Path) -> tuple[list[Path], list[list[SearchEntry]]]:
    """Every session and subagent file, and each one's search entries (made untimed)."""
    files: list[Path] = []
    documents: list[list[SearchEntry]] = []
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


def _start_cpu(runs: int) -> float:
    """CPU time of a fresh interpreter that imports the build, as every `sitegen build` starts."""
    times = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-c", "import sitegen.site.build.pipeline"], check=True, env=child_env(Path.home())
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return min(times)


def _pi_transcript(command: list[str], agent: Path, runs: int) -> tuple[float, float]:
    """pi-transcript --all's best wall and CPU time (without memory sampling, which costs it time)."""
    best_wall = best_cpu = float("inf")
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="bench-floor-pt-") as tmp:
            home = Path(tmp)
            (home / ".pi" / "agent").mkdir(parents=True)
            (home / ".pi" / "agent" / "sessions").symlink_to(agent.resolve() / "sessions")
            command_line = [*command, "--all", "-o", str(home / "out"), "--no-open"]
            run = run_measured(command_line, env=child_env(home), cwd=home, sample=False)
        if run.returncode != 0:
            raise SystemExit(f"pi-transcript failed ({run.returncode}): {run.stderr.strip()[-300:]}")
        best_wall, best_cpu = min(best_wall, run.seconds), min(best_cpu, run.cpu)
    return best_wall, best_cpu


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--agent", type=Path, default=AGENT, help="default: bench_build's corpus")
    parser.add_argument("--pi-transcript", help="pi-transcript binary (default: the reference install)")
    args = parser.parse_args(argv)
    if not (args.agent / "sessions").is_dir():
        print(f"no sessions under {args.agent}: run bench/bench_build.py once first", file=sys.stderr)
        return 2
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
        pages = len(files)  # one per session and subagent transcript
        for number in range(pages):
            part = encoded[number * len(encoded) // pages : (number + 1) * len(encoded) // pages]
            (out / f"{number}.html").write_bytes(b"".join(part))

    index_site = Path(tempfile.mkdtemp(prefix="bench-floor-index-"))
    keys = [f"doc{number:05d}" for number in range(len(documents))]

    def store() -> None:
        search_store.close_connections()
        shutil.rmtree(index_site, ignore_errors=True)
        search_store.connection(index_site)
        for key, document in zip(keys, documents, strict=True):
            kinds = [entry.kind for entry in document]
            search_store.store_document(index_site, key, kinds, [e.terms or e.text for e in document], [])

    def export() -> None:
        stored = search_store.stored_documents(index_site)
        count = search._segment_count(len(keys))
        members: dict[int, list[tuple[str, str]]] = {}
        for key in keys:
            members.setdefault(search._segment_of(key, count), []).append((key, stored[key].digest))
        for number, held in sorted(members.items()):
            list(search_store.export_segment(index_site, number, held))

    steps: list[tuple[str, Callable[[], object]]] = [
        ("read every file", lambda: [path.read_bytes() for path in files]),
        ("hash every file (SHA-256)", lambda: [hashlib.sha256(blob).digest() for blob in blobs]),
        ("parse every line (orjson)", lambda: [[orjson.loads(line) for line in b.splitlines() if line] for b in blobs]),
        ("search: store every entry's text (SQLite)", store),
        ("search: fill FTS5 per segment, export terms", export),
        ("compress the snippets (zlib 3)", lambda: zlib.compress(orjson.dumps([e.text for e in entries]), 3)),
        ("escape every entry's text for HTML", escape),
        ("encode it as UTF-8", lambda: [text.encode("utf-8", "surrogatepass") for text in escaped]),
        (f"write it in {len(files)} files", write),
    ]
    heading = f"step (CPU seconds, best of {args.runs})"
    print(f"\n{heading:44} {'s':>7}")
    seconds = {"start Python, import the build": _start_cpu(args.runs)}
    print(f"{'start Python, import the build':44} {seconds['start Python, import the build']:7.2f}")
    for name, step in steps:
        seconds[name] = _best(args.runs, step)
        print(f"{name:44} {seconds[name]:7.2f}")
    shutil.rmtree(out, ignore_errors=True)
    search_store.close_connections()
    shutil.rmtree(index_site, ignore_errors=True)
    floor = sum(seconds.values())
    print(f"{'floor':44} {floor:7.2f}   on {CORES} cores, perfectly shared: {floor / CORES:.2f}")
    command = pi_transcript_command(args.pi_transcript)
    if command is None:
        print("\npi-transcript not found: no ratio (npm install @psg2/pi-transcript, or --pi-transcript)")
        return 0
    wall, cpu = _pi_transcript(command, args.agent, args.runs)
    print(f"\npi-transcript --all: {wall:.2f} s wall, {cpu:.2f} s CPU (best of {args.runs})")
    print(f"floor on {CORES} cores / pi-transcript wall: {floor / CORES / wall:.2f} x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
