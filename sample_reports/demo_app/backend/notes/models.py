"""Domain objects: users, notes and the share links between them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from uuid import uuid4


def _new_id() -> str:
    return uuid4().hex[:12]


def utcnow() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class User:
    """An account that can own notes and receive shares."""

    id: str
    email: str
    display_name: str


@dataclass(frozen=True)
class Note:
    """One note. `revision` grows by one on every saved edit."""

    owner_id: str
    title: str
    body: str = ""
    id: str = field(default_factory=_new_id)
    revision: int = 1
    updated_at: datetime = field(default_factory=utcnow)
    synced_revision: int = 0
    """The last revision the sync server acknowledged (0: never synced)."""

    def edited(self, *, title: str | None = None, body: str | None = None) -> Note:
        """A copy with the new text, the next revision and a fresh timestamp."""
        return replace(
            self,
            title=self.title if title is None else title,
            body=self.body if body is None else body,
            revision=self.revision + 1,
            updated_at=utcnow(),
        )

    @property
    def dirty(self) -> bool:
        """Whether this revision still has to reach the sync server."""
        return self.synced_revision < self.revision


@dataclass(frozen=True)
class Share:
    """Read access to one note for one recipient, optionally until `expires_at`."""

    note_id: str
    owner: User
    recipient: User
    token: str = field(default_factory=_new_id)
    expires_at: datetime | None = None

    def is_expired(self, now: datetime | None = None) -> bool:
        """Whether the link has stopped working."""
        if self.expires_at is None:
            return False
        now = now or datetime.now()
        return now >= self.expires_at


def parse_expiry(raw: str | None) -> datetime | None:
    """An ISO 8601 expiry from a client (`2024-06-01T10:00:00Z`), or None for never."""
    if not raw:
        return None
    return datetime.fromisoformat(raw)
