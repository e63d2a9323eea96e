"""odek sessions render through the same page code: frames, untrusted content, buffer, audit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sitegen.cli import app
from sitegen.render.export import export_html
from sitegen.resources import resource_dir
from sitegen.transcript.load import load_transcript

DEMO = resource_dir("demo") / "odek" / "sessions"


def demo_sessions() -> list[Path]:
    return sorted(p for p in DEMO.glob("*.json") if p.name != "index.json")


@pytest.mark.parametrize("path", demo_sessions(), ids=lambda p: p.stem[:20])
def test_demo_odek_sessions_export(path: Path) -> None:
    html = export_html(load_transcript(path))
    assert 'class="badge">odek<' in html
    assert html.count('id="entry-') >= 3


def test_untrusted_content_is_marked_with_its_source() -> None:
    pages = [export_html(load_transcript(p)) for p in demo_sessions()]
    page = next(p for p in pages if "untrusted-source" in p)
    assert re.search(r'class="untrusted-source">Untrusted content from <code>https?://', page)
    assert 'class="frame-head">TOOL RESULT: <code>' in page
    assert "auth_token" not in page


def test_audit_log_flags_suspicious_divergence() -> None:
    pages = [export_html(load_transcript(p)) for p in demo_sessions()]
    flagged = [p for p in pages if "suspicious divergence" in p]
    assert flagged, "the demo store has one turn odek marked suspicious"
    # Closed under the header like the other details, the flagged turn a badge on its summary.
    assert '<details class="audit">\n<summary>Audit · <span class="badge error">1 flagged turn</span>' in flagged[0]
    assert "odek&#39;s audit log" in flagged[0] or "odek's audit log" in flagged[0]


def test_export_and_dump_commands_accept_odek_files(tmp_path: Path) -> None:
    path = demo_sessions()[0]
    runner = CliRunner()
    result = runner.invoke(app, ["export", str(path), str(tmp_path / "o.html")])
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "o.html").is_file()
