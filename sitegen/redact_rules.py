"""The patterns redaction looks for: one rule per kind of credential, and the checks that keep look-alikes."""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = [
    "MARK_PREFIX",
    "RULES",
    "Rule",
    "docker_auth",
    "find_all",
    "is_reference_or_placeholder",
    "mark",
    "random_looking",
]

MARK_PREFIX = "[REDACTED:"

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
_RANDOM_RUN = re.compile(r"[A-Za-z0-9]{16,}")


def mark(kind: str) -> str:
    return f"{MARK_PREFIX}{kind}]"


def is_reference_or_placeholder(value: str) -> bool:
    """True for `$VAR`, `${{ secrets.X }}`, `<token>`, `{token}`, `****`, `None` and the like."""
    if not value or value.startswith(MARK_PREFIX):
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


def random_looking(value: str) -> bool:
    """A run of 16+ letters and digits holding both: what generated keys look like, unlike identifiers."""
    runs = _RANDOM_RUN.findall(value)
    return any(any(c.isdigit() for c in run) and any(c.isalpha() for c in run) for run in runs)


def find_all(haystack: str, needle: str) -> Iterator[int]:
    """Offsets of `needle` in `haystack`; str.find is a fast C scan, unlike a case-insensitive regex."""
    at = haystack.find(needle)
    while at >= 0:
        yield at
        at = haystack.find(needle, at + 1)


@dataclass(frozen=True)
class Rule:
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
        for at in find_all(lowered, self.anchor):
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
            if secret.startswith(MARK_PREFIX) or (self.accept is not None and not self.accept(match, secret)):
                continue
            kind = self.kind if self.kind_of is None else self.kind_of(secret)
            counts[kind] += 1
            pieces += (text[done:start], mark(kind))
            done = end
        if not pieces:
            return text
        pieces.append(text[done:])
        return "".join(pieces)


def _accept_random(match: re.Match[str], secret: str) -> bool:
    return random_looking(secret)


def _accept_cli_password(match: re.Match[str], secret: str) -> bool:
    return len(secret) >= 4 and not is_reference_or_placeholder(secret)


def _accept_url_password(match: re.Match[str], secret: str) -> bool:
    return not is_reference_or_placeholder(secret)


def _accept_query_token(match: re.Match[str], secret: str) -> bool:
    return len(secret) >= 4 and not is_reference_or_placeholder(secret)


def _accept_authorization(match: re.Match[str], secret: str) -> bool:
    if len(secret) < 8 or is_reference_or_placeholder(secret):
        return False
    # Without a scheme word, "Authorization: required" is prose; a credential has a digit or a symbol.
    return match.group("scheme") is not None or not secret.isalpha()


def _accept_docker_auth(match: re.Match[str], secret: str) -> bool:
    return docker_auth(secret)


def docker_auth(secret: str) -> bool:
    """docker's config.json keeps "user:password" in base64 under "auth"; other values are left alone."""
    try:
        decoded = base64.b64decode(secret + "=" * (-len(secret) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and decoded.isascii()


def _sk_kind(secret: str) -> str:
    return "anthropic-key" if secret.startswith("sk-ant-") else "openai-key"


# Patterns start with a literal (lookbehinds for word boundaries come after it) so the regex engine jumps
# from one occurrence of the literal to the next instead of trying every position of a long string.
RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            # Base64 and header lines up to the END line; a block cut off by truncated output takes its
            # header and base64 lines (newlines may be real or, in JSON shown as text, written as \n).
            r"(?:(?:(?!-----BEGIN )[A-Za-z0-9+/=\s\\:,-])*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:[ \t]*(?:\r?\n|\\r?\\n)[ \t]*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+:[ \t][^\n\\]*))*)"
        ),
    ),
    Rule(
        "jwt",
        re.compile(rf"eyJ(?<![{_TOKEN_CHARS}]eyJ)[{_TOKEN_CHARS}]{{4,}}\.eyJ[{_TOKEN_CHARS}]{{4,}}\.[{_TOKEN_CHARS}]*"),
    ),
    # sk-ant-... (Anthropic), sk-proj-..., sk-svcacct-..., legacy sk-<48> (OpenAI) and other sk- keys.
    Rule(
        "openai-key",
        re.compile(rf"sk-(?<![{_TOKEN_CHARS}]sk-)[{_TOKEN_CHARS}]{{20,}}"),
        _accept_random,
        kind_of=_sk_kind,
    ),
    # Stripe secret and restricted keys, live and test mode, and webhook signing secrets. Publishable
    # keys (pk_live_, pk_test_) are made to be embedded in public web pages, so they are left alone.
    Rule(
        "stripe-key",
        re.compile(rf"sk_(?:live|test)_(?<![{_TOKEN_CHARS}]sk_...._)[A-Za-z0-9]{{16,}}"),
        _accept_random,
    ),
    Rule(
        "stripe-key",
        re.compile(rf"rk_(?:live|test)_(?<![{_TOKEN_CHARS}]rk_...._)[A-Za-z0-9]{{16,}}"),
        _accept_random,
    ),
    Rule(
        "stripe-key",
        re.compile(rf"whsec_(?<![{_TOKEN_CHARS}]whsec_)[A-Za-z0-9]{{16,}}"),
        _accept_random,
    ),
    Rule(
        "aws-access-key-id",
        re.compile(rf"A(?:KIA|SIA)(?<![{_B64_CHARS}]....)[A-Z0-9]{{16}}(?![={_B64_CHARS}])"),
    ),
    Rule(
        "aws-secret-key",
        re.compile(
            r"aws[_ ]?secret[_ ]?(?:access[_ ]?)?key[\"']?[ \t]*[:=][ \t]*[\"']?"
            r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
            re.IGNORECASE,
        ),
        triggers=("secret",),
        anchor="aws",
    ),
    Rule(
        "github-token",
        re.compile(
            r"g(?:h[pousr]_(?<![A-Za-z0-9_]gh._)[A-Za-z0-9]{30,255}"
            r"|ithub_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{40,255})"
        ),
    ),
    Rule(
        "gitlab-token",
        re.compile(rf"gl(?<![{_TOKEN_CHARS}]gl)(?:pat|dt|rt|ptt)-[{_TOKEN_CHARS}]{{20,}}"),
    ),
    Rule(
        "slack-token",
        re.compile(
            r"x(?:ox[abposr]-(?<![A-Za-z0-9_-]xox.-)[0-9A-Za-z-]{10,}"
            r"|app-(?<![A-Za-z0-9_-]xapp-)\d-[0-9A-Za-z-]{10,})"
        ),
    ),
    Rule(
        "slack-token",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{10,}"),
    ),
    Rule(
        "google-api-key",
        re.compile(rf"AIza(?<![{_B64_CHARS}]AIza)[{_TOKEN_CHARS}]{{35}}(?![={_B64_CHARS}])"),
    ),
    # npm automation and publish tokens, Hugging Face access tokens, SendGrid API keys.
    Rule(
        "npm-token",
        re.compile(rf"npm_(?<![{_TOKEN_CHARS}]npm_)[A-Za-z0-9]{{36}}(?![{_TOKEN_CHARS}])"),
        _accept_random,
    ),
    Rule(
        "huggingface-token",
        re.compile(rf"hf_(?<![{_TOKEN_CHARS}]hf_)[A-Za-z0-9]{{34,40}}(?![{_TOKEN_CHARS}])"),
        _accept_random,
    ),
    Rule(
        "sendgrid-key",
        re.compile(
            rf"SG\.(?<![.{_TOKEN_CHARS}]SG\.)[{_TOKEN_CHARS}]{{22}}\.[{_TOKEN_CHARS}]{{43}}(?![{_TOKEN_CHARS}])"
        ),
    ),
    # Twilio API keys: SK and 32 lower-case hex digits.
    Rule(
        "twilio-key",
        re.compile(rf"SK(?<![{_TOKEN_CHARS}]SK)[0-9a-f]{{32}}(?![{_TOKEN_CHARS}])"),
        _accept_random,
    ),
    # HashiCorp Vault service, batch and recovery tokens (hvs., hvb., hvr.).
    Rule(
        "vault-token",
        re.compile(rf"hv[sbr]\.(?<![.{_TOKEN_CHARS}]hv.\.)[{_TOKEN_CHARS}]{{24,}}"),
        _accept_random,
    ),
    # DigitalOcean personal access, OAuth and refresh tokens.
    Rule(
        "digitalocean-token",
        re.compile(rf"do[opr]_v1_(?<![{_TOKEN_CHARS}]do._v1_)[a-f0-9]{{64}}(?![{_TOKEN_CHARS}])"),
    ),
    # A Telegram bot token: the bot's id, a colon and 35 characters starting "AA", alone or in a Bot API
    # URL (https://api.telegram.org/bot<token>/sendMessage).
    Rule(
        "telegram-token",
        re.compile(rf"(?:(?<=bot)|(?<![:.{_TOKEN_CHARS}]))[0-9]{{6,12}}:AA[{_TOKEN_CHARS}]{{33}}(?![{_TOKEN_CHARS}])"),
        triggers=(":aa",),
    ),
    # .npmrc: //registry/:_authToken=<token or uuid>, _auth=<base64>, _password=<base64>.
    Rule(
        "npm-token",
        re.compile(r"_(?:authToken|auth|password)[ \t]*=[ \t]*[\"']?(?P<secret>[^\s\"'#;]{8,})"),
        _accept_url_password,
    ),
    # docker's ~/.docker/config.json: {"auths": {"registry": {"auth": "<base64 of user:password>"}}}.
    Rule(
        "docker-auth",
        re.compile(r'"auth\\?"[ \t]*:[ \t]*\\?"(?P<secret>[A-Za-z0-9+/]{8,}={0,2})\\?"'),
        _accept_docker_auth,
    ),
    # A password in the URL's user part; an unencoded "#" or "@" in it is still the password (people
    # write them so, and URL parsers end the user part at the last "@" before the host).
    Rule(
        "url-password",
        re.compile(r"://(?P<user>[^\s:/?#@\[\]\"'<>]*):(?P<secret>[^\s/?\"'<>]+)@(?=[A-Za-z0-9\[])"),
        _accept_url_password,
    ),
    # A token as the user part (https://<token>@github.com/o/r, https://<token>:x-oauth-basic@...):
    # long and random-looking.
    Rule(
        "url-password",
        re.compile(r"://(?P<secret>[A-Za-z0-9_-]{20,})(?::[^\s/?\"'<>]*)?@(?=[A-Za-z0-9\[])"),
        _accept_random,
    ),
    # Passwords given to command-line tools: mysql -pPASSWORD or -p'PASS WORD' (no space), sshpass -p
    # PASSWORD, curl -u (or -su, -U) user:PASSWORD, and a .netrc entry (machine HOST login USER password
    # PASSWORD, on one line or several; without "login", "machine learning password policy" is prose).
    Rule(
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
    Rule(
        "url-token",
        re.compile(
            r"[?&;](?:access_token|refresh_token|id_token|auth_token|private_token|token|api_key|apikey"
            r"|api-key|client_secret|secret|password|passwd|pwd|sig|signature|x-amz-signature"
            r"|x-amz-security-token)=(?P<secret>[^&#\s\"'<>]+)",
            re.IGNORECASE,
        ),
        _accept_query_token,
    ),
    Rule(
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
    Rule(
        "github-token",
        re.compile(
            r"token(?<![A-Za-z0-9]token)(?:[ \t]+(?:is[ \t]+)?|[ \t]*<<<[ \t]*|(?<=auth token)[ \t]*\r?\n)[\"']?"
            r"(?P<secret>(?-i:[0-9a-f]{40}))(?![A-Za-z0-9_-])",
            re.IGNORECASE,
        ),
        anchor="token",
    ),
    Rule(
        "github-token",
        re.compile(
            r"echo(?<![A-Za-z0-9_-]echo)[ \t]+[\"']?(?P<secret>[0-9a-f]{40})[\"']?[ \t]*\|[ \t]*gh[ \t]+auth[ \t]+login"
        ),
        triggers=("gh auth",),
    ),
)
