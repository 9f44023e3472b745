"""`NoteService`: the rules — who may edit what, sharing, and saving with optional sync."""

from __future__ import annotations

from datetime import datetime

from .models import Note, Share, User
from .notifications import Notifier
from .store import NoteStore, Page
from .sync import SyncEngine


class PermissionDeniedError(PermissionError):
    """The user may not do that to this note."""


class ShareExpiredError(LookupError):
    """The share link exists but no longer works."""


class NoteService:
    """Application logic on top of the store, the sync engine and the notifier."""

    def __init__(
        self,
        store: NoteStore,
        sync: SyncEngine,
        notifier: Notifier,
        users: dict[str, User],
        *,
        autosync: bool = False,
    ) -> None:
        self._store = store
        self._sync = sync
        self._notifier = notifier
        self._users_by_email = {user.email.lower(): user for user in users.values()}
        self._shares: dict[str, Share] = {}
        self.autosync = autosync

    def create_note(self, owner: User, title: str, body: str = "") -> Note:
        note = self._store.save(Note(owner_id=owner.id, title=title.strip(), body=body))
        self._after_save()
        return note

    def save_note(self, user: User, note_id: str, *, title: str | None, body: str | None) -> Note:
        """Apply an edit from the editor and, with autosync on, push it right away."""
        note = self._store.get(note_id)
        if note.owner_id != user.id:
            raise PermissionDeniedError(f"{user.id} cannot edit {note_id}")
        saved = self._store.save(note.edited(title=title, body=body))
        self._after_save()
        return saved

    def list_notes(self, user: User, page: int, per_page: int) -> Page:
        return self._store.list_page(user.id, page, per_page)

    def share_note(
        self, owner: User, note_id: str, recipient_email: str, expires_at: datetime | None = None
    ) -> Share:
        """Give `recipient_email` read access and let them know by e-mail."""
        note = self._store.get(note_id)
        if note.owner_id != owner.id:
            raise PermissionDeniedError(f"{owner.id} cannot share {note_id}")
        recipient = self._users_by_email.get(recipient_email.strip().lower())
        share = Share(note_id=note.id, owner=owner, recipient=recipient, expires_at=expires_at)
        self._shares[share.token] = share
        self._notifier.share_created(share, note)
        return share

    def open_share(self, token: str) -> Note:
        """The note behind a share link, if the link still works."""
        share = self._shares.get(token)
        if share is None:
            raise LookupError(f"unknown share link {token}")
        if share.is_expired():
            raise ShareExpiredError(token)
        return self._store.get(share.note_id)

    def _after_save(self) -> None:
        if self.autosync:
            self._sync.push_pending()
