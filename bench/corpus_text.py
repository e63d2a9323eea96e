"""Corpus text: templates filled with one project's names, so sessions in a project talk about the same files."""

from __future__ import annotations

import random
import statistics

from corpus_basics import lognormal, png_bytes, token

__all__ = [
    "COMMANDS",
    "DIRS",
    "REQUESTS",
    "Vocab",
    "assistant_markdown",
    "bullets",
    "fill",
    "project_vocab",
    "user_markdown",
]

_SYLLABLE_TEXT = (
    "parse load tree node buf cache span tok ctx sess blob hash leaf path walk emit flush dir net "
    "req res auth user item list map idx key val row col str num ver mig rate pool task job queue "
    "sched lock page view route store state diff patch merge sync fetch render theme font grid cell "
    "batch"
)
_SYLLABLES = _SYLLABLE_TEXT.split()
DIRS = ("src", "src/core", "src/api", "lib", "pkg/server", "internal/store", "app/ui", "tests", "scripts")
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

REQUESTS = (
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


def fill(rng: random.Random, template: str, vocab: Vocab) -> str:
    return template.format(
        a=rng.choice(vocab.idents),
        b=rng.choice(vocab.idents),
        c=rng.choice(vocab.idents),
        C=rng.choice(vocab.types),
        D=rng.choice(vocab.types),
        f=rng.choice(vocab.files),
        n=rng.randint(0, 4096),
        m=rng.randint(0, 59),
        h=token(rng, 7, "0123456789abcdef"),
        s=rng.choice(vocab.short),
    )


class Vocab:
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
        self.files = [f"{rng.choice(DIRS)}/{rng.choice(snake)}.{rng.choice(list(_EXT_LANG))}" for _ in range(70)]
        self.short = [" ".join(rng.choices(_SYLLABLES, k=rng.randint(2, 6))) for _ in range(40)] + [
            "handles the empty case",
            "keeps the order stable",
            "TODO: remove after v3",
            "see #12",
        ]
        self.code: dict[str, list[str]] = {
            lang: [fill(rng, rng.choice(templates), self) for _ in range(400)] for lang, templates in _CODE.items()
        }
        self.logs = [fill(rng, rng.choice(_LOG_LINES), self) for _ in range(600)]
        self.prose = [fill(rng, rng.choice(_PROSE), self) for _ in range(300)]
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


def _fence(rng: random.Random, vocab: Vocab, nbytes: int) -> str:
    lang = rng.choice(("python", "typescript", "rust", "go", "sql", "json", "yaml", "bash"))
    return f"```{lang}\n{vocab.code_text(rng, lang, nbytes)}\n```"


def bullets(rng: random.Random, vocab: Vocab, count: int, numbered: bool = False) -> str:
    lines = []
    for index in range(count):
        mark = f"{index + 1}." if numbered else "-"
        lines.append(f"{mark} **{rng.choice(vocab.types)}**: `{rng.choice(vocab.idents)}` {rng.choice(vocab.short)}")
        if rng.random() < 0.2:
            lines.append(f"   - nested: {rng.choice(vocab.prose)}")
    return "\n".join(lines)


def _table(rng: random.Random, vocab: Vocab) -> str:
    rows = ["| name | count | note |", "|------|------:|------|"]
    rows += [
        f"| `{rng.choice(vocab.idents)}` | {rng.randint(0, 999)} | {rng.choice(vocab.short)} |"
        for _ in range(rng.randint(2, 8))
    ]
    return "\n".join(rows)


def user_markdown(rng: random.Random, vocab: Vocab) -> str:
    """A user prompt: a request, sometimes with headings, lists, code fences, a table or a pasted log."""
    parts = [fill(rng, rng.choice(REQUESTS), vocab)]
    if rng.random() < 0.3:
        parts.append(vocab.paragraph(rng, rng.randint(1, 4)))
    if rng.random() < 0.25:
        parts.append(f"## {rng.choice(vocab.types)} requirements")
        parts.append(bullets(rng, vocab, rng.randint(2, 6), numbered=rng.random() < 0.4))
    if rng.random() < 0.25:
        parts.append(_fence(rng, vocab, lognormal(rng, 400, 0.8, 6000)))
    if rng.random() < 0.05:
        parts.append(_table(rng, vocab))
    if rng.random() < 0.04:
        parts.append("```\n" + vocab.log_text(rng, lognormal(rng, 6000, 1.0, 60_000)) + "\n```")
    if rng.random() < 0.05:
        parts.append(
            f"> {rng.choice(vocab.prose)}\n\nSee [the docs](https://example.com/docs/{rng.choice(vocab.idents)})."
        )
    return "\n\n".join(parts)


def assistant_markdown(rng: random.Random, vocab: Vocab) -> str:
    """A final answer: a summary heading, bullets, sometimes code, a closing line."""
    parts = []
    if rng.random() < 0.5:
        parts.append(f"## {rng.choice(('Summary', 'What changed', 'Findings', 'Plan'))}")
    parts.append(vocab.paragraph(rng, rng.randint(1, 3)))
    if rng.random() < 0.6:
        parts.append(bullets(rng, vocab, rng.randint(2, 7), numbered=rng.random() < 0.3))
    if rng.random() < 0.3:
        parts.append(_fence(rng, vocab, lognormal(rng, 500, 0.8, 8000)))
    if rng.random() < 0.1:
        parts.append(_table(rng, vocab))
    if rng.random() < 0.5:
        parts.append(vocab.paragraph(rng, 1))
    return "\n\n".join(parts)


# What a bash tool call runs ({a} an identifier, {f} a file of the project).
COMMANDS = (
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


def project_vocab(cwd: str) -> Vocab:
    """The names and text pools of one project; the same for every session (and run) in it."""
    return Vocab(random.Random(f"vocab:{cwd}"))
