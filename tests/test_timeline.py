"""The session timeline (#timeline), the tool cards' durations, and the site's tools, windows and active
time (issue 34), on sessions written by the tests and built by the real CLI."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from sessions import SessionBuilder, text, tool_call
from test_analytics import timed_session, write_agent
from typer.testing import CliRunner

from sitegen.cli import app
from sitegen.render.export import export_html
from sitegen.render.timeline import MAX_SPANS
from sitegen.transcript.load import load_transcript

runner = CliRunner()
SVG = "{http://www.w3.org/2000/svg}"


def timeline_of(html: str) -> ET.Element:
    match = re.search(r'<figure class="timeline" id="timeline">.*?(<svg .*?</svg>)', html, re.S)
    assert match, "no timeline"
    return ET.fromstring(match.group(1))


def test_timeline_draws_model_tools_and_idle_spans_linked_to_their_entries(tmp_path: Path) -> None:
    html = export_html(load_transcript(timed_session().write(tmp_path / "t.jsonl")))
    svg = timeline_of(html)
    spans = [
        (a.get("href"), a.find(f"{SVG}rect").get("class"), a.findtext(f"{SVG}rect/{SVG}title"))
        for a in svg.iter(f"{SVG}a")
    ]  # type: ignore[union-attr]
    titles = {title for _, _, title in spans}
    assert {"bash (failed) · 3.0 s", "read · 1.0 s", "edit · 4.0 s", "idle · 25 min"} <= titles
    assert "anthropic/model-t · 2.0 s" in titles
    for href, _, _ in spans:
        assert href is not None and f'id="{href[1:]}"' in html
    assert ("#entry-r1", "span span-bash", "bash (failed) · 3.0 s") in spans
    assert ("#entry-u2", "span span-idle", "idle · 25 min") in spans
    labels = [t.text for t in svg.iter(f"{SVG}text")]
    assert labels == ["00:00", "25 min", "00:25 UTC"]
    # The card says how long the call took.
    assert '<span class="took" title="From the call to its result">took 3.0 s</span>' in html


def test_a_long_session_draws_a_bounded_number_of_spans(tmp_path: Path) -> None:
    b = SessionBuilder(session_id="long-0001", cwd="/work/long")
    b.user("u0", "go")
    calls = 4 * MAX_SPANS
    for n in range(calls):
        b.assistant(f"a{n}", [tool_call(f"c{n}", "bash", command=f"step {n}")])
        b.tool_result(f"r{n}", f"c{n}", "bash", "ok")
    b.assistant("done", [text("Done.")])
    html = export_html(load_transcript(b.write(tmp_path / "long.jsonl")))
    svg = timeline_of(html)
    drawn = len(list(svg.iter(f"{SVG}rect")))
    assert drawn < 3 * MAX_SPANS  # lanes plus at most about MAX_SPANS per lane, not 2 per call
    assert any("spans" in (t.text or "") for t in svg.iter(f"{SVG}title"))
    # A merged span says how many it stands for and when the first began: all of them are counted.
    counts = []
    for title in [t.text or "" for t in svg.iter(f"{SVG}title")][1:]:
        merged = re.fullmatch(r"(\d+) spans · from \d\d:\d\d", title)
        counts.append(int(merged[1]) if merged else 1)
    label = svg.get("aria-label") or ""
    # The model writing each message (the calls' and the last one's), and each call.
    assert sum(counts) == sum(int(n) for n in re.findall(r"(\d+) \w+ spans", label)) == 2 * calls + 1
    assert max(counts) > 1


def test_no_timeline_without_times(tmp_path: Path) -> None:
    b = SessionBuilder(session_id="one-0001")
    b.user("u1", "only a prompt")
    assert 'id="timeline"' not in export_html(load_transcript(b.write(tmp_path / "one.jsonl")))


def test_site_has_tools_windows_and_active_time(tmp_path: Path) -> None:
    agent = write_agent(tmp_path, timed_session(), timed_session("time-0002", "/work/other", "model-u", hours_later=2))
    out = tmp_path / "site"
    result = runner.invoke(app, ["build", "--agent-dir", str(agent), "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    stats = (out / "stats.html").read_text(encoding="utf-8")
    table = re.search(r'<table id="tool-stats".*?</table>', stats, re.S)
    assert table
    rows = re.findall(r"<tr><td><code>(\w+)</code></td><td[^>]*>([\d,]+)</td><td[^>]*>([\d,]+)</td>", table.group(0))
    assert rows == [("bash", "2", "2"), ("edit", "2", "0"), ("read", "2", "0")]
    assert "3.0 s" in table.group(0) and "100.0%" in table.group(0)
    for key in ("all", "30d", "7d"):
        assert f'id="window-{key}"' in stats and f'class="window-pane pane-{key}"' in stats
    assert 'id="tool-stats-7d"' in stats and 'id="active-time"' in stats
    assert "counts as active up to a gap of 10 minutes" in stats
    home = (out / "index.html").read_text(encoding="utf-8")
    assert "Active, 7 days" in home
    # 16 s in each project.
    assert home.count('<td class="opt" data-value="16000">16 s</td>') == 2
    page = next((out / "sessions").rglob("*time-0001.html")).read_text(encoding="utf-8")
    assert 'id="timeline"' in page and "took 4.0 s" in page
