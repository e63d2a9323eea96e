"""omp 18's context rules: /clear boundaries, remote compaction, notes, and the turns it never replays."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sitegen.session.context import branch_summary_message
from sitegen.session.entries import Entry, iso_to_ms

if TYPE_CHECKING:
    from sitegen.session.context import SessionContext

__all__ = [
    "CONTEXT_NOTES_TYPE",
    "NOT_REPLAYED_CUSTOM_TYPES",
    "compaction_kept_after",
    "context_notes_entry",
    "fill_omp_context",
    "omp_view_marks",
    "service_tier_by_family",
]

# Custom messages omp shows but never sends to the model.
NOT_REPLAYED_CUSTOM_TYPES = frozenset({"prewalk-plan", "vibe-mode-context"})
# The `custom` entry that holds omp's context notebook; its latest revision opens the context.
CONTEXT_NOTES_TYPE = "experimental_context_notes"
_NOTES_MAX_BYTES = 16_384
# An error or aborted turn followed by this hidden message stays: omp sends the note in its place.
_INTERRUPTED_THINKING = "interrupted-thinking"
_DEFAULT_CUSTOM_TYPE = "custom-message"
_USER_TURN_CUSTOM_TYPES = frozenset({"skill-prompt", "collab-prompt"})


def _js_text(value: object) -> str:
    """A value as a JavaScript template string shows it ("undefined/undefined" for a model-less turn)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _key(value: object) -> object:
    """A value to look up in a set: itself when hashable as JavaScript compares it (by value), else a
    new object that equals nothing, as a JavaScript Set holds a list or an object by identity."""
    return value if value is None or isinstance(value, str | int | float) else object()


def _record(value: object) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _nonempty_text(value: object) -> bool:
    return isinstance(value, str) and bool(value)


def _remote_history(compaction: Entry) -> dict[str, Any] | None:
    """OpenAI remote compaction: the provider replays the kept turns itself, from this history."""
    preserve = _record(compaction.get("preserveData")) or {}
    record = _record(preserve.get("openaiRemoteCompaction"))
    if record is None or not _nonempty_text(record.get("provider")):
        return None
    history = record.get("replacementHistory")
    if not isinstance(history, list) or not all(isinstance(item, dict) for item in history):
        return None
    return {"type": "openaiResponsesHistory", "provider": record["provider"], "items": history}


def _anthropic_payload(compaction: Entry) -> dict[str, Any] | None:
    """Anthropic server compaction: its summary as the provider replays it natively."""
    preserve = _record(compaction.get("preserveData")) or {}
    record = _record(preserve.get("anthropicCompaction"))
    if record is None or not _nonempty_text(record.get("provider")) or not _nonempty_text(record.get("content")):
        return None
    payload = {"type": "anthropicCompaction", "provider": record["provider"], "content": record["content"]}
    for key in ("encryptedContent", "filesText"):
        if _nonempty_text(record.get(key)):
            payload[key] = record[key]
    return payload


def _is_empty_error_turn(message: dict[str, Any]) -> bool:
    """An error turn with no text, thinking or tool call: omp never replays it."""
    if message.get("stopReason") != "error":
        return False
    for block in _blocks(message):
        kind = block.get("type")
        if kind == "text":
            if str(block.get("text") or "").strip():
                return False
        elif kind == "thinking":
            if str(block.get("thinking") or "").strip() or str(block.get("thinkingSignature") or "").strip():
                return False
        elif kind == "redactedThinking":
            if str(block.get("data") or "").strip():
                return False
        elif kind != "fallback":
            return False  # a tool call, or a block omp does not know: content
    return True


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _custom_message(entry: Entry) -> dict[str, Any] | None:
    """A custom_message entry as the model reads it; content that is neither text nor blocks is dropped."""
    content = entry.get("content")
    if not isinstance(content, str | list):
        return None
    custom_type = entry.get("customType")
    display = entry.get("display")
    message: dict[str, Any] = {
        "role": "custom",
        "customType": custom_type if _nonempty_text(custom_type) else _DEFAULT_CUSTOM_TYPE,
        "content": content,
        "display": display if isinstance(display, bool) else False,
        "details": entry.get("details"),
    }
    if "attribution" in entry:
        message["attribution"] = "user" if entry.get("attribution") == "user" else "agent"
    message["timestamp"] = iso_to_ms(entry.get("timestamp"))
    return message


def _is_user_request(entry: Entry) -> bool:
    """A turn the user started: a user message, or a skill or collab prompt attributed to the user."""
    if entry.get("type") == "message":
        message = _record(entry.get("message")) or {}
        if message.get("role") == "user":
            return True
        return message.get("role") == "custom" and _user_turn_custom(message)
    if entry.get("type") == "custom_message":
        custom = _custom_message(entry)
        return custom is not None and _user_turn_custom(custom)
    return False


def _user_turn_custom(message: dict[str, Any]) -> bool:
    return _key(message.get("customType")) in _USER_TURN_CUSTOM_TYPES and message.get("attribution") == "user"


def context_notes_entry(path: list[Entry]) -> Entry | None:
    """The notebook revision the context opens with: the latest valid one after the last /clear,
    None when there is none or it was cleared (empty text)."""
    for entry in reversed(path):
        kind = entry.get("type")
        if kind == "reset_boundary":
            return None
        if kind == "custom" and entry.get("customType") == CONTEXT_NOTES_TYPE and _valid_notes(entry):
            return entry if entry["data"]["text"] else None
    return None


_TIERS = frozenset({"auto", "default", "flex", "scale", "priority"})
_FAMILIES = ("openai", "anthropic", "google")
# omp's older one-word settings, as the tier of each provider family they set.
_LEGACY_TIERS: dict[str, dict[str, str]] = {
    "priority": dict.fromkeys(_FAMILIES, "priority"),
    "openai-only": {"openai": "priority"},
    "claude-only": {"anthropic": "priority"},
    **{tier: {"openai": tier} for tier in ("auto", "default", "flex", "scale")},
}


def service_tier_by_family(value: object) -> dict[str, str] | None:
    """A service_tier_change's setting as {family: tier}; None when it sets none."""
    if isinstance(value, dict):
        tiers = {
            family: value[family]
            for family in _FAMILIES
            if isinstance(value.get(family), str) and value[family] in _TIERS
        }
        return tiers or None
    if isinstance(value, str) and value in _LEGACY_TIERS:
        return dict(_LEGACY_TIERS[value])
    return None


def _runtime_state(context: SessionContext, path: list[Entry]) -> Entry | None:
    """Thinking level, models, rules and mode along the path; returns the latest compaction."""
    compaction: Entry | None = None
    explicit_default = False
    for entry in path:
        kind = entry.get("type")
        if kind == "thinking_level_change":
            level = entry.get("thinkingLevel")
            context.thinking_level = "off" if level is None else level
            # The selector the user chose ("auto", or a level), kept beside the level it resolved to.
            configured = entry.get("configured")
            context.configured_thinking_level = configured if configured is not None else level
        elif kind == "service_tier_change":
            context.service_tier = service_tier_by_family(entry.get("serviceTier"))
        elif kind == "model_change":
            model = entry.get("model")
            if model:
                role = entry.get("role")
                role = "default" if role is None else _js_text(role)
                context.models[role] = _js_text(model)
                explicit_default = explicit_default or role == "default"
        elif kind == "message":
            message = _record(entry.get("message")) or {}
            if message.get("role") == "assistant" and not explicit_default:
                # Until a default is chosen explicitly, the model that answered is the default.
                provider = message.get("provider") if "provider" in message else "undefined"
                model_name = message.get("model") if "model" in message else "undefined"
                context.models["default"] = f"{_js_text(provider)}/{_js_text(model_name)}"
        elif kind == "compaction":
            compaction = entry
        elif kind == "ttsr_injection":
            rules = entry.get("injectedRules")
            for rule in rules if isinstance(rules, list) else ():
                if rule not in context.injected_ttsr_rules:
                    context.injected_ttsr_rules.append(rule)
        elif kind == "mode_change":
            context.mode = entry.get("mode")  # type: ignore[assignment]
            context.mode_data = entry.get("data")
    return compaction


def _emitted_entries(path: list[Entry], compaction: Entry | None) -> tuple[list[Entry], Entry | None]:
    """The path entries whose messages the model is sent, in order, and the compaction it opens with."""
    reset_at = max((i for i, entry in enumerate(path) if entry.get("type") == "reset_boundary"), default=-1)
    at = -1
    if compaction is not None:
        at = next(i for i, entry in enumerate(path) if entry.get("type") == "compaction" and entry is compaction)
    if reset_at >= 0 and reset_at > at:
        # A /clear after the latest compaction: only what follows it.
        return path[reset_at + 1 :], None
    if compaction is None:
        return path, None
    emitted: list[Entry] = []
    first_kept = compaction.get("firstKeptEntryId")
    first_kept_at = next((i for i in range(at) if path[i].get("id") == first_kept), -1)
    details = _record(compaction.get("details"))
    if details is not None and details.get("kind") == "experimental-context-rollover":
        # A notes-backed window keeps the latest user request of the turns it dropped.
        for i in range(at - 1, reset_at, -1):
            if _is_user_request(path[i]):
                if i < first_kept_at:
                    emitted.append(path[i])
                break
    replay_through = compaction.get("providerReplayThroughEntryId")
    replay_at = (
        next((i for i, entry in enumerate(path) if entry.get("id") == replay_through), -1) if replay_through else -1
    )
    if _remote_history(compaction) is None:
        start = first_kept_at
        if (
            start < 0
            and first_kept == ""
            and replay_through
            and _anthropic_payload(compaction) is not None
            and replay_at >= 0
        ):
            start = replay_at + 1  # Anthropic's native replay ends at that entry: keep what follows it
        if 0 <= start < at:
            emitted.extend(path[start:at])
    elif 0 <= replay_at < at:
        emitted.extend(path[replay_at + 1 : at])
    emitted.extend(path[at + 1 :])
    return emitted, compaction


def _entry_message(entry: Entry) -> dict[str, Any] | None:
    kind = entry.get("type")
    if kind == "message":
        message = _record(entry.get("message"))
        if message is None:
            return None
        if message.get("role") == "assistant" and (message.get("retryRecovery") or _is_empty_error_turn(message)):
            return None
        return message
    if kind == "custom_message":
        if _key(entry.get("customType")) in NOT_REPLAYED_CUSTOM_TYPES:
            return None
        return _custom_message(entry)
    if kind == "branch_summary":
        return branch_summary_message(entry)
    return None


def _summary_message(compaction: Entry) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "compactionSummary", "summary": compaction.get("summary")}
    for key in ("shortSummary", "tokensBefore", "tokensAfter", "method"):
        if compaction.get(key) is not None:
            message[key] = compaction[key]
    payload = _remote_history(compaction) or _anthropic_payload(compaction)
    if payload is not None:
        message["providerPayload"] = payload
    if compaction.get("warning") is not None:
        message["warning"] = compaction["warning"]
    message["timestamp"] = iso_to_ms(compaction.get("timestamp"))
    return message


# A message with the id of the entry it came from (None for none), so deletions keep both in step.
_Sent = tuple[str | None, dict[str, Any]]


def _strip_unanswered_calls(sent: list[_Sent]) -> None:
    """Tool calls with no result in the context are cut from their turn (with the turn's signed
    reasoning, which a changed turn cannot keep); a turn left empty goes."""
    answered = {_key(m.get("toolCallId")) for _, m in sent if m.get("role") == "toolResult"}
    for index in range(len(sent) - 1, -1, -1):
        source, message = sent[index]
        if message.get("role") != "assistant":
            continue
        blocks = _blocks(message)
        if not any(b.get("type") == "toolCall" and _key(b.get("id")) not in answered for b in blocks):
            continue
        kept: list[dict[str, Any]] = []
        for block in blocks:
            kind = block.get("type")
            if (kind == "toolCall" and _key(block.get("id")) not in answered) or kind == "redactedThinking":
                continue
            if kind == "thinking" and block.get("thinkingSignature"):
                block = {key: value for key, value in block.items() if key != "thinkingSignature"}
            kept.append(block)
        if kept:
            sent[index] = (source, {**message, "content": kept})
        else:
            del sent[index]


def _drop_failed_turns(sent: list[_Sent]) -> None:
    """Error and aborted turns are not replayed, nor the results of their tool calls."""
    index = len(sent) - 1
    while index >= 0:
        message = sent[index][1]
        if message.get("role") == "assistant" and message.get("stopReason") in ("aborted", "error"):
            following = sent[index + 1][1] if index + 1 < len(sent) else None
            if not (
                following is not None
                and following.get("role") == "custom"
                and following.get("customType") == _INTERRUPTED_THINKING
            ):
                calls = {_key(b.get("id")) for b in _blocks(message) if b.get("type") == "toolCall"}
                del sent[index]
                if calls:
                    sent[index:] = [
                        (source, m)
                        for source, m in sent[index:]
                        if not (m.get("role") == "toolResult" and _key(m.get("toolCallId")) in calls)
                    ]
        index = min(index - 1, len(sent) - 1)


def _entry_id(entry: Entry) -> str | None:
    entry_id = entry.get("id")
    return entry_id if isinstance(entry_id, str) else None


def fill_omp_context(context: SessionContext, path: list[Entry]) -> None:
    """omp 18.3's buildSessionContext over a root -> leaf path (the model's context, not the transcript)."""
    compaction = _runtime_state(context, path)
    emitted, summarised_by = _emitted_entries(path, compaction)
    sent: list[_Sent] = []
    if summarised_by is not None:
        sent.append((_entry_id(summarised_by), _summary_message(summarised_by)))
    for entry in emitted:
        message = _entry_message(entry)
        if message is not None:
            sent.append((_entry_id(entry), message))
    notes = context_notes_entry(path)
    if notes is not None:
        # omp wraps the notes in its own prompt text; sitegen shows the notes themselves.
        note = {
            "role": "custom",
            "customType": CONTEXT_NOTES_TYPE,
            "content": notes["data"]["text"],
            "display": False,
            "timestamp": iso_to_ms(notes.get("timestamp")),
        }
        sent.insert(0, (_entry_id(notes), note))
    _strip_unanswered_calls(sent)
    _drop_failed_turns(sent)
    context.entry_ids = [source for source, _ in sent]
    context.messages = [message for _, message in sent]


def _failed_turn_kept(entry: Entry, children: dict[str, list[Entry]]) -> bool:
    """A failed turn stays when the hidden interrupted-thinking note follows it (omp sends the note)."""
    return any(
        child.get("type") == "custom_message" and child.get("customType") == _INTERRUPTED_THINKING
        for child in children.get(entry.get("id") or "", ())
    )


def omp_view_marks(entries: list[Entry], by_id: dict[str, Entry]) -> dict[str, dict[str, str]]:
    """What the page's model's view needs to follow omp's rules at any leaf, per entry id, as data
    attributes: data-ctx "never" (a message omp never sends), "reset" (a /clear), "notes" or
    "notes-clear" (a notebook revision), "remote" (a compaction whose provider replays the kept
    turns); data-kept-after on a compaction whose kept turns start after that entry; data-rollover
    on a notes-backed compaction, which keeps the latest user request (data-request) it dropped."""
    children: dict[str, list[Entry]] = {}
    for entry in by_id.values():
        parent = entry.get("parentId")
        if isinstance(parent, str):
            children.setdefault(parent, []).append(entry)
    marks: dict[str, dict[str, str]] = {}
    failed_calls: set[object] = set()
    for entry_id, entry in by_id.items():
        kind = entry.get("type")
        mark: dict[str, str] = {}
        if kind in ("message", "custom_message", "branch_summary"):
            message = _entry_message(entry)
            if _is_user_request(entry):
                mark["data-request"] = "1"
            if message is None:
                mark["data-ctx"] = "never"
            elif (
                message.get("role") == "assistant"
                and message.get("stopReason") in ("aborted", "error")
                and not _failed_turn_kept(entry, children)
            ):
                mark["data-ctx"] = "never"
                failed_calls.update(_key(b.get("id")) for b in _blocks(message) if b.get("type") == "toolCall")
        elif kind == "reset_boundary":
            mark["data-ctx"] = "reset"
        elif kind == "custom" and entry.get("customType") == CONTEXT_NOTES_TYPE and _valid_notes(entry):
            mark["data-ctx"] = "notes" if entry["data"]["text"] else "notes-clear"
        elif kind == "compaction":
            replay = compaction_kept_after(entry)
            mark["data-ctx"] = "remote" if _remote_history(entry) is not None else "compaction"
            details = _record(entry.get("details"))
            if details is not None and details.get("kind") == "experimental-context-rollover":
                mark["data-rollover"] = "1"
            if replay is not None:
                mark["data-kept-after"] = replay
        if mark:
            marks[entry_id] = mark
    if failed_calls:
        for entry_id, entry in by_id.items():
            message = _record(entry.get("message")) if entry.get("type") == "message" else None
            if (
                message is not None
                and message.get("role") == "toolResult"
                and _key(message.get("toolCallId")) in failed_calls
            ):
                marks.setdefault(entry_id, {})["data-ctx"] = "never"
    return marks


def _valid_notes(entry: Entry) -> bool:
    data = entry.get("data")
    return (
        isinstance(data, dict)
        and set(data) == {"version", "text"}
        and data.get("version") == 1
        and not isinstance(data.get("version"), bool)
        and isinstance(data.get("text"), str)
        and len(data["text"].encode("utf-8", "surrogatepass")) <= _NOTES_MAX_BYTES
    )


def compaction_kept_after(compaction: Entry) -> str | None:
    """The entry the kept turns start after, when not at firstKeptEntryId: the end of the provider's
    own replay (remote compaction, or Anthropic's native one with no first kept entry)."""
    replay = compaction.get("providerReplayThroughEntryId")
    if not isinstance(replay, str) or not replay:
        return None
    if _remote_history(compaction) is not None:
        return replay
    if compaction.get("firstKeptEntryId") == "" and _anthropic_payload(compaction) is not None:
        return replay
    return None
