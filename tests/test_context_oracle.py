"""sitegen's context equals the writing agent's own at every entry: omp 18.3.4's buildSessionContext for
omp's files, pi 0.73.1's for the others (their code run, never copied: tests/oracle_support.py). Skipped
where the oracles cannot be had (no ../shared, no npm, not linux-x64 for omp's bun)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from context_rule_files import OMP_RULE_FILES, OTHER_RULE_FILES, RuleFile
from oracle_support import comparable, omp_oracle, pi_oracle, run_omp, run_pi, sitegen_contexts

from sitegen.session.context import OMP_RULES, PI_RULES

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"
# The suite's fixture files the agents can read (the others are not sessions, or broken on purpose).
FIXTURE_FILES = [
    "seed_v3.jsonl",
    "omp_extra_types.jsonl",
    "title_slot.jsonl",
    "pi_variants.jsonl",
    "v1_compaction.jsonl",
    "v2_hook_message.jsonl",
    # Not unknown_types.jsonl: pi passes a "message" that is a string on to the model, sitegen drops it.
    # Not malformed_lines.jsonl: pi keeps a line "[1, 2, 3]" as an entry, which shifts its entries.
]


def _files(root: Path, makers: list[Callable[[], RuleFile]], real: Path | None) -> list[Path]:
    files = [make().write(root) for make in makers]
    files += [FIXTURES / name for name in FIXTURE_FILES]
    if real is not None:
        files += sorted(real.glob("*.jsonl"))
    return files


def _real() -> Path | None:
    from conftest import REAL_FIXTURES

    return REAL_FIXTURES if REAL_FIXTURES.is_dir() else None


def _by_rules(files: list[Path]) -> dict[str, list[tuple[Path, dict[str, Any]]]]:
    grouped: dict[str, list[tuple[Path, dict[str, Any]]]] = {OMP_RULES: [], PI_RULES: []}
    for path in files:
        ours = sitegen_contexts(path)
        grouped[ours["rules"]].append((path, ours))
    return grouped


def _compare(path: Path, ours: dict[str, Any], theirs: dict[str, Any], rules: str) -> tuple[int, int]:
    """Every entry's context by signature, every leaf's whole; returns (entries, leaves) compared."""
    assert theirs["entryCount"] == ours["entryCount"], path
    assert theirs["defaultLeaf"] == ours["defaultLeaf"], path
    differing = [i for i, (a, b) in enumerate(zip(ours["signatures"], theirs["signatures"], strict=True)) if a != b]
    assert differing == [], (path.name, differing[:10])
    assert sorted(theirs["leaves"]) == sorted(ours["leaves"]), path
    for leaf, context in theirs["leaves"].items():
        assert comparable(ours["leaves"][leaf], rules) == comparable(context, rules), (path.name, leaf)
    return len(ours["signatures"]), len(ours["leaves"])


def _compare_all(files: list[tuple[Path, dict[str, Any]]], results: list[dict[str, Any]], rules: str) -> dict[str, Any]:
    """Compare each file; files the agent itself cannot open are listed apart, as "failed"."""
    summary: dict[str, Any] = {"files": 0, "entries": 0, "leaves": 0, "failed": []}
    for (path, ours), theirs in zip(files, results, strict=True):
        if "error" in theirs:
            summary["failed"].append(path.name)
            continue
        entries, leaves = _compare(path, ours, theirs, rules)
        summary["files"] += 1
        summary["entries"] += entries
        summary["leaves"] += leaves
    return summary


@pytest.fixture(scope="module")
def grouped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[Path, dict[str, Any]]]]:
    root = tmp_path_factory.mktemp("oracle-files")
    return _by_rules(_files(root, [*OMP_RULE_FILES, *OTHER_RULE_FILES], _real()))


def test_omp_files_match_omp_at_every_entry(
    grouped: dict[str, list[tuple[Path, dict[str, Any]]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if omp_oracle() is None:
        pytest.skip("omp 18.3.4 oracle not available (../shared/oracles/omp, npm, linux-x64)")
    files = grouped[OMP_RULES]
    names = {path.name for path, _ in files}
    assert {f"{make.__name__}.jsonl" for make in OMP_RULE_FILES} - {"title_slot.jsonl"} <= names | {
        "title_slot_rules.jsonl"
    }
    assert "title_slot_rules.jsonl" in names and "seed_v3.jsonl" in names
    results = run_omp([path for path, _ in files], tmp_path)
    summary = _compare_all(files, results, OMP_RULES)
    # omp itself throws on an assistant usage without cost (omp_extra_types' model_usage entry).
    assert summary.pop("failed") == ["omp_extra_types.jsonl"]
    with capsys.disabled():
        print(f"\nomp 18.3.4: {summary}")


def test_other_files_match_pi_at_every_entry(
    grouped: dict[str, list[tuple[Path, dict[str, Any]]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if pi_oracle() is None:
        pytest.skip("pi 0.73.1 not available (npm)")
    files = grouped[PI_RULES]
    assert {"duplicate_ids.jsonl", "empty_branch_summary.jsonl", "pi_variants.jsonl"} <= {p.name for p, _ in files}
    results = run_pi([path for path, _ in files], tmp_path)
    summary = _compare_all(files, results, PI_RULES)
    assert summary.pop("failed") == []
    with capsys.disabled():
        print(f"\npi 0.73.1: {summary}")
