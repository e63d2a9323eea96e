"""A long page's later code, coloured in a real Chromium by static/highlight.js with pygments' own rules:
the same HTML the server writes, when its entry is shown, with find's marks kept and hostile code inert."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from browser import PageWatch, assert_clean, open_page
from sessions import SessionBuilder, text, tool_call
from site_helpers import build

from sitegen.render.export import load_transcript
from sitegen.render.highlight.tables import lexer_table
from sitegen.render.page import LAZY_AFTER_NODES, PageOptions, PageRenderer
from sitegen.site.build import worker
from sitegen.site.build.pipeline import BuildConfig, build_site

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

# Code the lexers find hard: tabs, CRLF, a byte order mark, non-ASCII names and text, an astral
# character, nested states (f-strings, template literals, heredocs), embedded languages (HTML's script
# and style), and markup that must stay text.
SAMPLES: dict[str, str] = {
    "app.py": (
        "\ufeff@dataclass\nclass Café:\n\tnaïve: str = f'{x!r:>{w}} {{literal}}'\n"
        '    """Doc ✓ 𝔘𝔫𝔦"""\n    def run(self, *a, **k) -> None:\n'
        "        return [i ** 2 for i in range(10) if i % 2]  # 注释 </script><b>x</b>\r\n"
        "async def main():\n    await asyncio.sleep(0x1F + 1e-3 + 0o7 + 0b1)\n"
    ),
    "web.ts": (
        "export interface Retry<T> { budget: number; run(): Promise<T> }\n"
        "const s = `total ${a + `${b}`} done`; // ünïcode\nlet r = /a[/]b\\//g;\n"
        "function f(x?: string): x is string { return typeof x === 'string' }\n"
    ),
    "page.tsx": 'export const A = () => <div className="x">{items.map(i => <B key={i} />)}</div>;\n',
    "lib.rs": (
        '#[derive(Debug)]\npub struct P<\'a> { s: &\'a str }\nfn main() { let r = r#"raw "q""#; '
        "println!(\"{}\", 'c'); }\n"
    ),
    "main.go": 'package main\n\nfunc main() {\n\tx := map[string]int{"a": 1}\n\tgo func() { _ = x }()\n}\n',
    "run.sh": (
        "#!/bin/bash\nset -euo pipefail\ncat <<EOF > out\n$HOME ${x:-d} $(ls)\nEOF\n"
        'for f in *.py; do echo "$f"; done 2>&1 | tee log\n'
    ),
    "q.sql": "SELECT a, COUNT(*) FROM t WHERE b LIKE '%x%' -- note\nGROUP BY a;\n",
    "index.html": (
        "<!doctype html>\n<style>body { color: #fff }</style>\n"
        "<script>if (a < b && c) { alert('</scr' + 'ipt>') }</script>\n<p class=x>&amp; text</p>\n"
    ),
    "s.css": "@media (max-width: 600px) { .a > b::before { content: '\\201C'; margin: -1.5em } }\n",
    "Main.java": '@Override\npublic final class Main<T> { int x = 0xFF; String s = "q\\""; }\n',
    "conf.toml": '[server]\nport = 8080\nhosts = ["a", "b"]\ndate = 1979-05-27T07:32:00Z\n',
    # JSON by our rule lexer (pygments' tokens): unicode, escapes, exponents, nesting, markup as text; and
    # JSON lines with what JSON has not (comments, a stray word), which the page colours as the server does.
    "data.json": (
        '{\n  "name": "naïve ✓ 😀",\n  "escapes": "tab\\t quote\\" slash\\/ \\u00e9 \\ud83d\\ude00",\n'
        '  "numbers": [0, -12, 3.25, 1e10, -2.5E-3],\n  "flags": [true, false, null],\n'
        '  "nested": {"a": {"b": [[], {}]}},\n  "html": "</script><b>x</b>"\n}\n'
    ),
    "events.jsonl": '{"t":1}\n{"t": 2, "ok": true}\n// a comment\n{"k" /* c */ : "v", oops}\n',
    # Markdown colours fenced code by the lexer the fence names: run in the page for lexers it has (and
    # unknown names), on the server when a fence names one it has not (C, in BUILD.md below).
    "README.md": (
        "# Title\n\nSome *emphasis* and `code`.\n\n```py\ndef f(x):\n    return x  # ok\n```\n\n"
        "```nosuchlang extra words\nplain <b>text</b>\n```\n\n- a list\n  1. nested\n"
    ),
    "NOTES.md": '## Data\n\n```json\n{"a": 1}\n```\n',
    "CONFIG.md": "## Config\n\n```yaml\na: 1\n```\n",
}
# Read besides the samples every sixth turn (so the samples above are read as often as before them).
EXTRA_SAMPLES: dict[str, str] = {
    # YAML by our rule lexer (pygments' tokens): block scalars holding shell lines with colons, kept and
    # stripped, anchors, tags, flow collections, quoted escapes, comments, documents, CRLF and a tab.
    "deploy.yaml": (
        "%YAML 1.2\n---\nname: CI  # naïve ✓\non:\n  push:\n    branches: [ main, 'rel/*' ]\njobs:\n"
        "  test:\n    runs-on: ubuntu-latest\n    env: &env {A: 1, B: [x, y]}\n    steps:\n"
        '      - uses: actions/checkout@v4\n      - name: Run\n        run: |\n          echo "a: b" </script>\n'
        "\n          make test\n        if: github.ref == 'refs/heads/main'\n      - run: >-\n          pytest -q\r\n"
        "          --cov\n        env:\n          <<: *env\n          TAG: !!str 1.0\n"
        '          MSG: "tab\\t \\u00e9 😀"\n...\n--- |+\n  kept\n\n\tbad: tab\n'
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {app: web}\nspec:\n"
        "  replicas: 3\n  template:\n    spec:\n      containers:\n        - name: web\n"
        "          image: nginx:1.25\n          ports:\n            - containerPort: 80\n"
        "          env:\n            - name: POD_IP\n              valueFrom:\n                fieldRef:\n"
        "                  fieldPath: status.podIP\n          args:\n            - |\n"
        "              echo starting: now\n              exec nginx -g 'daemon off;'\n"
    ),
    # C's lexer is Python code: only the server colours it.
    "main.c": '#include <stdio.h>\nint main(void) { printf("%d\\n", 1 << 2); return 0; }\n',
    "BUILD.md": "## Build\n\n```c\nint x = 1;\n```\n",
}
# An MCP tool's arguments, shown as JSON.
ARGUMENTS = {"query": 'naïve "quoted" ✓ 😀 \\ </script>', "limit": 25, "ratio": -1.5e-3, "deep": [{"a": []}, {}, None]}
FENCES = "Here is the fix:\n\n```python\nprint('ZZ_FENCE_ZZ', 1 + 2)\n```\n\nand in Go:\n\n```go\nfunc f() {}\n```\n"
TURNS = 560  # three entries a turn: past LAZY_AFTER_NODES


def coloured_session(path: Path, turns: int = TURNS) -> Path:
    """Turns that read the samples over and over, with markdown fences; the first screen reads them too."""
    b = SessionBuilder(session_id="colour-0001", cwd="/work/app")
    names = list(SAMPLES)
    extra = list(EXTRA_SAMPLES)
    for n in range(turns):
        name = names[n % len(names)]
        also = extra[n // 6 % len(extra)] if n % 6 == 0 else None
        b.user(f"u{n:04d}", f"show {name} ZZ_STEP_{n}_ZZ")
        b.assistant(
            f"a{n:04d}",
            [
                text(FENCES.replace("ZZ_FENCE", f"ZZ{n}_FENCE")),
                tool_call(f"c{n}", "read", path=f"/work/app/src/{name}"),
                *([tool_call(f"q{n}", "mcp_search", **ARGUMENTS)] if name == "data.json" else []),
                *([tool_call(f"e{n}", "read", path=f"/work/app/src/{also}")] if also else []),
            ],
        )
        b.tool_result(f"r{n:04d}", f"c{n}", "read", SAMPLES[name].replace("ZZ", f"ZZ{n}"))
        if also:
            b.tool_result(f"e{n:04d}", f"e{n}", "read", EXTRA_SAMPLES[also].replace("ZZ", f"ZZ{n}"))
        if name == "data.json":
            b.tool_result(f"q{n:04d}", f"q{n}", "mcp_search", '{"hits": 0}')
    return b.write(path)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    """The long page with its later code left to the browser, and as the server alone writes it."""
    folder = tmp_path_factory.mktemp("colour")
    session = coloured_session(folder / "colour.jsonl")
    written = {}
    for later in (True, False):
        page = folder / f"later-{later}.html"
        PageRenderer().write(load_transcript(session), PageOptions(highlight_later=later), page)
        written[later] = page
    assert 3 * TURNS > LAZY_AFTER_NODES
    return written


@pytest.fixture
def opened(browser: Browser, pages: dict[bool, Path]) -> Iterator[tuple[Page, PageWatch]]:
    page, watch = open_page(browser, pages[True])
    yield page, watch
    page.context.close()


ALL_CODE = """() => {
  window.sitegen.chunks && window.sitegen.chunks.all();
  window.sitegen.highlight && window.sitegen.highlight.within(document.getElementById("conversation"));
  return Array.from(document.querySelectorAll("#conversation pre"), (pre) => pre.innerHTML);
}"""


def test_later_code_is_coloured_as_the_server_colours_it(browser: Browser, pages: dict[bool, Path]) -> None:
    html = pages[True].read_text(encoding="utf-8")
    # Every portable language was left to the browser, and its rules shipped once: JSON too (a read
    # .json or .jsonl file, a tool's arguments, a Markdown fence), by our rule lexer's table.
    left = ("python", "typescript", "tsx", "rust", "go", "bash", "tsql", "html", "css", "java", "markdown", "json")
    left += ("yaml",)
    for language in left:
        assert f'data-lang="{language}"' in html, language
        assert html.count(f'class="sitegen-lexer" data-lang="{language}"') == 1, language
    assert '<span class=hl-later data-lang="json">{\n  "name"' in html
    assert '<span class=hl-later data-lang="json">{\n  "query"' in html
    assert '<span class=hl-later data-lang="json">{"t":1}' in html
    assert 'data-lang="markdown">## Data' in html
    assert '<span class=hl-later data-lang="yaml">%YAML 1.2' in html  # YAML too, by our rule lexer's table
    assert 'data-lang="markdown">## Config' in html
    assert 'data-lang="c"' not in html  # C's lexer is its own code: the server colours it
    assert 'data-lang="markdown">## Build' not in html  # so is Markdown whose fence names C
    assert 'data-lang="markdown"># Title' in html
    assert len(html) < len(pages[False].read_text(encoding="utf-8"))
    server: list[Any] = []
    for later in (False, True):
        page, watch = open_page(browser, pages[later])
        blocks = page.evaluate(ALL_CODE)
        assert page.locator(".hl-later").count() == 0
        assert_clean(watch)
        page.context.close()
        if not later:
            server = blocks
            continue
        assert len(blocks) == len(server) > 3 * TURNS // 2
        different = [index for index, (ours, theirs) in enumerate(zip(blocks, server, strict=True)) if ours != theirs]
        assert not different, (blocks[different[0]], server[different[0]])


def test_code_is_coloured_when_its_entry_is_shown(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    # The first screen came coloured from the server.
    for entry in ("a0000", "r0000", "a0001", "r0001"):
        assert page.locator(f"#entry-{entry} .hl-later").count() == 0
    assert page.locator("#entry-r0001 span.k").count() > 0
    # Entries past the first screen: one in the document from the start, one in a chunk put in later.
    for entry in ("r0040", "r0500"):
        page.evaluate(f"() => {{ window.location.hash = '#entry-{entry}'; }}")
        page.wait_for_function(
            f"() => {{ const e = document.getElementById('entry-{entry}'); return e && !e.querySelector('.hl-later')"
            " && e.querySelector('pre span'); }"
        )
    # An entry far from the view is not coloured yet.
    page.wait_for_function("() => document.getElementById('entry-r0100') !== null")
    assert page.locator("#entry-r0100 .hl-later").count() > 0
    assert_clean(watch)


# Entries at the top of the page, before its scripts run: what a screen shows first.
FIRST_SHOWN = """() => Array.from(document.querySelectorAll("#conversation article.entry"))
  .filter((entry) => entry.offsetHeight > 0 && entry.getBoundingClientRect().top < window.innerHeight)
  .map((entry) => [entry.id, entry.querySelectorAll(".hl-later").length, entry.querySelectorAll("pre span").length])"""


def first_shown(browser: Browser, paths: list[Path], width: int, height: int) -> dict[Path, list[Any]]:
    """Per page, [entry id, hl-later spans, coloured spans] of the entries in view when it is first
    drawn, with scripts off (the pages visited in turn in one tab). Until a frame is drawn,
    content-visibility leaves every entry at its placeholder height (more of them seem in view than
    are): a screenshot draws one."""
    context = browser.new_context(viewport={"width": width, "height": height}, java_script_enabled=False)
    page = context.new_page()
    shown: dict[Path, list[Any]] = {}
    try:
        for path in paths:
            page.goto(path.resolve().as_uri())
            page.screenshot(clip={"x": 0, "y": 0, "width": 8, "height": 8})
            shown[path] = page.evaluate(FIRST_SHOWN)
    finally:
        context.close()
    return shown


PY = "def f(x):\n    return x + 1  # ok\nclass A:\n    pass\n"


def _hidden_message(b: SessionBuilder) -> None:
    """A display:false message (an extension's context), which the page hides."""
    b.user("u-first", "hello")
    b.add("custom_message", "hidden", customType="ctx", display=False, content="\n".join(f"l{i}" for i in range(400)))


def _extension_state(b: SessionBuilder) -> None:
    """Extension state entries between short prompts: hidden, and many of them."""
    for n in range(12):
        b.add("custom", f"state{n}", customType="state", data={"n": n})
        b.user(f"hi{n}", f"hi {n}")


def _abandoned_branch(b: SessionBuilder) -> None:
    """A first branch of 80 entries off the shown path, before it in the page's order."""
    root = b.user("u-root", "start")
    for n in range(40):
        b.assistant(f"x{n:03d}", [text("```python\nprint(0)\n```\n")])
        b.user(f"y{n:03d}", "again")
    b.leaf = root


def _output_in_parts(b: SessionBuilder) -> None:
    """A result of five text parts, folded as one output in its card."""
    b.user("u-first", "hello")
    b.assistant("a-first", [tool_call("many", "bash", command="ls")])
    parts = [{"type": "text", "text": "\n".join(f"x{i}" for i in range(39))} for _ in range(5)]
    b.message("r-first", "toolResult", parts, toolCallId="many", toolName="bash", isError=False)


def _soft_breaks(b: SessionBuilder) -> None:
    """A prompt of 200 one-word lines and one of 300 blank ones: a paragraph each in markdown."""
    b.user("u-first", "\n".join(f"word{i}" for i in range(200)))
    b.user("u-second", "hello" + "\n" * 300 + "there")


SHAPES = {
    f.__name__.strip("_"): f
    for f in (_hidden_message, _extension_state, _abandoned_branch, _output_in_parts, _soft_breaks)
}


@pytest.fixture(scope="module")
def shaped_pages(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A short page, and pages that start with what the page hides or shows shorter than its text."""
    folder = tmp_path_factory.mktemp("shapes")
    written = []
    for name, shape in {"short": None, **SHAPES}.items():
        b = SessionBuilder(session_id=f"shape-{name}", cwd="/work/app")
        if shape is not None:
            shape(b)
        for n in range(40):
            b.user(f"u{n:04d}", f"show file {n}")
            b.assistant(f"a{n:04d}", [text(FENCES), tool_call(f"c{n}", "read", path=f"/work/app/a{n}.py")])
            b.tool_result(f"r{n:04d}", f"c{n}", "read", PY)
        page = folder / f"{name}.html"
        PageRenderer().write(
            load_transcript(b.write(folder / f"{name}.jsonl")), PageOptions(highlight_later_short=True), page
        )
        written.append(page)
    return written


@pytest.mark.parametrize(("width", "height"), [(3840, 2160), (1280, 2160), (390, 844)])
def test_the_first_screen_comes_coloured_before_any_script_runs(
    browser: Browser, pages: dict[bool, Path], shaped_pages: list[Path], width: int, height: int
) -> None:
    """The server colours the entries a first screen can show (counted in lines, not entries): on a
    4K screen, a tall window and a phone, with scripts off, no code in view waits for the page.
    Besides the long page and a short one, pages that start with what the page hides or shows
    shorter than its text: hidden messages, extension state, an abandoned branch, an output in
    parts, markdown paragraphs of many lines."""
    written = [pages[True], *shaped_pages]
    for path in written:
        assert "hl-later" in path.read_text(encoding="utf-8")
    for path, shown in first_shown(browser, written, width, height).items():
        assert shown, path.name
        assert [entry for entry, later, _ in shown if later] == [], (path.name, shown)
        if height > 1000:  # a tall screen reaches code on every page
            assert sum(spans for *_, spans in shown) > 0, (path.name, shown)


def test_no_page_of_the_demo_or_real_sessions_shows_code_waiting_for_the_page(browser: Browser, tmp_path: Path) -> None:
    """Every site page of the demo sessions and the real fixtures (where present), with scripts off on
    a tall window: the entries in view hold no code left to the page's highlighter."""
    demo = Path(__file__).resolve().parent / "fixtures" / "golden" / "demo" / "pi"
    agents = [demo]
    real = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real"
    if real.is_dir():
        folder = tmp_path / "real" / "sessions" / "--work-real--"
        folder.mkdir(parents=True)
        for session in real.glob("*.jsonl"):
            shutil.copy(session, folder / session.name)
        agents.append(tmp_path / "real")
    site = tmp_path / "site"
    build_site(BuildConfig(out=site, agent_dirs=agents, use_default_dirs=False, jobs=1))
    pages = [page for page in sorted(site.glob("sessions/**/*.html")) if "hl-later" in page.read_text("utf-8")]
    assert len(pages) >= (7 if real.is_dir() else 4)
    waiting = {}
    for page, shown in first_shown(browser, pages, 1280, 2160).items():
        if [entry for entry, later, _ in shown if later]:
            waiting[page.name] = shown
    assert waiting == {}


def test_find_marks_stay_on_code_coloured_after_them(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    page.fill("#find", "ZZ450_FENCE_ZZ")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('find-status').textContent === '1 of 1'")
    page.wait_for_function("() => !document.getElementById('entry-a0450').querySelector('.hl-later')")
    marked = page.evaluate(
        """() => {
          const range = CSS.highlights.get("find-current").values().next().value;
          return [range.startContainer.isConnected, range.toString(),
                  range.startContainer.parentNode.closest('pre') !== null];
        }"""
    )
    assert marked == [True, "ZZ450_FENCE_ZZ", True]
    assert_clean(watch)


def test_hostile_code_stays_text_after_colouring(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    page.evaluate(ALL_CODE)
    # The samples' "</script><b>x</b>" and HTML are text in every block, never elements.
    assert page.locator("#conversation pre b, #conversation pre script, #conversation pre p").count() == 0
    assert page.locator("#conversation pre", has_text="</script><b>x</b>").count() > 10
    assert_clean(watch)


def test_every_portable_lexer_compiles_in_the_browser(browser: Browser) -> None:
    """All of pygments' lexers the translation accepts (about 400) compile as JavaScript patterns."""
    from pygments.lexers import LEXERS

    tables = {}
    for _module, _name, aliases, _files, _mimes in LEXERS.values():
        if aliases and (table := lexer_table(aliases[0])) is not None:
            tables[aliases[0]] = table["patterns"]
    assert len(tables) > 300
    page = browser.new_page()
    failed = page.evaluate(
        """(tables) => {
          const failed = [];
          for (const [name, patterns] of Object.entries(tables)) {
            for (const [source, flags] of patterns) {
              try { new RegExp(source, flags); } catch (error) { failed.push(name + ": " + error); }
            }
          }
          return failed;
        }""",
        tables,
    )
    page.close()
    assert failed == []


def test_a_site_page_leaves_its_later_code_to_the_browser_which_colours_it_as_the_server_does(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A site page of any length past its first screen (here 150 entries, not a long page).
    agent = tmp_path / "agent"
    folder = agent / "sessions" / "--work-app--"
    folder.mkdir(parents=True)
    coloured_session(folder / "2026-01-01T00-00-00-000Z_colour-0001.jsonl", turns=50)
    later = tmp_path / "later"
    build(later, agent)
    make_options = worker._options
    monkeypatch.setattr(
        worker, "_options", lambda job, page: replace(make_options(job, page), highlight_later_short=False)
    )
    server = tmp_path / "server"
    build(server, agent)
    (later_page,) = later.glob("sessions/*/*colour-0001.html")
    (server_page,) = server.glob("sessions/*/*colour-0001.html")
    html = later_page.read_text(encoding="utf-8")
    assert 'data-lang="python"' in html and 'class="sitegen-lexer" data-lang="python"' in html
    script = re.compile(r"assets/highlight\.[0-9a-f]+\.js")
    assert script.search(html) and not script.search(server_page.read_text(encoding="utf-8"))
    blocks = {}
    for name, page_file in (("later", later_page), ("server", server_page)):
        page, watch = open_page(browser, page_file, allow=page_file.parents[2])
        blocks[name] = page.evaluate(ALL_CODE)
        assert page.locator(".hl-later").count() == 0
        assert_clean(watch)
        page.context.close()
    assert len(blocks["later"]) == len(blocks["server"]) > 50
    different = [
        i for i, (ours, theirs) in enumerate(zip(blocks["later"], blocks["server"], strict=True)) if ours != theirs
    ]
    assert not different, (blocks["later"][different[0]], blocks["server"][different[0]])
