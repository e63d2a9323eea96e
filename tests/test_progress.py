"""Build progress: a redrawn bar on a terminal, a few plain lines in CI logs."""

from __future__ import annotations

import io

from sitegen.site.state.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_gets_a_bar_redrawn_in_place() -> None:
    stream = Terminal()
    with Progress(stream) as progress:
        for done in range(1, 4):
            progress.update(done, 3, f"session-{done}")
    text = stream.getvalue()
    assert text.count("\r[") == 3 and "3 of 3 sessions written session-3" in text and text.endswith("\n")


def test_plain_stream_gets_lines_not_bars() -> None:
    stream = io.StringIO()
    with Progress(stream) as progress:
        for done in range(1, 101):
            progress.update(done, 100, "s")
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert lines[0] == "1 of 100 sessions written" and lines[-1] == "100 of 100 sessions written"
    assert len(lines) <= 3
