"""Search in a real headless Chromium, from file:// and over HTTP: ranked results, deep links, hostile text."""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import pytest
from sessions import SessionBuilder, iso, text, tool_call
from site_helpers import build

from sitegen.site.search import postings
from sitegen.site.search.index import shard_bucket, tokenize

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

HOSTILE_CWD = "/work/<script>window.pwned=1</script>"
HOSTILE_TITLE = '<img src=x onerror="window.pwned=2"> zzhostile title'


def _sessions() -> list[SessionBuilder]:
    db = SessionBuilder(session_id="db", cwd="/work/db")
    db.user("db-u1", "why is zzvacuum so slow on the zzreplica")
    db.assistant("db-a1", [text("Let me check."), tool_call("db-c1", "bash", command="psql -c 'select 1'")])
    filler = " ".join(f"row{i}" for i in range(80))
    db.tool_result("db-r1", "db-c1", "bash", f"{filler} zzvacuum running {filler}")
    db.user("db-old", "an zzabandoned idea", parent="db-r1")
    db.user("db-u2", "thanks, now zzreplica lag only", parent="db-r1")

    ops = SessionBuilder(session_id="ops", cwd="/work/ops")
    ops.add("session_info", "ops-t", None, name="Nightly zzvacuum tuning")
    ops.user("ops-u1", "schedule the maintenance window")
    ops.assistant("ops-a1", [text("The zzvacuum job runs at night, after the backup.")])

    evil = SessionBuilder(session_id="evil", cwd=HOSTILE_CWD)
    evil.add("session_info", "evil-t", None, name=HOSTILE_TITLE)
    evil.user("evil-u1", "<b>zzhostile</b> <script>window.pwned=3</script> text")
    # A word deep inside a long output (past what snippets keep) and a Chinese sentence.
    deep = SessionBuilder(session_id="deep", cwd="/work/deep")
    deep.user("deep-u1", "请修复登录错误的问题")
    deep.assistant("deep-a1", [tool_call("deep-c1", "bash", command="make test")])
    noise = "".join(f"noise line {i}\n" for i in range(3000))
    deep.tool_result("deep-r1", "deep-c1", "bash", f"{noise}zzburied failure here\n{noise}")
    # More results than a page shows, in a project and at a time of their own.
    many = SessionBuilder(session_id="many", cwd="/work/many")
    many.clock += 40 * 86_400_000
    many.header["timestamp"] = iso(many.clock)
    for n in range(45):
        many.user(f"many-u{n}", f"zzmany item {n}")
    return [db, ops, evil, deep, many]


def build_search_site(root: Path) -> Path:
    """The site as `sitegen build` writes it, from the sessions above."""
    agent = root / "agent"
    for builder in _sessions():
        folder = "--" + builder.header["cwd"].strip("/").replace("/", "-") + "--"
        builder.write(agent / "sessions" / folder / f"{builder.header['id']}.jsonl")
    # The deep session started a subagent: its transcript is a page of its own, and searchable.
    scout = SessionBuilder(session_id="deep-scout", cwd="/work/deep")
    scout.user("scout-u1", "look for zzscouted things")
    scout.write(agent / "sessions" / "--work-deep--" / "deep" / "Scout.jsonl")
    site = root / "site"
    result = build(site, agent)
    assert result.sessions == 5 and not result.problems
    return site


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_search_site(tmp_path_factory.mktemp("search"))


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def open_search(browser: Browser, base: str) -> tuple[Page, list[str]]:
    """search.html under base; page errors, console errors (CSP included) and outside requests are recorded."""
    page = browser.new_page()
    problems: list[str] = []
    # Failed loads are caught below by URL (Chromium also asks servers for /favicon.ico, which is not ours).
    page.on(
        "console",
        lambda m: (
            problems.append(m.text) if m.type == "error" and not m.text.startswith("Failed to load resource") else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
    page.on("request", lambda r: None if r.url.startswith(base) else problems.append(f"request: {r.url}"))
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
    page.on("response", lambda r: problems.append(f"{r.status}: {r.url}") if r.status >= 400 else None)
    page.goto(base + "search.html")
    return page, problems


def results(page: Page, query: str, *, typed: bool = False) -> list[dict[str, str]]:
    """Search, wait for the results, and return them as {title, href, kind, project, snippet, marks, title_marks}."""
    field = page.locator("#search-query")
    if typed:
        field.press_sequentially(query, delay=20)
    else:
        field.fill(query)
    page.locator("#search-status").filter(has_text=f"for “{query}”").wait_for()
    items = []
    for item in page.locator("#search-results li").all():
        link = item.locator("a.result-title")
        snippet = item.locator(".result-snippet")
        href = link.get_attribute("href") or ""
        # Each result carries the query for the page to mark: ?q=<words>, then the entry's #fragment.
        path, _, rest = href.partition("?q=")
        marked, hash_mark, fragment = rest.partition("#")
        items.append(
            {
                "title": link.inner_text(),
                "href": path + hash_mark + fragment,
                "q": unquote(marked),
                "date": item.locator(".result-date").inner_text() if item.locator(".result-date").count() else "",
                "kind": item.locator(".result-kind").inner_text(),
                "project": item.locator(".result-project").inner_text(),
                "snippet": snippet.inner_text() if snippet.count() else "",
                "marks": " ".join(item.locator(".result-snippet mark").all_inner_texts()),
                "title_marks": " ".join(link.locator("mark").all_inner_texts()),
            }
        )
    return items


def ranked_search(page: Page, problems: list[str]) -> None:
    found = results(page, "zzvacuum")
    # What the user wrote first, the long tool output last; titles that name the word lift their entries.
    assert [item["href"].rsplit("/", 1)[1] for item in found] == [
        "db.html#entry-db-u1",
        "ops.html#entry-ops-a1",
        "db.html#entry-db-r1",
    ]
    tool = found[-1]
    assert tool["kind"] == "tool output · bash" and tool["project"] == "/work/db"
    assert "zzvacuum running" in tool["snippet"] and tool["snippet"].startswith("…")
    assert tool["marks"] == "zzvacuum"
    # A title the query names, in a session where no entry matches: the session itself.
    nightly = results(page, "nightly tuning")
    assert [(item["kind"], item["href"].rsplit("/", 1)[1], item["title_marks"]) for item in nightly] == [
        ("session", "ops.html", "Nightly tuning")
    ]

    # Every word must match; the last one is a prefix while typing.
    page.locator("#search-query").fill("")
    both = results(page, "zzvacuum zzrepl", typed=True)
    assert [item["href"].rsplit("#", 1)[1] for item in both] == ["entry-db-u1"]
    assert both[0]["marks"] == "zzvacuum zzreplica"
    assert not results(page, "zzvacuum zznothing")
    assert page.locator("#search-status").inner_text() == "No results for “zzvacuum zznothing”."

    # Following a result lands on the entry in the session page.
    results(page, "zzreplica lag")
    page.locator("#search-results a.result-title").first.click()
    page.wait_for_url("**/db.html?q=*#entry-db-u2")
    assert page.locator("#entry-db-u2").is_visible()
    assert problems == []


def test_search_from_file_url(browser: Browser, site: Path) -> None:
    page, problems = open_search(browser, site.resolve().as_uri() + "/")
    ranked_search(page, problems)


def test_every_word_is_found_and_chinese_words_inside_sentences(browser: Browser, site: Path) -> None:
    page, problems = open_search(browser, site.resolve().as_uri() + "/")
    buried = results(page, "zzburied")
    assert [item["href"].rsplit("/", 1)[1] for item in buried] == ["deep.html#entry-deep-r1"]
    chinese = results(page, "登录错误")
    assert [item["href"].rsplit("/", 1)[1] for item in chinese] == ["deep.html#entry-deep-u1"]
    assert chinese[0]["marks"] == "登录 错误"
    assert [item["href"].rsplit("#", 1)[1] for item in results(page, "修复")] == ["entry-deep-u1"]
    assert not results(page, "登错")  # pairs, not any two characters of the sentence
    # A one-character word inside a sentence (here the last of its run) is found and marked alone.
    single = results(page, "误")
    assert [item["href"].rsplit("#", 1)[1] for item in single] == ["entry-deep-u1"]
    assert single[0]["marks"] == "误"
    scouted = results(page, "zzscouted")
    assert [item["href"].rsplit("/", 2)[1:] for item in scouted] == [["deep", "Scout.html#entry-scout-u1"]]
    assert scouted[0]["title"] == "Scout"
    assert page.locator("#search-results .result-context").first.inner_text() == " · subagent of 请修复登录错误的问题"
    page.locator("#search-results a.result-title").first.click()
    page.wait_for_url("**/deep/Scout.html?q=*#entry-scout-u1")
    assert page.locator("#entry-scout-u1").is_visible()
    assert problems == []


def test_a_result_on_another_branch_opens_that_branch(browser: Browser, site: Path) -> None:
    page, problems = open_search(browser, site.resolve().as_uri() + "/")
    assert [item["href"].rsplit("#", 1)[1] for item in results(page, "zzabandoned")] == ["entry-db-old"]
    page.locator("#search-results a.result-title").first.click()
    page.wait_for_url("**/db.html?q=*#entry-db-old")
    assert page.locator("#entry-db-old").is_visible()
    assert problems == []


def test_search_over_http(browser: Browser, server: str) -> None:
    page, problems = open_search(browser, server)
    ranked_search(page, problems)
    page.go_back()
    page.wait_for_url("**/search.html?q=zzreplica+lag")
    assert page.locator("#search-query").input_value() == "zzreplica lag"


def test_hostile_titles_paths_and_text_stay_text(browser: Browser, site: Path) -> None:
    page, problems = open_search(browser, site.resolve().as_uri() + "/")
    found = results(page, "zzhostile")
    assert {item["title"] for item in found} == {HOSTILE_TITLE}
    assert {item["project"] for item in found} == {HOSTILE_CWD}
    user = next(item for item in found if item["kind"] == "user")
    assert user["snippet"] == "<b>zzhostile</b> <script>window.pwned=3</script> text"
    listing = page.locator("#search-results")
    assert listing.locator("img, script, b").count() == 0
    assert page.evaluate("() => window.pwned === undefined")
    assert problems == []


def test_browser_splits_words_like_the_indexer(browser: Browser, site: Path) -> None:
    page, _ = open_search(browser, site.resolve().as_uri() + "/")
    samples = [
        "Fix foo_bar.py: x = 12; ÉCOLE 中文",
        "a" * 32 + " " + "b" * 33 + " ok",
        "İstanbul straße ΣΊΣΥΦΟΣ 𝒳ylophone x٣٤ ½",
        "修复登录错误 锁 v2版本 テスト 𠀀𠀁x 한국어입니다",
    ]
    # And random text mixing scripts, separators and CJK runs, both as a query and as indexed text.
    pick = random.Random(4)
    alphabet = "ab Z09_-.\n…—\u0307éßÜİΣς中文锁テス한\U00020000x٣½"
    samples += ["".join(pick.choice(alphabet) for _ in range(pick.randrange(40))) for _ in range(300)]
    assert page.evaluate("(xs) => xs.map((x) => window.sitegen.search.tokens(x))", samples) == [
        tokenize(sample) for sample in samples
    ]
    # The same terms; search.js lists each character after its pair, to mark matches in text order.
    indexed = page.evaluate("(xs) => xs.map((x) => window.sitegen.search.indexTerms(x))", samples)
    assert [sorted(terms) for terms in indexed] == [sorted(postings._indexed_terms(sample)) for sample in samples]
    terms = ["zz", "中文", "𝒳y", "é", "ab12"]
    js = page.evaluate("(ts) => ts.map((t) => window.sitegen.search.bucket(t, 64))", terms)
    assert js == [shard_bucket(term, 64) for term in terms]


def test_results_name_the_session_project_date_and_role(browser: Browser, site: Path) -> None:
    page, problems = open_search(browser, site.resolve().as_uri() + "/")
    found = results(page, "zzvacuum")
    assert [(item["title"], item["project"], item["date"], item["kind"]) for item in found] == [
        ("why is zzvacuum so slow on the zzreplica", "/work/db", "2026-01-01", "user"),
        ("Nightly zzvacuum tuning", "/work/ops", "2026-01-01", "assistant"),
        ("why is zzvacuum so slow on the zzreplica", "/work/db", "2026-01-01", "tool output · bash"),
    ]
    # Each result takes the query to its page, to be marked there.
    assert {item["q"] for item in found} == {"zzvacuum"}
    assert problems == []


def test_filters_narrow_by_project_dates_and_role_and_stay_in_the_address(browser: Browser, site: Path) -> None:
    page, problems = open_search(browser, site.resolve().as_uri() + "/")
    results(page, "zzvacuum")
    page.select_option("#search-project", "/work/db")
    page.locator("#search-status").filter(has_text="without the filters").wait_for()
    assert [item["kind"] for item in results_now(page)] == ["user", "tool output · bash"]
    page.select_option("#search-role", "tool")
    page.locator("#search-status").filter(has_text="from tool output").wait_for()
    assert [item["href"].rsplit("/", 1)[1] for item in results_now(page)] == ["db.html#entry-db-r1"]
    # Dates are the sessions' last activity: after it, nothing is left.
    page.select_option("#search-role", "")
    page.fill("#search-from", "2026-01-02")
    page.locator("#search-status").filter(has_text="No results with these filters").wait_for()
    assert results_now(page) == []
    # A reload (or a shared address) keeps the query and the filters.
    assert "project=%2Fwork%2Fdb" in page.url and "from=2026-01-02" in page.url
    page.reload()
    page.locator("#search-status").filter(has_text="No results with these filters").wait_for()
    assert page.locator("#search-project").input_value() == "/work/db"
    page.fill("#search-from", "")
    page.select_option("#search-project", "/work/many")
    page.locator("#search-status").filter(has_text="No results with these filters").wait_for()
    assert problems == []


def test_results_are_paged_without_a_cap(browser: Browser, site: Path) -> None:
    page, problems = open_search(browser, site.resolve().as_uri() + "/")
    first = results(page, "zzmany")
    assert len(first) == 20
    assert page.locator("#search-status").inner_text().startswith("45 results for “zzmany”")
    more = page.locator("#search-more")
    more.click()
    page.wait_for_function("() => document.querySelectorAll('#search-results li').length === 40")
    more.click()
    page.wait_for_function("() => document.querySelectorAll('#search-results li').length === 45")
    assert more.is_hidden()
    hrefs = page.eval_on_selector_all("#search-results a.result-title", "links => links.map(a => a.hash)")
    assert sorted(hrefs) == sorted(f"#entry-many-u{n}" for n in range(45))
    # With a role filter, pages fill up from the results that pass it.
    page.select_option("#search-role", "user")
    page.locator("#search-status").filter(has_text="from the user").wait_for()
    assert page.locator("#search-results li").count() == 20
    assert problems == []


def results_now(page: Page) -> list[dict[str, str]]:
    return [
        {
            "href": (item.get_attribute("href") or "").replace("?q=zzvacuum", ""),
            "kind": item.evaluate("a => a.parentNode.querySelector('.result-kind').textContent"),
        }
        for item in page.locator("#search-results a.result-title").all()
    ]


def mark_state(page: Page) -> dict[str, Any]:
    return page.evaluate(
        """() => {
            const marks = [...document.querySelectorAll('#conversation mark.search-mark')];
            const current = document.querySelector('mark.search-mark.current');
            return {
                count: marks.length,
                words: [...new Set(marks.map(m => m.textContent.toLowerCase()))].sort(),
                entry: current ? current.closest('[data-parent]').id : null,
                status: document.getElementById('search-marks')?.textContent || null,
            };
        }"""
    )


def test_following_a_result_marks_the_words_and_n_steps_between_them(browser: Browser, site: Path) -> None:
    page, problems = open_search(browser, site.resolve().as_uri() + "/")
    results(page, "zzvacuum zzreplica")
    page.locator("#search-results a.result-title").first.click()
    page.wait_for_url("**/db.html?q=*#entry-db-u1")
    # Both words, wherever they are in the conversation: the prompt, the tool output and the reply to it.
    state = mark_state(page)
    assert state["words"] == ["zzreplica", "zzvacuum"]
    assert state["count"] == 4
    assert state["entry"] == "entry-db-u1"
    assert state["status"].startswith("“zzvacuum zzreplica”: 1 of 4")
    page.keyboard.press("n")
    page.wait_for_function("() => document.getElementById('search-marks').textContent.includes('2 of 4')")
    page.keyboard.press("n")
    page.wait_for_function("() => document.getElementById('search-marks').textContent.includes('3 of 4')")
    assert mark_state(page)["entry"] == "entry-db-r1"
    # The mark stepped to is on the screen.
    page.wait_for_function(
        "() => { const r = document.querySelector('mark.search-mark.current').getBoundingClientRect();"
        " return r.top >= 0 && r.bottom <= innerHeight; }"
    )
    page.keyboard.press("N")
    page.wait_for_function("() => document.getElementById('search-marks').textContent.includes('2 of 4')")
    # Clearing removes the marks, the words stay as they were, and the address forgets the query.
    before = page.locator("#entry-db-u1").inner_text()
    page.locator("#search-marks button", has_text="×").click()
    assert mark_state(page)["count"] == 0 and mark_state(page)["status"] is None
    assert page.locator("#entry-db-u1").inner_text() == before
    assert "?q=" not in page.url
    assert problems == []


def test_a_mark_in_a_folded_output_is_opened_on_arrival(browser: Browser, site: Path) -> None:
    page, problems = open_search(browser, site.resolve().as_uri() + "/")
    results(page, "zzburied")
    page.locator("#search-results a.result-title").first.click()
    page.wait_for_url("**/deep.html?q=*#entry-deep-r1")
    page.wait_for_function(
        "() => { const m = document.querySelector('mark.search-mark.current'); if (!m) return false;"
        " const r = m.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; }"
    )
    assert mark_state(page)["words"] == ["zzburied"]
    assert problems == []
