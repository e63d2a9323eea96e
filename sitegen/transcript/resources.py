"""What a tool call touches: URLs, host names with a known top-level domain, and paths; never code."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["PathScope", "call_resources", "is_local_url", "novel_resources", "resources_in"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Arguments that name what a call works on: the value is the resource, whatever it looks like.
_PATH_KEYS = frozenset(
    {"path", "file_path", "filepath", "file", "filename", "paths", "dir", "directory", "cwd", "notebook_path"}
)
# Bodies being written and replaced, and search patterns: text the call carries, not resources it touches
# (scanning them floods the list with identifiers such as fmt.Print or os.path).
_SKIP_KEYS = frozenset(
    {
        "content", "contents", "file_text", "text", "data", "new_string", "old_string", "new_str", "old_str",
        "newtext", "oldtext", "newstring", "oldstring", "pattern", "regex", "query", "glob", "include", "exclude",
    }
)  # fmt: skip
# Extensions that mark a word without a slash as a file name (README.md, main.go, package.json).
_FILE_EXTENSIONS = _words(
    """py pyi pyx ipynb js mjs cjs jsx ts tsx mts cts vue svelte json jsonl ndjson yaml yml toml ini cfg conf env
    properties lock md markdown rst txt csv tsv xml html htm css scss sass less sql db sqlite sqlite3 sh bash zsh
    fish ps1 bat go rs c h cc cpp cxx hpp hh java kt kts scala rb php swift cs fs ex exs erl hs lua pl pm jl dart
    zig nim tf hcl proto graphql gql png jpg jpeg gif webp svg ico pdf zip tar gz tgz bz2 xz whl jar log patch
    diff mod sum gradle cmake mk nix"""
)
# Top-level domains a host name may end in. Not IANA's list: .blue, .app, .page, .info and .name are real
# domains but far more often the last part of a member expression (chalk.blue, this.app, logger.info).
_TLDS = _words(
    """com org net io dev ai co edu gov mil int biz uk de fr nl eu ch at be it es pt se dk fi pl cz sk hu ro gr
    ie jp cn kr tw hk sg au nz ca us mx br ar ru ua tr il za xyz tech cloud sh gg tv fm ly cc gl la ws"""
)
# Names that start member expressions, not host or file names: os.path, this.message, Math.max, chalk.blue.
_RECEIVERS = _words(
    """this self cls super os sys math json console process window document globalthis module exports chalk np pd
    plt re logger logging log req res ctx err e evt event args kwargs t tx r row x el obj"""
)
# Dotfiles and dot-folders named alone, without a folder (`cat .netrc`).
_DOTFILES = _words(
    """.env .netrc .npmrc .pypirc .pgpass .bashrc .zshrc .profile .bash_profile .gitconfig .gitignore .ssh .aws
    .kube .docker .gnupg .config .git .github .vscode"""
)
# Places every command may name that no one would call a resource it touched.
_NOT_RESOURCES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/", "~", "~/"})
_URL = re.compile(r"https?://[^\s'\"<>`\\]+", re.IGNORECASE)
# A word of a command as the shell splits it: a quoted string is one word, operators end words.
_SHELL_WORD = re.compile(r"""'[^']*'|"(?:[^"\\]|\\.)*"|[^\s;|&<>`'"]+""")
# What a path, a file name or a host name is made of; a word with anything else is code or prose.
_SHAPE = re.compile(r"[\w.@+~%:-]*(?:/[\w.@+~%:-]*)*")
# String literals inside code (open("data.csv")): only file names and known paths count from these.
_LITERAL = re.compile(r"""["']([^"'\s]+)["']""")
# Shell and Python comments: prose about paths ("../xyz becomes ../../xyz"), not paths a command touches.
_COMMENT = re.compile(r"(?m)(?:^|(?<=\s))#[^\n]*")
_HOST_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?")
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "0.0.0.0", "[::1]", "::1"})


@dataclass(frozen=True, slots=True)
class PathScope:
    """The session's own paths: what its tool calls name as files and folders, and its working directory."""

    cwd: str = ""
    known: frozenset[str] = frozenset()  # every path argument and every folder above one
    named: frozenset[str] = frozenset()  # the path arguments themselves
    # resources_in's answer per text, which depends only on the text and the scope: a session runs the
    # same commands again and again (pytest, git status), and the audit reads each of them.
    found: dict[str, tuple[str, ...]] = field(default_factory=dict, init=False, compare=False, repr=False)

    @classmethod
    def of(cls, cwd: str, arguments: Iterable[object]) -> PathScope:
        """The paths named by path arguments (path, file_path, ...) of the given calls, with their folders."""
        scope = cls(cwd.rstrip("/"))
        # Each path once: a session reads and edits the same files again and again.
        paths = {
            text
            for value in arguments
            for key, text in _leaves(value)
            if key.lower() in _PATH_KEYS and text.strip() and "\n" not in text
        }
        known: set[str] = set()
        named: set[str] = set()
        for text in paths:
            relative = scope.relative(text)
            if relative in named:
                continue
            parts = relative.split("/")
            known.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
            named.add(relative)
        known.discard("")
        named.discard("")
        return cls(scope.cwd, frozenset(known), frozenset(named))

    def relative(self, path: str) -> str:
        """A path as the working directory sees it, without ./ and a trailing slash."""
        path = path.strip()
        cwd = self.cwd
        if cwd and path.startswith(cwd) and path.startswith("/", len(cwd)):
            path = path[len(cwd) + 1 :]
        while path.startswith("./"):
            path = path[2:]
        return path.rstrip("/") or path

    def knows(self, path: str) -> bool:
        return self.relative(path) in self.known

    def inside(self, resource: str) -> bool:
        """Whether a resource is a path in the working directory: relative without climbing out of it
        (src/app.py, README.md), or absolute below it. Host names and URLs are not paths."""
        if "://" in resource:
            return False
        path = self.relative(resource)
        if path.startswith(("/", "~")) or ".." in path.split("/"):
            return False
        return "/" in path or _file_name(path) or path in self.named


# How deep _leaves follows arguments by recursion; a branch deeper than this (arguments can nest deeper
# than Python's stack) is walked with a list of what is pending instead, which is three times slower.
_RECURSION_DEPTH = 40


def _leaves(value: object, key: str = "") -> list[tuple[str, str]]:
    """(key, string) for every string in decoded arguments, in order, at any depth."""
    found: list[tuple[str, str]] = []
    _walk(value, key, found, _RECURSION_DEPTH)
    return found


def _walk(value: object, key: str, found: list[tuple[str, str]], depth: int) -> None:
    if isinstance(value, str):
        found.append((key, value))
    elif depth == 0:
        found += _leaves_without_recursion(value, key)
    elif isinstance(value, dict):
        for name, item in value.items():
            if isinstance(item, str):
                found.append((str(name), item))
            else:
                _walk(item, str(name), found, depth - 1)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                found.append((key, item))
            else:
                _walk(item, key, found, depth - 1)


def _leaves_without_recursion(value: object, key: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    pending: list[tuple[object, str]] = [(value, key)]
    while pending:
        item, name = pending.pop()
        if isinstance(item, str):
            found.append((name, item))
        elif isinstance(item, dict):
            pending.extend(reversed([(v, str(k)) for k, v in item.items()]))
        elif isinstance(item, list):
            pending.extend(reversed([(entry, name) for entry in item]))
    return found


def _host(word: str) -> bool:
    labels = word.split(".")
    if len(labels) < 2 or labels[-1] not in _TLDS or labels[0] in _RECEIVERS:
        return False
    return all(_HOST_LABEL.fullmatch(label) for label in labels)


def _path(word: str, scope: PathScope) -> bool:
    """A word with a slash: a path when it is absolute, home-relative, explicitly relative, one the session
    names, or ends in a file name; `application/json`, `origin/main` or `rjust/center` are not."""
    if word in _NOT_RESOURCES or scope.knows(word):
        return word not in _NOT_RESOURCES
    if word.startswith(("/", "~/", "./", "../")):
        return len(word.strip("/.~")) > 0
    return _file_name(word.rsplit("/", 1)[-1])


def _file_name(word: str) -> bool:
    if word.lower() in _DOTFILES:
        return True
    stem, dot, extension = word.rpartition(".")
    return bool(dot and stem and extension.lower() in _FILE_EXTENSIONS and stem.split(".")[0].lower() not in _RECEIVERS)


def _classify(word: str, scope: PathScope, literal: bool) -> bool:
    if "/" in word:
        if literal:  # "/status" in code is a route as often as a file
            return scope.knows(word) or _file_name(word.rsplit("/", 1)[-1])
        return _path(word, scope)
    if "." in word:
        return scope.knows(word) or _file_name(word) or (not literal and word == word.lower() and _host(word))
    return scope.relative(word) in scope.named  # a bare word (Makefile): only a path the session names


def resources_in(text: str, scope: PathScope | None = None) -> list[str]:
    """URLs, host names and paths in free text (a command, a prompt for a subagent), first occurrence order,
    no repeats. A word counts only when all of it has the shape of one, so identifiers, member expressions,
    calls and sed scripts are not among them."""
    scope = scope or PathScope()
    known = scope.found.get(text)
    if known is None:
        known = scope.found[text] = tuple(_resources_in(text, scope))
    return list(known)


def _resources_in(text: str, scope: PathScope) -> list[str]:
    text = _COMMENT.sub("", text) if "#" in text else text
    found: dict[str, int] = {}
    spans: list[tuple[int, int]] = []
    for match in _URL.finditer(text):
        found.setdefault(match.group(0).rstrip(".,);:!?'\""), match.start())
        spans.append(match.span())
    for match in _SHELL_WORD.finditer(text):
        token = match.group(0)
        start = match.start()
        if spans and any(a <= start < b for a, b in spans):
            continue
        first = token[0]
        quoted = (first == "'" or first == '"') and len(token) > 1 and token[-1] == first
        word = token[1:-1] if quoted else token.rsplit("=", 1)[-1] if "=" in token else token
        word = word.rstrip(".,:!?")
        if word and _SHAPE.fullmatch(word):
            if word not in found and _classify(word, scope, literal=False):
                found[word] = start
        else:  # code: only its string literals can name a file
            for literal in _LITERAL.findall(word if quoted else token):
                if _SHAPE.fullmatch(literal) and _classify(literal, scope, literal=True):
                    found.setdefault(literal, start)
    return sorted(found, key=found.__getitem__)


def call_resources(arguments: object, scope: PathScope | None = None) -> list[str]:
    """What a call's arguments touch: path arguments as they are, and the resources in its other strings
    (commands, URLs); written bodies and search patterns are skipped."""
    scope = scope or PathScope()
    if isinstance(arguments, str):
        return resources_in(arguments, scope)
    found: dict[str, None] = {}
    for key, text in _leaves(arguments):
        name = key.lower()
        if name in _SKIP_KEYS:
            continue
        if name in _PATH_KEYS:
            value = text.strip()
            if value and "\n" not in value and len(value) <= 4096 and value not in _NOT_RESOURCES:
                found.setdefault(value, None)
            continue
        for resource in resources_in(text, scope):
            found.setdefault(resource, None)
    return list(found)


def novel_resources(
    user_text: str, resources: Iterable[str], scope: PathScope | None = None, *, lowered: bool = False
) -> list[str]:
    """The resources the user's text does not mention (compared in lower case, a path also as the working
    directory sees it); the working directory itself is never novel. `lowered`: the text is in lower
    case already (a turn's calls all compare with its prompt, which may be long)."""
    scope = scope or PathScope()
    user = user_text if lowered else user_text.lower()
    novel: list[str] = []
    for resource in resources:
        relative = scope.relative(resource)
        if resource.rstrip("/") == scope.cwd or relative in ("", "."):
            continue
        if resource.lower() not in user and relative.lower() not in user:
            novel.append(resource)
    return novel


def is_local_url(url: str) -> bool:
    """A URL of this machine (localhost, 127.0.0.1, [::1]): fetching it brings in nothing from outside."""
    rest = url.split("://", 1)[-1]
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    if not host.startswith("["):
        host = host.split(":", 1)[0]
    else:
        host = host.split("]", 1)[0] + "]"
    return host.lower() in _LOCAL_HOSTS
