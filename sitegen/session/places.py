"""Where the pi-family agents keep their files: agent dirs, profiles, XDG folders and omp's registry."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from sitegen.fileio import read_regular_file

__all__ = [
    "AGENT_DIR_ENV",
    "CONFIG_DIR_ENV",
    "REGISTRY_DIR",
    "SESSION_DIR_ENV",
    "agent_dirs",
    "default_agent_dirs",
    "env_session_dirs",
    "expand",
    "given_dirs",
    "home",
    "profile_of",
    "registered_sessions",
    "state_dirs",
    "unique_paths",
]

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"
# omp's name for its config folder under the home folder (".omp" when unset).
CONFIG_DIR_ENV = "PI_CONFIG_DIR"
# One file per session kept outside the sessions folder (`omp --session PATH`); it holds the path.
REGISTRY_DIR = "custom-session-files"
# The folder omp uses under $XDG_DATA_HOME and $XDG_STATE_HOME: the agent/ level is flattened there.
_XDG_NAME = "omp"
_PROFILES = "profiles"
# A registry marker is one path: more than this is not one.
_MAX_MARKER_BYTES = 64 << 10
_PROFILE_NAME = re.compile(r"[^/\\]+")


def home(env: Mapping[str, str]) -> Path:
    value = env.get("HOME")
    return Path(value) if value else Path.home()


def expand(value: str, env: Mapping[str, str]) -> Path:
    if value == "~" or value.startswith(("~/", "~\\")):
        return home(env) / value[2:] if len(value) > 1 else home(env)
    return Path(value).expanduser()


def unique_paths(paths: Iterable[Path]) -> list[Path]:
    """Each path once (as spelled, case folded where the system folds it), order kept."""
    seen: set[str] = set()
    out: list[Path] = []
    for path in paths:
        key = os.path.normcase(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


def _xdg_root(env: Mapping[str, str], name: str) -> Path | None:
    value = env.get(name, "").strip()
    return Path(value) / _XDG_NAME if value else None


def _subdirs(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return sorted(Path(entry.path) for entry in it if _PROFILE_NAME.fullmatch(entry.name) and entry.is_dir())
    except OSError:
        return []


def _config_roots(env: Mapping[str, str]) -> list[Path]:
    """~/.pi, ~/.omp (or what PI_CONFIG_DIR names, which omp joins to the home folder) and ~/.xcsh."""
    base = home(env)
    renamed = env.get(CONFIG_DIR_ENV, "").strip()
    names = [".pi", ".omp", *([renamed.lstrip("/\\")] if renamed else []), ".xcsh"]
    return unique_paths(base / name for name in names if name)


def default_agent_dirs(env: Mapping[str, str] = os.environ) -> list[Path]:
    """Every agent dir the agents may have written to, that exists: PI_CODING_AGENT_DIR, then
    ~/.pi/agent, ~/.omp/agent (and PI_CONFIG_DIR's), ~/.xcsh/agent, $XDG_DATA_HOME/omp, and each
    profile's (~/.omp/profiles/<name>/agent, ~/.xcsh/profiles/<name>/agent, $XDG_DATA_HOME/omp/profiles/<name>)."""
    found: list[Path] = []
    override = env.get(AGENT_DIR_ENV, "").strip()
    if override:
        found.append(expand(override, env))
    roots = _config_roots(env)
    found.extend(root / "agent" for root in roots if (root / "agent").is_dir())
    data = _xdg_root(env, "XDG_DATA_HOME")
    if data is not None and data.is_dir():
        found.append(data)
    for root in roots:
        found.extend(profile / "agent" for profile in _subdirs(root / _PROFILES) if (profile / "agent").is_dir())
    if data is not None:
        found.extend(_subdirs(data / _PROFILES))
    return unique_paths(found)


def agent_dirs(extra: Sequence[Path] = (), env: Mapping[str, str] = os.environ) -> list[Path]:
    """Agent dirs given on the command line first, then the defaults; each once, order kept."""
    return unique_paths([*(expand(str(d), env) for d in extra), *default_agent_dirs(env)])


def given_dirs(paths: Sequence[Path]) -> list[Path]:
    """Folders named on the command line, made absolute (without following links): the same
    folder spelled two ways ("agent", "./agent", "/home/me/agent") must give the same pages."""
    return [Path(os.path.abspath(path.expanduser())) for path in paths]


def env_session_dirs(env: Mapping[str, str] = os.environ) -> list[Path]:
    """The flat sessions folder PI_CODING_AGENT_SESSION_DIR names, when set."""
    value = env.get(SESSION_DIR_ENV, "").strip()
    return [expand(value, env)] if value else []


def profile_of(agent_dir: Path | None) -> str:
    """The profile an agent dir belongs to ("" for none): <root>/profiles/<name>/agent, or
    $XDG_DATA_HOME/omp/profiles/<name>."""
    if agent_dir is None:
        return ""
    if agent_dir.name == "agent" and agent_dir.parent.parent.name == _PROFILES:
        return agent_dir.parent.name
    if agent_dir.parent.name == _PROFILES and agent_dir.parent.parent.name == _XDG_NAME:
        return agent_dir.name
    return ""


def _state_dir(agent_dir: Path, env: Mapping[str, str]) -> Path | None:
    """Where omp keeps the state (breadcrumbs, the registry) of an agent dir under $XDG_DATA_HOME:
    the same place under $XDG_STATE_HOME (without it, omp keeps them in ~/.omp/agent)."""
    data, state = _xdg_root(env, "XDG_DATA_HOME"), _xdg_root(env, "XDG_STATE_HOME")
    if data is None or state is None:
        return None
    if agent_dir == data:
        return state
    if agent_dir.parent == data / _PROFILES:
        return state / _PROFILES / agent_dir.name
    return None


def state_dirs(dirs: Sequence[Path], env: Mapping[str, str] = os.environ) -> list[tuple[Path, Path]]:
    """(state folder, its agent dir) for each agent dir: the dir itself, and its $XDG_STATE_HOME folder."""
    found: list[tuple[Path, Path]] = []
    for agent_dir in dirs:
        found.append((agent_dir, agent_dir))
        state = _state_dir(agent_dir, env)
        if state is not None:
            found.append((state, agent_dir))
    return found


def registered_sessions(dirs: Sequence[Path], env: Mapping[str, str] = os.environ) -> list[tuple[Path, Path]]:
    """(session file, agent dir) of each session omp registered in <state>/custom-session-files/ (one
    file per session kept outside the sessions folder, holding its absolute path), that exists."""
    found: list[tuple[Path, Path]] = []
    for state, agent_dir in state_dirs(dirs, env):
        try:
            with os.scandir(state / REGISTRY_DIR) as it:
                markers = sorted(entry.path for entry in it)
        except OSError:
            continue
        for marker in markers:
            try:
                recorded = read_regular_file(Path(marker), _MAX_MARKER_BYTES).decode("utf-8", "replace").strip()
            except OSError:
                continue
            if recorded and "\n" not in recorded and os.path.isabs(recorded):
                found.append((Path(recorded), agent_dir))
    return found
