"""moneta's bank data: a year of one account, the April fixture, and the commands' outputs computed from them."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

CATEGORIES_BEFORE = {
    "groceries": ["rewe", "edeka", "aldi", "lidl", "bäckerei"],
    "rent": ["hausverwaltung"],
    "transport": ["db vertrieb", "bvg", "shell"],
    "eating-out": ["lieferando", "pizzeria"],
    "subscriptions": ["spotify", "netflix", "hetzner"],
}
# What session A adds after the user's "all of them except amazon".
CATEGORIES_AFTER = {
    **CATEGORIES_BEFORE,
    "transport": ["db vertrieb", "bvg", "shell", "lvb", "nextbike"],
    "eating-out": ["lieferando", "pizzeria", "café"],
    "subscriptions": ["spotify", "netflix", "hetzner", "apple services"],
    "utilities": ["stadtwerke"],
    "household": ["dm-drogerie", "apotheke"],
}

RENT = "Hausverwaltung Kröger & Partner GbR"
AMAZON = "Amazon EU S.a.r.l., Niederlassung Deutschland"


@dataclass(frozen=True)
class Tx:
    day: date
    payee: str
    kind: str  # ING's Buchungstext
    memo: str
    amount: Decimal


def _d(text: str) -> Decimal:
    return Decimal(text)


# April 2026 as it is in the user's database: the month every report in the demo shows.
_APRIL = [
    ("01", RENT, "Dauerauftrag", "Miete Wohnung 3.OG links", "-950.00"),
    ("01", "Spotify AB", "Lastschrift", "Spotify Premium P2A7F1C09E", "-10.99"),
    ("02", "LVB Leipziger Verkehrsbetriebe", "Lastschrift", "ABO Leipzig Jobticket 04/26", "-58.00"),
    ("02", "REWE Markt GmbH", "Lastschrift", "REWE SAGT DANKE 41872", "-34.12"),
    ("03", "Bäckerei Müller", "Lastschrift", "VISA Debitkarte 4871", "-6.40"),
    ("03", "Netflix International B.V.", "Lastschrift", "Netflix Monthly 04/2026", "-13.99"),
    ("04", "EDEKA Center Gohlis", "Lastschrift", "EDEKA SAGT DANKE", "-22.85"),
    ("05", "Lieferando.de", "Lastschrift", "Bestellung 8817-2290", "-23.40"),
    ("06", "Lidl Vertriebs GmbH", "Lastschrift", "LIDL DIENSTL. 5523", "-17.46"),
    ("07", "REWE Markt GmbH", "Lastschrift", "REWE SAGT DANKE 41872", "-48.90"),
    ("07", "dm-drogerie markt", "Lastschrift", "DM FIL. 1794", "-18.35"),
    ("08", "Bäckerei Müller", "Lastschrift", "VISA Debitkarte 4871", "-4.80"),
    ("09", AMAZON, "Lastschrift", "302-7719921-4410382 Amazon.de", "-118.99"),
    ("10", "DB Vertrieb GmbH", "Lastschrift", "Fahrkarte 8472 1102 Leipzig-Halle", "-12.90"),
    ("10", "Stadtwerke Leipzig GmbH", "Lastschrift", "Abschlag Strom 04/2026 Vertrag 771204", "-74.00"),
    ("11", "REWE Markt GmbH", "Lastschrift", "REWE SAGT DANKE 41872", "-71.34"),
    ("12", "Pizzeria Da Enzo", "Lastschrift", "VISA Debitkarte 4871", "-31.50"),
    ("13", "Bäckerei Müller", "Lastschrift", "VISA Debitkarte 4871", "-7.20"),
    ("14", "nextbike GmbH", "Lastschrift", "nextbike Fahrt 14.04.", "-3.00"),
    ("14", "EDEKA Center Gohlis", "Lastschrift", "EDEKA SAGT DANKE", "-15.27"),
    ("15", "ACME Software GmbH", "Gehalt/Rente", "Lohn/Gehalt 04/2026", "3412.00"),
    ("15", "Apple Services", "Lastschrift", "APPLE.COM/BILL iCloud+ 200 GB", "-12.99"),
    ("16", "REWE Markt GmbH", "Lastschrift", "REWE SAGT DANKE 41872", "-27.63"),
    ("17", "Bäckerei Müller", "Lastschrift", "VISA Debitkarte 4871", "-5.90"),
    ("17", "Apotheke am Markt", "Lastschrift", "VISA Debitkarte 4871", "-12.48"),
    ("18", "Lidl Vertriebs GmbH", "Lastschrift", "LIDL DIENSTL. 5523", "-21.07"),
    ("19", "nextbike GmbH", "Lastschrift", "nextbike Fahrt 19.04.", "-2.00"),
    ("19", "Café Kandler", "Lastschrift", "VISA Debitkarte 4871", "-9.80"),
    ("20", "Lieferando.de", "Lastschrift", "Bestellung 9104-5521", "-18.90"),
    ("21", "REWE Markt GmbH", "Lastschrift", "REWE SAGT DANKE 41872", "-39.74"),
    ("22", "Möbelhaus Höffner", "Lastschrift", "Kauf 22.04. Filiale 114", "-289.00"),
    ("22", "Hetzner Online GmbH", "Lastschrift", "Rechnung R0021874411", "-5.00"),
    ("23", "EDEKA Center Gohlis", "Lastschrift", "EDEKA SAGT DANKE", "-19.06"),
    ("24", "Bäckerei Müller", "Lastschrift", "VISA Debitkarte 4871", "-6.10"),
    ("24", AMAZON, "Lastschrift", "302-1184410-2209174 Amazon.de", "-23.49"),
    ("25", "DB Vertrieb GmbH", "Lastschrift", "Fahrkarte 8472 1187 Leipzig-Berlin", "-59.90"),
    ("25", "REWE Markt GmbH", "Lastschrift", "REWE SAGT DANKE 41872", "-42.18"),
    ("26", "Pizzeria Da Enzo", "Lastschrift", "VISA Debitkarte 4871", "-12.90"),
    ("27", "nextbike GmbH", "Lastschrift", "nextbike Fahrt 27.04.", "-7.40"),
    ("27", "Eventim", "Lastschrift", "Tickets Moritzbastei 16.05.", "-44.00"),
    ("28", "Lidl Vertriebs GmbH", "Lastschrift", "LIDL DIENSTL. 5523", "-13.92"),
    ("28", "dm-drogerie markt", "Lastschrift", "DM FIL. 1794", "-9.65"),
    ("29", "Bäckerei Müller", "Lastschrift", "VISA Debitkarte 4871", "-5.20"),
    ("29", "REWE Markt GmbH", "Lastschrift", "REWE SAGT DANKE 41872", "-30.17"),
    ("30", "EDEKA Center Gohlis", "Lastschrift", "EDEKA SAGT DANKE", "-11.28"),
]
APRIL = [Tx(date(2026, 4, int(d)), p, k, m, _d(a)) for d, p, k, m, a in _APRIL]

# Everyday payments of the other months: payee, Buchungstext, memo, typical amount range in cents.
_EVERYDAY = [
    ("REWE Markt GmbH", "REWE SAGT DANKE 41872", 1200, 7500, 7),
    ("EDEKA Center Gohlis", "EDEKA SAGT DANKE", 800, 4000, 4),
    ("Lidl Vertriebs GmbH", "LIDL DIENSTL. 5523", 900, 3500, 3),
    ("Bäckerei Müller", "VISA Debitkarte 4871", 350, 900, 6),
    ("dm-drogerie markt", "DM FIL. 1794", 500, 3000, 2),
    ("Lieferando.de", "Bestellung", 1500, 4200, 2),
    ("Pizzeria Da Enzo", "VISA Debitkarte 4871", 1100, 4800, 1),
    ("nextbike GmbH", "nextbike Fahrt", 100, 800, 2),
    ("DB Vertrieb GmbH", "Fahrkarte Leipzig", 990, 5990, 1),
    (AMAZON, "Amazon.de", 900, 9900, 2),
    ("Café Kandler", "VISA Debitkarte 4871", 450, 1400, 1),
]
_MONTHLY = [
    (1, RENT, "Dauerauftrag", "Miete Wohnung 3.OG links", "-950.00"),
    (1, "Spotify AB", "Lastschrift", "Spotify Premium", "-10.99"),
    (2, "LVB Leipziger Verkehrsbetriebe", "Lastschrift", "ABO Leipzig Jobticket", "-58.00"),
    (3, "Netflix International B.V.", "Lastschrift", "Netflix Monthly", "-13.99"),
    (10, "Stadtwerke Leipzig GmbH", "Lastschrift", "Abschlag Strom Vertrag 771204", "-74.00"),
    (15, "ACME Software GmbH", "Gehalt/Rente", "Lohn/Gehalt", "3412.00"),
    (15, "Apple Services", "Lastschrift", "APPLE.COM/BILL iCloud+ 200 GB", "-12.99"),
    (22, "Hetzner Online GmbH", "Lastschrift", "Rechnung", "-5.00"),
]


def year_export() -> list[Tx]:
    """May 2025 to April 2026 of the giro account, oldest first: what ING's yearly CSV holds."""
    rng = random.Random(20260503)
    txs: list[Tx] = []
    month = date(2025, 5, 1)
    while month < date(2026, 4, 1):
        days = ((month.replace(day=28) + timedelta(days=4)).replace(day=1) - month).days
        for day, payee, kind, memo, amount in _MONTHLY:
            stamp = f" {month.month:02d}/{month.year}" if kind != "Dauerauftrag" else ""
            txs.append(Tx(month.replace(day=day), payee, kind, memo + stamp, _d(amount)))
        for payee, memo, low, high, per_month in _EVERYDAY:
            for _ in range(per_month + rng.randint(-1, 1)):
                cents = rng.randint(low, high)
                txs.append(
                    Tx(month.replace(day=rng.randint(1, days)), payee, "Lastschrift", memo, -Decimal(cents) / 100)
                )
        month = month.replace(day=days) + timedelta(days=1)
    txs.sort(key=lambda t: t.day)
    return txs + APRIL


def german(amount: Decimal) -> str:
    """1.234,56 as ING writes it."""
    return f"{amount:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".")


ING_HEADER = "Buchung;Valuta;Auftraggeber/Empfänger;Buchungstext;Verwendungszweck;Saldo;Währung;Betrag;Währung"


def ing_csv(txs: list[Tx], opening: Decimal, created: str, period: str) -> list[str]:
    """ING's export: account facts, a blank line, the header, then the newest booking first with its balance."""
    balance = opening
    rows: list[str] = []
    for tx in txs:
        balance += tx.amount
        day = tx.day.strftime("%d.%m.%Y")
        rows.append(f"{day};{day};{tx.payee};{tx.kind};{tx.memo};{german(balance)};EUR;{german(tx.amount)};EUR")
    return [
        f"Umsatzanzeige;Datei erstellt am: {created}",
        "",
        "IBAN;DE12 5001 0517 0648 4898 90",
        "Kontoname;Girokonto",
        "Bank;ING",
        "Kunde;Mira Okafor",
        f"Zeitraum;{period}",
        f"Saldo;{german(balance)};EUR",
        "",
        ING_HEADER,
        *reversed(rows),
    ]


def verbose_import(txs: list[Tx]) -> list[str]:
    """`moneta import -v`: every row as the file lists it (newest first), then the count."""
    lines = [f"{t.day}  {t.amount:>10}  {t.payee}" for t in reversed(txs)]
    return [*lines, f"imported {len(txs)} of {len(txs)} transactions (0 already known)"]


def categorize(payee: str, rules: dict[str, list[str]]) -> str:
    lowered = payee.lower()
    for category, patterns in rules.items():
        if any(p in lowered for p in patterns):
            return category
    return "other"


def report(txs: list[Tx], rules: dict[str, list[str]], payee_width: int | None = 30) -> str:
    """`moneta report --month 2026-04`; payee_width None is the fixed report (names cut with an ellipsis)."""
    spent = [t for t in txs if t.amount < 0]
    totals: dict[str, Decimal] = defaultdict(Decimal)
    counts: dict[str, int] = defaultdict(int)
    for tx in spent:
        category = categorize(tx.payee, rules)
        totals[category] += tx.amount
        counts[category] += 1
    lines = ["moneta report · 2026-04", "", f"{'category':<16}{'payments':>9}{'total':>12}"]
    for category, total in sorted(totals.items(), key=lambda item: item[1]):
        lines.append(f"{category:<16}{counts[category]:>9}{total:>12,.2f}")
    lines += ["", "largest payments"]
    for tx in sorted(spent, key=lambda t: t.amount)[:5]:
        if payee_width is None:
            name = tx.payee if len(tx.payee) <= 30 else tx.payee[:29] + "…"
            lines.append(f"  {tx.day}  {name:<30}{tx.amount:>10,.2f}")
        else:
            lines.append(f"  {tx.day}  {tx.payee:<{payee_width}}{tx.amount:>10,.2f}")
    return "\n".join(lines)


def uncategorized(txs: list[Tx], rules: dict[str, list[str]]) -> str:
    """The sqlite3 query session A runs: April's payees that fall into "other", by count."""
    groups: dict[str, list[Decimal]] = defaultdict(list)
    for tx in txs:
        if tx.amount < 0 and categorize(tx.payee, rules) == "other":
            groups[tx.payee].append(tx.amount)
    rows = sorted(groups.items(), key=lambda item: (-len(item[1]), sum(item[1]), item[0]))
    width = max(len(p) for p in groups)
    lines = [f"{'payee':<{width}}  n  total", f"{'-' * width}  -  -------"]
    lines += [f"{p:<{width}}  {len(a)}  {sum(a):.2f}" for p, a in rows]
    return "\n".join(lines)
