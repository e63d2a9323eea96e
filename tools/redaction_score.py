"""Score sitegen's redaction against detect-secrets on the test corpus (tests/test_redact.py).

Run: pip install detect-secrets; python tools/redaction_score.py
detect-secrets is only needed here, never by sitegen. A credential counts as caught when sitegen's
output no longer holds it, and, for detect-secrets (default plugins, line by line), when one of its
findings covers at least half of it (a private key: a "Private Key" finding); a look-alike counts as
wrongly flagged when sitegen changes it or detect-secrets reports anything in it."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_redact import LOOKALIKES, SECRETS, Secret  # noqa: E402  (tests/ is not a package)

from sitegen.redact import redact_text  # noqa: E402


def _findings(text: str) -> list[tuple[str, str]]:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    found: list[tuple[str, str]] = []
    with default_settings():
        for line in text.splitlines():
            found += [(item.type, item.secret_value or "") for item in scan_line(line)]
    return found


def _detect_secrets_catches(case: Secret) -> bool:
    for kind, value in _findings(case.text):
        if kind == "Private Key" and "PRIVATE KEY" in case.secret:
            return True
        if value and (case.secret in value or (value in case.secret and 2 * len(value) >= len(case.secret))):
            return True
    return False


def main() -> None:
    try:
        from detect_secrets.__version__ import VERSION as version
    except ImportError:
        sys.exit("detect-secrets is not installed: pip install detect-secrets")
    ours = sum(case.secret not in redact_text(case.text)[0] for case in SECRETS)
    theirs = [_detect_secrets_catches(case) for case in SECRETS]
    ours_wrong = sum(redact_text(text)[0] != text for text in LOOKALIKES)
    theirs_wrong = sum(bool(_findings(text)) for text in LOOKALIKES)
    missed = Counter(case.kind for case, caught in zip(SECRETS, theirs, strict=True) if not caught)
    print(f"corpus: {len(SECRETS)} credentials, {len(LOOKALIKES)} look-alikes")
    print(f"sitegen:                credentials caught {ours}/{len(SECRETS)}, look-alikes flagged {ours_wrong}")
    print(
        f"detect-secrets {version}: credentials caught {sum(theirs)}/{len(SECRETS)}, look-alikes flagged {theirs_wrong}"
    )
    print("detect-secrets missed: " + ", ".join(f"{n} {kind}" for kind, n in missed.most_common()))


if __name__ == "__main__":
    main()
