"""The agents' own context code, run to compare with sitegen's: omp 18.3.4 (../shared/oracles/omp, with
bun from npm) and pi 0.73.1 (npm). Found through SITEGEN_OMP_ORACLE / SITEGEN_PI_ORACLE, else installed
once into a cache folder (SITEGEN_ORACLE_INSTALL=0 forbids that); None where they cannot be had."""

from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from conftest import SHARED

from sitegen.session.context import OMP_RULES, build_session_context
from sitegen.session.session import open_session

HERE = Path(__file__).resolve().parent
OMP_SOURCE = SHARED / "oracles" / "omp"
OMP_DRIVER = HERE / "oracles" / "omp_contexts.ts"
PI_DRIVER = HERE / "oracles" / "pi_contexts.mjs"
PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = "0.73.1"
# Read at import, before the tests' own HOME is set: the cache outlives a test.
CACHE = Path(
    os.environ.get("SITEGEN_ORACLE_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sitegen-tests"
)
_BUN = Path("node_modules/@oven/bun-linux-x64/bin/bun")

# Keys omp puts on a compaction summary that sitegen does not rebuild (snapcompact frames, a time
# only the provider request uses); the context-notes message is omp's prompt text around the notes.
_UNCOMPARED_SUMMARY_KEYS = ("blocks", "images", "historyRewriteAt")
_NOTES_TYPE = "experimental_context_notes"


def _may_install() -> bool:
    return os.environ.get("SITEGEN_ORACLE_INSTALL", "1") != "0" and bool(shutil.which("npm") and shutil.which("node"))


def _writable_copy(source: Path, target: Path) -> None:
    shutil.copytree(source, target)
    for folder, _, names in os.walk(target):
        for name in [".", *names]:
            path = Path(folder) / name
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


@functools.cache
def omp_oracle() -> Path | None:
    """The installed omp oracle folder (its bun inside), or None."""
    given = os.environ.get("SITEGEN_OMP_ORACLE")
    if given:
        return Path(given) if (Path(given) / _BUN).is_file() else None
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return None  # install.sh fetches bun for linux-x64 only
    folder = CACHE / "omp-18.3.4"
    if (folder / _BUN).is_file():
        return folder
    if not OMP_SOURCE.is_dir() or not _may_install():
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=CACHE, prefix="omp-install-")) / "omp"
    try:
        _writable_copy(OMP_SOURCE, work)
        subprocess.run(["bash", "install.sh"], cwd=work, check=True, capture_output=True, timeout=600)
        work.rename(folder)
    except (OSError, subprocess.SubprocessError):
        if not (folder / _BUN).is_file():
            return None
    finally:
        shutil.rmtree(work.parent, ignore_errors=True)
    return folder


@functools.cache
def pi_oracle() -> Path | None:
    """A folder whose node_modules holds pi-coding-agent 0.73.1, or None."""

    def installed(folder: Path) -> bool:
        package = folder / "node_modules" / PI_PACKAGE / "package.json"
        return package.is_file() and json.loads(package.read_text()).get("version") == PI_VERSION

    given = os.environ.get("SITEGEN_PI_ORACLE")
    if given:
        return Path(given) if installed(Path(given)) and shutil.which("node") else None
    folder = CACHE / f"pi-{PI_VERSION}"
    if installed(folder) and shutil.which("node"):
        return folder
    if not _may_install():
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=CACHE, prefix="pi-install-"))
    try:
        (work / "package.json").write_text('{"private": true}\n')
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", f"{PI_PACKAGE}@{PI_VERSION}"],
            cwd=work,
            check=True,
            capture_output=True,
            timeout=600,
        )
        work.rename(folder)
    except (OSError, subprocess.SubprocessError):
        shutil.rmtree(work, ignore_errors=True)
    return folder if installed(folder) else None


def run_omp(files: list[Path], work: Path) -> list[dict[str, Any]]:
    """omp's contexts for each file: {entryCount, defaultLeaf, leaves: {index: context}, signatures}."""
    folder = omp_oracle()
    assert folder is not None
    out = work / "omp-contexts.json"
    env = {**os.environ, "BUN_RUNTIME_TRANSPILER_CACHE_PATH": str(folder / ".cache" / "bun-transpiler")}
    command = [str(folder / _BUN), str(OMP_DRIVER), str(folder), str(out), *map(str, files)]
    subprocess.run(command, check=True, env=env, capture_output=True, timeout=600)
    results: list[dict[str, Any]] = json.loads(out.read_text())["files"]
    return results


def run_pi(files: list[Path], work: Path) -> list[dict[str, Any]]:
    """pi's contexts for each file, in the same shape as run_omp's."""
    folder = pi_oracle()
    assert folder is not None
    out = work / "pi-contexts.json"
    node = shutil.which("node") or "node"
    subprocess.run([node, str(PI_DRIVER), str(folder), str(out), *map(str, files)], check=True, timeout=600)
    results: list[dict[str, Any]] = json.loads(out.read_text())["files"]
    return results


def _js_string(value: Any, present: bool = True) -> str:
    """String(value) as JavaScript writes it, for the values the signatures hold."""
    if not present:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def _typeof(value: Any, present: bool) -> str:
    if not present:
        return "undefined"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "object"


def signature(messages: list[dict[str, Any]]) -> str:
    """The drivers' signature of a message list: role, time and block types of each message."""
    import hashlib

    parts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            types = [
                "" if not isinstance(b, dict) or b.get("type") is None else _js_string(b.get("type")) for b in content
            ]
            blocks = f"{len(content)}:{','.join(types)}"
        else:
            blocks = _typeof(content, "content" in message)
        role = _js_string(message.get("role"), "role" in message)
        when = _js_string(message.get("timestamp"), "timestamp" in message)
        parts.append(f"{role}\x1f{when}\x1f{blocks}")
    return hashlib.sha256("\x1e".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def sitegen_contexts(path: Path) -> dict[str, Any]:
    """sitegen's contexts for a file, in the drivers' shape, and the rules it followed."""
    session = open_session(path)
    rules = session.context_rules
    entries = session.entries
    parents = {entry.get("parentId") for entry in entries}
    leaves: dict[str, Any] = {}
    signatures = []
    for index, entry in enumerate(entries):
        context = build_session_context(entries, entry["id"], session.by_id, rules)
        signatures.append(signature(context.messages))
        if entry["id"] not in parents or index == len(entries) - 1:
            leaves[str(index)] = context.to_json()
    return {
        "rules": rules,
        "entryCount": len(entries),
        "defaultLeaf": len(entries) - 1 if entries else None,
        "leaves": leaves,
        "signatures": signatures,
    }


def _without_nulls(value: Any) -> Any:
    """JSON with null members dropped: JavaScript omits undefined ones, sitegen writes them as None."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def comparable(context: dict[str, Any], rules: str) -> dict[str, Any]:
    """The parts of a context (sitegen's to_json, or an oracle's) both sides compute, side by side."""
    messages = []
    for message in context["messages"]:
        if message.get("role") == "compactionSummary":
            message = {k: v for k, v in message.items() if k not in _UNCOMPARED_SUMMARY_KEYS}
        if message.get("role") == "custom" and message.get("customType") == _NOTES_TYPE:
            message = {**message, "content": "(notes)"}
        messages.append(message)
    if rules == OMP_RULES:
        picked = {
            "messages": messages,
            "thinkingLevel": context.get("thinkingLevel"),
            "models": context.get("models"),
            "injectedTtsrRules": context.get("injectedTtsrRules"),
            "mode": context.get("mode"),
            "modeData": context.get("modeData"),
            "configuredThinkingLevel": context.get("configuredThinkingLevel"),
            "serviceTier": context.get("serviceTier"),
        }
    else:
        model = context.get("model")
        if "models" in context:
            default = context["models"].get("default")
        else:
            default = f"{model['provider']}/{model['modelId']}" if model else None
        picked = {"messages": messages, "thinkingLevel": context.get("thinkingLevel"), "model": default}
    return dict(_without_nulls(picked))
