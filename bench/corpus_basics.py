"""The corpus generator's shared ground: fixed times and sizes, projects, models, SessionInfo, random values."""

from __future__ import annotations

import math
import random
import struct
import uuid
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

__all__ = [
    "B62",
    "B64",
    "BASE_MS",
    "FEATURE_FLOOR_BYTES",
    "LABELS",
    "MB",
    "MODELS",
    "PROJECTS",
    "SPILL_BYTES",
    "SUBAGENTS",
    "THINKING_LEVELS",
    "SessionInfo",
    "iso",
    "lognormal",
    "png_bytes",
    "random_uuid",
    "token",
]

# 2025-09-01T00:00:00Z: every time is an offset from this, so output never depends on the wall clock.
BASE_MS = 1_756_684_800_000
MB = 1024 * 1024
# Sessions smaller than this may lack branches, compactions and the other scheduled features.
FEATURE_FLOOR_BYTES = 40_000
# omp's bash tool keeps at most this much output in the session; the rest goes to an artifact.
SPILL_BYTES = 50_000

PROJECTS: tuple[str, ...] = (
    "/home/dev/work/api-gateway",
    "/home/dev/work/webapp",
    "/Users/mira/code/ml-pipeline",
    "/Users/mira/code/pi-mono",
    "/srv/repos/infra-terraform",
    "C:\\Users\\sam\\projects\\game-engine",
)


@dataclass(frozen=True, slots=True)
class _Model:
    provider: str
    model: str
    api: str
    price_in: float  # dollars per million input tokens
    price_out: float


MODELS: tuple[_Model, ...] = (
    _Model("anthropic", "claude-sonnet-4-5", "anthropic-messages", 3.0, 15.0),
    _Model("anthropic", "claude-opus-4-5", "anthropic-messages", 5.0, 25.0),
    _Model("openai", "gpt-5.1-codex", "openai-responses", 1.25, 10.0),
    _Model("google", "gemini-2.5-pro", "google-generative-ai", 1.25, 10.0),
)
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
LABELS = ("checkpoint", "good state", "before refactor", "tests green", "bug repro", "try this")
SUBAGENTS = ("explore", "plan", "reviewer", "task")


@dataclass(slots=True)
class SessionInfo:
    """What one generated session holds, for the CLI summary and the tests."""

    path: Path
    session_id: str
    cwd: str
    bytes: int = 0
    entries: int = 0
    markers: int = 0
    main_depth: int = 0
    branches: int = 0
    branch_summaries: int = 0
    compactions: int = 0
    labels: int = 0
    images: int = 0
    artifacts: int = 0
    subagents: int = 0
    model_changes: int = 0
    thinking_changes: int = 0
    image_refs: list[str] = field(default_factory=list)


def iso(ms: int) -> str:
    moment = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def random_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
B64 = B62 + "+/"


def token(rng: random.Random, length: int, alphabet: str = B62) -> str:
    return "".join(rng.choices(alphabet, k=length))


def lognormal(rng: random.Random, median: float, sigma: float, cap: float) -> int:
    return int(min(cap, median * math.exp(sigma * rng.gauss(0.0, 1.0))))


def png_bytes(rng: random.Random, width: int, height: int) -> bytes:
    """A valid RGB PNG of noise, so blob bytes neither compress nor collide."""
    raw = b"".join(b"\x00" + rng.randbytes(width * 3) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b"")
