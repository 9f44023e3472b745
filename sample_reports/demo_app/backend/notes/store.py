"""`NoteStore`: the repository layer — notes by id and by owner, newest first, paged."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from .models import Note

Listener = Callable[[Note], None]

DEFAULT_PAGE_SIZE = 20


class NoteNotFoundError(KeyError):
    """No note has that id."""


class PageOutOfRangeError(LookupError):
    """A page number past the last page."""

    def __init__(self, page: int, pages: int) -> None:
        super().__init__(f"page {page} of {pages}")
        self.page = page
        self.pages = pages


@dataclass(frozen=True)
class Page:
    """One page of an owner's notes."""

    items: list[Note]
    page: int
    pages: int

    @property
    def has_more(self) -> bool:
        return self.page < self.pages


class NoteStore:
    """In-memory, thread-safe note storage that tells subscribers about every save."""

    def __init__(self) -> None:
        self._notes: dict[str, Note] = {}
        self._lock = threading.Lock()
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        """Call `listener(note)` after every save."""
        self._listeners.append(listener)

    def save(self, note: Note) -> Note:
        """Insert or replace a note, then notify subscribers (outside the store lock)."""
        with self._lock:
            self._notes[note.id] = note
        for listener in self._listeners:
            listener(note)
        return note

    def get(self, note_id: str) -> Note:
        with self._lock:
            try:
                return self._notes[note_id]
            except KeyError:
                raise NoteNotFoundError(note_id) from None

    def delete(self, note_id: str) -> None:
        with self._lock:
            self._notes.pop(note_id, None)

    def for_owner(self, owner_id: str) -> list[Note]:
        """All of an owner's notes, most recently edited first."""
        with self._lock:
            mine = [note for note in self._notes.values() if note.owner_id == owner_id]
        return sorted(mine, key=lambda note: note.updated_at, reverse=True)

    def page_count(self, owner_id: str, per_page: int = DEFAULT_PAGE_SIZE) -> int:
        """How many pages the owner's notes fill (at least one, even when empty)."""
        total = len(self.for_owner(owner_id))
        return max(1, total // per_page)

    def list_page(self, owner_id: str, page: int = 1, per_page: int = DEFAULT_PAGE_SIZE) -> Page:
        """Page `page` (1-based) of the owner's notes."""
        if per_page < 1:
            raise ValueError("per_page must be positive")
        pages = self.page_count(owner_id, per_page)
        if not 1 <= page <= pages:
            raise PageOutOfRangeError(page, pages)
        start = (page - 1) * per_page
        items = self.for_owner(owner_id)[start : start + per_page]
        return Page(items=items, page=page, pages=pages)
