"""build_session_context: what the model saw at a leaf, by the rules of the agent that wrote the file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from sitegen.session.entries import Entry, iso_to_ms

__all__ = [
    "LAST_ENTRY",
    "OMP_RULES",
    "PI_RULES",
    "SessionContext",
    "branch_summary_message",
    "build_session_context",
    "model_of_change",
    "path_to_leaf",
    "view_marks",
]

# Whose buildSessionContext the context follows: the page and `context --json` name them.
PI_RULES: Final = "pi 0.73"
OMP_RULES: Final = "omp 18"


class _LastEntry:
    """Sentinel: no leaf given, so the last entry is the leaf (None means an empty context)."""

    def __repr__(self) -> str:
        return "LAST_ENTRY"


LAST_ENTRY: Final = _LastEntry()


@dataclass(slots=True)
class SessionContext:
    leaf_id: str | None
    messages: list[dict[str, Any]] = field(default_factory=list)
    # None where a file's thinking_level_change says null and pi keeps it (omp reads it as "off").
    thinking_level: str | None = "off"
    models: dict[str, str] = field(default_factory=dict)
    injected_ttsr_rules: list[str] = field(default_factory=list)
    mode: str = "none"
    mode_data: Any = None
    # omp only: the thinking selector chosen (e.g. "auto") and the service tier per provider family.
    configured_thinking_level: str | None = None
    service_tier: dict[str, str] | None = None
    rules: str = PI_RULES
    # The entry each message came from (a compaction for its summary), for the page's view and tests.
    entry_ids: list[str | None] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = {
            "rules": self.rules,
            "leafId": self.leaf_id,
            "messages": self.messages,
            "thinkingLevel": self.thinking_level,
            "models": self.models,
            "injectedTtsrRules": self.injected_ttsr_rules,
            "mode": self.mode,
            "modeData": self.mode_data,
        }
        if self.configured_thinking_level is not None:
            data["configuredThinkingLevel"] = self.configured_thinking_level
        if self.service_tier is not None:
            data["serviceTier"] = self.service_tier
        return data


def model_of_change(entry: Entry) -> str | None:
    """The model a model_change names: omp's "provider/id", or pi's provider + modelId."""
    model = entry.get("model")
    if isinstance(model, str) and model:
        return model
    model_id = entry.get("modelId")
    if isinstance(model_id, str) and model_id:
        provider = entry.get("provider")
        return f"{provider}/{model_id}" if isinstance(provider, str) and provider else model_id
    return None


def branch_summary_message(entry: Entry) -> dict[str, Any] | None:
    """A branch summary as the model reads it; an empty summary is skipped by pi and omp alike."""
    summary = entry.get("summary")
    if not summary:
        return None
    return {
        "role": "branchSummary",
        "summary": summary,
        "fromId": entry.get("fromId"),
        "timestamp": iso_to_ms(entry.get("timestamp")),
    }


def _context_message(entry: Entry) -> dict[str, Any] | None:
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        return message if isinstance(message, dict) else None
    if kind == "custom_message":
        return {
            "role": "custom",
            "customType": entry.get("customType"),
            "content": entry.get("content"),
            "display": entry.get("display"),
            "details": entry.get("details"),
            "timestamp": iso_to_ms(entry.get("timestamp")),
        }
    if kind == "branch_summary":
        return branch_summary_message(entry)
    return None


def path_to_leaf(entries: list[Entry], leaf_id: str | _LastEntry, by_id: dict[str, Entry]) -> list[Entry]:
    """Root -> leaf; an unknown leaf is the last entry; a parent cycle stops at its first repeat."""
    leaf = by_id.get(leaf_id) if isinstance(leaf_id, str) else None
    if leaf is None and entries:
        leaf = entries[-1]
    path: list[Entry] = []
    seen: set[int] = set()
    current: Entry | None = leaf
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        path.append(current)
        parent_id = current.get("parentId")
        current = by_id.get(parent_id) if isinstance(parent_id, str) else None
    path.reverse()
    return path


def build_session_context(
    entries: list[Entry],
    leaf_id: str | _LastEntry | None = LAST_ENTRY,
    by_id: dict[str, Entry] | None = None,
    rules: str = PI_RULES,
) -> SessionContext:
    """Walk root -> leaf and derive messages and runtime state, as pi 0.73 (seed 000) or omp 18 does."""
    if leaf_id is None:
        return SessionContext(leaf_id=None, rules=rules)
    if by_id is None:
        # A repeated id names its last record, as in pi's and omp's session index.
        by_id = {entry["id"]: entry for entry in entries if isinstance(entry.get("id"), str)}
    path = path_to_leaf(entries, leaf_id, by_id)
    if not path:
        return SessionContext(leaf_id=None, rules=rules)
    leaf = path[-1]
    context = SessionContext(leaf_id=leaf.get("id") if isinstance(leaf.get("id"), str) else None, rules=rules)
    if rules == OMP_RULES:
        from sitegen.session.context_omp import fill_omp_context

        fill_omp_context(context, path)
        return context
    _fill_pi_context(context, path)
    return context


def _fill_pi_context(context: SessionContext, path: list[Entry]) -> None:
    """pi 0.73's rules: the last model_change or assistant names the model; null thinking stays null."""
    compaction: Entry | None = None
    for entry in path:
        kind = entry.get("type")
        if kind == "thinking_level_change":
            level = entry.get("thinkingLevel")
            if level is None or isinstance(level, str):
                context.thinking_level = level
        elif kind == "model_change":
            model = model_of_change(entry)
            if model is not None:
                role = entry.get("role")
                context.models[role if isinstance(role, str) and role else "default"] = model
        elif kind == "message":
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                provider, model_name = message.get("provider"), message.get("model")
                if isinstance(model_name, str) and model_name:
                    context.models["default"] = f"{provider}/{model_name}" if isinstance(provider, str) else model_name
        elif kind == "ttsr_injection":
            rules = entry.get("injectedRules")
            for rule in rules if isinstance(rules, list) else ():
                if isinstance(rule, str) and rule not in context.injected_ttsr_rules:
                    context.injected_ttsr_rules.append(rule)
        elif kind == "mode_change":
            mode = entry.get("mode")
            context.mode = mode if isinstance(mode, str) else "none"
            context.mode_data = entry.get("data")
        elif kind == "compaction":
            compaction = entry

    messages = context.messages
    if compaction is None:
        kept = path
    else:
        context.entry_ids.append(_entry_id(compaction))
        messages.append(
            {
                "role": "compactionSummary",
                "summary": compaction.get("summary"),
                "tokensBefore": compaction.get("tokensBefore"),
                "timestamp": iso_to_ms(compaction.get("timestamp")),
            }
        )
        boundary = next(i for i, entry in enumerate(path) if entry is compaction)
        first_kept = compaction.get("firstKeptEntryId")
        start = next(
            (i for i in range(boundary) if path[i].get("id") == first_kept),
            boundary,
        )
        kept = path[start:boundary] + path[boundary + 1 :]
    for entry in kept:
        message = _context_message(entry)
        if message is not None:
            messages.append(message)
            context.entry_ids.append(_entry_id(entry))


def _entry_id(entry: Entry) -> str | None:
    entry_id = entry.get("id")
    return entry_id if isinstance(entry_id, str) else None


def view_marks(entries: list[Entry], by_id: dict[str, Entry], rules: str) -> dict[str, dict[str, str]]:
    """Per entry id, the data attributes the page's model's view needs to follow these rules at any
    leaf (data-ctx "compaction": a compaction entry; "never": an entry whose message is never sent)."""
    if rules == OMP_RULES:
        from sitegen.session.context_omp import omp_view_marks

        return omp_view_marks(entries, by_id)
    marks: dict[str, dict[str, str]] = {}
    for entry_id, entry in by_id.items():
        kind = entry.get("type")
        if kind == "compaction":
            marks[entry_id] = {"data-ctx": "compaction"}
        elif kind == "branch_summary" and branch_summary_message(entry) is None:
            marks[entry_id] = {"data-ctx": "never"}
    return marks
