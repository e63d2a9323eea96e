"""Run by tests/test_faults_disk.py in a mount namespace of its own (unshare): builds a site on a 1 MB
tmpfs, then one that does not fit, then one after the tmpfs grew; prints what happened as JSON."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import orjson
from sessions import SessionBuilder, text, tool_call
from site_helpers import crawl, make_session

CLI = [sys.executable, "-c", "import sys; from sitegen.cli import main; sys.exit(main())"]


def files(site: Path) -> dict[str, str]:
    """Every file of the site but the lock file, by content hash."""
    return {
        str(p.relative_to(site)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(site.rglob("*"))
        if p.is_file() and p.name != "lock"
    }


def big_session(agent: Path, number: int) -> None:
    """A session whose page is bigger than the tmpfs has room for."""
    b = SessionBuilder(session_id=f"big-{number}", cwd="/work/big")
    b.user("u1", "print the log")
    b.assistant("a1", [text("Printing."), tool_call("c1", "bash", command="cat log")])
    log = "\n".join(f"line {i} ZZ_BIG_{number}_{i}_ZZ {'x' * 60}" for i in range(12_000))
    b.tool_result("r1", "c1", "bash", log)
    b.write(agent / "sessions" / "--work-big--" / f"2026-01-02T00-00-00-000Z_big-{number}.jsonl")


def build(site: Path, agent: Path, jobs: int) -> dict[str, object]:
    done = subprocess.run(
        [*CLI, "build", "--out", str(site), "--agent-dir", str(agent), "--jobs", str(jobs)],
        capture_output=True,
        text=True,
    )
    return {"code": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def main() -> None:
    work, big_ones, jobs = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    mount = work / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], check=True)
    agent, site = work / "agent", mount / "site"
    for number in range(3):
        make_session(agent, "/work/alpha", f"alpha-{number}", f"ZZ_ALPHA{number}_ZZ")
    report: dict[str, object] = {"first": build(site, agent, jobs)}
    before = files(site)
    for number in range(big_ones):
        big_session(agent, number)
    report["full"] = build(site, agent, jobs)
    after = files(site)
    report["changed"] = sorted(name for name in before if after.get(name) != before[name])
    report["added"] = sorted(name for name in after if name not in before)
    report["broken_links"] = crawl(site)
    subprocess.run(["mount", "-o", "remount,size=64m", str(mount)], check=True)
    report["after_freeing"] = build(site, agent, jobs)
    report["final_broken_links"] = crawl(site)
    report["final_temporaries"] = [str(path) for path in site.rglob(".sitegen-*.tmp")]
    sys.stdout.write(orjson.dumps(report).decode())


if __name__ == "__main__":
    main()
