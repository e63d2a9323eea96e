"""Session A (moneta): read ING's CSV export, import a year of it, --dry-run, a /compact, new category rules;
and session B, forked from A to write the docs."""

from __future__ import annotations

from tools.demo.builder import Repo, Session, bash, long_bash
from tools.demo.moneta_data import (
    APRIL,
    CATEGORIES_AFTER,
    CATEGORIES_BEFORE,
    report,
    uncategorized,
    verbose_import,
    year_export,
)
from tools.demo.moneta_repo import CWD, rules_toml

A_ID = "0196a3c2-5d1e-7b40-9c1f-2e8a4b6d0f13"
B_ID = "0196a45b-19c4-7e02-8d35-61f0c7a2e9b8"
DOWNLOAD = "~/Downloads/Umsatzanzeige_DE12500105170648489890_20260503.csv"
DOWNLOAD_ABS = "/home/mira/Downloads/Umsatzanzeige_DE12500105170648489890_20260503.csv"
VENV = f"{CWD}/.venv"


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def _traceback(repo: Repo, frames: list[tuple[str, str, str]], error: str) -> str:
    """A Python traceback through the moneta entry point and the given (file, function, source line) frames."""
    out = [
        "Traceback (most recent call last):",
        f'  File "{VENV}/bin/moneta", line 8, in <module>',
        "    sys.exit(main())",
        "             ^^^^^^",
    ]
    for path, function, needle in frames:
        if path.startswith(("/", "<")):
            out.append(f'  File "{path}", in {function}')
        else:
            out.append(f'  File "{CWD}/{path}", line {line_of(repo.files[path], needle)}, in {function}')
        out.append(f"    {needle.strip()}")
    out.append(error)
    return "\n".join(out)


IMPORTER_ING = '''\
"""Read a bank's CSV export into transactions: moneta's plain CSV or ING's export."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path


@dataclass(frozen=True)
class Transaction:
    day: date
    amount: Decimal
    payee: str
    memo: str = ""


@dataclass(frozen=True)
class Format:
    """Where a bank puts things: the delimiter, the header's column names, the date and number style."""

    name: str
    delimiter: str
    day: str
    amount: str
    payee: str
    memo: str
    date_format: str
    decimal: str  # "." for 1,234.56; "," for 1.234,56


PLAIN = Format("plain", ",", "Date", "Amount", "Payee", "Memo", "%Y-%m-%d", ".")
ING = Format("ing", ";", "Buchung", "Betrag", "Auftraggeber/Empfänger", "Verwendungszweck", "%d.%m.%Y", ",")
FORMATS = (PLAIN, ING)


def parse_amount(text: str, decimal: str = ".") -> Decimal:
    """'1,234.56' as a Decimal; with decimal=",", '-1.234,56'."""
    thousands = "," if decimal == "." else "."
    return Decimal(text.replace(thousands, "").replace(decimal, "."))


def parse_day(text: str, date_format: str = "%Y-%m-%d") -> date:
    return datetime.strptime(text, date_format).date()


def find_header(lines: list[str]) -> tuple[Format, int]:
    """The format whose header row is in the file, and that row's index (ING puts account details above it)."""
    for index, line in enumerate(lines[:30]):
        for fmt in FORMATS:
            cells = line.split(fmt.delimiter)
            if fmt.day in cells and fmt.amount in cells:
                return fmt, index
    raise ValueError("no header row moneta knows (it reads its plain CSV and ING exports)")


def read_csv(path: Path) -> list[Transaction]:
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    fmt, start = find_header(lines)
    rows = csv.DictReader(io.StringIO("\\n".join(lines[start:])), delimiter=fmt.delimiter)
    return [
        Transaction(
            parse_day(row[fmt.day], fmt.date_format),
            parse_amount(row[fmt.amount], fmt.decimal),
            row[fmt.payee],
            row.get(fmt.memo) or "",
        )
        for row in rows
    ]
'''

TESTS_ING = """

def test_ing_amounts_and_days():
    assert parse_amount("-1.234,56", decimal=",") == Decimal("-1234.56")
    assert parse_amount("3.412,00", decimal=",") == Decimal("3412.00")
    assert parse_day("30.04.2026", "%d.%m.%Y") == date(2026, 4, 30)


def test_read_ing_export():
    rows = read_csv(FIXTURES / "ing-2026-04.csv")
    assert len(rows) == 9
    assert rows[0] == Transaction(date(2026, 4, 5), Decimal("-23.40"), "Lieferando.de", "Bestellung 8817-2290")
    assert rows[-1].payee == "Hausverwaltung Kröger & Partner GbR"
"""

TEST_LATIN1 = """

def test_read_latin1_export(tmp_path):
    export = tmp_path / "ing.csv"
    export.write_bytes((FIXTURES / "ing-2026-04.csv").read_text(encoding="utf-8").encode("latin-1"))
    assert read_csv(export) == read_csv(FIXTURES / "ing-2026-04.csv")
"""

TEST_DB = """\
from datetime import date
from moneta.db import Store
from moneta.importer import Transaction

RENT = Transaction(date(2026, 4, 1), Decimal("-950.00"), "Hausverwaltung Kröger & Partner GbR")
BREAD = Transaction(date(2026, 4, 3), Decimal("-6.40"), "Bäckerei Müller")


def test_new_of_lists_what_add_would_insert(tmp_path):
    store = Store(tmp_path / "m.db")
    store.add([RENT])
    assert store.new_of([RENT, BREAD, BREAD]) == [BREAD]
    assert store.month("2026-04") == [RENT]
"""


def session_a(repo: Repo) -> tuple[Session, str]:
    s = Session(A_ID, CWD, "2026-05-04T07:12:08.114", "claude-sonnet-4-5")
    s.model_change("claude-sonnet-4-5", after=1.4)
    s.thinking_level("medium", after=2.1)
    s.user(
        "moneta import blows up on the ING export in tests/fixtures/ing-2026-04.csv: semicolons, dates like "
        "30.04.2026, amounts like -1.234,56 and a block of account info above the header row. can you make the "
        "importer read it? the plain CSVs have to keep working",
        after=14,
    )
    crash = _traceback(
        repo,
        [
            ("src/moneta/cli.py", "main", "rows = importer.read_csv(args.csv)"),
            ("src/moneta/importer.py", "read_csv", 'Transaction(parse_day(row["Date"]), parse_amount(row["Amount"])'),
        ],
        "KeyError: 'Date'",
    )
    s.assistant(
        thinking="Let me reproduce it first, then read the importer and the start of the fixture.",
        calls=[bash("moneta import tests/fixtures/ing-2026-04.csv", crash, code=1, took=0.6)],
        after=6.2,
    )
    head = "\n".join(repo.files["tests/fixtures/ing-2026-04.csv"].splitlines()[:12])
    s.assistant(
        calls=[repo.read("src/moneta/importer.py"), bash("head -n 12 tests/fixtures/ing-2026-04.csv", head, took=0.1)],
        after=4.8,
    )
    s.assistant(
        "The ING file has the account details and a blank line above the header, `;` between cells, German "
        "dates and decimal commas. `DictReader` takes the first line as the header, hence `KeyError: 'Date'`.\n\n"
        "I'll describe each layout as a `Format` and pick it by finding its header row, so the number style "
        "comes from the file's format rather than being guessed per value (`1,234` alone is ambiguous).",
        thinking=(
            "Two layouts. Plain: `Date,Amount,Payee,Memo`, ISO dates, `1,234.56`. ING: preamble lines, then "
            "`Buchung;Valuta;Auftraggeber/Empfänger;Buchungstext;Verwendungszweck;Saldo;Währung;Betrag;Währung`. "
            "`Betrag` is the amount, `Saldo` the running balance, which I must not confuse. The header repeats "
            "`Währung`; DictReader keeps the last one, harmless since I don't read it.\n\n"
            "Detect the header within the first 30 lines by checking for the date and amount columns of each "
            "format. Keep `parse_amount` and `parse_day` with defaults that behave as before so existing "
            "callers and tests don't change."
        ),
        calls=[repo.write("src/moneta/importer.py", IMPORTER_ING)],
        after=41.5,
    )
    s.assistant(
        calls=[
            repo.edit(
                "tests/test_importer.py",
                "from moneta.importer import parse_amount, parse_day, read_csv",
                "from moneta.importer import Transaction, parse_amount, parse_day, read_csv",
            ),
            repo.edit(
                "tests/test_importer.py",
                '    assert sum(r.amount for r in rows) == Decimal("2345.17")\n',
                '    assert sum(r.amount for r in rows) == Decimal("2345.17")\n' + TESTS_ING,
            ),
        ],
        after=18.3,
    )
    failure = """\
....F                                                                    [100%]
=================================== FAILURES ===================================
_____________________________ test_read_ing_export _____________________________

    def test_read_ing_export():
        rows = read_csv(FIXTURES / "ing-2026-04.csv")
>       assert len(rows) == 9
E       AssertionError: assert 8 == 9
E        +  where 8 = len([Transaction(day=datetime.date(2026, 4, 5), amount=Decimal('-23.40'), payee='Lieferando.de', memo='Bestellung 8817-2290'), ...])

tests/test_importer.py:30: AssertionError
=========================== short test summary info ============================
FAILED tests/test_importer.py::test_read_ing_export - AssertionError: assert 8 == 9
1 failed, 5 passed in 0.09s"""
    s.assistant(calls=[bash("python -m pytest -q", failure, code=1, took=1.9)], after=3.1)
    s.assistant(
        "The first row matches, so parsing works; the count in my test may be wrong. Counting the booking lines:",
        calls=[bash("grep -c '^[0-9][0-9]\\.' tests/fixtures/ing-2026-04.csv", "8", took=0.1)],
        after=7.4,
    )
    s.assistant(
        calls=[repo.edit("tests/test_importer.py", "    assert len(rows) == 9\n", "    assert len(rows) == 8\n")],
        after=3.9,
    )
    s.assistant(
        calls=[
            bash(
                "python -m pytest -q",
                "......                                                                   [100%]\n6 passed in 0.08s",
                took=1.7,
            )
        ],
        after=2.6,
    )
    s.assistant(
        calls=[
            bash(
                "moneta import tests/fixtures/ing-2026-04.csv",
                "imported 8 of 8 transactions (0 already known)",
                took=0.7,
            )
        ],
        after=3.0,
    )
    s.assistant(
        "`moneta import` reads ING exports now:\n\n"
        "- **`importer.py`**: a `Format` per layout (`PLAIN`, `ING`); `read_csv` finds the header row, skips "
        "what is above it and parses dates and amounts in that format's style.\n"
        "- **`parse_amount` / `parse_day`** take the style as optional arguments and default to the plain "
        "format, so nothing else changes.\n"
        "- **Tests**: ING amounts and dates, and the fixture read end to end. The one failure was my own "
        "miscount of the fixture's rows (8, not 9).\n\n"
        "The fixture imports cleanly (8 transactions).",
        after=6.8,
    )
    fork_point = s.leaf
    assert fork_point is not None

    # --- U2: the real export (Latin-1, a year of it) ---
    s.user(f"try it on the real thing: {DOWNLOAD} (the whole last year)", after=212)
    decode = _traceback(
        repo,
        [
            ("src/moneta/cli.py", "main", "rows = importer.read_csv(args.csv)"),
            ("src/moneta/importer.py", "read_csv", 'lines = path.read_text(encoding="utf-8-sig").splitlines()'),
            ("/usr/lib/python3.12/pathlib.py", "read_text", "return f.read()"),
            ("<frozen codecs>", "decode", "(result, consumed) = self._buffer_decode(data, self.errors, final)"),
        ],
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe4 in position 226: invalid continuation byte",
    )
    decode = decode.replace(
        'File "/usr/lib/python3.12/pathlib.py", in', 'File "/usr/lib/python3.12/pathlib.py", line 1029, in'
    )
    decode = decode.replace('File "<frozen codecs>", in', 'File "<frozen codecs>", line 322, in')
    s.assistant(calls=[bash(f"moneta import -v {DOWNLOAD}", decode, code=1, took=0.5)], after=5.5)
    s.assistant(
        calls=[bash(f"file {DOWNLOAD}", f"{DOWNLOAD_ABS}: ISO-8859 text, with CRLF line terminators", took=0.1)],
        after=4.0,
    )
    s.assistant(
        "ING writes ISO-8859-1, not UTF-8 (byte `0xe4` is the `ä` of `Empfänger`). The fixture passed because it "
        "was saved as UTF-8 when it was anonymised. I'll try UTF-8 first and fall back to Latin-1: any byte "
        "sequence decodes as Latin-1, so it has to be the fallback, never the first try.",
        calls=[
            repo.edit(
                "src/moneta/importer.py",
                '    lines = path.read_text(encoding="utf-8-sig").splitlines()\n',
                "    data = path.read_bytes()\n"
                "    try:\n"
                '        text = data.decode("utf-8-sig")\n'
                "    except UnicodeDecodeError:  # ING writes ISO-8859-1\n"
                '        text = data.decode("latin-1")\n'
                "    lines = text.splitlines()\n",
            ),
            repo.edit(
                "tests/test_importer.py",
                '    assert rows[-1].payee == "Hausverwaltung Kröger & Partner GbR"\n',
                '    assert rows[-1].payee == "Hausverwaltung Kröger & Partner GbR"\n' + TEST_LATIN1,
            ),
        ],
        after=24.7,
    )
    s.assistant(
        calls=[
            bash(
                "python -m pytest -q",
                ".......                                                                  [100%]\n7 passed in 0.10s",
                took=1.8,
            )
        ],
        after=2.4,
    )
    year = year_export()
    export_lines = verbose_import(year)
    export_lines[-1] = f"imported {len(year) - 8} of {len(year)} transactions (8 already known)"
    call, log = long_bash(f"moneta import -v {DOWNLOAD}", export_lines, shown=40, artifact=0, took=2.3)
    s.artifacts["0.bash.log"] = log
    s.assistant(calls=[call], after=3.3)
    s.assistant(
        f"The year imported: **{len(year) - 8} new transactions**, and the 8 from the fixture I imported earlier "
        "were recognised as already known (same day, amount, payee and memo), so nothing is doubled. The whole "
        "listing is in the tool output's artifact.",
        after=6.1,
    )

    # --- U3: --dry-run ---
    u3 = s.user("nice. can you add --dry-run to import? show what would be new and don't write anything", after=140)
    s.assistant(calls=[repo.read("src/moneta/db.py"), repo.read("src/moneta/cli.py")], after=5.2)
    s.assistant(
        "`Store.add` already knows what is new (`INSERT OR IGNORE`). I'll add `Store.new_of(rows)`, the rows whose "
        "key is not stored yet, and let `--dry-run` print those instead of adding them.",
        calls=[
            repo.edit(
                "src/moneta/db.py",
                "    def month(self, month: str) -> list[Transaction]:\n",
                "    def new_of(self, rows: Iterable[Transaction]) -> list[Transaction]:\n"
                '        """The transactions add() would insert, each once, in order; nothing is written."""\n'
                "        new: dict[str, Transaction] = {}\n"
                "        for tx in rows:\n"
                "            key = key_of(tx)\n"
                '            if key not in new and not self.conn.execute("SELECT 1 FROM tx WHERE key = ?", (key,)).fetchone():\n'
                "                new[key] = tx\n"
                "        return list(new.values())\n"
                "\n"
                "    def month(self, month: str) -> list[Transaction]:\n",
            ),
            repo.edit(
                "src/moneta/cli.py",
                '    imp.add_argument("-v", "--verbose", action="store_true", help="print every transaction")\n',
                '    imp.add_argument("-v", "--verbose", action="store_true", help="print every transaction")\n'
                '    imp.add_argument("-n", "--dry-run", action="store_true", help="show what would be imported")\n',
            ),
            repo.edit(
                "src/moneta/cli.py",
                "        rows = importer.read_csv(args.csv)\n        added = store.add(rows)\n",
                "        rows = importer.read_csv(args.csv)\n"
                "        if args.dry_run:\n"
                "            new = store.new_of(rows)\n"
                "            for row in new:\n"
                '                print(f"{row.day}  {row.amount:>10}  {row.payee}")\n'
                '            print(f"would import {len(new)} of {len(rows)} transactions ({len(rows) - len(new)} already known)")\n'
                "            return 0\n"
                "        added = store.add(rows)\n",
            ),
            repo.write("tests/test_db.py", TEST_DB),
        ],
        after=33.0,
    )
    s.assistant(
        calls=[
            bash(
                "python -m pytest -q",
                "........                                                                 [100%]\n8 passed in 0.11s",
                took=1.8,
            )
        ],
        after=2.2,
    )
    s.assistant(
        calls=[
            bash(
                "moneta import --dry-run tests/fixtures/ing-2026-04.csv",
                "would import 0 of 8 transactions (8 already known)",
                took=0.6,
            )
        ],
        after=3.4,
    )
    s.assistant(
        "`moneta import --dry-run FILE` (or `-n`) prints the transactions that would be new and the count, and "
        "writes nothing. The fixture shows 0 of 8, as it should now that those rows are stored. New test in "
        "`tests/test_db.py`; 8 tests pass.",
        after=5.0,
    )

    # --- /compact, then U4: categories ---
    s.compaction(
        COMPACTION_SUMMARY,
        first_kept=u3,
        read=["src/moneta/importer.py", "src/moneta/db.py", "src/moneta/cli.py", "tests/fixtures/ing-2026-04.csv"],
        modified=[
            "src/moneta/importer.py",
            "src/moneta/db.py",
            "src/moneta/cli.py",
            "tests/test_importer.py",
            "tests/test_db.py",
        ],
        after=1080,
    )
    s.user(
        "the april report puts a lot under other. what's not categorized? just show me and suggest rules, "
        "don't change anything yet",
        after=25,
    )
    script = (
        "python - <<'EOF'\n"
        "from pathlib import Path\n"
        "from moneta import db, rules\n"
        "\n"
        'rs = rules.load(Path("rules.toml"))\n'
        'left = [t for t in db.open_default().month("2026-04") if t.amount < 0 and rules.categorize(t, rs) == "other"]\n'
        "by_payee = {}\n"
        "for t in left:\n"
        "    by_payee.setdefault(t.payee, []).append(t.amount)\n"
        "width = max(map(len, by_payee))\n"
        "print(f\"{'payee':<{width}}  n  total\")\n"
        "print(f\"{'-' * width}  -  -------\")\n"
        "for payee, amounts in sorted(by_payee.items(), key=lambda kv: (-len(kv[1]), sum(kv[1]), kv[0])):\n"
        '    print(f"{payee:<{width}}  {len(amounts)}  {sum(amounts):.2f}")\n'
        "EOF"
    )
    s.assistant(
        thinking='The categorization lives in Python, so a SQL query alone can\'t tell what ends up in "other". '
        "Use moneta's own modules against the real database.",
        calls=[repo.read("rules.toml"), bash(script, uncategorized(APRIL, CATEGORIES_BEFORE), took=0.4)],
        after=7.7,
    )
    s.assistant(
        "Ten payees fall through to **other** in April. Suggestions (patterns match anywhere in the payee, "
        "lower case):\n\n"
        "| Payee | n | Suggested rule |\n"
        "|---|---|---|\n"
        '| nextbike GmbH | 3 | `transport`: `"nextbike"` |\n'
        '| LVB Leipziger Verkehrsbetriebe | 1 | `transport`: `"lvb"` |\n'
        '| Amazon EU S.a.r.l. | 2 | new `shopping`: `"amazon"` |\n'
        '| dm-drogerie markt | 2 | new `household`: `"dm-drogerie"` |\n'
        '| Apotheke am Markt | 1 | `household`: `"apotheke"` |\n'
        '| Stadtwerke Leipzig GmbH | 1 | new `utilities`: `"stadtwerke"` |\n'
        '| Apple Services | 1 | `subscriptions`: `"apple services"` (iCloud) |\n'
        '| Café Kandler | 1 | `eating-out`: `"café"` |\n'
        "| Möbelhaus Höffner | 1 | a one-off; leave it in other |\n"
        "| Eventim | 1 | tickets; leave it, or a new `going-out` |\n\n"
        "Nothing changed yet.",
        after=21.4,
    )
    s.user("add all of them except amazon, that's all over the place. and leave the one-offs", after=96)
    s.assistant(calls=[repo.write("rules.toml", rules_toml(CATEGORIES_AFTER))], after=9.6)
    s.assistant(calls=[bash("moneta report --month 2026-04", report(APRIL, CATEGORIES_AFTER), took=0.5)], after=2.9)
    done = s.assistant(
        "Added to `rules.toml`: `lvb` and `nextbike` (transport), `café` (eating-out), `apple services` "
        "(subscriptions), and two new categories, `utilities` (`stadtwerke`) and `household` (`dm-drogerie`, "
        "`apotheke`). April's **other** is down from 14 payments to 4: Amazon twice, the furniture store and "
        "the concert tickets.",
        after=7.1,
    )
    s.label(done, "ing-import", after=44)
    return s, fork_point


COMPACTION_SUMMARY = f"""\
## Goal
Make `moneta import` read ING's CSV exports (semicolons, German dates and amounts, account details above the \
header) while moneta's plain CSV keeps working; then add `import --dry-run`.

## Constraints & Preferences
- The plain CSV format must keep working.
- No new dependencies.

## Progress
### Done
- [x] `src/moneta/importer.py`: a `Format` per layout (`PLAIN`, `ING`), chosen by finding its header row; dates \
and amounts parsed in the format's style (`parse_amount(text, decimal)`, `parse_day(text, date_format)`).
- [x] Files are decoded as UTF-8, falling back to Latin-1 (ING writes ISO-8859-1).
- [x] Imported the real export `{DOWNLOAD}`: 465 new, 8 already known (from the fixture).
- [x] `moneta import --dry-run` / `-n`: `Store.new_of(rows)` lists what `add` would insert; nothing is written.
- [x] Tests: 8 pass (`tests/test_importer.py`, `tests/test_db.py`, `tests/test_report.py`).

### In Progress
- (none)

## Key Decisions
- **Number style per file, not per value**: `1,234` alone is ambiguous.
- **Latin-1 only as the fallback**: it decodes any bytes, so it can't be tried first.

## Next Steps
1. The user wants to look at the categories in the April report next.

## Critical Context
- The database is `~/.local/share/moneta/moneta.db`; categories come from `rules.toml` in the project.
"""


def session_b(repo: Repo, a: Session, fork_point: str) -> Session:
    """/fork from A's second prompt: A's first exchange, copied with its ids, then the docs."""
    parent = f"/home/mira/.pi/agent/sessions/--home-mira-code-moneta--/{a.file_name}"
    s = Session(B_ID, CWD, "2026-05-04T09:41:37.502", "claude-sonnet-4-5", parent_session=parent)
    s.copy_from(a, fork_point)
    s.name("ING import: docs", after=9)
    s.user("write a short README section about the ING import and a CHANGELOG entry for 0.4.0", after=31)
    s.assistant(calls=[repo.read("README.md"), repo.read("CHANGELOG.md")], after=5.8)
    s.assistant(
        calls=[
            repo.edit(
                "README.md",
                "## Categories\n",
                "## Bank exports\n\n"
                "`moneta import FILE` reads two layouts and tells them apart by their header row:\n\n"
                "- **moneta's plain CSV**: `Date,Amount,Payee,Memo`, ISO dates, amounts like `-1,234.56`.\n"
                "- **ING** (Umsatzanzeige): the CSV from *Umsätze → Export*, as downloaded. The account details "
                "above the header are skipped; dates like `30.04.2026` and amounts like `-1.234,56` are read as "
                "such. ING writes ISO-8859-1, which moneta detects.\n\n"
                "Importing a file twice adds nothing twice: a transaction with the same day, amount, payee and "
                "memo is stored once. `moneta import --dry-run FILE` shows what would be added.\n\n"
                "## Categories\n",
            ),
            repo.edit(
                "CHANGELOG.md",
                "## 0.3.0\n",
                "## 0.4.0 (unreleased)\n\n"
                "- `moneta import` reads ING's CSV export (semicolons, German dates and amounts, ISO-8859-1).\n"
                "- `moneta import --dry-run` shows what would be imported without writing.\n\n"
                "## 0.3.0\n",
            ),
        ],
        after=29.5,
    )
    s.assistant(
        "Added a **Bank exports** section to the README (the two layouts, how they are told apart, duplicates and "
        "`--dry-run`) and a 0.4.0 entry at the top of the CHANGELOG. I mentioned `--dry-run` as well since it is "
        "in the code now, though this session only saw the ING change.",
        after=6.4,
    )
    return s
