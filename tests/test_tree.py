"""The entry tree: children by time, the default leaf, labels, paths, and walks that survive bad links."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from sessions import shallow_stack

from sitegen.session.session import open_session
from sitegen.session.tree import SessionTree

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"
EPOCH = datetime(2026, 3, 1, tzinfo=UTC)


def entry(entry_id: str, parent: str | None, second: int | None, **extra: Any) -> dict[str, Any]:
    e: dict[str, Any] = {"type": "message", "id": entry_id, "parentId": parent, **extra}
    if second is not None:
        e["timestamp"] = (EPOCH + timedelta(seconds=second)).isoformat().replace("+00:00", "Z")
    e.setdefault("message", {"role": "user", "content": entry_id})
    return e


def label(entry_id: str, parent: str | None, second: int, target: str, text: object = None) -> dict[str, Any]:
    e = entry(entry_id, parent, second, type="label", targetId=target)
    del e["message"]
    if text is not None:
        e["label"] = text
    return e


# --- the seed file ----------------------------------------------------------------------------------


def test_seed_tree_shape() -> None:
    tree = open_session(FIXTURES / "seed_v3.jsonl").tree
    assert tree.roots == ["a1b2c3d4"]
    # The model_change (10:21:30) is older than the branch_summary (10:24:00).
    assert tree.children["a1b2c3d4"] == ["b1c2d3e4", "e1f2a3b4"]
    assert tree.default_leaf == "e2f3a4b5"
    assert tree.labels == {"a1b2c3d4": "checkpoint"}
    assert sorted(tree.leaves()) == ["d1e2f3a4", "e2f3a4b5"]
    assert tree.path_to("d1e2f3a4") == ["a1b2c3d4", "b1c2d3e4", "c1d2e3f4", "d1e2f3a4"]
    assert tree.newest_leaf_below("a1b2c3d4") == "e2f3a4b5"
    assert tree.newest_leaf_below("b1c2d3e4") == "d1e2f3a4"


def test_seed_depth_first() -> None:
    tree = open_session(FIXTURES / "seed_v3.jsonl").tree
    assert tree.depth_first() == [
        ("a1b2c3d4", 0),
        ("b1c2d3e4", 1),
        ("c1d2e3f4", 2),
        ("d1e2f3a4", 3),
        ("e1f2a3b4", 1),
        ("f1a2b3c4", 2),
        ("a2b3c4d5", 3),
        ("b2c3d4e5", 4),
        ("c2d3e4f5", 5),
        ("d2e3f4a5", 6),
        ("e2f3a4b5", 7),
    ]


# --- order, leaf, labels ----------------------------------------------------------------------------


def test_children_are_ordered_by_timestamp_not_file_order() -> None:
    tree = SessionTree.build(
        [
            entry("root", None, 0),
            entry("late", "root", 30),
            entry("early", "root", 10),
            entry("middle", "root", 20),
        ]
    )
    assert tree.children["root"] == ["early", "middle", "late"]
    assert tree.newest_leaf_below("root") == "late"


def test_timestamp_ties_keep_file_order() -> None:
    tree = SessionTree.build(
        [entry("root", None, 0), entry("b", "root", 5), entry("a", "root", 5), entry("c", "root", 5)]
    )
    assert tree.children["root"] == ["b", "a", "c"]


def test_roots_are_ordered_by_timestamp_too() -> None:
    tree = SessionTree.build([entry("r2", None, 20), entry("r1", None, 10)])
    assert tree.roots == ["r1", "r2"]
    assert [i for i, _ in tree.depth_first()] == ["r1", "r2"]


def test_default_leaf_is_the_last_entry_in_file_order() -> None:
    # The last line sits on an older, shallower branch: it is still the leaf the agents resume.
    entries = [
        entry("root", None, 0),
        entry("deep1", "root", 10),
        entry("deep2", "deep1", 20),
        entry("deep3", "deep2", 30),
        entry("side", "root", 5),
    ]
    tree = SessionTree.build(entries)
    assert tree.default_leaf == "side"
    assert tree.path_to(tree.default_leaf) == ["root", "side"]
    assert SessionTree.build([]).default_leaf is None


def test_labels_last_wins_and_empty_or_missing_clears() -> None:
    entries = [
        entry("a", None, 0),
        entry("b", "a", 1),
        entry("c", "b", 2),
        label("l1", "c", 3, "a", "first"),
        label("l2", "l1", 4, "a", "ZZ_SECOND_ZZ"),
        label("l3", "l2", 5, "b", "keep-me"),
        label("l4", "l3", 6, "c", "gone-soon"),
        label("l5", "l4", 7, "c", ""),
        label("l6", "l5", 8, "b", "cleared-next"),
        label("l7", "l6", 9, "b"),
    ]
    tree = SessionTree.build(entries)
    assert tree.labels == {"a": "ZZ_SECOND_ZZ"}


def test_label_set_again_after_clearing() -> None:
    entries = [
        entry("a", None, 0),
        label("l1", "a", 1, "a", "x"),
        label("l2", "l1", 2, "a"),
        label("l3", "l2", 3, "a", "y"),
    ]
    assert SessionTree.build(entries).labels == {"a": "y"}


def test_path_to_unknown_or_none_is_empty() -> None:
    tree = SessionTree.build([entry("a", None, 0)])
    assert tree.path_to("nope") == []
    assert tree.path_to(None) == []
    assert tree.path_to("a") == ["a"]


def test_entries_without_timestamps_or_ids() -> None:
    entries = [entry("a", None, None), {"type": "message", "message": {}}, entry("b", "a", None)]
    tree = SessionTree.build(entries)
    assert tree.ids == ["a", "b"]
    assert tree.children["a"] == ["b"]


def test_duplicate_id_keeps_the_last_entry() -> None:
    # pi's and omp's index: the last record of an id is the entry, in its own place in the file.
    tree = SessionTree.build([entry("a", None, 0), entry("b", "a", 1), entry("a", "b", 2)])
    assert tree.ids == ["b", "a"]
    # b's parent is the last "a", whose parent is b: the cycle is cut at b, the earliest in file order.
    assert tree.parent == {"b": None, "a": "b"}
    assert tree.depth_first() == [("b", 0), ("a", 1)]
    assert tree.default_leaf == "a"


# --- deep chains, cycles, orphans -------------------------------------------------------------------

DEPTH = 30_000


def chain(n: int) -> list[dict[str, Any]]:
    return [entry(f"c{i:07d}", f"c{i - 1:07d}" if i else None, i) for i in range(n)]


def test_a_30000_deep_chain_needs_no_recursion() -> None:
    entries = chain(DEPTH)
    last = f"c{DEPTH - 1:07d}"
    with shallow_stack():
        tree = SessionTree.build(entries)
        path = tree.path_to(last)
        walk = tree.depth_first()
        leaf = tree.newest_leaf_below("c0000000")
        leaves = tree.leaves()
    assert len(path) == DEPTH
    assert path[0] == "c0000000" and path[-1] == last
    assert len(walk) == DEPTH
    assert walk[-1] == (last, DEPTH - 1)
    assert leaf == last
    assert leaves == [last]
    assert tree.default_leaf == last


def test_a_30000_deep_chain_opens_from_disk(tmp_path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "deep", "timestamp": "2026-03-01T00:00:00.000Z"}
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [header, *chain(DEPTH)]))
    with shallow_stack():
        session = open_session(path)
        walk = session.tree.depth_first()
    assert len(walk) == DEPTH
    assert session.tree.roots == ["c0000000"]


def test_a_deep_chain_on_a_low_recursion_limit_would_break_a_recursive_walk() -> None:
    # Guards the guard: the helper really does make recursion of this depth fail.
    def down(n: int) -> int:
        return 0 if n == 0 else 1 + down(n - 1)

    with shallow_stack(), pytest.raises(RecursionError):
        down(1000)


def test_cycles_and_orphans_terminate_and_every_entry_appears_once() -> None:
    entries = [
        entry("root", None, 0),
        entry("kid", "root", 1),
        # A two-cycle with a tail hanging off it.
        entry("x", "y", 2),
        entry("y", "x", 3),
        entry("x-tail", "x", 4),
        # A self-loop.
        entry("self", "self", 5),
        # A three-cycle.
        entry("p", "r", 6),
        entry("q", "p", 7),
        entry("r", "q", 8),
        # Orphans: parents that do not exist, or are not strings.
        entry("orphan", "missing", 9),
        entry("orphan-kid", "orphan", 10),
        entry("weird", None, 11, parentId=42),
    ]
    with shallow_stack():
        tree = SessionTree.build(entries)
        walk = tree.depth_first()
        paths = {i: tree.path_to(i) for i in tree.ids}
        newest = {i: tree.newest_leaf_below(i) for i in tree.ids}
    ids = [e["id"] for e in entries]
    assert sorted(i for i, _ in walk) == sorted(ids)
    assert len(walk) == len(ids)
    for entry_id, path in paths.items():
        assert path[-1] == entry_id
        assert len(path) == len(set(path))
        assert tree.parent[path[0]] is None
    assert all(n in tree.leaves() for n in newest.values())
    # A cycle is cut at its first entry in file order, which becomes a root.
    assert tree.parent["x"] is None and tree.parent["y"] == "x"
    assert tree.parent["self"] is None
    assert tree.parent["p"] is None and tree.parent["q"] == "p" and tree.parent["r"] == "q"
    assert tree.parent["orphan"] is None and tree.parent["orphan-kid"] == "orphan"
    assert tree.parent["weird"] is None
    assert set(tree.roots) == {"root", "x", "self", "p", "orphan", "weird"}


def test_a_30000_long_cycle_terminates() -> None:
    entries = chain(DEPTH)
    entries[0]["parentId"] = entries[-1]["id"]
    with shallow_stack():
        tree = SessionTree.build(entries)
        walk = tree.depth_first()
    assert len(walk) == DEPTH
    assert tree.roots == ["c0000000"]
