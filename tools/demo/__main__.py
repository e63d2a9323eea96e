"""Write the demo's pi-family sessions: python -m tools.demo [FOLDER] (default sitegen/demo/pi)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tools.demo import linkcheck, linkcheck_repo, moneta_import, moneta_repo, moneta_report
from tools.demo.builder import Repo, Session


def sessions() -> list[Session]:
    """Every session of the demo, in the order they happened (each continues the files the last one left)."""
    moneta = Repo(moneta_repo.CWD, moneta_repo.FILES)
    a, fork_point = moneta_import.session_a(moneta)
    b = moneta_import.session_b(moneta, a, fork_point)
    c = moneta_report.session_c(moneta)
    service = Repo(linkcheck_repo.CWD, linkcheck_repo.FILES)
    d = linkcheck.session_d(service)
    e = linkcheck.session_e(service)
    return [a, b, c, d, e]


def write_demo(agent_dir: Path) -> list[Path]:
    """The sessions, their artifacts and blobs in an agent dir (replacing its sessions/ and blobs/)."""
    for name in ("sessions", "blobs"):
        shutil.rmtree(agent_dir / name, ignore_errors=True)
    return [session.write(agent_dir) for session in sessions()]


def main() -> None:
    root = Path(__file__).resolve().parents[2]
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else root / "sitegen" / "demo" / "pi"
    for path in write_demo(target):
        print(path.relative_to(target))


if __name__ == "__main__":
    main()
