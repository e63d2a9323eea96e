"""moneta's source tree as it stands when the demo's first session starts (a small Python CLI)."""

from __future__ import annotations

from decimal import Decimal

from tools.demo.moneta_data import APRIL, CATEGORIES_BEFORE, ing_csv

CWD = "/home/mira/code/moneta"

PYPROJECT = """\
[project]
name = "moneta"
version = "0.3.0"
description = "Import bank CSV exports and see where the money went"
requires-python = ">=3.11"
dependencies = []

[project.optional-dependencies]
test = ["pytest>=8"]

[project.scripts]
moneta = "moneta.cli:main"

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

IMPORTER = '''\
"""Read a bank's CSV export into transactions."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path


@dataclass(frozen=True)
class Transaction:
    day: date
    amount: Decimal
    payee: str
    memo: str = ""


def parse_amount(text: str) -> Decimal:
    """'1,234.56' or '-12.30' as a Decimal."""
    return Decimal(text.replace(",", ""))


def parse_day(text: str) -> date:
    return date.fromisoformat(text)


def read_csv(path: Path) -> list[Transaction]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [
            Transaction(parse_day(row["Date"]), parse_amount(row["Amount"]), row["Payee"], row.get("Memo", ""))
            for row in csv.DictReader(handle)
        ]
'''

CLI = '''\
"""moneta's command line: import a CSV export, report a month."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from moneta import db, importer, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="moneta")
    sub = parser.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("import", help="import a bank CSV export")
    imp.add_argument("csv", type=Path)
    imp.add_argument("-v", "--verbose", action="store_true", help="print every transaction")
    rep = sub.add_parser("report", help="spending per category for one month")
    rep.add_argument("--month", required=True, help="YYYY-MM")
    args = parser.parse_args(argv)

    store = db.open_default()
    if args.command == "import":
        rows = importer.read_csv(args.csv)
        added = store.add(rows)
        if args.verbose:
            for row in rows:
                print(f"{row.day}  {row.amount:>10}  {row.payee}")
        print(f"imported {added} of {len(rows)} transactions ({len(rows) - added} already known)")
    else:
        print(report.monthly(store, args.month))
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

DB = '''\
"""The transaction store: one SQLite file in which each transaction is stored once."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from pathlib import Path

from moneta.importer import Transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS tx (
    key    TEXT PRIMARY KEY,
    day    TEXT NOT NULL,
    amount TEXT NOT NULL,
    payee  TEXT NOT NULL,
    memo   TEXT NOT NULL
)
"""


def default_path() -> Path:
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "moneta" / "moneta.db"


def key_of(tx: Transaction) -> str:
    """Same day, amount, payee and memo: the same transaction, however often it is imported."""
    raw = f"{tx.day}|{tx.amount}|{tx.payee}|{tx.memo}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


class Store:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path)
        self.conn.execute(SCHEMA)

    def add(self, rows: Iterable[Transaction]) -> int:
        """Insert the transactions not stored yet; returns how many were new."""
        before = self.conn.total_changes
        with self.conn:
            self.conn.executemany(
                "INSERT OR IGNORE INTO tx VALUES (?, ?, ?, ?, ?)",
                [(key_of(t), t.day.isoformat(), str(t.amount), t.payee, t.memo) for t in rows],
            )
        return self.conn.total_changes - before

    def month(self, month: str) -> list[Transaction]:
        rows = self.conn.execute(
            "SELECT day, amount, payee, memo FROM tx WHERE day LIKE ? ORDER BY day", (f"{month}-%",)
        )
        return [Transaction(date.fromisoformat(d), Decimal(a), p, m) for d, a, p, m in rows]


def open_default() -> Store:
    return Store(default_path())
'''

RULES = '''\
"""Categories from rules.toml: the first rule whose pattern occurs in the payee wins."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from moneta.importer import Transaction


@dataclass(frozen=True)
class Rule:
    category: str
    pattern: str


def load(path: Path) -> list[Rule]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [Rule(name, p.lower()) for name, patterns in data["categories"].items() for p in patterns]


def categorize(tx: Transaction, rules: list[Rule]) -> str:
    payee = tx.payee.lower()
    return next((rule.category for rule in rules if rule.pattern in payee), "other")
'''

REPORT = '''\
"""The monthly report: what went out per category, and the largest payments."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from pathlib import Path

from moneta import rules as rules_mod
from moneta.db import Store

RULES = Path("rules.toml")


def monthly(store: Store, month: str, rules_path: Path = RULES) -> str:
    spent = [tx for tx in store.month(month) if tx.amount < 0]
    rules = rules_mod.load(rules_path)
    totals: dict[str, Decimal] = defaultdict(Decimal)
    counts: dict[str, int] = defaultdict(int)
    for tx in spent:
        category = rules_mod.categorize(tx, rules)
        totals[category] += tx.amount
        counts[category] += 1
    lines = [f"moneta report · {month}", "", f"{'category':<16}{'payments':>9}{'total':>12}"]
    for category, total in sorted(totals.items(), key=lambda item: item[1]):
        lines.append(f"{category:<16}{counts[category]:>9}{total:>12,.2f}")
    lines += ["", "largest payments"]
    for tx in sorted(spent, key=lambda t: t.amount)[:5]:
        lines.append(f"  {tx.day}  {tx.payee:<30}{tx.amount:>10,.2f}")
    return "\\n".join(lines)
'''


def rules_toml(categories: dict[str, list[str]]) -> str:
    lines = ["# moneta categories: the first pattern found in a payee (lower case) wins", "[categories]"]
    for name, patterns in categories.items():
        quoted = ", ".join(f'"{p}"' for p in patterns)
        lines.append(f"{name} = [{quoted}]")
    return "\n".join(lines) + "\n"


TEST_IMPORTER = """\
from datetime import date
from decimal import Decimal
from pathlib import Path

from moneta.importer import parse_amount, parse_day, read_csv

FIXTURES = Path(__file__).parent / "fixtures"


def test_plain_amounts():
    assert parse_amount("-12.30") == Decimal("-12.30")
    assert parse_amount("1,234.56") == Decimal("1234.56")


def test_plain_day():
    assert parse_day("2026-03-31") == date(2026, 3, 31)


def test_read_plain_csv():
    rows = read_csv(FIXTURES / "plain-2026-03.csv")
    assert len(rows) == 5
    assert rows[0].payee == "Hausverwaltung Kröger & Partner GbR"
    assert sum(r.amount for r in rows) == Decimal("2345.17")
"""

TEST_REPORT = """\
from datetime import date
from decimal import Decimal

from moneta.db import Store
from moneta.importer import Transaction
from moneta.report import monthly


def test_report_sums_per_category(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[categories]\\ngroceries = ["rewe"]\\n', encoding="utf-8")
    store = Store(tmp_path / "m.db")
    store.add([
        Transaction(date(2026, 3, 2), Decimal("-20.00"), "REWE Markt GmbH"),
        Transaction(date(2026, 3, 9), Decimal("-5.50"), "REWE Markt GmbH"),
        Transaction(date(2026, 3, 9), Decimal("-9.99"), "Kino"),
    ])
    text = monthly(store, "2026-03", rules)
    assert "groceries               2      -25.50" in text
    assert "other                   1       -9.99" in text
"""

PLAIN_CSV = """\
Date,Amount,Payee,Memo
2026-03-01,-950.00,Hausverwaltung Kröger & Partner GbR,Miete März
2026-03-02,-34.80,REWE Markt GmbH,
2026-03-15,"3,412.00",ACME Software GmbH,Gehalt 03/2026
2026-03-19,-61.05,REWE Markt GmbH,
2026-03-28,-20.98,Lieferando.de,Bestellung 7731-0042
"""

ING_FIXTURE = "\n".join(ing_csv(APRIL[:8], Decimal("3104.18"), "01.05.2026 08:12", "01.04.2026 - 05.04.2026")) + "\n"

README = """\
# moneta

See where the money went: import your bank's CSV exports into a local SQLite file and get a monthly report \
per category.

```sh
pip install -e .
moneta import ~/Downloads/export.csv
moneta report --month 2026-04
```

## Categories

`rules.toml` maps categories to payee patterns; the first pattern found in a payee (lower case) wins, anything \
else is *other*.
"""

CHANGELOG = """\
# Changelog

## 0.3.0

- `moneta report` lists the five largest payments of the month.
- Transactions are stored once, however often a file is imported.

## 0.2.0

- Categories from `rules.toml`.
"""

FILES = {
    "README.md": README,
    "CHANGELOG.md": CHANGELOG,
    "pyproject.toml": PYPROJECT,
    "rules.toml": rules_toml(CATEGORIES_BEFORE),
    "src/moneta/__init__.py": '"""moneta: see where the money went."""\n\n__version__ = "0.3.0"\n',
    "src/moneta/importer.py": IMPORTER,
    "src/moneta/cli.py": CLI,
    "src/moneta/db.py": DB,
    "src/moneta/rules.py": RULES,
    "src/moneta/report.py": REPORT,
    "tests/test_importer.py": TEST_IMPORTER,
    "tests/test_report.py": TEST_REPORT,
    "tests/fixtures/plain-2026-03.csv": PLAIN_CSV,
    "tests/fixtures/ing-2026-04.csv": ING_FIXTURE,
}
