"""sitegen watch as a user runs it: a real process serving on loopback, stopped with Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def test_watch_serves_the_demo_and_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "sitegen.cli", "watch", "--demo", "--port", "0", "--out", str(tmp_path / "site")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        url = None
        while url is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            match = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
            url = match.group(1) if match else None
        assert url, "watch never said where it serves"
        with urllib.request.urlopen(url + "index.html", timeout=10) as response:
            html = response.read().decode()
            assert response.headers["Cache-Control"] == "no-cache"
        assert '<script src="__sitegen__/reload.js"' in html
        assert "/__sitegen__/reload.js" not in (tmp_path / "site" / "index.html").read_text()
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=30)
        assert process.returncode == 0 and "Stopped." in out
    finally:
        if process.poll() is None:
            process.kill()
