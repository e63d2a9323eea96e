"""A benchmark step's runs (the best of them, the last failure) and what a build's summary line says."""

from __future__ import annotations

from dataclasses import dataclass, field

from bench_export import Measured

__all__ = ["Series", "goal_verdict", "rendered_count", "summary_line"]


@dataclass(slots=True)
class Series:
    """Every run of one step; the table shows the best."""

    runs: list[Measured] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, run: Measured, note: str = "") -> None:
        self.runs.append(run)
        if note:
            self.notes.append(note)

    @property
    def ok(self) -> list[Measured]:
        return [r for r in self.runs if r.returncode == 0]

    def best(self, attribute: str) -> float:
        """The lowest value over the successful runs (NaN when none succeeded)."""
        return float(min((getattr(r, attribute) for r in self.ok), default=float("nan")))

    def failure(self) -> str:
        bad = [r for r in self.runs if r.returncode != 0]
        if not bad:
            return ""
        lines = (bad[-1].stderr.strip() or bad[-1].stdout.strip()).splitlines()
        return f"exit {bad[-1].returncode}: {lines[-1][:160] if lines else ''}"


def summary_line(run: Measured) -> str:
    """sitegen build's last line ("Built …: N sessions, N rendered, …"), for the log."""
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def rendered_count(run: Measured) -> int | None:
    """How many sessions the build rendered, from its summary ("…, N rendered, …"; up to date: 0)."""
    line = summary_line(run)
    if "up to date" in line:
        return 0
    for part in line.split(","):
        words = part.split()
        if len(words) == 2 and words[1] == "rendered" and words[0].isdigit():
            return int(words[0])
    return None


def goal_verdict(value: float | None, goal: float | None) -> str:
    if value is None:
        return "n/a"
    if goal is None:
        return ""
    return "ok" if value <= goal else "MISS"
