"""The exported page in a real headless Chromium: branches, deep links, filters, keys, find and themes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from browser import PageWatch, open_page
from sessions import SessionBuilder, branching_session, text, tool_call

from sitegen.render.export import export_page, load_transcript
from sitegen.render.page import format_tokens

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

REAL_FILES = (
    "omp-large-session.title-v3.jsonl",
    "pi-before-compaction.v1.jsonl",
    "pi-large-session.v1.jsonl",
)

# Entry ids of the test session, named by role in the tree below.
ROOT, CALL, RESULT, DONE = "u0000001", "a0000001", "r0000001", "a0000002"
OLD_USER, OLD_REPLY = "u0000002", "a0000003"
NEW_USER, NEW_REPLY = "u0000003", "a0000004"
LABEL_ROOT, LABEL_OLD, COMPACTION, CUSTOM = "l0000001", "l0000002", "c0000001", "x0000001"
LAST_USER, LAST_REPLY = "u0000004", "a0000005"


def _usage(tokens_in: int, tokens_out: int, cost: float) -> dict[str, Any]:
    return {
        "input": tokens_in,
        "output": tokens_out,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": tokens_in + tokens_out,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }


def _message(entry_id: str, parent: str | None, minute: int, message: dict[str, Any]) -> dict[str, Any]:
    stamp = f"2026-03-01T10:{minute:02d}:00.000Z"
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": message}


def _entry(kind: str, entry_id: str, parent: str, minute: int, **fields: Any) -> dict[str, Any]:
    stamp = f"2026-03-01T10:{minute:02d}:00.000Z"
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": stamp, **fields}


def _assistant(text: str, usage: dict[str, Any], extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    content = [{"type": "text", "text": text}, *(extra or [])]
    return {"role": "assistant", "provider": "anthropic", "model": "claude-test", "content": content, "usage": usage}


def write_branching_session(path: Path) -> None:
    """A v3 session: a tool call with long output, thinking, two branches from one entry, labels, a compaction.

    Default path: ROOT CALL RESULT DONE NEW_USER NEW_REPLY LABEL_ROOT LABEL_OLD COMPACTION CUSTOM
    LAST_USER LAST_REPLY. The older branch: ... DONE OLD_USER OLD_REPLY.
    """
    long_output = "\n".join("ZZ_DEEP_LINE_ZZ buried in the fold" if n == 90 else f"line {n}" for n in range(120))
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": "browser-test-0001",
            "timestamp": "2026-03-01T10:00:00.000Z",
            "cwd": "/work/demo",
        },
        _message(ROOT, None, 1, {"role": "user", "content": "ZZ_ROOT_PROMPT_ZZ list the files ZZ_TWICE_ZZ"}),
        _message(
            CALL,
            ROOT,
            2,
            _assistant(
                "Listing them now.",
                _usage(100, 20, 0.01),
                [
                    {"type": "thinking", "thinking": "ZZ_THINKING_ZZ the user wants a listing"},
                    {"type": "toolCall", "id": "call-1", "name": "bash", "arguments": {"command": "ls -la"}},
                ],
            ),
        ),
        _message(
            RESULT,
            CALL,
            3,
            {
                "role": "toolResult",
                "toolCallId": "call-1",
                "toolName": "bash",
                "content": [{"type": "text", "text": long_output}],
                "isError": False,
            },
        ),
        _message(DONE, RESULT, 4, _assistant("Done listing. ZZ_TWICE_ZZ", _usage(0, 30, 0.002))),
        _message(OLD_USER, DONE, 5, {"role": "user", "content": "ZZ_OLD_BRANCH_ZZ try variant A"}),
        # 12,400 more input tokens make the old branch's total an exact tie (12.5k), rounded to even.
        _message(OLD_REPLY, OLD_USER, 6, _assistant("ZZ_OLD_REPLY_ZZ variant A done", _usage(12_400, 500, 0.5))),
        _message(NEW_USER, DONE, 7, {"role": "user", "content": "ZZ_NEW_BRANCH_ZZ try variant B"}),
        _message(NEW_REPLY, NEW_USER, 8, _assistant("ZZ_NEW_REPLY_ZZ variant B done", _usage(2_000_000, 900, 1.25))),
        _entry("label", LABEL_ROOT, NEW_REPLY, 9, targetId=ROOT, label="ZZ_START_LABEL_ZZ"),
        _entry("label", LABEL_OLD, LABEL_ROOT, 10, targetId=OLD_USER, label="variant-a"),
        _entry(
            "compaction",
            COMPACTION,
            LABEL_OLD,
            11,
            summary="ZZ_SUMMARY_ZZ of the work so far",
            firstKeptEntryId=NEW_USER,
            tokensBefore=42_000,
        ),
        _entry("custom", CUSTOM, COMPACTION, 12, customType="ZZ_CUSTOM_TYPE_ZZ", data={"state": 1}),
        _message(LAST_USER, CUSTOM, 13, {"role": "user", "content": "ZZ_AFTER_COMPACTION_ZZ carry on"}),
        _message(LAST_REPLY, LAST_USER, 14, _assistant("ZZ_LAST_REPLY_ZZ carried on", _usage(300, 40, 0.003))),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def export(session: Path, out: Path) -> Path:
    export_page(load_transcript(session), out)
    return out


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("browser-page")
    session = folder / "branching.jsonl"
    write_branching_session(session)
    return export(session, folder / "branching.html")


@pytest.fixture
def opened(browser: Browser, page_file: Path) -> Iterator[tuple[Page, PageWatch]]:
    page, watch = open_page(browser, page_file)
    yield page, watch
    page.context.close()


def visible(page: Page, entry_id: str) -> bool:
    return page.locator(f"#entry-{entry_id}").is_visible()


def row_classes(page: Page, entry_id: str) -> list[str]:
    return (page.locator(f'#tree li[data-id="{entry_id}"]').get_attribute("class") or "").split()


def branch_stats(page: Page) -> list[str]:
    # The totals sit in a closed section: their text, not what is painted.
    return page.locator("td.branch-stat").all_text_contents()


def expected_stats(session: Path, leaf: str) -> list[str]:
    """The shown-branch column as the server would render it for the path ending at `leaf`."""
    transcript = load_transcript(session)
    totals = transcript.totals([transcript.by_id[i] for i in transcript.tree.path_to(leaf)])
    usage = totals.usage
    return [
        f"{totals.messages:,}",
        f"{totals.tool_calls:,}",
        format_tokens(usage.input),
        format_tokens(usage.output),
        format_tokens(usage.cache_read),
        format_tokens(usage.cache_write),
        f"${usage.cost:.4f}",
    ]


def assert_clean(watch: PageWatch) -> None:
    assert watch.errors == [], watch.errors
    assert watch.requests == [], watch.requests


def test_loads_without_errors_or_requests(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    assert page.evaluate("document.documentElement.className") == ""
    assert page.locator(".toolbar").is_visible()
    assert visible(page, NEW_REPLY)
    assert not visible(page, OLD_REPLY)
    assert_clean(watch)


def test_inline_session_text_is_isolated_from_the_line_around_it(opened: tuple[Page, PageWatch]) -> None:
    # A right-to-left override in a model name, label or code span must not reorder the rest of its line.
    page, _ = opened
    for selector in (".entry-head .model", ".badge.label", ".tool-summary", "#tree a"):
        assert page.evaluate(f"getComputedStyle(document.querySelector('{selector}')).unicodeBidi") == "isolate"


def test_tree_click_switches_branch(opened: tuple[Page, PageWatch], page_file: Path) -> None:
    page, watch = opened
    session = page_file.with_suffix(".jsonl")
    before = branch_stats(page)
    assert before == expected_stats(session, LAST_REPLY)

    page.locator(f'#tree li[data-id="{OLD_USER}"] a').click()
    assert visible(page, OLD_USER)
    assert visible(page, OLD_REPLY)
    assert not visible(page, NEW_USER)
    assert not visible(page, LAST_REPLY)
    assert "current" in row_classes(page, OLD_USER)
    assert page.locator("#tree li.current").count() == 1
    assert "on-path" in row_classes(page, OLD_REPLY)
    assert "on-path" not in row_classes(page, NEW_USER)
    after = branch_stats(page)
    assert after != before
    assert after == expected_stats(session, OLD_REPLY)
    assert after[2] == "12k"  # 12,500 rounds to even, as Python does

    # The root's newest leaf is the default one again.
    page.locator(f'#tree li[data-id="{ROOT}"] a').click()
    assert visible(page, LAST_REPLY)
    assert not visible(page, OLD_USER)
    assert branch_stats(page) == before
    assert_clean(watch)


def test_deep_link_opens_its_path(browser: Browser, page_file: Path) -> None:
    page, watch = open_page(browser, page_file, fragment=f"#entry-{OLD_REPLY}")
    try:
        assert visible(page, OLD_REPLY)
        assert not visible(page, NEW_REPLY)
        # The tree marks the row of the entry the link opened, as a click on it would.
        row = page.locator(f'#tree li[data-id="{OLD_REPLY}"]')
        assert row.get_attribute("aria-current") == "true" and "current" in (row.get_attribute("class") or "")
        # Scrolled into view once the entries around it have their real heights.
        page.wait_for_function(
            f"() => {{ const r = document.getElementById('entry-{OLD_REPLY}').getBoundingClientRect();"
            " return r.top >= 0 && r.bottom <= innerHeight; }"
        )
        # hashchange goes back to the default branch through an entry on it.
        page.evaluate(f"window.location.hash = '#entry-{LAST_USER}'")
        page.wait_for_function(f"() => !document.getElementById('entry-{LAST_USER}').classList.contains('off-path')")
        assert visible(page, LAST_USER)
        assert not visible(page, OLD_REPLY)
        assert_clean(watch)
    finally:
        page.context.close()


def test_filters(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    tool = page.locator(f"#entry-{CALL} section.tool")

    assert not visible(page, CUSTOM)
    assert not visible(page, LABEL_ROOT)
    assert tool.is_visible()

    page.click('button.filter[data-filter="no-tools"]')
    assert "filter-no-tools" in page.evaluate("document.body.className")
    assert not tool.is_visible()
    assert visible(page, ROOT)
    assert not visible(page, CUSTOM)  # less than the default, never more
    assert not visible(page, LABEL_ROOT)

    page.click('button.filter[data-filter="user"]')
    assert visible(page, NEW_USER)
    assert not visible(page, NEW_REPLY)

    page.click('button.filter[data-filter="labelled"]')
    assert visible(page, ROOT)
    assert not visible(page, NEW_USER)

    page.click('button.filter[data-filter="all"]')
    assert visible(page, CUSTOM)
    assert visible(page, LABEL_ROOT)
    assert not visible(page, OLD_USER)  # still only the shown path

    page.click('button.filter[data-filter="default"]')
    assert not visible(page, CUSTOM)
    assert page.locator("button.filter.active").get_attribute("data-filter") == "default"

    # Jumping to an entry the filter hides (its tree row is filtered out too) shows everything.
    assert not page.locator(f'#tree li[data-id="{CUSTOM}"]').is_visible()
    page.evaluate(f"window.location.hash = '#entry-{CUSTOM}'")
    page.wait_for_function(f"() => getComputedStyle(document.getElementById('entry-{CUSTOM}')).display !== 'none'")
    assert visible(page, CUSTOM)
    assert page.locator("button.filter.active").get_attribute("data-filter") == "all"
    assert_clean(watch)


def test_keys_toggle_thinking_and_tool_output(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    thinking = page.locator(f"#entry-{CALL} details.thinking")
    fold = page.locator(f"#entry-{RESULT} details.fold")
    assert not thinking.evaluate("d => d.open")
    assert not fold.evaluate("d => d.open")

    page.keyboard.press("t")
    assert thinking.evaluate("d => d.open")
    page.keyboard.press("t")
    assert not thinking.evaluate("d => d.open")
    page.keyboard.press("o")
    assert fold.evaluate("d => d.open")
    page.keyboard.press("o")
    assert not fold.evaluate("d => d.open")

    # Not while typing, and not with a modifier (sent as an event: Ctrl+T is the browser's).
    page.locator("#find").focus()
    page.keyboard.type("to")
    assert not thinking.evaluate("d => d.open")
    assert not fold.evaluate("d => d.open")
    page.locator("#find").blur()
    page.evaluate(
        "for (const key of ['t', 'o']) document.body.dispatchEvent("
        "new KeyboardEvent('keydown', {key, ctrlKey: true, bubbles: true}))"
    )
    assert not thinking.evaluate("d => d.open")
    assert not fold.evaluate("d => d.open")
    assert_clean(watch)


def test_find_reaches_collapsed_output(opened: tuple[Page, PageWatch]) -> None:
    from playwright.sync_api import expect

    page, watch = opened
    find, status = page.locator("#find"), page.locator("#find-status")
    fold = page.locator(f"#entry-{RESULT} details.fold")
    assert not fold.evaluate("d => d.open")

    # Typing finds and goes to the first match (after a pause); Enter and Shift+Enter step on and back.
    find.fill("zz_deep_line_zz")
    expect(status).to_have_text("1 of 1")
    assert fold.evaluate("d => d.open")

    find.fill("ZZ_TWICE_ZZ")
    expect(status).to_have_text("1 of 2")
    find.press("Enter")
    assert status.inner_text() == "2 of 2"
    find.press("Shift+Enter")
    assert status.inner_text() == "1 of 2"

    # Only the shown branch is searched.
    find.fill("ZZ_OLD_REPLY_ZZ")
    expect(status).to_have_text("no matches")

    find.press("Escape")
    assert find.input_value() == ""
    assert status.inner_text() == ""
    assert not fold.evaluate("d => d.open")  # what find opened, it closes again
    assert_clean(watch)


def test_copy_link(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    head = page.locator(f"#entry-{NEW_USER} > .entry-head")
    assert head.locator("button.copy-link").count() == 0  # made when the pointer or focus gets there
    head.hover()
    button = head.locator(f'button.copy-link[data-copy="{NEW_USER}"]')
    assert button.count() == 1
    head.hover()  # a second visit does not add another
    assert head.locator("button.copy-link").count() == 1
    button.click()
    page.wait_for_function("button => button.textContent === 'copied'", arg=button.element_handle())
    assert page.evaluate("navigator.clipboard.readText()").endswith(f"branching.html#entry-{NEW_USER}")
    assert_clean(watch)


def test_find_reaches_the_system_prompt_under_the_header(browser: Browser, tmp_path: Path) -> None:
    out = export(branching_session().write(tmp_path / "init.jsonl"), tmp_path / "init.html")
    page, watch = open_page(browser, out)
    try:
        prompt = page.locator(".page-details details.system-prompt")
        assert not prompt.evaluate("d => d.open")
        page.locator("#find").fill("zz_system_prompt_zz")
        page.locator("#find").press("Enter")
        assert page.locator("#find-status").inner_text() == "1 of 1"
        assert prompt.evaluate("d => d.open")
        assert_clean(watch)
    finally:
        page.context.close()


def test_copy_link_on_markers_and_paired_results(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    tool_head = page.locator(f"#entry-{CALL} .tool-head")
    tool_head.hover()
    button = tool_head.locator(f'button.copy-link[data-copy="{RESULT}"]')
    assert button.count() == 1 and button.inner_text() == "copy link to result"
    page.click('button.filter[data-filter="all"]')
    marker = page.locator(f"#entry-{CUSTOM} > .marker")
    marker.hover()
    assert marker.locator(f'button.copy-link[data-copy="{CUSTOM}"]').count() == 1
    assert_clean(watch)


def test_deep_link_to_a_result_lands_below_the_toolbar(browser: Browser, page_file: Path) -> None:
    page, watch = open_page(browser, page_file, fragment=f"#entry-{RESULT}")
    try:
        page.wait_for_function(
            f"() => {{ const r = document.getElementById('entry-{RESULT}').getBoundingClientRect();"
            " const bar = document.querySelector('.toolbar').getBoundingClientRect();"
            " return r.top >= bar.bottom && r.top < innerHeight; }"
        )
        assert_clean(watch)
    finally:
        page.context.close()


def test_kept_mark_and_result_label_follow_the_branch(browser: Browser, tmp_path: Path) -> None:
    b = SessionBuilder()
    b.user("u1", "go")
    b.assistant("a1", [tool_call("c1", "bash", command="ls")])
    b.tool_result("r1", "c1", "bash", "files")
    b.assistant("a2", [text("listed")])
    b.user("u2", "compact me")
    b.add("compaction", "k1", summary="so far", firstKeptEntryId="a2", tokensBefore=900)
    b.user("u3", "after the compaction")
    b.add("label", "l1", targetId="r1", label="ZZ_RESULT_LABEL_ZZ")
    b.user("u4", "the newest branch, without the compaction", parent="a2")
    out = export(b.write(tmp_path / "kept.jsonl"), tmp_path / "kept.html")
    page, watch = open_page(browser, out)
    try:
        mark = page.locator("#entry-a2 > .kept-mark")
        assert not mark.is_visible()  # its compaction is on the other branch
        page.locator('#tree li[data-id="u3"] a').click()
        assert mark.is_visible()
        page.locator('#tree li[data-id="u4"] a').click()
        assert not mark.is_visible()
        page.click('button.filter[data-filter="labelled"]')
        assert visible(page, "a1") and visible(page, "r1")  # the call, through its labelled result
        assert not visible(page, "u1")
        assert_clean(watch)
    finally:
        page.context.close()


def test_copy_link_reached_by_keyboard(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    head = page.locator(f"#entry-{NEW_USER} > .entry-head")
    head.locator(".permalink").focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.getAttribute('data-copy')") == NEW_USER
    assert_clean(watch)


def test_themes_and_screenshots(opened: tuple[Page, PageWatch], tmp_path: Path) -> None:
    page, watch = opened
    toggle = page.locator("#toggle-theme")
    backgrounds = {}
    for theme in ("light", "dark"):
        toggle.click()
        assert page.evaluate("document.documentElement.dataset.theme") == theme
        backgrounds[theme] = page.evaluate("getComputedStyle(document.body).backgroundColor")
        page.screenshot(path=str(tmp_path / f"page-{theme}.png"))
        assert (tmp_path / f"page-{theme}.png").stat().st_size > 0
    assert backgrounds["light"] != backgrounds["dark"]
    # Remembered across a reload where storage is allowed; the next step goes back to the system's.
    page.reload()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    toggle.click()
    assert page.evaluate("document.documentElement.dataset.theme") == "auto"
    assert_clean(watch)


def test_phone_layout(browser: Browser, page_file: Path, tmp_path: Path) -> None:
    page, watch = open_page(browser, page_file, width=390, height=844, color_scheme="dark")
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        # The tree is a drawer: closed, the conversation has the screen; the toolbar opens it over the page.
        assert not page.locator("#sidebar").is_visible()
        conversation = page.locator("#conversation").bounding_box()
        assert conversation is not None and conversation["x"] < 20
        page.locator("#toggle-sidebar").click()
        page.wait_for_function("() => getComputedStyle(document.getElementById('sidebar')).transform === 'none'")
        assert page.locator("#toggle-sidebar").get_attribute("aria-expanded") == "true"
        drawer = page.locator("#sidebar").bounding_box()
        assert drawer is not None and drawer["x"] == 0 and drawer["width"] <= 390
        page.screenshot(path=str(tmp_path / "phone-drawer.png"), full_page=False)
        # Its close button, Esc and a tap beside it close it.
        page.locator("#sidebar .close-sidebar").click()
        page.wait_for_function("() => !document.body.classList.contains('sidebar-open')")
        page.locator("#toggle-sidebar").click()
        page.keyboard.press("Escape")
        page.wait_for_function("() => !document.body.classList.contains('sidebar-open')")
        page.locator("#toggle-sidebar").click()
        page.mouse.click(380, 600)
        page.wait_for_function("() => !document.body.classList.contains('sidebar-open')")
        page.locator("#toggle-sidebar").click()
        page.wait_for_function("() => getComputedStyle(document.getElementById('sidebar')).transform === 'none'")
        # A row opens its entry and closes the drawer, so the reader sees where they landed.
        page.locator(f'#tree li[data-id="{OLD_USER}"] a').click()
        page.wait_for_function("() => !document.body.classList.contains('sidebar-open')")
        assert visible(page, OLD_USER)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.screenshot(path=str(tmp_path / "phone.png"), full_page=False)
        assert_clean(watch)
    finally:
        page.context.close()


def test_no_js_reads_the_default_path(browser: Browser, page_file: Path) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(page_file.resolve().as_uri())
        assert page.locator(f"#entry-{LAST_REPLY}").is_visible()
        assert not page.locator(f"#entry-{OLD_REPLY}").is_visible()
        assert not page.locator(".toolbar").is_visible()
        page.goto(page_file.resolve().as_uri() + f"#entry-{OLD_REPLY}")
        assert page.locator(f"#entry-{OLD_REPLY}").is_visible()  # :target shows an off-path entry
    finally:
        context.close()


def test_real_sessions_load_cleanly(browser: Browser, real_fixtures: Path, tmp_path: Path) -> None:
    for name in REAL_FILES:
        source = real_fixtures / name
        if not source.exists():
            continue
        out = export(source, tmp_path / f"{source.stem}.html")
        page, watch = open_page(browser, out)
        try:
            rows = page.locator("#tree li[data-id]")
            count = rows.count()
            assert count > 0
            middle = rows.nth(count // 2)
            middle.locator("a").click()
            assert "current" in row_classes(page, middle.get_attribute("data-id") or "")
            page.keyboard.press("t")
            page.keyboard.press("o")
            # Typing finds and goes to the first match; Enter goes on to the next.
            page.locator("#find").fill("the")
            page.wait_for_function("() => /^1 of \\d+$/.test(document.getElementById('find-status').textContent)")
            page.locator("#find").press("Enter")
            assert re.fullmatch(r"2 of \d+", page.locator("#find-status").inner_text())
            assert_clean(watch)
        finally:
            page.context.close()


def test_lexer_error_tokens_read_as_plain_text(browser: Browser, tmp_path: Path) -> None:
    # pygments marks what its lexer cannot place (a "$" in Python) as an error token: no red box.
    b = SessionBuilder()
    b.user("u1", "read it")
    b.assistant("a1", [tool_call("c1", "read", path="cost.py")])
    b.tool_result("r1", "c1", "read", "price = $5  # ZZ_ERR_ZZ\n")
    out = export(b.write(tmp_path / "err.jsonl"), tmp_path / "err.html")
    page, watch = open_page(browser, out)
    try:
        token = page.locator("#entry-r1 pre .err").first
        assert token.inner_text() == "$"
        style = token.evaluate(
            "e => [getComputedStyle(e).borderTopStyle, getComputedStyle(e).color,"
            " getComputedStyle(e.parentElement).color]"
        )
        assert style[0] == "none" and style[1] == style[2]
        assert_clean(watch)
    finally:
        page.context.close()


def test_print_opens_collapsed_parts_where_css_cannot(browser: Browser, page_file: Path) -> None:
    # Chromium opens them in CSS (::details-content); a browser without it is played by hiding that.
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        context.add_init_script(
            "const supports = CSS.supports.bind(CSS);"
            "CSS.supports = (...args) => !String(args[0]).includes('details-content') && supports(...args);"
        )
        page = context.new_page()
        page.goto(page_file.resolve().as_uri())
        closed = page.evaluate("document.querySelectorAll('details:not([open])').length")
        assert closed > 0
        page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
        assert page.evaluate("document.querySelectorAll('details:not([open])').length") == 0
        page.evaluate("window.dispatchEvent(new Event('afterprint'))")
        assert page.evaluate("document.querySelectorAll('details:not([open])').length") == closed
    finally:
        context.close()
