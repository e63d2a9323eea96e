"""Session C (moneta): a screenshot of a misaligned report, a subagent surveying the CLI, an abandoned branch."""

from __future__ import annotations

from pathlib import Path

from tools.demo.builder import Call, Repo, Session, bash, grep
from tools.demo.moneta_data import APRIL, CATEGORIES_AFTER, report
from tools.demo.moneta_import import line_of
from tools.demo.moneta_repo import CWD

C_ID = "0196b0e7-4a28-7c11-b6e3-0d59f2a8c471"
AUDIT_ID = "0196b0e8-02f3-7a9d-a4c0-7e2b51d96f08"
IMAGES = Path(__file__).parent / "images"

ASSIGNMENT = (
    "Find every place in src/moneta/ that lays text out in fixed-width columns: f-string or format() width "
    "specs such as :<30 or :>10, str.ljust/rjust/center, textwrap. For each, give file:line, the code, and "
    "whether a long value can break the layout (and how long it would have to be). The project is a Python "
    "CLI in /home/mira/code/moneta. Read-only: don't change any file."
)

CATEGORY_ROW = 'lines.append(f"{category:<16}{counts[category]:>9}{total:>12,.2f}")'
PAYEE_ROW = 'lines.append(f"  {tx.day}  {tx.payee:<30}{tx.amount:>10,.2f}")'
LISTING = 'print(f"{row.day}  {row.amount:>10}  {row.payee}")'


def _column_report(repo: Repo) -> str:
    report_py, cli_py = repo.files["src/moneta/report.py"], repo.files["src/moneta/cli.py"]
    header = line_of(report_py, "f\"{'category':<16}")
    rows = [n for n, line in enumerate(cli_py.splitlines(), 1) if LISTING in line]
    return f"""\
## Fixed-width text in moneta

Three places lay out columns; nothing uses `ljust`/`rjust`/`textwrap`.

| Where | Code | Can a long value break it? |
|---|---|---|
| `src/moneta/report.py:{line_of(report_py, CATEGORY_ROW)}` | `{CATEGORY_ROW[13:-1]}` | **Yes**: a category name \
over 16 characters pushes its row right. The longest in `rules.toml` today is `subscriptions` (13). |
| `src/moneta/report.py:{line_of(report_py, PAYEE_ROW)}` | `{PAYEE_ROW[13:-1]}` | **Yes**: any payee over 30 \
characters. Width specs pad but never cut. The ING fixture's longest payee is 35 characters \
(`Hausverwaltung Kröger & Partner GbR`). |
| `src/moneta/cli.py:{rows[1]}` (and the `--dry-run` loop, line {rows[0]}) | `{LISTING[6:-1]}` | No: the payee is the \
last column. An amount would need 11 characters (a million euros) to push it. |

The header row (`report.py:{header}`) uses the same widths as the rows below it.
"""


def column_audit(repo: Repo, start: str) -> tuple[Session, str]:
    """The subagent's own session (a cheaper model, read-only tools) and its final report."""
    s = Session(AUDIT_ID, CWD, start, "claude-haiku-4-5")
    s.header["parentSession"] = C_ID
    s.user(ASSIGNMENT, after=0.4)
    hits = "\n".join(
        f"src/moneta/{name}:{n}:{line}"
        for name in ("cli.py", "report.py")
        for n, line in enumerate(repo.files[f"src/moneta/{name}"].splitlines(), 1)
        if ":<" in line or ":>" in line
    )
    s.assistant(
        thinking="Search for width specs and the str padding methods first, then read the files with hits.",
        calls=[grep(r":[<>^]\d+|\.ljust\(|\.rjust\(|\.center\(|textwrap", "src", hits)],
        after=3.1,
    )
    s.assistant(calls=[repo.read("src/moneta/report.py"), repo.read("src/moneta/cli.py")], after=2.6)
    widths = bash(
        "awk -F';' 'NR>10 {print length($3)}' tests/fixtures/ing-2026-04.csv | sort -n | tail -n 3",
        "27\n30\n35",
        took=0.1,
    )
    s.assistant(thinking="How long do payees get in the ING data?", calls=[widths], after=4.4)
    final = _column_report(repo)
    s.assistant(final, after=19.8)
    return s, final


WIDEN_OLD = """\
    lines += ["", "largest payments"]
    for tx in sorted(spent, key=lambda t: t.amount)[:5]:
        lines.append(f"  {tx.day}  {tx.payee:<30}{tx.amount:>10,.2f}")
"""
WIDEN_NEW = """\
    lines += ["", "largest payments"]
    largest = sorted(spent, key=lambda t: t.amount)[:5]
    width = max((len(tx.payee) for tx in largest), default=0) + 2
    for tx in largest:
        lines.append(f"  {tx.day}  {tx.payee:<{width}}{tx.amount:>10,.2f}")
"""
FIT = '''\
RULES = Path("rules.toml")


def fit(text: str, width: int) -> str:
    """Text in exactly `width` characters: padded, or cut with an ellipsis when longer."""
    return text.ljust(width) if len(text) <= width else text[: width - 1] + "…"
'''
FIXED_ROWS = """\
    for category, total in sorted(totals.items(), key=lambda item: item[1]):
        lines.append(f"{fit(category, 16)}{counts[category]:>9}{total:>12,.2f}")
    lines += ["", "largest payments"]
    for tx in sorted(spent, key=lambda t: t.amount)[:5]:
        lines.append(f"  {tx.day}  {fit(tx.payee, 30)}{tx.amount:>10,.2f}")
"""
TEST_FIT = """

def test_fit_pads_and_cuts():
    assert fit("REWE", 6) == "REWE  "
    assert fit("Amazon EU S.a.r.l., Niederlassung Deutschland", 12) == "Amazon EU S…"
    assert len(fit("x" * 40, 30)) == 30
"""


def session_c(repo: Repo) -> Session:
    s = Session(C_ID, CWD, "2026-05-06T18:19:44.306", "claude-opus-4-5")
    s.model_change("claude-opus-4-5", after=1.2)
    screenshot = (IMAGES / "report-misaligned.png").read_bytes()
    s.user(
        "the report is misaligned when a payee name is long, see screenshot. can you fix it? and check if "
        "anything else in the cli has the same problem",
        after=23,
        images=[screenshot],
    )
    audit, audit_report = column_audit(repo, "2026-05-06T18:20:21.402")
    task_args = {
        "agent": "explore",
        "tasks": [{"id": "ColumnAudit", "description": "Find fixed-width text layout", "assignment": ASSIGNMENT}],
    }
    summary = (
        "## Task results\n\n### 0-ColumnAudit (explore) ✓\n\n"
        "Three column layouts: report.py's category and payee rows can overflow (width specs pad but never cut); "
        "cli.py's listings are safe since the payee is the last column.\n\nFull output: agent://0-ColumnAudit"
    )
    details = {
        "results": [
            {
                "id": "0-ColumnAudit",
                "agent": "explore",
                "exitCode": 0,
                "durationMs": 31240,
                "outputPath": "0-ColumnAudit.md",
            }
        ]
    }
    s.assistant(
        "In the screenshot the rows whose payee is longer than 30 characters push their amount to the right: "
        "`{tx.payee:<30}` pads short names but never cuts long ones. I'll have a subagent survey the rest of "
        "the CLI for the same pattern while I read the report code.",
        thinking=(
            "The rent row (35 characters) and the Amazon row (45) are shifted by exactly their overflow; the "
            "others line up. So this is padding without truncation, not a Unicode width problem: the umlauts "
            "in Höffner's row line up fine."
        ),
        calls=[
            repo.read("src/moneta/report.py"),
            Call("task", task_args, summary, details=details, took=31.6),
        ],
        after=14.2,
    )
    s.artifacts["0-ColumnAudit.jsonl"] = "\n".join(audit.lines()) + "\n"
    s.artifacts["0-ColumnAudit.md"] = audit_report
    s.blobs.update(audit.blobs)
    back_to = s.leaf
    assert back_to is not None

    # The first try: a column as wide as the longest payee. The user steps back from it below.
    s.assistant(
        "The subagent confirms two overflowing columns in `report.py` and nothing in `cli.py`. Simplest fix "
        "for the payees: size the column to the longest one shown.",
        calls=[repo.edit("src/moneta/report.py", WIDEN_OLD, WIDEN_NEW)],
        after=12.5,
    )
    wide = report(APRIL, CATEGORIES_AFTER, payee_width=47)
    s.assistant(calls=[bash("moneta report --month 2026-04", wide, took=0.5)], after=2.8)
    s.assistant(
        "Aligned now: the payee column is as wide as the longest of the five payees plus two spaces "
        "(47 characters this month).",
        after=5.3,
    )
    s.branch_summary(
        back_to,
        "## Abandoned approach\n\n"
        "Widened the payee column of `moneta report` to the longest payee shown (`width = max(len(tx.payee) ...) "
        "+ 2` in `src/moneta/report.py`). The rows lined up, but a 45-character name made the table 72 "
        "characters wide. That change is still in `report.py`.",
        read=["src/moneta/report.py"],
        modified=["src/moneta/report.py"],
        after=66,
    )
    s.user(
        "hm no, that makes the table way too wide for one long name. cut names at 30 with an ellipsis instead, "
        "and the categories too since they can overflow",
        after=18,
    )
    s.assistant(
        thinking="report.py still has the widened column from the other branch; read it before editing.",
        calls=[repo.read("src/moneta/report.py")],
        after=4.6,
    )
    s.assistant(
        "One helper, `fit(text, width)`, for both columns: pad when short, cut with `…` when long, so every row "
        "has the same width. It also replaces the widened column left over from the first try.",
        calls=[
            repo.edit("src/moneta/report.py", 'RULES = Path("rules.toml")\n', FIT),
            repo.edit("src/moneta/report.py", *_fixed_rows(repo)),
            repo.edit(
                "tests/test_report.py",
                "from moneta.report import monthly\n",
                "from moneta.report import fit, monthly\n",
            ),
            repo.edit(
                "tests/test_report.py",
                '    assert "other                   1       -9.99" in text\n',
                '    assert "other                   1       -9.99" in text\n' + TEST_FIT,
            ),
        ],
        after=27.9,
    )
    s.assistant(
        calls=[
            bash(
                "python -m pytest -q",
                ".........                                                                [100%]\n9 passed in 0.12s",
                took=1.9,
            )
        ],
        after=2.1,
    )
    s.assistant(
        calls=[bash("moneta report --month 2026-04", report(APRIL, CATEGORIES_AFTER, None), took=0.5)], after=2.5
    )
    done = s.assistant(
        "Fixed: `fit()` in `report.py` pads or cuts the category (16) and payee (30) columns, so long names end "
        "in `…` and every amount lines up. From the subagent's survey, nothing else in the CLI has this problem: "
        "the import listings end with the payee. New test `test_fit_pads_and_cuts`; 9 pass.",
        after=6.0,
    )
    s.label(done, "columns", after=30)
    return s


def _fixed_rows(repo: Repo) -> tuple[str, str]:
    text = repo.files["src/moneta/report.py"]
    start = text.index("    for category, total in sorted(")
    end = text.index('    return "\\n".join(lines)')
    return text[start:end], FIXED_ROWS
