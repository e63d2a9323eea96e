"""Generate realistic pi/omp-family sessions (JSONL, blobs, artifacts, subagent sidecars) for benchmarks."""

from __future__ import annotations

import argparse
import base64
import math
import random
import statistics
import struct
import sys
import time
import uuid
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson

# Run as `python bench/corpus.py`: the repo root is not on sys.path then, and sitegen is not installed.
if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sitegen.session.blobs import BlobStore

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

# 2025-09-01T00:00:00Z: every time is an offset from this, so output never depends on the wall clock.
BASE_MS = 1_756_684_800_000
MB = 1024 * 1024
# Sessions smaller than this may lack branches, compactions and the other scheduled features.
FEATURE_FLOOR_BYTES = 40_000
# omp's bash tool keeps at most this much output in the session; the rest goes to an artifact.
SPILL_BYTES = 50_000

PROJECTS: tuple[str, ...] = (
    "/home/dev/work/api-gateway",
    "/home/dev/work/webapp",
    "/Users/mira/code/ml-pipeline",
    "/Users/mira/code/pi-mono",
    "/srv/repos/infra-terraform",
    "C:\\Users\\sam\\projects\\game-engine",
)


@dataclass(frozen=True, slots=True)
class _Model:
    provider: str
    model: str
    api: str
    price_in: float  # dollars per million input tokens
    price_out: float


MODELS: tuple[_Model, ...] = (
    _Model("anthropic", "claude-sonnet-4-5", "anthropic-messages", 3.0, 15.0),
    _Model("anthropic", "claude-opus-4-5", "anthropic-messages", 5.0, 25.0),
    _Model("openai", "gpt-5.1-codex", "openai-responses", 1.25, 10.0),
    _Model("google", "gemini-2.5-pro", "google-generative-ai", 1.25, 10.0),
)
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
LABELS = ("checkpoint", "good state", "before refactor", "tests green", "bug repro", "try this")
SUBAGENTS = ("explore", "plan", "reviewer", "task")


@dataclass(slots=True)
class SessionInfo:
    """What one generated session holds, for the CLI summary and the tests."""

    path: Path
    session_id: str
    cwd: str
    bytes: int = 0
    entries: int = 0
    markers: int = 0
    main_depth: int = 0
    branches: int = 0
    branch_summaries: int = 0
    compactions: int = 0
    labels: int = 0
    images: int = 0
    artifacts: int = 0
    subagents: int = 0
    model_changes: int = 0
    thinking_changes: int = 0
    image_refs: list[str] = field(default_factory=list)


def encode_cwd(cwd: str) -> str:
    """The session folder name: leading slash dropped, then / \\ : turned into -."""
    name = cwd[1:] if cwd.startswith("/") else cwd
    return "--" + name.replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def iso(ms: int) -> str:
    moment = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def _uuid4(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_B64 = _B62 + "+/"


def _token(rng: random.Random, length: int, alphabet: str = _B62) -> str:
    return "".join(rng.choices(alphabet, k=length))


def _lognormal(rng: random.Random, median: float, sigma: float, cap: float) -> int:
    return int(min(cap, median * math.exp(sigma * rng.gauss(0.0, 1.0))))


def png_bytes(rng: random.Random, width: int, height: int) -> bytes:
    """A valid RGB PNG of noise, so blob bytes neither compress nor collide."""
    raw = b"".join(b"\x00" + rng.randbytes(width * 3) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b"")


# ---------------------------------------------------------------------------------------------------------
# Text: templates filled with one project's names, so sessions in a project talk about the same files.

_SYLLABLE_TEXT = (
    "parse load tree node buf cache span tok ctx sess blob hash leaf path walk emit flush dir net "
    "req res auth user item list map idx key val row col str num ver mig rate pool task job queue "
    "sched lock page view route store state diff patch merge sync fetch render theme font grid cell "
    "batch"
)
_SYLLABLES = _SYLLABLE_TEXT.split()
_DIRS = ("src", "src/core", "src/api", "lib", "pkg/server", "internal/store", "app/ui", "tests", "scripts")
_EXT_LANG = {
    "py": "python",
    "ts": "typescript",
    "tsx": "typescript",
    "rs": "rust",
    "go": "go",
    "sql": "sql",
    "json": "json",
    "yaml": "yaml",
    "md": "markdown",
    "sh": "bash",
}

_CODE: dict[str, tuple[str, ...]] = {
    "python": (
        "def {a}({b}, {c}=None):",
        '    """{s}"""',
        "    if {b} is None:",
        "        return {C}({n})",
        "    for {b} in self.{a}:",
        "        {a}.append({b}[{n}])",
        '    raise {C}Error(f"bad {b}: {{{b}!r}}")',
        "import {a}",
        "from {a}.{b} import {C}",
        "",
        "class {C}:",
        "    {a}: list[str] = field(default_factory=list)",
        '    return {{"{a}": {b}, "{c}": {n}}}',
        "    # {s}",
        '    with open({b}, "rb") as handle:',
        "        {a} = orjson.loads(handle.read())",
        '@pytest.mark.parametrize("{a}", [{n}, {m}])',
        "    assert {a}.{b}() == {n}, {a}",
    ),
    "typescript": (
        'import {{ {C}, type {D} }} from "./{a}.js";',
        "export function {a}({b}: {C}, {c}?: number): {D} {{",
        "\tconst {b} = await this.{a}.get({n});",
        "\tif (!{b}) throw new Error(`missing {a}: ${{{b}}}`);",
        "\treturn {{ ...{b}, {c}: {n} }};",
        "}}",
        "",
        "\t// {s}",
        "export interface {C} {{",
        "\t{a}: string;",
        "\t{b}?: {C}[];",
        "\tfor (const {b} of {a}) {{",
        "\t\t{a}.set({b}.id, {b});",
        '\t\tconsole.log("{a} →", {b});',
        "\t}}",
        "export const {a} = ({b}: {C}) => {b}.{c} ?? {n};",
    ),
    "rust": (
        "pub fn {a}(&mut self, {b}: &{C}) -> Result<{D}, Error> {{",
        "    let {b} = self.{a}.get(&{n}).ok_or(Error::Missing)?;",
        "    // {s}",
        "    match {b} {{",
        "        {C}::{D}(x) => x.{a}(),",
        '        _ => unreachable!("{a}"),',
        "    }}",
        "}}",
        "",
        "#[derive(Debug, Clone, PartialEq)]",
        "pub struct {C} {{ {a}: Vec<u8>, {b}: usize }}",
        "use crate::{a}::{{{C}, {D}}};",
        "    for {b} in {a}.iter().rev() {{",
        '        println!("{{}} {b} = {{:?}}", {n}, {b});',
    ),
    "go": (
        "func ({b} *{C}) {D}(ctx context.Context, {a} string) (*{D}, error) {{",
        "\tif err != nil {{",
        '\t\treturn nil, fmt.Errorf("{a}: %w", err)',
        "\t}}",
        "\t// {s}",
        "\t{a} := make([]{C}, 0, {n})",
        "\tfor _, {b} := range {a} {{",
        "\t\t{a} = append({a}, {b})",
        "}}",
        "",
        'import "{a}/{b}"',
        'type {C} struct {{ {D} int `json:"{a}"` }}',
    ),
    "sql": (
        "SELECT {a}, {b}, count(*) AS n FROM {c} WHERE {b} > {n} GROUP BY {a};",
        "CREATE INDEX idx_{a}_{b} ON {c} ({a}, {b});",
        "ALTER TABLE {c} ADD COLUMN {a} TEXT NOT NULL DEFAULT '';",
        "-- {s}",
        "INSERT INTO {c} ({a}, {b}) VALUES ({n}, '{D}');",
    ),
    "json": (
        '  "{a}": {n},',
        '  "{b}": "{c}",',
        '  "{a}": ["{b}", "{c}"],',
        '  "{C}": {{ "enabled": true, "{a}": null }},',
    ),
    "yaml": (
        "{a}:",
        "  {b}: {n}",
        "  - name: {c}",
        "    image: registry.example.com/{a}:{n}.{m}",
        "# {s}",
    ),
    "markdown": (
        "## {C} {D}",
        "",
        "- `{a}` {s}",
        "1. Run `{a} --{b}` first.",
        "| `{a}` | {n} | {s} |",
        "{s}",
    ),
    "bash": (
        "set -euo pipefail",
        'for {a} in "$@"; do',
        '  {b} "${a}" --{c}={n}',
        "done",
        "# {s}",
        "export {C}_{D}={n}",
    ),
}

_LOG_LINES = (
    "PASS src/{a}.test.ts ({n} ms)",
    "  ✓ {s} ({n} ms)",
    "  ✗ {a} handles {b} ({n} ms)",
    "FAIL tests/test_{a}.py::test_{b} - AssertionError: assert {n} == {m}",
    "error[E0308]: mismatched types",
    "   --> src/{a}.rs:{n}:{m}",
    "npm WARN deprecated {a}@{n}.0.{m}: use {b} instead",
    "{a}/{b}.py:{n}: {C}Warning: {s}",
    "-rw-r--r--  1 dev  staff  {n} Nov 20 12:{m:02d} {a}.ts",
    "drwxr-xr-x  {m} dev  staff  {n} Nov 19 09:41 {b}",
    "{h} {s}",
    "   Compiling {a} v0.{m}.{n}",
    "│ {a:<18} │ {n:>8} │ {b:<12} │",
    "\x1b[32m✓\x1b[0m {a} \x1b[2m({n}ms)\x1b[0m",
    "{a}.{b} INFO  request {h} completed in {n}ms",
    "{a}.{b} ERROR {C}Error: {s}",
    "    at {C}.{a} ({a}/{b}.js:{n}:{m})",
    "{a}/{b}.go:{n}:{m}: undefined: {C}",
)

_PROSE = (
    "The {a} function is called before {b} is initialised, so the first request fails.",
    "I think the problem is in `{f}` where {b} gets reset on every call.",
    "Let me check how {C} handles an empty {b} list.",
    "The test for {a} passes locally but fails in CI with a timeout.",
    "We should keep the public API of {C} stable and only change the internals.",
    "This looks like an off-by-one error in the loop over {b}.",
    "The cache in `{f}` never evicts entries, which explains the memory growth.",
    "Running the suite again after the change to {a} shows {n} failures fewer.",
    "{C} already validates {b}, so the extra check in {a} is redundant.",
    "I'll refactor {a} into two smaller functions so each does one thing.",
    "The error message mentions {C}Error, which is raised only from `{f}`.",
    "It would be simpler to pass {b} explicitly instead of reading it from global state.",
    "The benchmark shows {a} takes about {n} ms on the large input — too slow.",
    "Note that {b} can be null when the session was created before version {m}.",
    "Both call sites of {a} ignore the return value, so we can drop it.",
    "The diff touches {m} files; the important part is in `{f}`.",
    "Let me look at the git history of `{f}` to see why {b} was added.",
    "This matches the behaviour described in the docs for {C}.",
    "The linter complains about an unused import of {C} in `{f}`.",
    "After the migration the {b} column is never written, so it can go.",
    "Sorting by {b} first and then by {a} gives a stable order.",
    "The fix is small: check {b} before dereferencing it in {a}.",
)

_REQUESTS = (
    "read @{f} in full and explain how {a} works",
    "the {a} tests are failing after my last change, can you find out why?",
    "refactor {C} so that {a} and {b} share the parsing code",
    "add a `--{a}` option to the CLI that skips {b}",
    "why is `{f}` so slow on large inputs? profile it and fix the hot path",
    "write tests for {a}, including the edge case where {b} is empty",
    "port {a} from the old module to {C}, keeping the behaviour identical",
    "review the diff and tell me if anything looks risky",
    "rename {a} to {b} everywhere and update the docs",
    "the build is broken on windows, see the log below",
    "ok, now commit that with a good message",
    "can you make {C} handle unicode file names?",
)


def _fill(rng: random.Random, template: str, vocab: _Vocab) -> str:
    return template.format(
        a=rng.choice(vocab.idents),
        b=rng.choice(vocab.idents),
        c=rng.choice(vocab.idents),
        C=rng.choice(vocab.types),
        D=rng.choice(vocab.types),
        f=rng.choice(vocab.files),
        n=rng.randint(0, 4096),
        m=rng.randint(0, 59),
        h=_token(rng, 7, "0123456789abcdef"),
        s=rng.choice(vocab.short),
    )


class _Vocab:
    """One project's identifiers, files and pools of code and log lines."""

    def __init__(self, rng: random.Random) -> None:
        def ident() -> str:
            return "_".join(rng.choices(_SYLLABLES, k=rng.randint(1, 3)))

        def camel(name: str) -> str:
            head, *rest = name.split("_")
            return head + "".join(part.title() for part in rest)

        snake = [ident() for _ in range(160)]
        self.idents = snake[:80] + [camel(name) for name in snake[80:]]
        self.types = ["".join(part.title() for part in ident().split("_")) for _ in range(60)]
        self.files = [f"{rng.choice(_DIRS)}/{rng.choice(snake)}.{rng.choice(list(_EXT_LANG))}" for _ in range(70)]
        self.short = [" ".join(rng.choices(_SYLLABLES, k=rng.randint(2, 6))) for _ in range(40)] + [
            "handles the empty case",
            "keeps the order stable",
            "TODO: remove after v3",
            "see #12",
        ]
        self.code: dict[str, list[str]] = {
            lang: [_fill(rng, rng.choice(templates), self) for _ in range(400)] for lang, templates in _CODE.items()
        }
        self.logs = [_fill(rng, rng.choice(_LOG_LINES), self) for _ in range(600)]
        self.prose = [_fill(rng, rng.choice(_PROSE), self) for _ in range(300)]
        self.line_bytes = {lang: 1 + statistics.fmean(len(x) for x in lines) for lang, lines in self.code.items()}
        self.log_bytes = 1 + statistics.fmean(len(x) for x in self.logs)
        # Pasted again and again across a project's sessions: the blob store keeps one copy.
        self.logo = png_bytes(rng, 48, 48)

    def lang_of(self, path: str) -> str:
        return _EXT_LANG.get(path.rsplit(".", 1)[-1], "python")

    def code_text(self, rng: random.Random, lang: str, nbytes: int) -> str:
        count = max(1, int(nbytes / self.line_bytes[lang]))
        return "\n".join(rng.choices(self.code[lang], k=count))

    def log_text(self, rng: random.Random, nbytes: int) -> str:
        count = max(1, int(nbytes / self.log_bytes))
        return "\n".join(rng.choices(self.logs, k=count))

    def paragraph(self, rng: random.Random, sentences: int) -> str:
        return " ".join(rng.choices(self.prose, k=sentences))


def _fence(rng: random.Random, vocab: _Vocab, nbytes: int) -> str:
    lang = rng.choice(("python", "typescript", "rust", "go", "sql", "json", "yaml", "bash"))
    return f"```{lang}\n{vocab.code_text(rng, lang, nbytes)}\n```"


def _bullets(rng: random.Random, vocab: _Vocab, count: int, numbered: bool = False) -> str:
    lines = []
    for index in range(count):
        mark = f"{index + 1}." if numbered else "-"
        lines.append(f"{mark} **{rng.choice(vocab.types)}**: `{rng.choice(vocab.idents)}` {rng.choice(vocab.short)}")
        if rng.random() < 0.2:
            lines.append(f"   - nested: {rng.choice(vocab.prose)}")
    return "\n".join(lines)


def _table(rng: random.Random, vocab: _Vocab) -> str:
    rows = ["| name | count | note |", "|------|------:|------|"]
    rows += [
        f"| `{rng.choice(vocab.idents)}` | {rng.randint(0, 999)} | {rng.choice(vocab.short)} |"
        for _ in range(rng.randint(2, 8))
    ]
    return "\n".join(rows)


def user_markdown(rng: random.Random, vocab: _Vocab) -> str:
    """A user prompt: a request, sometimes with headings, lists, code fences, a table or a pasted log."""
    parts = [_fill(rng, rng.choice(_REQUESTS), vocab)]
    if rng.random() < 0.3:
        parts.append(vocab.paragraph(rng, rng.randint(1, 4)))
    if rng.random() < 0.25:
        parts.append(f"## {rng.choice(vocab.types)} requirements")
        parts.append(_bullets(rng, vocab, rng.randint(2, 6), numbered=rng.random() < 0.4))
    if rng.random() < 0.25:
        parts.append(_fence(rng, vocab, _lognormal(rng, 400, 0.8, 6000)))
    if rng.random() < 0.05:
        parts.append(_table(rng, vocab))
    if rng.random() < 0.04:
        parts.append("```\n" + vocab.log_text(rng, _lognormal(rng, 6000, 1.0, 60_000)) + "\n```")
    if rng.random() < 0.05:
        parts.append(
            f"> {rng.choice(vocab.prose)}\n\nSee [the docs](https://example.com/docs/{rng.choice(vocab.idents)})."
        )
    return "\n\n".join(parts)


def assistant_markdown(rng: random.Random, vocab: _Vocab) -> str:
    """A final answer: a summary heading, bullets, sometimes code, a closing line."""
    parts = []
    if rng.random() < 0.5:
        parts.append(f"## {rng.choice(('Summary', 'What changed', 'Findings', 'Plan'))}")
    parts.append(vocab.paragraph(rng, rng.randint(1, 3)))
    if rng.random() < 0.6:
        parts.append(_bullets(rng, vocab, rng.randint(2, 7), numbered=rng.random() < 0.3))
    if rng.random() < 0.3:
        parts.append(_fence(rng, vocab, _lognormal(rng, 500, 0.8, 8000)))
    if rng.random() < 0.1:
        parts.append(_table(rng, vocab))
    if rng.random() < 0.5:
        parts.append(vocab.paragraph(rng, 1))
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------------------------------------
# Storage helpers shared by a session and its subagents.


class _Artifacts:
    """The session's artifact folder, with omp's numeric log ids and indexed agent output ids."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.next_log = 0
        self.next_agent = 0
        self.written = 0

    def save_log(self, tool: str, text: str) -> int:
        self.folder.mkdir(parents=True, exist_ok=True)
        artifact_id = self.next_log
        self.next_log += 1
        (self.folder / f"{artifact_id}.{tool}.log").write_text(text, encoding="utf-8")
        self.written += 1
        return artifact_id

    def agent_id(self, requested: str) -> str:
        output_id = f"{self.next_agent}-{requested}"
        self.next_agent += 1
        return output_id


def agent_dir_of(session_path: Path) -> Path:
    """The agent dir holding a session (the folder above sessions/), else the session's own folder."""
    for ancestor in session_path.resolve().parents:
        if ancestor.name == "sessions":
            return ancestor.parent
    return session_path.resolve().parent


# ---------------------------------------------------------------------------------------------------------
# One session.


@dataclass(slots=True)
class _Plan:
    """Byte offsets at which scheduled features happen next; 0 means never."""

    due: dict[str, int]
    mean: dict[str, int]


_FEATURE_MEAN_BYTES = {
    "branch": 450_000,
    "compaction": 700_000,
    "label": 200_000,
    "image": 350_000,
    "artifact": 400_000,
    "subagent": 300_000,
    "model": 600_000,
    "thinking": 300_000,
}


class _Builder:
    """Appends one session's entries to an open file, following the current leaf like the agents do."""

    def __init__(
        self,
        out: BinaryIO,
        info: SessionInfo,
        *,
        rng: random.Random,
        vocab: _Vocab,
        clock_ms: int,
        target_bytes: int,
        artifacts: _Artifacts,
        blobs: BlobStore,
        subagents: bool = True,
        chain_depth: int = 0,
        avg_entry_bytes: int = 0,
        every: dict[str, int] | None = None,
        plain: bool = False,
    ) -> None:
        self.out = out
        self.info = info
        self.rng = rng
        self.vocab = vocab
        self.clock = clock_ms
        self.target = target_bytes
        self.artifacts = artifacts
        self.blobs = blobs
        # plain: only what pi itself writes (see write_session), so that pi-transcript reads it all.
        self.plain = plain
        self.subagents = subagents and not plain
        self.chain_depth = chain_depth
        self.avg_entry_bytes = avg_entry_bytes
        self.scale = 1.0
        self.leaf: str | None = None
        self.path: list[str] = []
        self.kinds: list[str] = []  # parallel to path: "user", "assistant", "compaction", ...
        self.ids: set[str] = set()
        self.model = rng.choice(MODELS)
        self.thinking = rng.choice(THINKING_LEVELS[1:])
        self.context_tokens = 0
        self.marker_bytes = 0
        feature = target_bytes >= FEATURE_FLOOR_BYTES
        self.plan = _Plan(
            due={name: int(target_bytes * rng.uniform(0.15, 0.85)) if feature else 0 for name in _FEATURE_MEAN_BYTES},
            mean=dict(_FEATURE_MEAN_BYTES),
        )
        # Features asked for at a set rate (mean bytes between two) start at once, not part way in, and
        # keep their rate: one that falls due between two chances to happen is not lost (see due).
        self.paced = frozenset(every or ())
        for name, mean in sorted((every or {}).items()):
            self.plan.mean[name] = mean
            self.plan.due[name] = max(1, int(rng.expovariate(1 / mean)))

    # -- writing

    def write_line(self, record: dict[str, Any]) -> None:
        line = orjson.dumps(record) + b"\n"
        self.out.write(line)
        self.info.bytes += len(line)

    def _new_id(self) -> str:
        while True:
            entry_id = _token(self.rng, 8, "0123456789abcdef")
            if entry_id not in self.ids:
                self.ids.add(entry_id)
                return entry_id

    def append(self, kind: str, fields: dict[str, Any], role: str = "") -> str:
        entry_id = self._new_id()
        record = {"type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": iso(self.clock), **fields}
        self.write_line(record)
        self.info.entries += 1
        self.leaf = entry_id
        self.path.append(entry_id)
        self.kinds.append(role or kind)
        return entry_id

    def tick(self, low: float, high: float) -> int:
        self.clock += int(self.rng.uniform(low, high) * 1000)
        return self.clock

    def due(self, name: str) -> bool:
        """Whether a scheduled feature is due now; if so, schedule its next occurrence."""
        at = self.plan.due[name]
        if at <= 0 or self.info.bytes < at:
            return False
        start = at if name in self.paced else self.info.bytes
        self.plan.due[name] = start + max(1, int(self.rng.expovariate(1 / self.plan.mean[name])))
        return True

    # -- turns

    def run(self) -> None:
        """Write turns until the session reaches its target size."""
        self.header_events()
        turns = 0
        # Stop when half an average turn would pass the target, so sizes do not all overshoot it.
        while self.info.bytes + (self.info.bytes / turns / 2 if turns else 0) < self.target:
            self.turn()
            turns += 1
        # The last turn may end short of the wanted depth: top the chain up at its end.
        self.deepen(final=True)
        self.info.main_depth = len(self.path)

    def header_events(self) -> None:
        if self.rng.random() < 0.6:
            self.thinking_change()
        if self.rng.random() < 0.4:
            self.model_change()

    def turn(self) -> None:
        self.deepen()
        if self.due("branch"):
            self.branch()
        if self.due("compaction"):
            self.compaction()
        if self.due("label"):
            self.label()
        if self.due("model") or self.rng.random() < 0.01:
            self.model_change()
        if self.due("thinking") or self.rng.random() < 0.02:
            self.thinking_change()
        if self.rng.random() < 0.015:
            self.bash_execution()
        if self.rng.random() < 0.01 and not self.plain:
            self.append("custom", {"customType": "todo-state", "data": {"open": self.rng.randint(0, 9)}})
        self.user_message()
        steps = min(24, 1 + int(self.rng.expovariate(1 / 3.5)))
        for _ in range(steps):
            for call in self.assistant_message(final=False):
                self.tool_result(call)
        self.assistant_message(final=True)
        self.steer()

    def steer(self) -> None:
        """Nudge payload sizes so the bytes per real (non-marker) entry approach the wanted average."""
        real_entries = self.info.entries - self.info.markers
        if not self.avg_entry_bytes or not real_entries:
            return
        average = (self.info.bytes - self.marker_bytes) / real_entries
        # Proportional control on the running average: heavy-tailed turns make per-turn steps drift.
        self.scale = min(20.0, max(0.05, self.scale * min(1.1, max(0.9, self.avg_entry_bytes / average))))

    def deepen(self, final: bool = False) -> None:
        """Add small marker entries until the chain is as deep as its share of the target asks."""
        if not self.chain_depth:
            return
        share = 1.0 if final else min(1.0, self.info.bytes / self.target)
        wanted = int(self.chain_depth * share) + (0 if final else 1)
        while len(self.path) < wanted:
            before = self.info.bytes
            kind = self.rng.random()
            if kind < 0.7:
                self.append("custom", {"customType": "checkpoint", "data": {"seq": self.info.markers}})
            elif kind < 0.9:
                self.append("custom", {"customType": "lsp-status", "data": {"errors": self.rng.randint(0, 3)}})
            else:
                self.append("ttsr_injection", {"injectedRules": [f"rule-{self.rng.randint(0, 12)}"]})
            self.info.markers += 1
            self.marker_bytes += self.info.bytes - before

    # -- session events

    def model_change(self) -> None:
        self.model = self.rng.choice(MODELS)
        if self.rng.random() < 0.5 and not self.plain:
            fields: dict[str, Any] = {"model": f"{self.model.provider}/{self.model.model}", "role": "default"}
        else:
            fields = {"provider": self.model.provider, "modelId": self.model.model}
        self.tick(0.5, 20)
        self.append("model_change", fields)
        self.info.model_changes += 1

    def thinking_change(self) -> None:
        self.thinking = self.rng.choice(THINKING_LEVELS)
        self.tick(0.5, 20)
        self.append("thinking_level_change", {"thinkingLevel": self.thinking})
        self.info.thinking_changes += 1

    def _recent_users(self, limit: int) -> list[int]:
        """Path positions of the latest user messages after the latest compaction, newest first."""
        found: list[int] = []
        for position in range(len(self.kinds) - 1, -1, -1):
            kind = self.kinds[position]
            if kind == "compaction":
                break
            if kind == "user":
                found.append(position)
                if len(found) >= limit:
                    break
        return found

    def branch(self) -> None:
        """Go back to before a recent user message (or the root) and continue from there."""
        users = self._recent_users(4)
        if not users:
            return
        position = self.rng.choice(users) - 1
        # Branching from the very first entry's parent is a branch from the root.
        target = self.path[position] if position >= 0 else None
        del self.path[position + 1 :]
        del self.kinds[position + 1 :]
        self.leaf = target
        self.info.branches += 1
        self.tick(5, 120)
        if self.rng.random() < 0.65:
            summary = f"## Abandoned approach\n\n{self.vocab.paragraph(self.rng, self.rng.randint(2, 6))}"
            fields: dict[str, Any] = {"fromId": target if target is not None else "root", "summary": summary}
            if self.rng.random() < 0.5:
                fields["details"] = {"readFiles": self.rng.sample(self.vocab.files, 3)}
            self.append("branch_summary", fields)
            self.info.branch_summaries += 1

    def compaction(self) -> None:
        users = self._recent_users(3)
        if len(users) < 2:
            return
        first_kept = self.path[self.rng.choice(users[1:])]
        rng, vocab = self.rng, self.vocab
        summary = "\n\n".join(
            [
                "# Context Checkpoint",
                f"## Goal\n\n{vocab.paragraph(rng, rng.randint(1, 3))}",
                f"## Progress\n\n{_bullets(rng, vocab, rng.randint(3, 10))}",
                f"## Key files\n\n{_bullets(rng, vocab, rng.randint(2, 6))}",
                f"## Next steps\n\n{_bullets(rng, vocab, rng.randint(1, 5), numbered=True)}",
            ]
        )
        self.tick(10, 60)
        self.append(
            "compaction",
            {
                "summary": summary,
                "shortSummary": rng.choice(vocab.prose),
                "firstKeptEntryId": first_kept,
                "tokensBefore": self.context_tokens,
                "details": {
                    "readFiles": rng.sample(vocab.files, 4),
                    "modifiedFiles": rng.sample(vocab.files, 2),
                },
                "fromExtension": False,
            },
        )
        self.context_tokens = len(summary) // 4
        self.info.compactions += 1

    def label(self) -> None:
        if not self.path:
            return
        target = self.path[self.rng.randrange(max(0, len(self.path) - 40), len(self.path))]
        fields: dict[str, Any] = {"targetId": target}
        # Now and then a label is cleared: the entry then carries no label at all.
        if self.rng.random() < 0.85:
            fields["label"] = self.rng.choice(LABELS)
        self.tick(1, 30)
        self.append("label", fields)
        self.info.labels += 1

    def bash_execution(self) -> None:
        output = self.vocab.log_text(self.rng, _lognormal(self.rng, 500, 1.2, 40_000))
        self.tick(1, 60)
        message = {
            "role": "bashExecution",
            "command": f"git log --oneline -n {self.rng.randint(5, 40)}",
            "output": output + "\n",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": self.clock,
        }
        self.append("message", {"message": message}, role="bashExecution")

    # -- messages

    def image(self) -> dict[str, Any]:
        rng = self.rng
        if rng.random() < 0.2:
            data = self.vocab.logo
        else:
            data = png_bytes(rng, rng.randint(24, 160), rng.randint(16, 100))
        # pi keeps an image in the session as base64; omp moves it to the blob store and keeps a ref.
        ref = base64.b64encode(data).decode("ascii") if self.plain else self.blobs.put(data)
        self.info.images += 1
        if not self.plain:
            self.info.image_refs.append(ref)
        return {"type": "image", "data": ref, "mimeType": "image/png"}

    def user_message(self) -> None:
        self.tick(15, 600)
        text = user_markdown(self.rng, self.vocab)
        content: list[dict[str, Any]] | str
        if self.due("image"):
            content = [{"type": "text", "text": text}, self.image()]
        elif self.rng.random() < 0.2:
            content = text  # pi writes plain-string user content too
        else:
            content = [{"type": "text", "text": text}]
        self.context_tokens += len(text) // 4
        self.append("message", {"message": {"role": "user", "content": content, "timestamp": self.clock}}, "user")

    def _call_id(self) -> str:
        if self.model.provider == "anthropic":
            return "toolu_01" + _token(self.rng, 22)
        if self.model.provider == "openai":
            return "call_" + _token(self.rng, 24) + "|fc_" + _token(self.rng, 40, "0123456789abcdef")
        return "call_" + _token(self.rng, 16)

    def tool_call(self) -> dict[str, Any]:
        rng, vocab = self.rng, self.vocab
        roll = rng.random()
        path = rng.choice(vocab.files)
        if self.subagents and self.due("subagent"):
            name = "task"
            tasks = [
                {
                    "id": rng.choice(vocab.types),
                    "description": rng.choice(vocab.short),
                    "assignment": _fill(rng, rng.choice(_REQUESTS), vocab),
                }
                for _ in range(rng.randint(1, 2))
            ]
            arguments: dict[str, Any] = {"agent": rng.choice(SUBAGENTS), "tasks": tasks}
        elif roll < 0.34:
            name = "read"
            arguments = {"path": path}
            if rng.random() < 0.2:
                arguments |= {"offset": rng.randint(1, 400), "limit": rng.choice((50, 100, 200))}
        elif roll < 0.64:
            name = "bash"
            arguments = {"command": rng.choice(_COMMANDS).format(a=rng.choice(vocab.idents), f=path)}
            if rng.random() < 0.2:
                arguments["timeout"] = rng.choice((30, 120, 600))
        elif roll < 0.84:
            name = "edit"
            lang = vocab.lang_of(path)
            arguments = {
                "path": path,
                "oldText": vocab.code_text(rng, lang, _lognormal(rng, 250, 0.9, 4000)),
                "newText": vocab.code_text(rng, lang, _lognormal(rng, 300, 0.9, 5000)),
            }
        elif roll < 0.92:
            name = "grep"
            arguments = {"pattern": rng.choice(vocab.idents), "path": rng.choice(_DIRS)}
            if rng.random() < 0.4:
                arguments["glob"] = "*." + path.rsplit(".", 1)[-1]
        else:
            name = "write"
            size = _lognormal(rng, 2500 * self.scale, 1.0, 120_000)
            arguments = {"path": path, "content": vocab.code_text(rng, vocab.lang_of(path), size)}
        return {"type": "toolCall", "id": self._call_id(), "name": name, "arguments": arguments}

    def assistant_message(self, *, final: bool) -> list[dict[str, Any]]:
        rng, vocab = self.rng, self.vocab
        self.tick(2, 45)
        content: list[dict[str, Any]] = []
        if self.thinking != "off" and rng.random() < 0.7:
            thinking: dict[str, Any] = {
                "type": "thinking",
                "thinking": "\n\n".join(vocab.paragraph(rng, rng.randint(1, 5)) for _ in range(rng.randint(1, 3))),
            }
            if self.model.provider == "anthropic":
                thinking["thinkingSignature"] = _token(rng, rng.randint(200, 1400), _B64)
            content.append(thinking)
        calls: list[dict[str, Any]] = []
        if final:
            content.append({"type": "text", "text": assistant_markdown(rng, vocab)})
        else:
            if rng.random() < 0.5:
                content.append({"type": "text", "text": vocab.paragraph(rng, rng.randint(1, 2))})
            count = 1 if rng.random() < 0.8 else rng.randint(2, 4)
            calls = [self.tool_call() for _ in range(count)]
            content.extend(calls)
        out_tokens = sum(len(orjson.dumps(block)) for block in content) // 4
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": self.model.api,
            "provider": self.model.provider,
            "model": self.model.model,
            "usage": self.usage(out_tokens),
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": self.clock,
        }
        if final and rng.random() < 0.01:
            message["stopReason"] = "aborted"
            message["errorMessage"] = "Request was aborted"
        self.context_tokens += out_tokens
        self.append("message", {"message": message}, "assistant")
        return calls

    def usage(self, out_tokens: int) -> dict[str, Any]:
        model, rng = self.model, self.rng
        fresh = rng.randint(3, 4000)
        cache_read = self.context_tokens
        per_in = model.price_in / 1e6
        cost = {
            "input": round(rng.randint(1, 30) * per_in, 9),
            "output": round(out_tokens * model.price_out / 1e6, 9),
            "cacheRead": round(cache_read * per_in * 0.1, 9),
            "cacheWrite": round(fresh * per_in * 1.25, 9),
        }
        cost["total"] = round(sum(cost.values()), 9)
        return {
            "input": rng.randint(1, 30),
            "output": out_tokens,
            "cacheRead": cache_read,
            "cacheWrite": fresh,
            "totalTokens": cache_read + fresh + out_tokens,
            "cost": cost,
        }

    def tool_result(self, call: dict[str, Any]) -> None:
        rng, vocab = self.rng, self.vocab
        name, arguments = call["name"], call["arguments"]
        self.tick(0.05, 20)
        details: dict[str, Any] | None = None
        is_error = rng.random() < 0.06
        content: list[dict[str, Any]]
        if name == "read":
            path = arguments["path"]
            if self.due("image"):
                content = [{"type": "text", "text": "Read image file [image/png]"}, self.image()]
            else:
                size = _lognormal(rng, 2500 * self.scale, 1.2, 160_000)
                text = vocab.code_text(rng, vocab.lang_of(path), size)
                if rng.random() < 0.3:
                    text = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(text.split("\n"), 1))
                content = [{"type": "text", "text": text}]
        elif name == "bash":
            content, details = self.bash_output(is_error)
        elif name == "edit":
            if is_error:
                content = [{"type": "text", "text": f"Could not find the exact text in {arguments['path']}."}]
                details = {}
            else:
                content = [{"type": "text", "text": f"Successfully replaced text in {arguments['path']}."}]
                details = {"diff": self.diff(arguments["oldText"], arguments["newText"])}
        elif name == "grep":
            size = _lognormal(rng, 1200 * self.scale, 1.1, 60_000)
            lines = [
                f"{rng.choice(vocab.files)}:{rng.randint(1, 900)}:{line}"
                for line in vocab.code_text(rng, "typescript", size).split("\n")
            ]
            content = [{"type": "text", "text": "\n".join(lines)}]
        elif name == "task":
            content, details = self.task_output(arguments)
        else:
            text = f"Successfully wrote {len(arguments['content'].encode())} bytes to {arguments['path']}"
            content = [{"type": "text", "text": text}]
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": name,
            "content": content,
        }
        if details is not None:
            message["details"] = details
        message["isError"] = is_error and name in ("bash", "edit")
        message["timestamp"] = self.clock
        self.context_tokens += sum(len(block.get("text", "")) for block in content) // 4
        self.append("message", {"message": message}, "toolResult")

    def bash_output(self, is_error: bool) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        rng, vocab = self.rng, self.vocab
        spill = self.due("artifact") and not self.plain
        if spill:
            size = max(SPILL_BYTES + 10_000, _lognormal(rng, 120_000, 0.6, 2_000_000))
        elif rng.random() < 0.1:
            size = _lognormal(rng, 12_000 * self.scale, 1.0, SPILL_BYTES)
        else:
            size = _lognormal(rng, 350 * self.scale, 1.3, SPILL_BYTES)
        text = vocab.log_text(rng, size)
        if is_error:
            text += f"\n\nCommand exited with code {rng.choice((1, 2, 101, 127))}"
        if not spill:
            return [{"type": "text", "text": text}], None
        artifact_id = self.artifacts.save_log("bash", text)
        self.info.artifacts += 1
        lines = text.split("\n")
        shown = lines[-rng.randint(20, 300) :]
        while sum(len(line) + 1 for line in shown) > SPILL_BYTES:
            shown = shown[len(shown) // 4 :]
        first = len(lines) - len(shown) + 1
        notice = f"[Showing lines {first}-{len(lines)} of {len(lines)}. Full output: artifact://{artifact_id}]"
        details = {
            "truncation": {
                "truncated": True,
                "truncatedBy": "lines",
                "totalLines": len(lines),
                "totalBytes": len(text.encode()),
                "outputLines": len(shown),
            },
            "artifactId": str(artifact_id),
        }
        return [{"type": "text", "text": "\n".join(shown) + "\n\n" + notice}], details

    def diff(self, old: str, new: str) -> str:
        start = self.rng.randint(1, 800)
        context = self.vocab.code_text(self.rng, "typescript", 200).split("\n")
        lines = [f" {start + i:>4} {line}" for i, line in enumerate(context)]
        at = start + len(context)
        lines += [f"-{at + i:>4} {line}" for i, line in enumerate(old.split("\n"))]
        lines += [f"+{at + i:>4} {line}" for i, line in enumerate(new.split("\n"))]
        lines.append("      ...")
        return "\n".join(lines)

    def task_output(self, arguments: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Run each subagent task: an agent://<id> markdown output plus its sidecar transcript."""
        rng, vocab = self.rng, self.vocab
        sections = ["## Task results"]
        results = []
        for task in arguments["tasks"]:
            output_id = self.artifacts.agent_id(task["id"])
            report = f"# {task['description']}\n\n{assistant_markdown(rng, vocab)}\n"
            self.artifacts.folder.mkdir(parents=True, exist_ok=True)
            (self.artifacts.folder / f"{output_id}.md").write_text(report, encoding="utf-8")
            started = self.clock
            self.sidecar(self.artifacts.folder / f"{output_id}.jsonl", task["assignment"])
            self.info.subagents += 1
            sections.append(
                f"### {output_id} ({arguments['agent']}) ✓\n\n{vocab.paragraph(rng, 2)}\n\n"
                f"Full output: agent://{output_id}"
            )
            results.append(
                {
                    "id": output_id,
                    "agent": arguments["agent"],
                    "exitCode": 0,
                    "durationMs": self.clock - started,
                    "outputPath": f"{output_id}.md",
                }
            )
        return [{"type": "text", "text": "\n\n".join(sections)}], {"results": results}

    def sidecar(self, path: Path, assignment: str) -> None:
        """A subagent's own small session, sharing the parent's artifact folder and id space."""
        info = SessionInfo(path=path, session_id=_uuid4(self.rng), cwd=self.info.cwd)
        with open(path, "wb") as out:
            child = _Builder(
                out,
                info,
                rng=self.rng,
                vocab=self.vocab,
                clock_ms=self.clock,
                target_bytes=_lognormal(self.rng, 15_000, 0.6, 60_000),
                artifacts=self.artifacts,
                blobs=self.blobs,
                subagents=False,
            )
            child.write_line(
                {
                    "type": "session",
                    "version": 3,
                    "id": info.session_id,
                    "timestamp": iso(self.clock),
                    "cwd": self.info.cwd,
                    "parentSession": self.info.session_id,
                }
            )
            child.tick(0.1, 1)
            child.append(
                "message",
                {"message": {"role": "user", "content": assignment, "timestamp": child.clock}},
                "user",
            )
            while info.bytes < child.target:
                for call in child.assistant_message(final=False):
                    child.tool_result(call)
            child.assistant_message(final=True)
        self.clock = child.clock


_COMMANDS = (
    "npm test -- {a}",
    "pytest -x -q tests/test_{a}.py",
    "cargo build --release 2>&1",
    "git diff --stat",
    "git log --oneline -n 30",
    "ls -la {f}",
    "rg -n {a} src/",
    "go test ./... -run {a}",
    "make check",
    "cat {f} | head -50",
)


# ---------------------------------------------------------------------------------------------------------
# Public entry points.


def _header(
    rng: random.Random, session_id: str, start_ms: int, cwd: str, vocab: _Vocab, plain: bool = False
) -> dict[str, Any]:
    header: dict[str, Any] = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": iso(start_ms),
        "cwd": cwd,
    }
    if rng.random() < 0.3 and not plain:
        header["title"] = f"{rng.choice(vocab.types)}: {rng.choice(vocab.short)}"
    if rng.random() < 0.05:
        header["parentSession"] = _uuid4(rng)
    return header


def _title_slot(rng: random.Random, start_ms: int, vocab: _Vocab) -> bytes:
    """omp's rewritable first line: a title record padded to a fixed width."""
    title = f"{rng.choice(vocab.types)} {rng.choice(vocab.short)}" if rng.random() < 0.7 else ""
    record: dict[str, Any] = {"type": "title", "v": 1, "title": title, "updatedAt": iso(start_ms), "pad": ""}
    width = len(orjson.dumps(record))
    record["pad"] = " " * max(0, 255 - width)
    return orjson.dumps(record) + b"\n"


def write_session(
    agent_dir: Path,
    *,
    seed: int,
    target_bytes: int,
    cwd: str | None = None,
    start_ms: int | None = None,
    path: Path | None = None,
    chain_depth: int = 0,
    avg_entry_bytes: int = 0,
    vocab: _Vocab | None = None,
    every: dict[str, int] | None = None,
    plain: bool = False,
) -> SessionInfo:
    """Write one session of about target_bytes under agent_dir/sessions (or at path); return what it holds.

    With plain, only what pi itself writes: no omp title line or header title, no subagents (task
    calls, sidecars, agent:// outputs), no artifacts (bash output stays in the session), images as
    base64 in the session rather than in the blob store, no custom entries, pi's model_change form."""
    rng = random.Random(seed)
    cwd = cwd if cwd is not None else rng.choice(PROJECTS)
    vocab = vocab if vocab is not None else project_vocab(cwd)
    start = start_ms if start_ms is not None else BASE_MS + rng.randint(0, 120 * 86_400_000)
    session_id = _uuid4(rng)
    if path is None:
        stamp = iso(start).replace(":", "-").replace(".", "-")
        path = agent_dir / "sessions" / encode_cwd(cwd) / f"{stamp}_{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    info = SessionInfo(path=path, session_id=session_id, cwd=cwd)
    artifacts = _Artifacts(path.with_suffix(""))
    # BlobStore.put skips bytes it already holds, so a reused image is stored once.
    blobs = BlobStore([agent_dir_of(path) / "blobs"])
    with open(path, "wb") as out:
        builder = _Builder(
            out,
            info,
            rng=rng,
            vocab=vocab,
            clock_ms=start,
            target_bytes=target_bytes,
            artifacts=artifacts,
            blobs=blobs,
            chain_depth=chain_depth,
            avg_entry_bytes=avg_entry_bytes,
            every=every,
            plain=plain,
        )
        if rng.random() < 0.15 and not plain:
            slot = _title_slot(rng, start, vocab)
            out.write(slot)
            info.bytes += len(slot)
        builder.write_line(_header(rng, session_id, start, cwd, vocab, plain))
        builder.run()
    return info


def project_vocab(cwd: str) -> _Vocab:
    """The names and text pools of one project; the same for every session (and run) in it."""
    return _Vocab(random.Random(f"vocab:{cwd}"))


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
