"""Control characters and bidirectional overrides in any session field: the build goes on, and none
reaches a page, a data file, a file name or the terminal raw."""

from __future__ import annotations

import random
import re
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import escape
from sessions import SessionBuilder, text, tool_call
from site_helpers import run_sitegen

from sitegen.cli.text import visible as terminal_visible
from sitegen.render.base.text import break_long_words, html_escape
from sitegen.site.pages.charts import _shorten, text_width
from sitegen.visible import BIDI_MARKS, hidden_chars, visible, visible_utf8

# NUL, BEL, ESC (a colour), a C1 CSI, an override, an isolate, DEL: in every string a session holds.
HOSTILE = "ZZ\x00A\x07B\x1b[31mC\x9bD\u202eE\u2066F\u2069G\x7fZZ"
# Words both sessions use, so that each lists the other as related (with its hostile title).
SHARED = "grammar lexer tokenizer parser precedence backtracking memoization"
RAW = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# orjson writes C0 as \u00XX escapes, which a page's script would turn back into the characters.
ESCAPED = re.compile(r"\\u00[01][0-9a-fA-F]|\\u007[fF]|\\u00[89][0-9a-fA-F]|\\u202[a-eA-E]|\\u206[6-9]")


def _hostile_agent(agent: Path) -> None:
    folder = agent / "sessions" / "--work-hostile--"
    header = {"parentSession": f"/x/{HOSTILE}.jsonl"}
    b = SessionBuilder(session_id=f"id-{HOSTILE}", cwd=f"/work/{HOSTILE}", **header)
    b.add("session_info", "i1", None, name=f"title {HOSTILE}")
    b.add("model_change", "m1", provider=f"prov{HOSTILE}", modelId=f"model{HOSTILE}")
    b.user("u1", f"prompt {HOSTILE} {SHARED}")
    b.assistant(
        "a1",
        [text(f"answer {HOSTILE}"), tool_call("c1", f"tool{HOSTILE}", path=f"/p/{HOSTILE}.py", command=HOSTILE)],
        model=f"model{HOSTILE}",
        provider=f"prov{HOSTILE}",
    )
    b.tool_result("r1", "c1", f"tool{HOSTILE}", f"output {HOSTILE}")
    b.add("label", "l1", targetId="a1", label=f"label {HOSTILE}")
    b.add("custom_message", "cm1", customType=f"kind{HOSTILE}", content=f"custom {HOSTILE}", display=True)
    b.write(folder / "2026-01-01T00-00-00-000Z_hostile.jsonl")
    # A v1 header names its origin branchedFrom: the NUL there once stopped the whole build.
    v1 = SessionBuilder(session_id="v1-branch", cwd=f"/work/{HOSTILE}", version=1, branchedFrom=f"/y/{HOSTILE}")
    v1.user("u1", f"ZZ_SECOND_ZZ {SHARED}")
    v1.write(folder / "2026-01-01T00-00-01-000Z_second.jsonl")
    # A third that shares none of the words: shared words weigh nothing in a pair of sessions.
    third = SessionBuilder(session_id="third", cwd="/work/other")
    third.user("u1", "ZZ_THIRD_ZZ about gardening tomatoes")
    third.write(agent / "sessions" / "--work-other--" / "2026-01-01T00-00-02-000Z_third.jsonl")


def test_no_field_stops_the_build_or_reaches_the_site_raw(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _hostile_agent(agent)
    before = {p: p.read_bytes() for p in agent.rglob("*") if p.is_file()}
    done = run_sitegen("build", "--agent-dir", str(agent), "--out", "site", cwd=tmp_path)
    assert done.returncode == 0 and "3 rendered" in done.stdout, done.stderr
    site = tmp_path / "site"
    checked = 0
    for path in site.rglob("*"):
        assert not RAW.search(path.name), path
        if path.is_file() and path.suffix in (".html", ".js", ".svg") and "assets" not in path.parts:
            content = path.read_text(encoding="utf-8")
            assert not RAW.search(content), (path, RAW.findall(content))
            # In a page, "\u0000" is text a reader sees (a tool's JSON arguments); a script would decode it.
            assert path.suffix != ".js" or not ESCAPED.search(content), (path, ESCAPED.findall(content))
            checked += 1
    assert checked > 8
    related = "".join(p.read_text() for p in site.glob("sessions/*/*.related.js"))
    assert "title ZZ" in related and "\u27e8RLO\u27e9" in related
    home = (site / "index.html").read_text()
    # Shown as marks: a reader sees that something was there, and in which order (a title drops NULs).
    assert "title ZZA\ufffdB\ufffd[31mC\ufffdD\u27e8RLO\u27e9E\u27e8LRI\u27e9F\u27e8PDI\u27e9G\ufffdZZ" in home
    assert {p: p.read_bytes() for p in agent.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(
    "command",
    [["ls", "--all"], ["ls"], ["dump", "hostile"], ["context", "hostile"], ["export", "hostile", "-o", "x.html"]],
)
def test_no_field_stops_a_command_or_drives_the_terminal(tmp_path: Path, command: list[str]) -> None:
    agent = tmp_path / "agent"
    _hostile_agent(agent)
    work = tmp_path / "work"
    work.mkdir()
    done = run_sitegen(*command, "--agent-dir", str(agent), cwd=work)
    assert done.returncode == 0, done.stderr
    assert not RAW.search(done.stdout.replace("\t", "")) and not RAW.search(done.stderr)


def test_marks() -> None:
    assert visible("plain text, tab\tnewline\n and é · ✓") == "plain text, tab\tnewline\n and é · ✓"
    assert visible("a\x00b\u202ec\x85") == "a\ufffdb\u27e8RLO\u27e9c\ufffd"
    assert visible("x\u2067y\x01") == "x\u27e8RLI\u27e9y\ufffd"
    assert not hidden_chars("\u00b7 middle dot, \u200f a right-to-left mark") and hidden_chars("\x9b")
    assert terminal_visible("\u202eevil\x1b") == "\u27e8RLO\u27e9evil\u241b"
    # Valid JSON stays valid: only characters inside strings are replaced.
    assert orjson.loads(visible(orjson.dumps({"k": "\u202e"}).decode())) == {"k": "\u27e8RLO\u27e9"}


def test_ascii_text_is_checked_for_every_control_character() -> None:
    # ASCII text is checked on its bytes, other text by the regular expression: both find the same.
    for code in range(128):
        char = chr(code)
        hidden = (code < 0x20 and char not in "\t\n\r") or code == 0x7F
        assert hidden_chars(f"ab{char}cd") is hidden, code
        assert hidden_chars(f"ab{char}cdé") is hidden, code
        assert visible(f"ab{char}cd") == ("ab\ufffdcd" if hidden else f"ab{char}cd"), code


@pytest.mark.parametrize("words", ["é · … 日 😀 \ud800 \t\n\r plain text ", "中文的会话记录 \ud800 日本語 한국어 "])
def test_a_long_text_is_checked_on_its_bytes_for_every_character_visible_replaces(words: str) -> None:
    # Past 64 K characters hidden_chars looks at what is left of the UTF-8 without the shown ASCII
    # bytes (a text mostly in ASCII) or at the text (one mostly in other scripts): either way it finds
    # each character visible() replaces, and nothing in text of any other characters.
    hidden = [chr(code) for code in [*range(0x20), 0x7F, *range(0x80, 0xA0), *BIDI_MARKS] if chr(code) not in "\t\n\r"]
    long = words * 5000
    assert len(long) > 65536 and not hidden_chars(long)
    for char in hidden:
        assert hidden_chars(long + char) and hidden_chars(char + long), hex(ord(char))


def test_a_page_is_made_visible_on_its_bytes_as_visible_makes_its_text() -> None:
    # visible_utf8 finds the characters in what is left of the page without its shown ASCII bytes,
    # and replaces their encodings: the same bytes as visible() and encoding, for every character it
    # replaces, among others of one, two, three and four bytes and a lone surrogate (surrogatepass).
    hidden = [chr(code) for code in [*range(0x20), 0x7F, *range(0x80, 0xA0), *BIDI_MARKS]]
    others = ["a", "\t", "\n", "\r", "é", "\u00a0", "\u00b7", "\u2026", "\u2014", "\u27e8", "→", "日", "😀", "\ud800"]
    rng = random.Random(7)
    pages = ["", "plain", "\x1b[31m", HOSTILE, f"<pre>{HOSTILE}</pre> · ✓ …"]
    for _ in range(400):
        pages.append("".join(rng.choice(others if rng.random() < 0.9 else hidden) for _ in range(rng.randrange(60))))
    for page in pages:
        assert visible_utf8(page) == visible(page).encode("utf-8", "surrogatepass"), repr(page)


def _shorten_by_every_cut(label: str, width: float) -> str:
    """The shortening as it was (each cut from the label's length down): the reference for the bound."""
    if text_width(label) <= width:
        return label
    keep_end = "/" in label or "\\" in label
    for cut in range(len(label) - 1, 0, -1):
        short = "…" + label[-cut:] if keep_end else label[:cut].rstrip() + "…"
        if text_width(short) <= width:
            return short
    return "…"


def test_long_labels_are_shortened_as_before_without_trying_every_cut() -> None:
    rng = random.Random(31)
    alphabet = "aiMW .-/日" + " " * 6
    for _ in range(3000):
        label = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 160)))
        width = rng.choice([12.0, 40.0, 120.0, 300.0])
        assert _shorten(label, width) == _shorten_by_every_cut(label, width), (label, width)
    # A 100,000-character name: one measuring pass, a bounded number of tries.
    assert _shorten("m" * 100_000, 120.0) == "m" * 8 + "…"


def test_long_words_are_wrapped_for_layout_only_outside_tags() -> None:
    run = "a" * 600 + "&amp;" + "b" * 600
    html = f'<p>{run}</p><img src="data:image/png;base64,{"Q" * 3000}"> <code>{"c" * 999}</code>'
    out = break_long_words(html)
    assert out == html.replace(run, f'<span class="long-word">{run}</span>')
    assert break_long_words("short <b>text</b>") == "short <b>text</b>"


def _wrapped_by_regex(html: str) -> str:
    """The reference for break_long_words: every run found by one regex, the tag checked by rfind."""
    pieces: list[str] = []
    done = 0
    for match in re.finditer(r"(?<![^\s<>])[^\s<>]{1000,}", html):
        start, end = match.span()
        if html.rfind("<", 0, start) < html.rfind(">", 0, start) or "<" not in html[:start]:
            pieces += (html[done:start], '<span class="long-word">', match.group(), "</span>")
            done = end
    return "".join([*pieces, html[done:]]) if pieces else html


def test_long_words_are_found_as_a_scan_of_every_run_finds_them() -> None:
    rng = random.Random(31)
    for _ in range(2000):
        parts = []
        for _ in range(rng.randrange(1, 8)):
            parts.append(rng.choice(["a", "&amp;", "é"]) * rng.choice([1, 5, 400, 999, 1000, 1001, 2500]))
            parts.append(rng.choice([" ", "\n", "<b>", "</b>", '<img src="', '">', "\u00a0"]))
        html = "".join(parts)
        assert break_long_words(html) == _wrapped_by_regex(html), html[:80]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.text(st.characters(categories=["L", "N"])), st.sampled_from(["&", "<>", "'\"", "a&b"])))
def test_html_escape_escapes_as_markupsafe_does(value: str) -> None:
    """The quick paths (a value of letters and digits returned as it is) change nothing escape() gives."""
    assert html_escape(value) == str(escape(value))
