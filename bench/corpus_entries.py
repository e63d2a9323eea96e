"""A session's entry chain: writing entries along the current leaf, the feature schedule, tree events."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson
from corpus_basics import FEATURE_FLOOR_BYTES, LABELS, MODELS, THINKING_LEVELS, SessionInfo, iso, lognormal, token
from corpus_storage import Artifacts
from corpus_text import Vocab, bullets

if TYPE_CHECKING:
    from sitegen.session.blobs import BlobStore

__all__ = ["EntryWriter"]


@dataclass(slots=True)
class _Plan:
    """Byte offsets at which scheduled features happen next; 0 means never."""

    due: dict[str, int]
    mean: dict[str, int]


_FEATURE_MEAN_BYTES = {
    "branch": 450_000,
    "compaction": 700_000,
    "label": 200_000,
    "image": 350_000,
    "artifact": 400_000,
    "subagent": 300_000,
    "model": 600_000,
    "thinking": 300_000,
}


class EntryWriter:
    """Appends one session's entries to an open file, following the current leaf like the agents do;
    the turns that fill it come from corpus_session.SessionBuilder."""

    def __init__(
        self,
        out: BinaryIO,
        info: SessionInfo,
        *,
        rng: random.Random,
        vocab: Vocab,
        clock_ms: int,
        target_bytes: int,
        artifacts: Artifacts,
        blobs: BlobStore,
        subagents: bool = True,
        chain_depth: int = 0,
        avg_entry_bytes: int = 0,
        every: dict[str, int] | None = None,
        plain: bool = False,
    ) -> None:
        self.out = out
        self.info = info
        self.rng = rng
        self.vocab = vocab
        self.clock = clock_ms
        self.target = target_bytes
        self.artifacts = artifacts
        self.blobs = blobs
        # plain: only what pi itself writes (see write_session), so that pi-transcript reads it all.
        self.plain = plain
        self.subagents = subagents and not plain
        self.chain_depth = chain_depth
        self.avg_entry_bytes = avg_entry_bytes
        self.scale = 1.0
        self.leaf: str | None = None
        self.path: list[str] = []
        self.kinds: list[str] = []  # parallel to path: "user", "assistant", "compaction", ...
        self.ids: set[str] = set()
        self.model = rng.choice(MODELS)
        self.thinking = rng.choice(THINKING_LEVELS[1:])
        self.context_tokens = 0
        self.marker_bytes = 0
        feature = target_bytes >= FEATURE_FLOOR_BYTES
        self.plan = _Plan(
            due={name: int(target_bytes * rng.uniform(0.15, 0.85)) if feature else 0 for name in _FEATURE_MEAN_BYTES},
            mean=dict(_FEATURE_MEAN_BYTES),
        )
        # Features asked for at a set rate (mean bytes between two) start at once, not part way in, and
        # keep their rate: one that falls due between two chances to happen is not lost (see due).
        self.paced = frozenset(every or ())
        for name, mean in sorted((every or {}).items()):
            self.plan.mean[name] = mean
            self.plan.due[name] = max(1, int(rng.expovariate(1 / mean)))

    # -- writing

    def write_line(self, record: dict[str, Any]) -> None:
        line = orjson.dumps(record) + b"\n"
        self.out.write(line)
        self.info.bytes += len(line)

    def _new_id(self) -> str:
        while True:
            entry_id = token(self.rng, 8, "0123456789abcdef")
            if entry_id not in self.ids:
                self.ids.add(entry_id)
                return entry_id

    def append(self, kind: str, fields: dict[str, Any], role: str = "") -> str:
        entry_id = self._new_id()
        record = {"type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": iso(self.clock), **fields}
        self.write_line(record)
        self.info.entries += 1
        self.leaf = entry_id
        self.path.append(entry_id)
        self.kinds.append(role or kind)
        return entry_id

    def tick(self, low: float, high: float) -> int:
        self.clock += int(self.rng.uniform(low, high) * 1000)
        return self.clock

    def due(self, name: str) -> bool:
        """Whether a scheduled feature is due now; if so, schedule its next occurrence."""
        at = self.plan.due[name]
        if at <= 0 or self.info.bytes < at:
            return False
        start = at if name in self.paced else self.info.bytes
        self.plan.due[name] = start + max(1, int(self.rng.expovariate(1 / self.plan.mean[name])))
        return True

    # -- markers

    def deepen(self, final: bool = False) -> None:
        """Add small marker entries until the chain is as deep as its share of the target asks."""
        if not self.chain_depth:
            return
        share = 1.0 if final else min(1.0, self.info.bytes / self.target)
        wanted = int(self.chain_depth * share) + (0 if final else 1)
        while len(self.path) < wanted:
            before = self.info.bytes
            kind = self.rng.random()
            if kind < 0.7:
                self.append("custom", {"customType": "checkpoint", "data": {"seq": self.info.markers}})
            elif kind < 0.9:
                self.append("custom", {"customType": "lsp-status", "data": {"errors": self.rng.randint(0, 3)}})
            else:
                self.append("ttsr_injection", {"injectedRules": [f"rule-{self.rng.randint(0, 12)}"]})
            self.info.markers += 1
            self.marker_bytes += self.info.bytes - before

    # -- session events

    def model_change(self) -> None:
        self.model = self.rng.choice(MODELS)
        if self.rng.random() < 0.5 and not self.plain:
            fields: dict[str, Any] = {"model": f"{self.model.provider}/{self.model.model}", "role": "default"}
        else:
            fields = {"provider": self.model.provider, "modelId": self.model.model}
        self.tick(0.5, 20)
        self.append("model_change", fields)
        self.info.model_changes += 1

    def thinking_change(self) -> None:
        self.thinking = self.rng.choice(THINKING_LEVELS)
        self.tick(0.5, 20)
        self.append("thinking_level_change", {"thinkingLevel": self.thinking})
        self.info.thinking_changes += 1

    def _recent_users(self, limit: int) -> list[int]:
        """Path positions of the latest user messages after the latest compaction, newest first."""
        found: list[int] = []
        for position in range(len(self.kinds) - 1, -1, -1):
            kind = self.kinds[position]
            if kind == "compaction":
                break
            if kind == "user":
                found.append(position)
                if len(found) >= limit:
                    break
        return found

    def branch(self) -> None:
        """Go back to before a recent user message (or the root) and continue from there."""
        users = self._recent_users(4)
        if not users:
            return
        position = self.rng.choice(users) - 1
        # Branching from the very first entry's parent is a branch from the root.
        target = self.path[position] if position >= 0 else None
        del self.path[position + 1 :]
        del self.kinds[position + 1 :]
        self.leaf = target
        self.info.branches += 1
        self.tick(5, 120)
        if self.rng.random() < 0.65:
            summary = f"## Abandoned approach\n\n{self.vocab.paragraph(self.rng, self.rng.randint(2, 6))}"
            fields: dict[str, Any] = {"fromId": target if target is not None else "root", "summary": summary}
            if self.rng.random() < 0.5:
                fields["details"] = {"readFiles": self.rng.sample(self.vocab.files, 3)}
            self.append("branch_summary", fields)
            self.info.branch_summaries += 1

    def compaction(self) -> None:
        users = self._recent_users(3)
        if len(users) < 2:
            return
        first_kept = self.path[self.rng.choice(users[1:])]
        rng, vocab = self.rng, self.vocab
        summary = "\n\n".join(
            [
                "# Context Checkpoint",
                f"## Goal\n\n{vocab.paragraph(rng, rng.randint(1, 3))}",
                f"## Progress\n\n{bullets(rng, vocab, rng.randint(3, 10))}",
                f"## Key files\n\n{bullets(rng, vocab, rng.randint(2, 6))}",
                f"## Next steps\n\n{bullets(rng, vocab, rng.randint(1, 5), numbered=True)}",
            ]
        )
        self.tick(10, 60)
        self.append(
            "compaction",
            {
                "summary": summary,
                "shortSummary": rng.choice(vocab.prose),
                "firstKeptEntryId": first_kept,
                "tokensBefore": self.context_tokens,
                "details": {
                    "readFiles": rng.sample(vocab.files, 4),
                    "modifiedFiles": rng.sample(vocab.files, 2),
                },
                "fromExtension": False,
            },
        )
        self.context_tokens = len(summary) // 4
        self.info.compactions += 1

    def label(self) -> None:
        if not self.path:
            return
        target = self.path[self.rng.randrange(max(0, len(self.path) - 40), len(self.path))]
        fields: dict[str, Any] = {"targetId": target}
        # Now and then a label is cleared: the entry then carries no label at all.
        if self.rng.random() < 0.85:
            fields["label"] = self.rng.choice(LABELS)
        self.tick(1, 30)
        self.append("label", fields)
        self.info.labels += 1

    def bash_execution(self) -> None:
        output = self.vocab.log_text(self.rng, lognormal(self.rng, 500, 1.2, 40_000))
        self.tick(1, 60)
        message = {
            "role": "bashExecution",
            "command": f"git log --oneline -n {self.rng.randint(5, 40)}",
            "output": output + "\n",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": self.clock,
        }
        self.append("message", {"message": message}, role="bashExecution")
