"""Replace secrets in session text with ``[REDACTED:<kind>]`` before a page leaves the machine."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar, cast

from sitegen.session.entries import clip_nesting

__all__ = ["KINDS", "Redactor", "describe_counts", "redact_text", "redact_value"]

_T = TypeVar("_T")

_MARK_PREFIX = "[REDACTED:"

# Characters of base64, base64url and most token alphabets: a secret glued to one of these is part of
# a longer blob (an image, a hash), so it is not a secret on its own.
_TOKEN_CHARS = "A-Za-z0-9_-"
_B64_CHARS = "A-Za-z0-9+/_-"

# Placeholder words people write where a secret would go; replacing them only adds noise.
# fmt: off
_PLACEHOLDERS = frozenset((
    "none", "null", "nil", "true", "false", "undefined", "required", "optional", "string", "str", "bytes",
    "example", "placeholder", "password", "passwd", "pass", "secret", "token", "your-token", "your-password",
    "your-api-key", "redacted", "x-oauth-basic",
))
# fmt: on
_MASK_CHARS = frozenset("*xX.•-_#")
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_RANDOM_RUN = re.compile(r"[A-Za-z0-9]{16,}")


def _mark(kind: str) -> str:
    return f"{_MARK_PREFIX}{kind}]"


def _is_reference_or_placeholder(value: str) -> bool:
    """True for `$VAR`, `${{ secrets.X }}`, `<token>`, `{token}`, `****`, `None` and the like."""
    if not value or value.startswith(_MARK_PREFIX):
        return True
    if value[0] in "$<{%[(`" or "${" in value or "{{" in value:
        return True
    if "{" in value and "}" in value:
        return True
    # `sk-ant-...`, `your-api-key-here`, `<token>`: elided or example values in docs and READMEs.
    lowered = value.lower()
    if "..." in value or "…" in value or lowered.startswith("your") or "example" in lowered:
        return True
    return lowered in _PLACEHOLDERS or set(value) <= _MASK_CHARS


def _random_looking(value: str) -> bool:
    """A run of 16+ letters and digits holding both: what generated keys look like, unlike identifiers."""
    runs = _RANDOM_RUN.findall(value)
    return any(any(c.isdigit() for c in run) and any(c.isalpha() for c in run) for run in runs)


def _find_all(haystack: str, needle: str) -> Iterator[int]:
    """Offsets of `needle` in `haystack`; str.find is a fast C scan, unlike a case-insensitive regex."""
    at = haystack.find(needle)
    while at >= 0:
        yield at
        at = haystack.find(needle, at + 1)


@dataclass(frozen=True)
class _Rule:
    """One kind of secret: a pattern, an optional check of what it found, and where to look for it."""

    kind: str
    pattern: re.Pattern[str]
    # Called with the match and its `secret` group (or the whole match); False leaves the match alone.
    accept: Callable[[re.Match[str], str], bool] | None = None
    # Lower-case literals, one of which must occur in the lower-cased text for the rule to run: for
    # patterns the regex engine cannot scan fast. A miss of `in` costs about as much as a regex scan for a
    # literal prefix, so patterns that start with a literal have none.
    triggers: tuple[str, ...] = ()
    # For case-insensitive patterns: a lower-case literal they start with; the pattern is then tried only
    # where the lower-cased text has it, instead of at every position.
    anchor: str | None = None
    # The kind to count, when one pattern finds several kinds.
    kind_of: Callable[[str], str] | None = None

    def matches(self, text: str, lowered: str) -> Iterator[re.Match[str]]:
        if self.anchor is None:
            yield from self.pattern.finditer(text)
            return
        for at in _find_all(lowered, self.anchor):
            match = self.pattern.match(text, at)
            if match is not None:
                yield match

    def apply(self, text: str, lowered: str, counts: Counter[str]) -> str:
        # The part to replace: the named group "secret" (or "secret2", ... in alternatives), else all.
        groups = [name for name in self.pattern.groupindex if name.startswith("secret")]
        pieces: list[str] = []
        done = 0  # text before `done` is already in `pieces`
        for match in self.matches(text, lowered):
            if match.start() < done:
                continue
            group = next((name for name in groups if match.group(name) is not None), None)
            if group is not None:
                start, end = match.span(group)
            else:
                start, end = match.span()
            secret = text[start:end]
            if secret.startswith(_MARK_PREFIX) or (self.accept is not None and not self.accept(match, secret)):
                continue
            kind = self.kind if self.kind_of is None else self.kind_of(secret)
            counts[kind] += 1
            pieces += (text[done:start], _mark(kind))
            done = end
        if not pieces:
            return text
        pieces.append(text[done:])
        return "".join(pieces)


def _accept_random(match: re.Match[str], secret: str) -> bool:
    return _random_looking(secret)


def _accept_cli_password(match: re.Match[str], secret: str) -> bool:
    return len(secret) >= 4 and not _is_reference_or_placeholder(secret)


def _accept_url_password(match: re.Match[str], secret: str) -> bool:
    return not _is_reference_or_placeholder(secret)


def _accept_query_token(match: re.Match[str], secret: str) -> bool:
    return len(secret) >= 4 and not _is_reference_or_placeholder(secret)


def _accept_authorization(match: re.Match[str], secret: str) -> bool:
    if len(secret) < 8 or _is_reference_or_placeholder(secret):
        return False
    # Without a scheme word, "Authorization: required" is prose; a credential has a digit or a symbol.
    return match.group("scheme") is not None or not secret.isalpha()


def _sk_kind(secret: str) -> str:
    return "anthropic-key" if secret.startswith("sk-ant-") else "openai-key"


# Patterns start with a literal (lookbehinds for word boundaries come after it) so the regex engine jumps
# from one occurrence of the literal to the next instead of trying every position of a long string.
_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            # Base64 and header lines up to the END line; a block cut off by truncated output takes its
            # header and base64 lines (newlines may be real or, in JSON shown as text, written as \n).
            r"(?:(?:(?!-----BEGIN )[A-Za-z0-9+/=\s\\:,-])*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:[ \t]*(?:\r?\n|\\r?\\n)[ \t]*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+:[ \t][^\n\\]*))*)"
        ),
    ),
    _Rule(
        "jwt",
        re.compile(rf"eyJ(?<![{_TOKEN_CHARS}]eyJ)[{_TOKEN_CHARS}]{{4,}}\.eyJ[{_TOKEN_CHARS}]{{4,}}\.[{_TOKEN_CHARS}]*"),
    ),
    # sk-ant-... (Anthropic), sk-proj-..., sk-svcacct-..., legacy sk-<48> (OpenAI) and other sk- keys.
    _Rule(
        "openai-key",
        re.compile(rf"sk-(?<![{_TOKEN_CHARS}]sk-)[{_TOKEN_CHARS}]{{20,}}"),
        _accept_random,
        kind_of=_sk_kind,
    ),
    # Stripe secret and restricted keys, live and test mode, and webhook signing secrets. Publishable
    # keys (pk_live_, pk_test_) are made to be embedded in public web pages, so they are left alone.
    _Rule(
        "stripe-key",
        re.compile(rf"sk_(?:live|test)_(?<![{_TOKEN_CHARS}]sk_...._)[A-Za-z0-9]{{16,}}"),
        _accept_random,
    ),
    _Rule(
        "stripe-key",
        re.compile(rf"rk_(?:live|test)_(?<![{_TOKEN_CHARS}]rk_...._)[A-Za-z0-9]{{16,}}"),
        _accept_random,
    ),
    _Rule(
        "stripe-key",
        re.compile(rf"whsec_(?<![{_TOKEN_CHARS}]whsec_)[A-Za-z0-9]{{16,}}"),
        _accept_random,
    ),
    _Rule(
        "aws-access-key-id",
        re.compile(rf"A(?:KIA|SIA)(?<![{_B64_CHARS}]....)[A-Z0-9]{{16}}(?![={_B64_CHARS}])"),
    ),
    _Rule(
        "aws-secret-key",
        re.compile(
            r"aws[_ ]?secret[_ ]?(?:access[_ ]?)?key[\"']?[ \t]*[:=][ \t]*[\"']?"
            r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
            re.IGNORECASE,
        ),
        triggers=("secret",),
        anchor="aws",
    ),
    _Rule(
        "github-token",
        re.compile(
            r"g(?:h[pousr]_(?<![A-Za-z0-9_]gh._)[A-Za-z0-9]{30,255}"
            r"|ithub_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{40,255})"
        ),
    ),
    _Rule(
        "gitlab-token",
        re.compile(rf"gl(?<![{_TOKEN_CHARS}]gl)(?:pat|dt|rt|ptt)-[{_TOKEN_CHARS}]{{20,}}"),
    ),
    _Rule(
        "slack-token",
        re.compile(
            r"x(?:ox[abposr]-(?<![A-Za-z0-9_-]xox.-)[0-9A-Za-z-]{10,}"
            r"|app-(?<![A-Za-z0-9_-]xapp-)\d-[0-9A-Za-z-]{10,})"
        ),
    ),
    _Rule(
        "slack-token",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{10,}"),
    ),
    _Rule(
        "google-api-key",
        re.compile(rf"AIza(?<![{_B64_CHARS}]AIza)[{_TOKEN_CHARS}]{{35}}(?![={_B64_CHARS}])"),
    ),
    # npm automation and publish tokens, Hugging Face access tokens, SendGrid API keys.
    _Rule(
        "npm-token",
        re.compile(rf"npm_(?<![{_TOKEN_CHARS}]npm_)[A-Za-z0-9]{{36}}(?![{_TOKEN_CHARS}])"),
        _accept_random,
    ),
    _Rule(
        "huggingface-token",
        re.compile(rf"hf_(?<![{_TOKEN_CHARS}]hf_)[A-Za-z0-9]{{34,40}}(?![{_TOKEN_CHARS}])"),
        _accept_random,
    ),
    _Rule(
        "sendgrid-key",
        re.compile(
            rf"SG\.(?<![.{_TOKEN_CHARS}]SG\.)[{_TOKEN_CHARS}]{{22}}\.[{_TOKEN_CHARS}]{{43}}(?![{_TOKEN_CHARS}])"
        ),
    ),
    # Twilio API keys: SK and 32 lower-case hex digits.
    _Rule(
        "twilio-key",
        re.compile(rf"SK(?<![{_TOKEN_CHARS}]SK)[0-9a-f]{{32}}(?![{_TOKEN_CHARS}])"),
        _accept_random,
    ),
    # A password in the URL's user part; an unencoded "#" or "@" in it is still the password (people
    # write them so, and URL parsers end the user part at the last "@" before the host).
    _Rule(
        "url-password",
        re.compile(r"://(?P<user>[^\s:/?#@\[\]\"'<>]*):(?P<secret>[^\s/?\"'<>]+)@(?=[A-Za-z0-9\[])"),
        _accept_url_password,
    ),
    # A token as the user part (https://<token>@github.com/o/r, https://<token>:x-oauth-basic@...):
    # long and random-looking.
    _Rule(
        "url-password",
        re.compile(r"://(?P<secret>[A-Za-z0-9_-]{20,})(?::[^\s/?\"'<>]*)?@(?=[A-Za-z0-9\[])"),
        _accept_random,
    ),
    # Passwords given to command-line tools: mysql -pPASSWORD or -p'PASS WORD' (no space), sshpass -p
    # PASSWORD, curl -u (or -su, -U) user:PASSWORD, and a .netrc entry (machine HOST login USER password
    # PASSWORD, on one line or several; without "login", "machine learning password policy" is prose).
    _Rule(
        "cli-password",
        re.compile(
            r"(?:mysql|mysqldump|mysqladmin|mariadb)(?:[ \t]+[^\s|;&]+)*?[ \t]+-p"
            r"(?:(?P<secret>[^\s'\"-][^\s'\"]*)|(?P<quote>['\"])(?P<secret5>[^'\"\n]+)(?P=quote))"
            r"|sshpass[ \t]+-p[ \t]*['\"]?(?P<secret2>[^\s'\"]+)"
            r"|(?:curl|wget)(?:[ \t]+[^\s|;&]+)*?[ \t]+(?:-[A-Za-z]*[uU]|--user|--proxy-user)(?:[ \t]+|=)['\"]?"
            r"[^\s:'\"]+:(?P<secret3>[^\s'\"@]+)"
            r"|(?:machine(?<![\w-]machine)[ \t\r\n]+\S+|default(?<![\w-]default))"
            r"[ \t\r\n]+login[ \t\r\n]+\S+[ \t\r\n]+password[ \t\r\n]+(?P<secret4>\S+)"
        ),
        _accept_cli_password,
        triggers=("mysql", "mariadb", "sshpass", "curl", "wget", "login"),
    ),
    _Rule(
        "url-token",
        re.compile(
            r"[?&;](?:access_token|refresh_token|id_token|auth_token|private_token|token|api_key|apikey"
            r"|api-key|client_secret|secret|password|passwd|pwd|sig|signature|x-amz-signature"
            r"|x-amz-security-token)=(?P<secret>[^&#\s\"'<>]+)",
            re.IGNORECASE,
        ),
        _accept_query_token,
    ),
    _Rule(
        "authorization",
        re.compile(
            r"authorization(?<![A-Za-z0-9_]authorization)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
            r"(?:(?P<scheme>bearer|basic|token|digest|negotiate|bot|apikey)[ \t]+)?"
            r"(?P<secret>[A-Za-z0-9._~+/=:-]+)",
            re.IGNORECASE,
        ),
        _accept_authorization,
        triggers=("authorization",),
        anchor="authorization",
    ),
    # GitHub's classic tokens are 40 lower-case hex digits, as git's commit ids are: only where a token
    # is named right before it on its line ("my token is ...", gh auth login --with-token <<< ...), on the
    # line after `gh auth token`, or piped into gh auth login (a subject line ending in "token" can come
    # before a commit id). After the authorization rule, which names "Authorization: token ...".
    _Rule(
        "github-token",
        re.compile(
            r"token(?<![A-Za-z0-9]token)(?:[ \t]+(?:is[ \t]+)?|[ \t]*<<<[ \t]*|(?<=auth token)[ \t]*\r?\n)[\"']?"
            r"(?P<secret>(?-i:[0-9a-f]{40}))(?![A-Za-z0-9_-])",
            re.IGNORECASE,
        ),
        anchor="token",
    ),
    _Rule(
        "github-token",
        re.compile(
            r"echo(?<![A-Za-z0-9_-]echo)[ \t]+[\"']?(?P<secret>[0-9a-f]{40})[\"']?[ \t]*\|[ \t]*gh[ \t]+auth[ \t]+login"
        ),
        triggers=("gh auth",),
    ),
)

# --- KEY=value, KEY: value, export KEY="value", "password": "...", --token VALUE -----------------

_ASSIGNMENT_KIND = "secret-assignment"
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


def _assignment_value_ok(value: str, *, quoted: bool, env_style: bool, sep: str, strength: int) -> bool:
    value = value.strip()
    if len(value) < 4 or _is_reference_or_placeholder(value):
        return False
    if (value.isdigit() and len(value) < 8) or value.startswith(("/", "~/", "./", "../")):
        return False
    # process.env.TOKEN, self.password, settings.SECRET_KEY: code reading a secret, not the secret.
    if _DOTTED_NAME.fullmatch(value):
        return False
    if strength == 1:
        # SORT_KEY=created_at, CACHE_KEY=user: only a random-looking value makes a *_KEY a secret.
        return _random_looking(value)
    if quoted:
        return True
    # `password = user_input` in code assigns an expression; only env-style names take bare values.
    if sep == "=" and not env_style:
        return False
    # `password: str`, `Token: see below`: a bare word after a colon is a type or prose.
    return not (sep != "=" and value.isalpha())


def _redact_assignments(text: str, lowered: str, counts: Counter[str]) -> str:
    hits = sorted(at for word in _SECRET_WORDS for at in _find_all(lowered, word))
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
        if not _assignment_value_ok(value, quoted=group == "quoted", env_style=env_style, sep=sep, strength=strength):
            continue
        pieces.append(text[done:v_start])
        pieces.append(_mark(_ASSIGNMENT_KIND))
        done = v_end
        name_end = v_end
        counts[_ASSIGNMENT_KIND] += 1
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
    for rule in _RULES:
        if rule.triggers and not any(trigger in triggers for trigger in rule.triggers):
            continue
        if text is not source:
            lowered, source = _lower(text), text
        text = rule.apply(text, lowered, counts)
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
        strength = _name_strength(name)
        if strength and _assignment_value_ok(value, quoted=True, env_style=False, sep="=", strength=strength):
            self.counts[_ASSIGNMENT_KIND] += 1
            return _mark(_ASSIGNMENT_KIND)
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
