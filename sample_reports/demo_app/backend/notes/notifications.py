"""`Notifier`: e-mails people about notes shared with them."""

from __future__ import annotations

from dataclasses import dataclass, field

from .models import Note, Share

APP_URL = "https://jotter.example.com"


@dataclass(frozen=True)
class Email:
    to: str
    subject: str
    body: str


@dataclass
class Outbox:
    """Collects outgoing mail; a real deployment hands it to an SMTP relay."""

    sent: list[Email] = field(default_factory=list)

    def send(self, email: Email) -> None:
        self.sent.append(email)


class Notifier:
    """Turns domain events into e-mails."""

    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox

    def share_created(self, share: Share, note: Note) -> Email:
        """Tell the recipient a note is waiting for them."""
        email = Email(
            to=share.recipient.email,
            subject=f"{share.owner.display_name} shared “{note.title}” with you",
            body=self._share_body(share, note),
        )
        self._outbox.send(email)
        return email

    def _share_body(self, share: Share, note: Note) -> str:
        lines = [
            f"Hi {share.recipient.display_name},",
            "",
            f"{share.owner.display_name} shared a note with you: {note.title}",
            f"Open it here: {APP_URL}/s/{share.token}",
        ]
        if share.expires_at is not None:
            lines.append(f"The link works until {share.expires_at:%d %b %Y, %H:%M %Z}.")
        return "\n".join(lines)
