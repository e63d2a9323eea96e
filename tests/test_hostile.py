"""Hostile session content must come out inert: no script, handler, foreign URL or broken markup."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from sessions import SessionBuilder, text, tool_call

from sitegen.render.export import export_html, load_transcript
from sitegen.render.page import LONG_PAGE_SCRIPTS, PAGE_SCRIPTS, PAGE_STYLES

PAYLOADS = [
    "<script>alert('ZZ_P1_ZZ')</script>",
    '<img src=x onerror="alert(`ZZ_P2_ZZ`)">',
    "[click ZZ_P3_ZZ](javascript:alert(1))",
    "![pixel ZZ_P4_ZZ](https://tracker.example/p.png)",
    "<style>body{display:none}",  # an unclosed style must not hide the rest of the page
    '"><svg onload=alert("ZZ_P5_ZZ")>',
    "</textarea></pre></details></article></main><script>ZZ_P6_ZZ</script>",
    "[data ZZ_P7_ZZ](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<a href='vbscript:msgbox'>ZZ_P8_ZZ</a>",
    "\u202eRTL override ZZ_P9_ZZ \u0000 nul \ufeff bom \U0001f600",
    "<iframe src='https://evil.example'></iframe> ZZ_P10_ZZ",
    "<base href='https://evil.example/'> ZZ_P11_ZZ",
    "| left | ZZ_P12_ZZ |\n|:--|--:|\n| 1 | 2 |",  # aligned columns must not become style attributes
]

ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "nav", "h1", "h2", "h3", "h4", "h5", "h6",
    "dl", "dt", "dd", "div", "code", "span", "table", "thead", "tbody", "tr", "th", "td", "details",
    "summary", "pre", "ul", "ol", "li", "p", "a", "strong", "em", "time", "article", "section", "main",
    "footer", "button", "input", "img", "blockquote", "hr", "br", "del", "s", "script", "mark", "aside",
    "dialog",
    # The session timeline (sitegen/render/timeline.py): an SVG strip in a figure.
    "figure", "figcaption", "svg", "rect", "text",
}  # fmt: skip


class TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def hostile_session(tmp_path: Path) -> Path:
    payload = "\n\n".join(PAYLOADS)
    b = SessionBuilder(session_id='evil"><script>ZZ_ID_ZZ</script>', cwd="/tmp/<script>alert('ZZ_CWD_ZZ')</script>")
    b.add("session_info", "info0001", None, name="<script>ZZ_TITLE_ZZ</script></title>")
    b.user('u"1<x>', payload)
    b.assistant(
        "a1",
        [
            {"type": "thinking", "thinking": payload},
            text(payload),
            tool_call('c"1', '<b onmouseover="ZZ_TOOLNAME_ZZ">bash', command=payload),
            tool_call("c2", "read", path="<script>ZZ_PATH_ZZ</script>.py"),
            tool_call("c3", "mystery<tool>", payload=payload),
        ],
    )
    b.tool_result("r1", 'c"1', '<b onmouseover="ZZ_TOOLNAME_ZZ">bash', payload)
    b.tool_result("r2", "c2", "read", payload)
    b.tool_result("r3", "c3", "mystery<tool>", payload)
    b.message(
        "u2",
        "user",
        [
            text("image"),
            {"type": "image", "data": 'AAAA"><script>ZZ_IMG_ZZ</script>', "mimeType": "image/png"},
            {"type": "image", "data": "AAAA", "mimeType": 'image/png"><script>ZZ_MIME_ZZ</script>'},
        ],
    )
    b.add("label", "l1", targetId="a1", label='"><script>ZZ_LABEL_ZZ</script>')
    b.add("custom_message", "cm1", customType="<script>ZZ_CUSTOM_ZZ</script>", content=payload, display=True)
    b.add("totally_new_type", "x1", weird=payload)
    b.message("x2", "brandNewRole<script>", payload)
    return b.write(tmp_path / "hostile.jsonl")


def test_payloads_are_inert(tmp_path: Path) -> None:
    html = export_html(load_transcript(hostile_session(tmp_path)))
    parser = TagCollector()
    parser.feed(html)
    tags = parser.tags
    # Exactly our style elements and our scripts (theme in <head>, the page's modules at the end, but
    # those only a long page needs).
    assert sum(1 for tag, _ in tags if tag == "script") == 1 + len(PAGE_SCRIPTS) - len(LONG_PAGE_SCRIPTS)
    assert sum(1 for tag, _ in tags if tag == "style") == len(PAGE_STYLES)
    for tag, attrs in tags:
        assert tag in ALLOWED_TAGS, tag
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name, value)
            assert name != "style", (tag, value)  # the CSP forbids inline styles
            if name == "href":
                assert value is not None and re.match(r"(https?:|mailto:|#)", value), value
            if name == "src":
                assert value is not None and re.match(r"data:image/(png|jpeg|gif|webp);base64,", value), value
    # Tokens are still shown, as text.
    for token in (
        "ZZ_P1_ZZ",
        "ZZ_P6_ZZ",
        "ZZ_TITLE_ZZ",
        "ZZ_CWD_ZZ",
        "ZZ_LABEL_ZZ",
        "ZZ_CUSTOM_ZZ",
        "ZZ_TOOLNAME_ZZ",
    ):
        assert token in html, token
    assert "&lt;script&gt;alert(&#39;ZZ_P1_ZZ&#39;)&lt;/script&gt;" in html
    # The page still ends properly after an unclosed <style> in content.
    assert html.rstrip().endswith("</html>")
    assert "tracker.example/p.png" not in re.findall(r'src="([^"]*)"', html)
    assert "\x00" not in html


def test_unknown_types_and_roles_render_as_generic_cards(tmp_path: Path) -> None:
    html = export_html(load_transcript(hostile_session(tmp_path)))
    assert 'id="entry-x1"' in html and "totally_new_type" in html
    assert 'id="entry-x2"' in html
