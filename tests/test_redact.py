"""Redaction: a corpus of real-shaped fake secrets that must go and look-alikes that must stay."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import random
import string
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from sitegen.redact import KINDS, Redactor, describe_counts, redact_text, redact_value

# The fakes are generated, not written out, so no secret scanner mistakes this file for a leak.
_rng = random.Random(20260601)
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64URL = ALNUM + "-_"


def fake(n: int, alphabet: str = ALNUM) -> str:
    """n random characters holding a digit and a letter, as generated keys do."""
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def _hex(n: int) -> str:
    """n random lower-case hex digits holding a digit and a letter, as GitHub's classic tokens do."""
    return fake(n, "0123456789abcdef")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def pem(label: str, *, end: bool = True) -> str:
    body = base64.b64encode(_rng.randbytes(300)).decode()
    lines = [f"-----BEGIN {label}-----", *(body[i : i + 64] for i in range(0, len(body), 64))]
    if end:
        lines.append(f"-----END {label}-----")
    return "\n".join(lines)


@dataclass(frozen=True)
class Secret:
    kind: str
    text: str  # where it appears
    secret: str  # what must not survive


def _jwt() -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": fake(12), "iat": 1760000000}).encode())
    return f"{header}.{payload}.{fake(43, B64URL)}"


def _secrets() -> list[Secret]:
    cases: list[Secret] = []

    def add(kind: str, template: str, secret: str) -> None:
        cases.append(Secret(kind, template.format(s=secret), secret))

    add("openai-key", "OpenAI key: {s}", "sk-" + fake(48))
    add(
        "openai-key",
        "curl -H 'Authorization: Bearer {s}' https://api.openai.com/v1/models",
        "sk-proj-" + fake(74, B64URL),
    )
    add("openai-key", "client = OpenAI(api_key='{s}')", "sk-svcacct-" + fake(60, B64URL))
    add("anthropic-key", 'ANTHROPIC_API_KEY="{s}"', "sk-ant-api03-" + fake(93, B64URL) + "AA")
    add("anthropic-key", "x-api-key: {s}", "sk-ant-admin01-" + fake(93, B64URL) + "AA")
    add("stripe-key", "stripe.api_key = '{s}'", "sk_live_" + fake(24))
    add("stripe-key", "restricted: {s}", "rk_live_" + fake(24))
    add("stripe-key", "STRIPE test key {s} in the fixture", "sk_test_" + fake(24))
    add("stripe-key", "webhook secret {s}", "whsec_" + fake(32))
    add("aws-access-key-id", "aws_access_key_id = {s}", "AKIA" + fake(16, UPPER_DIGITS))
    add("aws-access-key-id", '{{"AccessKeyId": "{s}"}}', "ASIA" + fake(16, UPPER_DIGITS))
    add("aws-secret-key", "[default]\naws_secret_access_key = {s}\n", fake(40, ALNUM + "/+"))
    add("aws-secret-key", "export AWS_SECRET_ACCESS_KEY={s}", fake(40, ALNUM + "/+"))
    add("github-token", "git clone with {s}", "ghp_" + fake(36))
    add("github-token", "oauth token {s}", "gho_" + fake(36))
    add("github-token", "https://x-access-token:{s}@github.com/o/r.git", "ghs_" + fake(36))
    add("github-token", "refresh {s}", "ghr_" + fake(36))
    add("github-token", "user-to-server {s}", "ghu_" + fake(36))
    add("github-token", "GH_TOKEN={s}", "github_pat_" + fake(22) + "_" + fake(59))
    add("gitlab-token", "PRIVATE-TOKEN: {s}", "glpat-" + fake(20, B64URL))
    add("slack-token", "SLACK_BOT={s}", f"xoxb-{_rng.randrange(10**11)}-{_rng.randrange(10**12)}-{fake(24)}")
    add("slack-token", "user token {s}", f"xoxp-{_rng.randrange(10**11)}-{_rng.randrange(10**12)}-{fake(32)}")
    add(
        "slack-token",
        "app token {s}",
        f"xapp-1-A{fake(10, UPPER_DIGITS)}-{_rng.randrange(10**12)}-{fake(64)}",
    )
    add(
        "slack-token",
        "curl -X POST {s} -d '{{}}'",
        f"https://hooks.slack.com/services/T{fake(8, UPPER_DIGITS)}/B{fake(8, UPPER_DIGITS)}/{fake(24)}",
    )
    add(
        "google-api-key",
        "https://maps.googleapis.com/maps/api/js?callback=init&k={s}",
        "AIza" + fake(35, B64URL),
    )
    add("jwt", "id_token {s} expires soon", _jwt())
    add("jwt", "Authorization: Bearer {s}", _jwt())
    add("private-key", "cat ~/.ssh/id_rsa\n{s}\n$ ", pem("RSA PRIVATE KEY"))
    add("private-key", "key file:\n{s}", pem("OPENSSH PRIVATE KEY"))
    add("private-key", "output cut off:\n{s}\n[... output truncated]", pem("EC PRIVATE KEY", end=False))
    add("private-key", "gpg --export-secret-keys -a\n{s}", pem("PGP PRIVATE KEY BLOCK"))
    add("url-password", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app", fake(20))
    add("url-password", "redis://:{s}@cache:6379/0", fake(24))
    add("url-password", "postgres://app:{s}@db:5432/app (a # in it)", "pa#" + fake(14))
    add("url-password", "git clone https://{s}@github.com/owner/repo", hashlib.sha1(fake(8).encode()).hexdigest())
    add("npm-token", "//registry.npmjs.org/:_authToken {s}", "npm_" + fake(36))
    add("huggingface-token", "huggingface-cli login --token {s}", "hf_" + fake(34))
    add("sendgrid-key", "sendgrid key {s}", "SG." + fake(22, B64URL) + "." + fake(43, B64URL))
    add("cli-password", "mysql -h db -u root -p{s} app < dump.sql", fake(14))
    add("cli-password", "sshpass -p '{s}' ssh deploy@web1", fake(12))
    add("cli-password", "curl -sS -u deploy:{s} https://ci.example.com/api", fake(16))
    add("cli-password", "cat ~/.netrc\nmachine api.example.com login ann password {s}\n", fake(12))
    add("cli-password", "mysql -u root -p'{s}' app", fake(10) + " " + fake(6))
    add("cli-password", 'mariadb -h db -p"{s}" -e "select 1"', fake(14))
    add("cli-password", "curl -fsSu deploy:{s} https://ci.example.com/api", fake(16))
    add("cli-password", "cat ~/.netrc\nmachine api.example.com\n  login ann\n  password {s}\n", fake(12))
    add("cli-password", "default login anonymous password {s}", fake(12))
    add("twilio-key", "twilio api:keys:create -> sid {s}", "SK" + _hex(32))
    add("github-token", "my github token is {s}, use it", _hex(40))
    add("github-token", "$ gh auth token\n{s}\n$ ", _hex(40))
    add("github-token", "gh auth login --with-token <<< '{s}'", _hex(40))
    add("github-token", "echo {s} | gh auth login --with-token", _hex(40))
    add("url-password", "git remote add origin https://{s}:x-oauth-basic@github.com/o/r.git", _hex(40))
    add("url-password", "mysql://app:{s}@db:3306/app (an @ in it)", fake(8) + "@" + fake(8))
    add("url-token", "GET https://api.example.net/v2/items?access_token={s}&page=2", fake(32))
    add("url-token", "wget 'https://dl.example.org/f.tgz?user=ann&api_key={s}'", fake(28))
    add("authorization", "Authorization: Basic {s}", base64.b64encode(b"deploy:" + fake(16).encode()).decode())
    add(
        "authorization",
        'headers = {{"Authorization": "token {s}"}}',
        hashlib.sha1(fake(8).encode()).hexdigest(),
    )
    add("authorization", "Proxy-Authorization: Bearer {s}", fake(40, B64URL))
    add("secret-assignment", 'export DATABASE_PASSWORD="{s}"', fake(18, ALNUM + "!#%&"))
    add("secret-assignment", "API_KEY={s}", fake(32))
    add("secret-assignment", "SESSION_SECRET={s}\nPORT=8080", fake(40))
    add("secret-assignment", "db:\n  user: app\n  password: {s}\n", fake(14))
    add("secret-assignment", '{{"client_id": "web", "client_secret": "{s}"}}', fake(40))
    add("secret-assignment", "mysql -u root --password={s} app", fake(12))
    add("secret-assignment", "environment:\n  MYSQL_ROOT_PASSWORD: {s}\n", fake(16))
    add("secret-assignment", "PGPASSWORD={s} psql -h db app", fake(16))
    add("secret-assignment", "X-Api-Key: {s}", fake(32))
    add("secret-assignment", "SECRET_KEY = 'django-insecure-{s}'", fake(40))
    add("secret-assignment", 'const apiKey = "{s}";', fake(39))
    add("secret-assignment", "ENCRYPTION_KEY={s}", hashlib.sha256(fake(8).encode()).hexdigest())
    # The kinds a security review found missing (issue 31): INI files, .npmrc, docker, Telegram, Vault,
    # DigitalOcean, cookies, a GCP service account's key id.
    add(
        "secret-assignment", "cat ~/.pypirc\n[pypi]\nusername = __token__\npassword = {s}\n", "pypi-" + fake(60, B64URL)
    )
    add("secret-assignment", "[client]\nuser = root\npassword = {s}\nhost = db\n", fake(10) + "!" + fake(5))
    add("secret-assignment", "[smtp]\npassword = {s}", fake(20))
    add("npm-token", "//registry.npmjs.org/:_authToken={s}", str(uuid.UUID(int=_rng.getrandbits(128), version=4)))
    add("npm-token", "//npm.example.com/:_auth = {s}", base64.b64encode(b"ann:" + fake(14).encode()).decode())
    add(
        "docker-auth",
        '{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{s}"}}}}}}',
        base64.b64encode(b"ann:" + fake(20).encode()).decode(),
    )
    add("telegram-token", "curl https://api.telegram.org/bot{s}/sendMessage -d chat_id=42", _telegram())
    add("telegram-token", "BotFather: use this token to access the HTTP API: {s}", _telegram())
    add("vault-token", "vault login {s}", "hvs." + fake(90, B64URL))
    add("vault-token", "X-Vault-Token: {s}", "hvb." + fake(120, B64URL))
    add("digitalocean-token", "doctl auth init -t {s}", "dop_v1_" + _hex(64))
    add("cookie", "curl -H 'Cookie: theme=dark; session={s}' https://app.example.com/api", fake(32))
    add("cookie", "Set-Cookie: sid={s}; Path=/; HttpOnly; Secure", fake(12))
    add("cookie", '{{"headers": {{"Cookie": "_ga=GA1.2.3; remember_token={s}"}}}}', fake(40, B64URL))
    add("cookie", "curl --cookie 'connect.sid={s}' https://x", "s%3A" + fake(30))
    add(
        "secret-assignment",
        '{{"type": "service_account", "project_id": "demo-1", "private_key_id": "{s}"}}',
        _hex(40),
    )
    return cases


def _telegram() -> str:
    return f"{_rng.randrange(10**8, 10**10)}:AA{fake(33, B64URL)}"


def _lookalikes() -> list[str]:
    image = base64.b64encode(_rng.randbytes(6000)).decode()
    return [
        f"commit {hashlib.sha1(b'one').hexdigest()} (HEAD -> main)",
        "git show a1b2c3d",
        f"sha256 {hashlib.sha256(b'two').hexdigest()}  dist/sitegen.whl",
        f"blob:sha256:{hashlib.sha256(b'three').hexdigest()}",
        f"session {uuid.UUID(int=_rng.getrandbits(128), version=4)}",
        image,
        f'{{"type": "image", "data": "{image[:3000]}", "mimeType": "image/png"}}',
        f"<img src='data:image/png;base64,{image[:2000]}'>",
        "integrity sha512-" + base64.b64encode(hashlib.sha512(b"four").digest()).decode(),
        "test_redaction_leaves_long_identifiers_like_this_one_alone_2024",
        "run task-skeleton, then disk-usage-report-2024 and risk-assessment-matrix-v2",
        "pip install scikit-learn; .sk-circle-bounce-animation-delay-children { }",
        # A name that describes passwords without holding one: its value is a setting, not a secret.
        "PASSWORD_MIN_LENGTH=8",
        "TOKEN_EXPIRY_SECONDS=3600\nMAX_TOKENS=4096",
        '{"max_tokens": 4096, "totalTokens": 123456, "input_tokens": 17}',
        "def login(user: str, password: str) -> Token:",
        "password = request.form['password']",
        "API_KEY = os.environ['API_KEY']\ntoken = os.getenv('GITHUB_TOKEN')",
        "secret: process.env.APP_SECRET",
        # Placeholders from docs and READMEs (the real sessions hold these, not keys).
        "export ANTHROPIC_API_KEY=sk-ant-...\nexport CEREBRAS_API_KEY=csk-...\nexport GEMINI_API_KEY=...",
        "export OPENAI_API_KEY=<your-key>",
        "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        'API_KEY=$API_KEY curl -H "Authorization: Bearer $TOKEN" https://x',
        # `password` in a URL is the docs' placeholder word, not somebody's password.
        "postgres://user:password@localhost:5432/db",
        # Stripe publishable keys are made to be embedded in public pages.
        "stripe.js uses pk_live_" + fake(24),
        "https://example.com/search?q=tokens&page=2&sort=asc",
        "git@github.com:owner/repo.git and ssh://git@github.com/owner/repo",
        "http://localhost:8080/api/v1/users and https://user@host.example/x",
        "The Authorization header is required for every request.",
        "2026-06-01T14:00:00.000Z 2026-06-01T14-00-00-000Z_6cc466c3-1234-4abc-8def-0123456789ab.jsonl",
        "AKIAs are AWS key ids; ASIA-PACIFIC is a region",
        "eyJhbGciOiJIUzI1NiJ9 is only a base64 header, not a token",
        "SORT_KEY=created_at\nPRIMARY_KEY: id\nCACHE_KEY=user_profile",
        "tokens start with github_pat_ or ghp_, keys with sk- or AIza",
        "entry a1b2c3d4, nanoid V1StGXR8_Z5jdHi6B-myT, odek 20260601-0123456789abcdef0123456789abcdef",
        "thinkingSignature " + base64.b64encode(_rng.randbytes(600)).decode(),
        "Already clean: [REDACTED:openai-key] and API_KEY=[REDACTED:secret-assignment]",
        "İstanbul: the token count is 1234 and the secret word is İİİ",
        # Command-line flags and names that look like the new rules but hold no secret.
        "mysql -u root -p app; mysql --port=3306 -P3306 -h db; sshpass -p $SSHPASS ssh x",
        "curl -u $USER:$TOKEN https://x; curl -sS https://x | jq; wget -q https://x/f.tgz",
        "npm_config_cache=/tmp/npm hf_hub_download() msg.send(); SG.rows",
        # Git commit SHAs are 40 hex digits like GitHub's classic tokens: only a token's context counts.
        f"git checkout {hashlib.sha1(b'five').hexdigest()}\ngit push origin {hashlib.sha1(b'six').hexdigest()}:main",
        f"the tokenizer change landed in {hashlib.sha1(b'seven').hexdigest()} (token refresh: see below)",
        f"https://github.com/o/r/commit/{hashlib.sha1(b'eight').hexdigest()}",
        f"tokens {hashlib.sha1(b'nine').hexdigest()}",
        f"git log --format=%s%n%H\nRotate the deploy token\n{hashlib.sha1(b'twelve').hexdigest()}",
        f"DESK{hashlib.md5(b'ten').hexdigest()} SKIP SK-1234 SKU {hashlib.md5(b'eleven').hexdigest()}",
        "The machine learning password policy is strict; machine-readable login password fields",
        "mysql -p'$MYSQL_PWD' app; curl -fsSu $CI_USER:$CI_PASS https://x",
        # Near the kinds added for issue 31: code, settings and prose that hold no credential.
        "[metadata]\nname = sitegen\npassword = None\ntoken = token_for_user\n",
        "password = get_password()\ntoken = token.strip()\npassword = input_password\nsecret = 42",
        "[pypi]\nusername = __token__\npassword = ${PYPI_TOKEN}\n",
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\nalways-auth=true",
        '{"auth": "required", "auths": {}, "credsStore": "desktop"}',
        "Cookie: theme=dark; lang=en-US\nSet-Cookie: sid=deleted; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
        "cookies are small; the cookie jar is cookies.txt and cookie: see the docs",
        "Telegram bot @sitegen_bot, chat id 123456789, ratio 16:9 and time 12:30:45",
        "hvs. is the prefix of Vault service tokens; VAULT_ADDR=https://vault.internal:8200",
        "dop_v1_ tokens are DigitalOcean's; doctl auth init --context work",
        "docker login -u ann --password-stdin < pw.txt",
        '{"private_key_id": "<key id>", "client_email": "svc@demo-1.iam.gserviceaccount.com"}',
        "[client]\nuser = root\nport = 3306\nhost = db.internal\n",
        "if password == other_password:\n    token_count = len(tokens)",
    ]


SECRETS = _secrets()
LOOKALIKES = _lookalikes()


@pytest.mark.parametrize("case", SECRETS, ids=[f"secret{i:02d}-{case.kind}" for i, case in enumerate(SECRETS, 1)])
def test_secret_is_redacted_with_its_kind(case: Secret) -> None:
    out, counts = redact_text(case.text)
    assert case.secret not in out
    assert f"[REDACTED:{case.kind}]" in out
    assert counts == Counter({case.kind: 1})


@pytest.mark.parametrize("text", LOOKALIKES, ids=[f"lookalike{i:02d}" for i in range(1, len(LOOKALIKES) + 1)])
def test_lookalike_is_untouched(text: str) -> None:
    out, counts = redact_text(text)
    assert out == text
    assert not counts


@pytest.mark.parametrize("sizes", [(len(SECRETS), len(LOOKALIKES))], ids=lambda s: f"{s[0]}secrets-{s[1]}lookalikes")
def test_corpus_covers_every_kind(sizes: tuple[int, int]) -> None:
    secrets, lookalikes = sizes
    assert secrets >= 60 and lookalikes >= 50
    by_kind = Counter(case.kind for case in SECRETS)
    assert set(by_kind) == set(KINDS)
    print(f"\nredaction corpus: {secrets} secrets ({describe_counts(by_kind)}), {lookalikes} look-alikes")


def test_whole_corpus_in_one_text() -> None:
    text = "\n\n".join([*LOOKALIKES, *(case.text for case in SECRETS)])
    out, counts = redact_text(text)
    assert counts == Counter(case.kind for case in SECRETS)
    assert not any(case.secret in out for case in SECRETS)
    assert all(lookalike in out for lookalike in LOOKALIKES)


def test_redaction_is_idempotent() -> None:
    once, _ = redact_text("\n".join(case.text for case in SECRETS))
    twice, counts = redact_text(once)
    assert twice == once
    assert not counts


def test_url_password_is_redacted_whole_through_an_at_sign() -> None:
    # The last "@" before the host ends the password, as URL parsers read it.
    head, tail = fake(10), fake(12)
    out, counts = redact_text(f"DATABASE_URL=postgres://app:{head}@{tail}@db.internal:5432/app")
    assert out == "DATABASE_URL=postgres://app:[REDACTED:url-password]@db.internal:5432/app"
    assert counts == Counter({"url-password": 1})


def test_offsets_survive_characters_that_grow_when_lowercased() -> None:
    # 'İ'.lower() is two characters; anchored searches must still land on the right offsets.
    secret = fake(20)
    text = "İİİİ Authorization: Bearer " + secret + " İ and PASSWORD=" + secret[::-1] + " İ"
    out, counts = redact_text(text)
    assert out == "İİİİ Authorization: Bearer [REDACTED:authorization] İ and PASSWORD=[REDACTED:secret-assignment] İ"
    assert counts == Counter({"authorization": 1, "secret-assignment": 1})


def test_redact_value_walks_json_without_mutating_it() -> None:
    github = "ghp_" + fake(36)
    password = fake(16)
    api_key = fake(32)
    session = {
        "type": "message",
        "id": "a1b2c3d4",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"I used {github} to push."},
                {
                    "type": "toolCall",
                    "name": "bash",
                    "arguments": {"command": "deploy", "env": {"DB_PASSWORD": password}},
                },
            ],
            "usage": {"input": 10, "output": 20, "totalTokens": 30, "cost": {"total": 0.01}},
            "stopReason": None,
            "flags": [True, False, 1.5],
        },
        "headers": [{"apiKey": api_key}],
    }
    before = copy.deepcopy(session)
    redactor = Redactor()
    out = redact_value(session, redactor)
    assert session == before
    dumped = json.dumps(out)
    assert github not in dumped and password not in dumped and api_key not in dumped
    assert out["message"]["content"][1]["arguments"]["env"]["DB_PASSWORD"] == "[REDACTED:secret-assignment]"
    assert out["headers"][0]["apiKey"] == "[REDACTED:secret-assignment]"
    assert out["message"]["usage"] == before["message"]["usage"]
    assert out["message"]["flags"] == [True, False, 1.5] and out["message"]["stopReason"] is None
    assert redactor.counts == Counter({"github-token": 1, "secret-assignment": 2})
    assert redactor.total == 3


def test_json_keys_that_do_not_name_secrets_keep_their_values() -> None:
    value = {"sort_key": "created_at", "cacheKey": "user:42", "password": "required", "token_type": "Bearer"}
    redactor = Redactor()
    assert redact_value(value, redactor) == value
    assert redactor.total == 0


def test_redactor_accumulates_counts_across_calls() -> None:
    redactor = Redactor()
    redactor.redact("key " + "sk-" + fake(48))
    redactor.redact("again " + "sk-" + fake(48) + " and " + "AKIA" + fake(16, UPPER_DIGITS))
    redact_value(["PASSWORD=" + fake(12)], redactor)
    assert redactor.counts == Counter({"openai-key": 2, "aws-access-key-id": 1, "secret-assignment": 1})
    assert describe_counts(redactor.counts) == "2 openai-key, 1 aws-access-key-id, 1 secret-assignment"


def test_short_and_empty_strings_pass_through() -> None:
    for text in ("", "ok", "token", "sk-1234"):
        assert redact_text(text) == (text, Counter())


def test_cookies_and_docker_auth_in_json_fields() -> None:
    session, auth = fake(24), base64.b64encode(b"ann:" + fake(16).encode()).decode()
    value = {"headers": {"Cookie": f"theme=dark; sessionid={session}"}, "auths": {"r.io": {"auth": auth}}}
    redactor = Redactor()
    out = redact_value(value, redactor)
    assert out == {
        "headers": {"Cookie": "theme=dark; sessionid=[REDACTED:cookie]"},
        "auths": {"r.io": {"auth": "[REDACTED:docker-auth]"}},
    }
    assert redactor.counts == Counter({"cookie": 1, "docker-auth": 1})
    # "auth" that is not base64 of user:password stays.
    assert redact_value({"auth": "required"}, Redactor()) == {"auth": "required"}


def test_real_sessions_have_nothing_to_redact(real_fixtures: Path) -> None:
    # The agents' own test sessions hold placeholders (`sk-ant-...`) and no secrets: a false positive
    # here would show up as noise in every shared page.
    for path in sorted(real_fixtures.glob("*.jsonl")):
        redactor = Redactor()
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                assert redact_value(record, redactor) == record
        assert redactor.total == 0, f"{path.name}: {describe_counts(redactor.counts)}"
