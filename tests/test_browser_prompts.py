"""The Prompts page in a real headless Chromium from file://: filter as you type, projects, dates, scrolling."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import assert_clean, open_page
from history_helpers import HistoryRow, omp_store
from sessions import BASE_MS
from site_helpers import build, make_session

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

T0 = BASE_MS // 1000
COUNT = 1500  # more than one chunk, segment and batch of what the page shows at a time
# With the store's two more: the session's own prompt, which no store holds, is listed from the session.
LISTED = COUNT + 3
DAY = 86400


def _rows() -> list[HistoryRow]:
    rows = []
    for n in range(COUNT):
        project = "/work/alpha" if n % 3 else "/work/beta"
        words = "zzfix the login" if n % 10 == 0 else "zzrefactor the parser"
        rows.append(HistoryRow(f"ZZ{n:04d} {words} number{n}", T0 + n * 3600, project, None))
    rows.append(HistoryRow("请修复写锁的问题 zzcjk", T0 + COUNT * 3600, "/work/alpha", None))
    rows.append(
        HistoryRow("zzlong\n" + "\n".join(f"line {n}" for n in range(30)), T0 + COUNT * 3600 + 60, "/work/beta", None)
    )
    return rows


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("prompts")
    agent = root / "agent"
    make_session(agent, "/work/alpha", "sess-alpha", "zzsession")
    omp_store(agent / "history.db", _rows())
    out = root / "site"
    build(out, agent)
    return out


def _status(page: Page) -> str:
    return page.locator("#prompt-status").inner_text()


def _filter(page: Page, query: str, expected: str) -> None:
    page.locator("#prompt-query").fill(query)
    page.locator("#prompt-status").filter(has_text=expected).wait_for()


def _texts(page: Page) -> list[str]:
    return [text.split()[0] for text in page.locator(".prompt-text").all_inner_texts()]


def test_filter_as_you_type_with_project_and_dates(browser: Browser, site: Path) -> None:
    page, watch = open_page(browser, site / "prompts.html", allow=site)
    page.wait_for_function("() => !document.getElementById('prompt-filter').hidden")
    total = LISTED
    assert _status(page) == f"All {total:,} prompts, newest first."
    assert page.locator(".prompt").count() == 100  # the page's own, until the reader scrolls
    assert _texts(page)[:3] == ["zzlong", "请修复写锁的问题", f"ZZ{COUNT - 1:04d}"]

    # Every word, case-insensitive, the last one while still being typed.
    fix = [n for n in range(COUNT) if n % 10 == 0]
    _filter(page, "ZZFIX log", f"{len(fix)} of {total:,} prompts match")
    shown = _texts(page)
    assert shown == [f"ZZ{n:04d}" for n in reversed(fix)][: len(shown)] and len(shown) == 100
    page.mouse.wheel(0, 100_000)
    page.wait_for_function(f"() => document.querySelectorAll('.prompt').length === {len(fix)}")

    _filter(page, "zzfix number1499", "No prompt matches.")
    _filter(page, "写锁", f"1 of {total:,} prompts match")
    assert _texts(page) == ["请修复写锁的问题"]
    _filter(page, "z", f"All {total:,} prompts, newest first. Type at least two letters of a word.")

    # A project, then a range of days (UTC), on top of the words.
    _filter(page, "zzfix", f"{len(fix)} of {total:,} prompts match")
    options = page.locator("#prompt-project option").all_inner_texts()
    # /work/alpha: the store's, its Chinese one and the session's.
    assert options[1:] == [f"/work/alpha ({COUNT - 500 + 2:,})", "/work/beta (501)"]
    page.select_option("#prompt-project", label="/work/beta (501)")
    beta_fix = [n for n in fix if n % 3 == 0]
    page.locator("#prompt-status").filter(has_text=f"{len(beta_fix)} of").wait_for()
    page.fill("#prompt-from", "2026-01-03")
    page.fill("#prompt-to", "2026-01-05")
    page.dispatch_event("#prompt-to", "change")
    in_days = [n for n in beta_fix if 2 * 24 <= n < 5 * 24]
    page.locator("#prompt-status").filter(has_text=f"{len(in_days)} of {total:,}").wait_for()
    assert _texts(page) == [f"ZZ{n:04d}" for n in reversed(in_days)]
    days = page.locator(".prompt-day h2").all_inner_texts()
    assert days == sorted({f"2026-01-{1 + n // 24:02d}" for n in in_days}, reverse=True) == ["2026-01-04", "2026-01-03"]
    assert_clean(watch)


def test_scrolling_shows_every_prompt_and_long_ones_unfold(browser: Browser, site: Path) -> None:
    page, watch = open_page(browser, site / "prompts.html", allow=site)
    page.wait_for_function("() => !document.getElementById('prompt-filter').hidden")
    for _ in range(40):
        page.mouse.wheel(0, 200_000)
        if page.locator(".prompt").count() == LISTED:
            break
        page.wait_for_timeout(50)
    assert page.locator(".prompt").count() == LISTED
    assert _texts(page)[-1] == "ZZ0000"
    long_prompt = page.locator(".prompt").first
    text = long_prompt.locator(".prompt-text")
    folded_height = text.bounding_box()["height"]  # type: ignore[index]
    long_prompt.locator(".prompt-unfold").click()
    assert "folded" not in (text.get_attribute("class") or "")
    assert text.bounding_box()["height"] > folded_height * 2  # type: ignore[index]
    assert long_prompt.locator(".prompt-unfold").inner_text() == "Show less"
    assert_clean(watch)


def test_a_link_to_an_old_prompt_shows_it(browser: Browser, site: Path) -> None:
    html = (site / "prompts.html").read_text(encoding="utf-8")
    store_tag = html.split('id="entry-p', 1)[1].split("-", 1)[0]
    page, watch = open_page(browser, site / "prompts.html", fragment=f"#entry-p{store_tag}-8", allow=site)
    page.locator("#prompt-status").filter(has_text="One prompt, from a link").wait_for()
    assert _texts(page) == ["ZZ0007"]
    assert page.locator(f"#entry-p{store_tag}-8").is_visible()
    assert_clean(watch)


def test_prompts_are_their_own_kind_in_the_site_search(browser: Browser, site: Path) -> None:
    page, watch = open_page(browser, site / "search.html", allow=site)
    page.locator("#search-query").fill("number1234")
    page.locator("#search-status").filter(has_text="for “number1234”").wait_for()
    results = page.locator("#search-results li")
    assert results.count() == 1
    assert results.first.locator(".result-kind").inner_text().startswith("prompt · ")
    link = results.first.locator("a.result-title")
    assert link.inner_text() == "Prompt history"
    assert (link.get_attribute("href") or "").startswith("prompts.html?q=number1234#entry-p")
    # The role filter keeps prompts alone, or leaves them out.
    page.select_option("#search-role", "prompt")
    page.wait_for_function(
        "() => /prompts of the prompt history/.test(document.getElementById('search-status').textContent)"
    )
    assert page.locator("#search-results li .result-kind").all_inner_texts()[0].startswith("prompt")
    page.select_option("#search-role", "user")
    page.wait_for_function("() => /the user/.test(document.getElementById('search-status').textContent)")
    assert page.locator("#search-results li").count() == 0
    page.select_option("#search-role", "")
    # Their shared title names no prompt: a query for it lists none of the page's parts.
    page.locator("#search-query").fill("prompt history")
    page.locator("#search-status").filter(has_text="for “prompt history”").wait_for()
    assert page.locator("#search-results li").count() == 0
    page.locator("#search-query").fill("number1234")
    page.locator("#search-status").filter(has_text="1 result").wait_for()
    page.locator("#search-results a.result-title").first.click()
    page.locator("#prompt-status").filter(has_text="One prompt, from a link").wait_for()
    assert _texts(page) == ["ZZ1234"]
    assert_clean(watch)


def test_hostile_prompts_are_shown_as_text_and_stay_inert(browser: Browser, tmp_path: Path) -> None:
    # Older than the prompts the page holds itself: prompts.js renders them, and the site search shows them.
    hostile = (
        'zzhostile <script>window.zzRan = 1</script> <img src=x onerror="window.zzRan = 2"> '
        "[click](javascript:window.zzRan=3) javascript:window.zzRan=4"
    )
    rows = [HistoryRow(hostile, T0, "/work/<b>zz</b>", None)]
    rows += [HistoryRow(f"zzfiller {n}", T0 + 60 + n, "/work/alpha", None) for n in range(150)]
    agent = tmp_path / "agent"
    make_session(agent, "/work/alpha", "sess-alpha", "zzsession")
    omp_store(agent / "history.db", rows)
    out = tmp_path / "site"
    build(out, agent)
    page, watch = open_page(browser, out / "prompts.html", allow=out)
    page.wait_for_function("() => !document.getElementById('prompt-filter').hidden")
    _filter(page, "zzhostile", "1 of 152 prompts match")  # the session's own prompt among them
    shown = page.locator(".prompt").first
    assert shown.locator(".prompt-text").inner_text() == hostile
    assert "/work/<b>zz</b>" in shown.inner_text()
    assert shown.locator("script, img, b").count() == 0
    hrefs = shown.locator("a").evaluate_all("links => links.map(link => link.getAttribute('href') || '')")
    assert not any(href.lower().startswith("javascript") for href in hrefs)
    assert page.evaluate("() => window.zzRan === undefined")
    assert_clean(watch)
    page, watch = open_page(browser, out / "search.html", allow=out)
    page.locator("#search-query").fill("zzhostile")
    page.locator("#search-status").filter(has_text="for “zzhostile”").wait_for()
    result = page.locator("#search-results li").first
    assert "<script>window.zzRan = 1</script>" in result.inner_text()
    assert result.locator("script, img").count() == 0
    hrefs = result.locator("a").evaluate_all("links => links.map(link => link.getAttribute('href') || '')")
    assert not any(href.lower().startswith("javascript") for href in hrefs)
    assert page.evaluate("() => window.zzRan === undefined")
    assert_clean(watch)
