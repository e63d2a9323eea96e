"""pygments' rules as data for the page's highlighter: patterns translated by meaning, lexers that cannot be
run the same way left to the server. (tests/test_browser_highlight.py runs the tables in Chromium.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sessions import SessionBuilder, text
from site_helpers import build

from sitegen.render.base._internals import lexer_mapping
from sitegen.render.highlight import tables as lexer_tables
from sitegen.render.highlight.pygments_html import _first_aliases, lexer_class_by_name
from sitegen.render.highlight.tables import fenced_languages, lexer_table, table_json, with_called
from sitegen.render.highlight.translate import NotPortable, js_pattern


@pytest.mark.parametrize(
    ("pattern", "flags", "expected"),
    [
        ("ab", 0, "ab"),
        # Punctuation as \x escapes, valid in and out of classes in v-mode; other characters as they are.
        ("a.b", 0, "a[^\\n]b"),
        ("a.b", re.DOTALL, "a[\\s\\S]b"),
        ("[^'\"é]", 0, "[^\\x27\\x22é]"),
        # Python's anchors: $ also before a final newline; ^ after any newline with MULTILINE.
        ("^x$", 0, "(?<![\\s\\S])x(?=\\n?(?![\\s\\S]))"),
        ("^x$", re.MULTILINE, "(?<![^\\n])x(?=\\n|(?![\\s\\S]))"),
        # \w and \b by Unicode word characters, as Python's are.
        ("\\w+", 0, "(?:[\\p{L}\\p{N}_])+"),
        ("[^\\W\\d]", 0, "[^[^\\p{L}\\p{N}_]\\p{Nd}]"),
        (
            "\\bif\\b",
            re.ASCII,
            "(?:(?<=[A-Za-z0-9_])(?![A-Za-z0-9_])|(?<![A-Za-z0-9_])(?=[A-Za-z0-9_]))if"
            "(?:(?<=[A-Za-z0-9_])(?![A-Za-z0-9_])|(?<![A-Za-z0-9_])(?=[A-Za-z0-9_]))",
        ),
        # Groups keep their numbers for back-references; names are not needed.
        ("(?P<q>['\"]).*?(?P=q)", 0, "([\\x27\\x22])(?:[^\\n])*?(?:\\1)"),
        ("(?i)select", 0, "select"),
        ("a(?i:b)", 0, "a(?:(?i:b))"),
        ("x{2,3}y{4}z{1,}", 0, "(?:x){2,3}(?:y){4}(?:z)+"),
        ("(?<=a)b(?!c)", 0, "(?<=a)b(?!c)"),
    ],
)
def test_patterns_keep_their_meaning(pattern: str, flags: int, expected: str) -> None:
    source, js_flags = js_pattern(pattern, flags)
    assert source == expected
    assert js_flags == ("vyi" if "(?i)" in pattern else "vy")


@pytest.mark.parametrize("pattern", ["(a)?(?(1)b|c)", "a++", "(?>ab)"])
def test_what_javascript_cannot_say_is_not_portable(pattern: str) -> None:
    with pytest.raises(NotPortable):
        js_pattern(pattern, 0)


def test_lexers_with_their_own_code_stay_on_the_server() -> None:
    # JSON's and YAML's pygments lexers are Python code: ours, as rules (sitegen.render.highlight.rule_lexers),
    # run in the page.
    for alias in ("python", "typescript", "rust", "go", "bash", "tsql", "css", "html", "markdown", "json", "yaml"):
        assert lexer_table(alias) is not None, alias
    # C tokenizes in Python; C# has variants.
    for alias in ("c", "csharp", "no-such-lexer"):
        assert lexer_table(alias) is None, alias


def test_the_page_lexer_of_an_alias_is_its_class_first_alias() -> None:
    """The page's name for a lexer is read from pygments' table of lexers, not its class: every alias
    gives what the class pygments finds by it is first called."""
    for _module, _name, aliases, _files, _mimes in lexer_mapping().values():
        for alias in aliases:
            cls = lexer_class_by_name(alias)
            assert cls is not None, alias
            assert _first_aliases()[alias] == cls.aliases[0], alias


def test_code_left_to_the_page_imports_no_lexer_module(tmp_path: Path) -> None:
    """Code past a page's first screen needs its lexer's table only: a page of Rust, past the first
    screen, does not import pygments' Rust lexer once the table is in the cache folder."""
    probe = (
        "import sys\n"
        "from sitegen.render.highlight.pygments_html import Highlighter\n"
        "highlighter = Highlighter()\n"
        "highlighter.prepare(['rust'])\n"
        "highlighter.later = True\n"
        "print(highlighter.code('fn main() {}', 'rust'))\n"
        "print('pygments.lexers.rust' in sys.modules)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    for _ in range(2):  # the first run translates the table into the cache folder
        shown, imported = subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
        ).stdout.splitlines()
    assert shown == '<span class=hl-later data-lang="rust">fn main() {}</span>'
    assert imported == "False"


def test_markdown_needs_the_lexers_its_fences_name() -> None:
    fenced = "x\n\n```py\nprint(1)\n```\n\n```nosuchlang\nplain\n```\n"
    assert fenced_languages("markdown", fenced) == {"python"}
    # A fence in a language only the server can colour keeps the whole block on the server.
    assert fenced_languages("markdown", "```c\nint x;\n```\n") is None
    assert fenced_languages("markdown", "```json\n{}\n```\n") == {"json"}
    assert fenced_languages("markdown", "```yml\na: 1\n```\n") == {"yaml"}
    assert fenced_languages("python", "```yaml\n") == set()


def test_tables_name_the_lexers_they_call_and_are_safe_in_a_script() -> None:
    assert lexer_table("html") is not None
    assert with_called({"html"}) == {"html", "css", "javascript"}
    for alias in ("python", "html", "bash"):
        text = table_json(alias)
        assert text is not None and "<" not in text and "\u2028" not in text


def test_tables_are_kept_in_the_cache_folder_and_read_back_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(lexer_tables, "_tables", {})
    lexer_tables._table_cache.cache_clear()
    try:
        translated = {alias: lexer_table(alias) for alias in ("python", "markdown", "c", "no-such-lexer")}
        (folder,) = (tmp_path / "sitegen" / "lexer-tables").iterdir()
        assert {path.name for path in folder.iterdir()} == {f"{alias}.json" for alias in translated}
        # Read back rather than translated: the same tables (a wrong file is made anew, not believed).
        (folder / "c.json").write_text("{not json")
        (folder / "python.json").write_text('{"table": {"patterns": [], "using": []}}')
        monkeypatch.setattr(lexer_tables, "_tables", {})
        assert lexer_table("python") == {"patterns": [], "using": []}  # proof: it was read from the cache
        monkeypatch.setattr(lexer_tables, "_tables", {})
        (folder / "python.json").unlink()
        assert {alias: lexer_table(alias) for alias in translated} == translated
        assert (folder / "c.json").read_text() == '{"table": null}'
    finally:
        lexer_tables._table_cache.cache_clear()


def test_without_a_writable_cache_folder_tables_are_translated_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sitegen").write_text("a file where the folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(lexer_tables, "_tables", {})
    lexer_tables._table_cache.cache_clear()
    try:
        assert lexer_tables._table_cache() is None
        assert lexer_table("python") is not None
    finally:
        lexer_tables._table_cache.cache_clear()


def _later_session(path: Path, session_id: str, turns: int = 40) -> Path:
    """A session past its first screen whose every answer is the same markdown, fenced Python and Go."""
    b = SessionBuilder(session_id=session_id, cwd="/work/app")
    for n in range(turns):
        b.user(f"u{n}", f"step {n}")
        b.assistant(f"a{n}", [text("Here:\n\n```python\nprint(1)\n```\n\nand\n\n```go\nfunc f() {}\n```\n")])
    return b.write(path)


def _unshipped(page: Path) -> set[str]:
    """Lexers the page's code is left to whose tables the page does not carry."""
    html = page.read_text(encoding="utf-8")
    left = set(re.findall(r'<span class=hl-later data-lang="([^"]+)">', html))
    return left - set(re.findall(r'class="sitegen-lexer" data-lang="([^"]+)"', html))


def test_every_site_page_ships_the_lexers_its_code_is_left_to(tmp_path: Path) -> None:
    # The same markdown on two pages (a worker renders it once) and again in the next build (from the
    # fragment store): each page must still carry the tables of the lexers its code waits for.
    folder = tmp_path / "agent" / "sessions" / "--work-app--"
    folder.mkdir(parents=True)
    first = _later_session(folder / "2026-01-01T00-00-00-000Z_later-1.jsonl", "later-1")
    _later_session(folder / "2026-01-02T00-00-00-000Z_later-2.jsonl", "later-2")
    site = tmp_path / "site"
    build(site, tmp_path / "agent")
    pages = sorted(site.glob("sessions/*/*later-*.html"))
    assert len(pages) == 2
    for page in pages:
        assert 'data-lang="python"' in page.read_text(encoding="utf-8") and not _unshipped(page), page.name
    with first.open("a", encoding="utf-8") as handle:
        handle.write(first.read_text(encoding="utf-8").splitlines()[-1].replace('"u39"', '"u40"') + "\n")
    result = build(site, tmp_path / "agent")
    assert len(result.rendered) == 1
    assert not _unshipped(pages[0]) and not _unshipped(pages[1])
