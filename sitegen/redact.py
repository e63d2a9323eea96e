"""Replace secrets in session text with ``[REDACTED:<kind>]`` before a page leaves the machine."""

from __future__ import annotations

import functools
import re
from collections import Counter
from typing import TypeVar, cast

from sitegen.redact_rules import RULES, docker_auth, find_all, is_reference_or_placeholder, mark, random_looking
from sitegen.session.entries import clip_nesting

__all__ = ["KINDS", "Redactor", "describe_counts", "redact_text", "redact_value"]

_T = TypeVar("_T")

# --- KEY=value, KEY: value, export KEY="value", "password": "...", --token VALUE -----------------

_ASSIGNMENT_KIND = "secret-assignment"
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
# Every secret name holds one of these (lower-cased): PASSWORD, PASSPHRASE and *_PASS hold "pass".
_SECRET_WORDS = ("pass", "secret", "token", "key", "pwd", "credential")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_AFTER_NAME = re.compile(
    r"(?:\\?[\"'])?(?P<sep>[ \t]*(?::=|=|:)[ \t]*|[ \t]+)"
    r"(?:(?P<bs>\\?)(?P<quote>[\"'])(?P<quoted>[^\n]*?)(?P=bs)(?P=quote)|(?P<bare>[^\s\"'`,;)}\]<>(\[]+))"
)
# A name that ends with one of these holds a secret. Names that merely contain one describe secrets
# without holding one (PASSWORD_MIN_LENGTH=8, TOKEN_EXPIRY=3600, MAX_TOKENS=4096) and are left alone.
_STRONG_SUFFIXES = (
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "SECRET",
    "TOKEN",
    "APIKEY",
    "API_KEY",
    "ACCESS_KEY",
    "SECRET_KEY",
    "PRIVATE_KEY",
    "AUTH_KEY",
    "CREDENTIALS",
    "CREDENTIAL",
    "PRIVATE_KEY_ID",
    "_PASS",
    "_PWD",
)


@functools.lru_cache(maxsize=4096)
def _name_strength(name: str) -> int:
    """2: the name holds a secret; 1: a *_KEY that might (checked by its value); 0: not a secret name."""
    upper = name.upper().replace("-", "_")
    # Publishable keys (Stripe pk_*, NEXT_PUBLIC_*) are meant to be embedded in public pages.
    if "PUBLIC" in upper or "PUBLISHABLE" in upper:
        return 0
    if upper in ("PASS", "PWD") or upper.endswith(_STRONG_SUFFIXES) or "SECRET_KEY" in upper:
        return 2
    if upper.endswith("_KEY") or name.endswith("Key"):
        return 1
    return 0


# A bare value that is code, not a setting: a name, a number, an attribute.
_CODE_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|-?[0-9.]+")


def _assignment_value_ok(
    value: str, *, quoted: bool, env_style: bool, sep: str, strength: int, ini_line: bool = False
) -> bool:
    value = value.strip()
    if len(value) < 4 or is_reference_or_placeholder(value):
        return False
    if (value.isdigit() and len(value) < 8) or value.startswith(("/", "~/", "./", "../")):
        return False
    # process.env.TOKEN, self.password, settings.SECRET_KEY: code reading a secret, not the secret.
    if _DOTTED_NAME.fullmatch(value):
        return False
    if strength == 1:
        # SORT_KEY=created_at, CACHE_KEY=user: only a random-looking value makes a *_KEY a secret.
        return random_looking(value)
    if quoted:
        return True
    # `password = user_input` in code assigns an expression; only env-style names take bare values, and
    # a line of its own in an INI file (.pypirc, .my.cnf) whose value cannot be code.
    if sep == "=" and not env_style:
        return ini_line and (_CODE_VALUE.fullmatch(value) is None or random_looking(value))
    # `password: str`, `Token: see below`: a bare word after a colon is a type or prose.
    return not (sep != "=" and value.isalpha())


def _alone_on_its_line(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is the whole line, but for spaces (`password = s3cret!` in an INI file)."""
    before = text.rfind("\n", 0, start) + 1
    after = text.find("\n", end)
    return not text[before:start].strip() and not text[end : len(text) if after < 0 else after].strip()


def _redact_assignments(text: str, lowered: str, counts: Counter[str]) -> str:
    hits = sorted(at for word in _SECRET_WORDS for at in find_all(lowered, word))
    pieces: list[str] = []
    done = 0  # everything before `done` is already in `pieces`
    name_end = 0
    for hit in hits:
        if hit < name_end:
            continue
        start = end = hit
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        while end < len(text) and text[end] in _NAME_CHARS:
            end += 1
        name_end = end
        raw_name = text[start:end]
        flag = raw_name.startswith("--")
        name = raw_name.lstrip("-")
        strength = _name_strength(name)
        if not strength or start < done:
            continue
        after = _AFTER_NAME.match(text, end)
        if after is None:
            continue
        sep = after.group("sep").strip() or " "
        if sep == " " and not flag:
            continue
        group = "quoted" if after.group("quote") else "bare"
        value = after.group(group)
        v_start, v_end = after.span(group)
        if group == "bare" and v_end < len(text) and text[v_end] in "([":
            continue  # a call or subscript: os.environ["X"], getenv("X")
        env_style = flag or _ENV_NAME.fullmatch(name) is not None
        ini_line = group == "bare" and _alone_on_its_line(text, start, v_end)
        quoted = group == "quoted"
        if not _assignment_value_ok(
            value, quoted=quoted, env_style=env_style, sep=sep, strength=strength, ini_line=ini_line
        ):
            continue
        pieces.append(text[done:v_start])
        pieces.append(mark(_ASSIGNMENT_KIND))
        done = v_end
        name_end = v_end
        counts[_ASSIGNMENT_KIND] += 1
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


# --- Cookie: a=b; session=… (a header, a JSON key, curl --cookie) -----------------------------------

_COOKIE_KIND = "cookie"
_COOKIE_HEAD = re.compile(r"cookie\\?[\"']?(?:[ \t]*[:=][ \t]*|(?<=-cookie)[ \t]+)\\?[\"']?", re.IGNORECASE)
_COOKIE_PAIR = re.compile(r"[ \t]*(?P<name>[^=;,\s\"'\\]+)=(?P<value>[^;,\s\"'\\]*)")
# Cookies that hold a session or a login whatever their value looks like; others only when random-looking.
_SESSION_COOKIE = re.compile(r"sess|sid|auth|token|jwt|login|remember|csrf|xsrf", re.IGNORECASE)
# Set-Cookie's attributes, which hold no secret.
_COOKIE_ATTRIBUTES = frozenset({"path", "domain", "expires", "max-age", "samesite", "priority"})


def _cookie_secret(name: str, value: str) -> bool:
    if len(value) < 8 or name.lower() in _COOKIE_ATTRIBUTES or is_reference_or_placeholder(value):
        return False
    return random_looking(value) or _SESSION_COOKIE.search(name) is not None


def _redact_cookies(text: str, lowered: str, counts: Counter[str]) -> str:
    """The values of session and random-looking cookies after `Cookie:`, `Set-Cookie:`, `"cookie":`
    or `--cookie`; `theme=dark` and the attributes (Path=/) stay."""
    pieces: list[str] = []
    done = 0
    for at in find_all(lowered, "cookie"):
        head = _COOKIE_HEAD.match(text, at) if at >= done else None
        if head is None:
            continue
        position = head.end()
        while (pair := _COOKIE_PAIR.match(text, position)) is not None:
            if _cookie_secret(pair.group("name"), pair.group("value")):
                pieces += (text[done : pair.start("value")], mark(_COOKIE_KIND))
                done = pair.end("value")
                counts[_COOKIE_KIND] += 1
            position = pair.end()
            if not text.startswith(";", position):
                break
            position += 1
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


KINDS: tuple[str, ...] = (
    "private-key",
    "jwt",
    "anthropic-key",
    "openai-key",
    "stripe-key",
    "aws-access-key-id",
    "aws-secret-key",
    "github-token",
    "gitlab-token",
    "slack-token",
    "google-api-key",
    "npm-token",
    "huggingface-token",
    "sendgrid-key",
    "twilio-key",
    "url-password",
    "url-token",
    "cli-password",
    "authorization",
    "vault-token",
    "digitalocean-token",
    "telegram-token",
    "docker-auth",
    "cookie",
    _ASSIGNMENT_KIND,
)

# Shorter strings cannot hold any of the secrets above.
_MIN_LENGTH = 8
# One of these (lower-cased) occurs in every text some rule could change: one scan that stops at the
# first hit lets the many short strings of a session (ids, roles, plain prose) skip all the rules.
# fmt: off
_HINT_LITERALS = (
    *_SECRET_WORDS,
    "-----begin", "eyj", "sk-", "_live_", "_test_", "whsec_", "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "github_pat_", "glpat-", "gldt-", "glrt-", "glptt-", "xox", "xapp-", "aiza", "://", "sig=", "signature=",
    "authorization", "npm_", "hf_", "sg.", "mysql", "mariadb", "sshpass", "curl", "wget", "login",
    "hvs.", "hvb.", "hvr.", "_v1_", ":aa", "_auth", '"auth', "cookie",
)
# fmt: on
_HINT = re.compile("|".join(re.escape(literal) for literal in _HINT_LITERALS))


def _redact(text: str, counts: Counter[str]) -> str:
    if len(text) < _MIN_LENGTH:
        return text
    lowered = _lower(text)
    # Twilio keys are the one kind found by a case-sensitive literal ("sk" is in too many words).
    if _HINT.search(lowered) is None and "SK" not in text:
        return text
    source = text  # the text `lowered` was made from; rules return the same object when they change nothing
    # Stale after a replacement, but still right about which rules could match: marks add no secrets.
    triggers = lowered
    for rule in RULES:
        if rule.triggers and not any(trigger in triggers for trigger in rule.triggers):
            continue
        if text is not source:
            lowered, source = _lower(text), text
        text = rule.apply(text, lowered, counts)
    if "cookie" in triggers:
        if text is not source:
            lowered, source = _lower(text), text
        text = _redact_cookies(text, lowered, counts)
    if any(word in triggers for word in _SECRET_WORDS):
        if text is not source:
            lowered = _lower(text)
        text = _redact_assignments(text, lowered, counts)
    return text


def _lower(text: str) -> str:
    """An ASCII lower-cased copy with the offsets of `text` (lower() grows a few letters such as 'İ').

    Every literal the rules look for is ASCII, so other characters become '?'; this is also faster than
    str.lower() on text that is not pure ASCII.
    """
    return text.encode("ascii", "replace").lower().decode("ascii")


def redact_text(text: str) -> tuple[str, Counter[str]]:
    """Return `text` with its secrets replaced, and how many of each kind were replaced."""
    counts: Counter[str] = Counter()
    return _redact(text, counts), counts


class Redactor:
    """Redacts strings and JSON-like values, keeping a running count of replacements per kind."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def redact(self, text: str) -> str:
        return _redact(text, self.counts)

    def redact_field(self, name: str, value: str) -> str:
        """Redact `value`, and replace it whole when `name` (a JSON key, a header) names a secret."""
        redacted = _redact(value, self.counts)
        if redacted is not value:
            return redacted
        if name == "auth" and len(value) >= 8 and docker_auth(value):
            self.counts["docker-auth"] += 1
            return mark("docker-auth")
        if name.lower() in ("cookie", "set-cookie"):
            header = "cookie: " + value  # the header's value alone, as a JSON field holds it
            return _redact_cookies(header, _lower(header), self.counts)[len("cookie: ") :]
        strength = _name_strength(name)
        if strength and _assignment_value_ok(value, quoted=True, env_style=False, sep="=", strength=strength):
            self.counts[_ASSIGNMENT_KIND] += 1
            return mark(_ASSIGNMENT_KIND)
        return value

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def redact_value(obj: _T, redactor: Redactor) -> _T:
    """A copy of a JSON-like value (dicts, lists, strings) with secrets redacted; `obj` is not changed.
    Nesting past MAX_NESTING becomes "…" (as the page shows it), so no value is too deep."""
    try:
        return cast(_T, _redact_any(obj, redactor))
    except RecursionError:
        return cast(_T, _redact_any(clip_nesting(obj), redactor))


def _redact_any(obj: object, redactor: Redactor) -> object:
    if isinstance(obj, str):
        return redactor.redact(obj)
    if isinstance(obj, dict):
        result: dict[object, object] = {}
        for key, value in obj.items():
            # Keys are shown too (tool arguments as JSON): {"<token>": ...} must not keep the token.
            shown = redactor.redact(key) if isinstance(key, str) else key
            if isinstance(value, str) and isinstance(key, str):
                result[shown] = redactor.redact_field(key, value)
            else:
                result[shown] = _redact_any(value, redactor)
        return result
    if isinstance(obj, list):
        return [_redact_any(item, redactor) for item in obj]
    if isinstance(obj, tuple):
        return tuple(_redact_any(item, redactor) for item in obj)
    return obj


def describe_counts(counts: Counter[str]) -> str:
    """`3 openai-key, 1 jwt`: the counts in the fixed order of KINDS, for a one-line report."""
    parts = [f"{counts[kind]} {kind}" for kind in KINDS if counts.get(kind)]
    parts += [f"{n} {kind}" for kind, n in sorted(counts.items()) if kind not in KINDS and n]
    return ", ".join(parts)
