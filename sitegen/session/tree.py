"""The entry tree: id/parentId links, children by time, labels, paths and leaves, all walked iteratively."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from sitegen.session.entries import Entry, entry_time_ms

__all__ = ["SessionTree"]


@dataclass(slots=True)
class SessionTree:
    """Links between entry ids in file order; broken links (orphans, cycles) become extra roots."""

    ids: list[str]
    order: dict[str, int]
    parent: dict[str, str | None]
    children: dict[str, list[str]]
    roots: list[str]
    labels: dict[str, str]

    @classmethod
    def build(cls, entries: Sequence[Entry]) -> SessionTree:
        """Index pi-family entry dicts (id, parentId, timestamp, label entries)."""
        last: dict[str, Entry] = {}
        links: list[tuple[str, object, int | None]] = []
        for entry in entries:
            entry_id = entry.get("id")
            if isinstance(entry_id, str):
                links.append((entry_id, entry.get("parentId"), None))
                last[entry_id] = entry
        # Times only order siblings, so parse them only for entries that have siblings.
        return cls.from_links(links, _labels(entries), time_of=lambda key: entry_time_ms(last[key]))

    @classmethod
    def from_links(
        cls,
        links: Iterable[tuple[str, object, int | None]],
        labels: dict[str, str] | None = None,
        time_of: Callable[[str], int | None] | None = None,
    ) -> SessionTree:
        """Index (id, parent id, epoch ms) triples given in file order; a None time asks time_of."""
        ids: list[str] = []
        order: dict[str, int] = {}
        raw_parent: dict[str, object] = {}
        given: dict[str, int | None] = {}
        links = list(links)
        # A duplicated id keeps its last record, in that record's place (pi's and omp's index):
        # earlier copies cannot be addressed.
        last_at = {link[0]: index for index, link in enumerate(links)}
        for index, (entry_id, parent_id, ms) in enumerate(links):
            if last_at[entry_id] != index:
                continue
            order[entry_id] = len(ids)
            ids.append(entry_id)
            raw_parent[entry_id] = parent_id
            given[entry_id] = ms
        parent: dict[str, str | None] = {
            entry_id: p if isinstance(p, str) and p in order else None for entry_id, p in raw_parent.items()
        }
        # A cycle needs a parent at or after its child in file order; agents append parents first.
        if any(p is not None and order[p] >= order[entry_id] for entry_id, p in parent.items()):
            _break_cycles(parent, order)
        children: dict[str, list[str]] = {entry_id: [] for entry_id in ids}
        roots: list[str] = []
        for entry_id in ids:
            parent_id = parent[entry_id]
            (children[parent_id] if parent_id is not None else roots).append(entry_id)

        def sort_key(entry_id: str) -> tuple[int, int]:
            ms = given[entry_id]
            if ms is None and time_of is not None:
                ms = time_of(entry_id)
            return (ms if ms is not None else 0, order[entry_id])

        for kids in children.values():
            if len(kids) > 1:
                kids.sort(key=sort_key)
        if len(roots) > 1:
            roots.sort(key=sort_key)
        return cls(ids=ids, order=order, parent=parent, children=children, roots=roots, labels=labels or {})

    @property
    def default_leaf(self) -> str | None:
        """The last entry in file order, as the agents resume."""
        return self.ids[-1] if self.ids else None

    def path_to(self, leaf_id: str | None) -> list[str]:
        """Ids from the root down to leaf_id (empty if unknown)."""
        path: list[str] = []
        current = leaf_id if leaf_id in self.order else None
        while current is not None:
            path.append(current)
            current = self.parent[current]
        path.reverse()
        return path

    def newest_leaf_below(self, entry_id: str) -> str:
        """Follow the newest (last) child at each level, as the agents' tree view does."""
        current = entry_id
        while self.children.get(current):
            current = self.children[current][-1]
        return current

    def leaves(self) -> list[str]:
        return [entry_id for entry_id, kids in self.children.items() if not kids]

    def depth_first(self) -> list[tuple[str, int]]:
        """Every entry once with its depth, children in time order; a stack, not recursion."""
        result: list[tuple[str, int]] = []
        stack = [(root, 0) for root in reversed(self.roots)]
        while stack:
            entry_id, depth = stack.pop()
            result.append((entry_id, depth))
            stack.extend((kid, depth + 1) for kid in reversed(self.children[entry_id]))
        return result


def _break_cycles(parent: dict[str, str | None], order: dict[str, int]) -> None:
    """Cut each parent cycle at its earliest entry in file order, which becomes a root."""
    state: dict[str, int] = {}  # 1 = on the current walk, 2 = known to reach a root
    for start in parent:
        if start in state:
            continue
        walk: list[str] = []
        current: str | None = start
        while current is not None and current not in state:
            state[current] = 1
            walk.append(current)
            current = parent[current]
        if current is not None and state[current] == 1:
            cycle = walk[walk.index(current) :]
            parent[min(cycle, key=order.__getitem__)] = None
        for entry_id in walk:
            state[entry_id] = 2


def _labels(entries: Sequence[Entry]) -> dict[str, str]:
    """Label per target: the last label entry wins; an empty or missing label clears it."""
    labels: dict[str, str] = {}
    for entry in entries:
        if entry.get("type") != "label":
            continue
        target = entry.get("targetId")
        if not isinstance(target, str):
            continue
        label = entry.get("label")
        if isinstance(label, str) and label.strip():
            labels[target] = label
        else:
            labels.pop(target, None)
    return labels
