"""Where generated sessions go on disk: project folder names, the agent dir, a session's artifact folder."""

from __future__ import annotations

from pathlib import Path

__all__ = ["Artifacts", "agent_dir_of", "encode_cwd"]


def encode_cwd(cwd: str) -> str:
    """The session folder name: leading slash dropped, then / \\ : turned into -."""
    name = cwd[1:] if cwd.startswith("/") else cwd
    return "--" + name.replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def agent_dir_of(session_path: Path) -> Path:
    """The agent dir holding a session (the folder above sessions/), else the session's own folder."""
    for ancestor in session_path.resolve().parents:
        if ancestor.name == "sessions":
            return ancestor.parent
    return session_path.resolve().parent


class Artifacts:
    """The session's artifact folder, with omp's numeric log ids and indexed agent output ids."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.next_log = 0
        self.next_agent = 0
        self.written = 0

    def save_log(self, tool: str, text: str) -> int:
        self.folder.mkdir(parents=True, exist_ok=True)
        artifact_id = self.next_log
        self.next_log += 1
        (self.folder / f"{artifact_id}.{tool}.log").write_text(text, encoding="utf-8")
        self.written += 1
        return artifact_id

    def agent_id(self, requested: str) -> str:
        output_id = f"{self.next_agent}-{requested}"
        self.next_agent += 1
        return output_id
