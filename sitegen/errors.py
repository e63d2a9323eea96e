"""Exceptions the core raises; only the CLI turns them into messages and exit codes."""

from __future__ import annotations

__all__ = [
    "AmbiguousSession",
    "ArtifactError",
    "MigrationError",
    "NotASession",
    "PersistError",
    "SessionNotFound",
    "ShareCancelled",
    "ShareError",
    "SitegenError",
]


class SitegenError(Exception):
    """Base class: its message is a complete one-line sentence for the user."""


class SessionNotFound(SitegenError):
    """A session path or id that names nothing."""


class NotASession(SitegenError):
    """A file whose first record is not a valid session header."""


class AmbiguousSession(SitegenError):
    """An id prefix that matches more than one session."""


class MigrationError(SitegenError):
    """A migration that cannot be applied or written safely."""


class PersistError(SitegenError):
    """A write to a session file failed; latched and raised again on later writes."""


class ArtifactError(SitegenError):
    """An artifact:// or agent:// URL that cannot be resolved."""


class ShareError(SitegenError):
    """Sharing a session failed."""


class ShareCancelled(SitegenError):
    """The user interrupted a share."""
