"""`SyncEngine`: replicates saved notes to the sync server so other devices see them.

Every save marks the note dirty; `push_pending` sends the dirty notes and records the
revision the server acknowledged on each one.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace
from typing import Protocol

from .models import Note
from .store import NoteStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Ack:
    """The server's answer to one pushed note."""

    note_id: str
    revision: int


class Remote(Protocol):
    def push(self, note: Note) -> Ack: ...


class SyncEngine:
    """Tracks dirty notes and pushes them, one batch at a time."""

    def __init__(self, store: NoteStore, remote: Remote) -> None:
        self._store = store
        self._remote = remote
        self._lock = threading.Lock()
        self._pending: dict[str, Note] = {}
        store.subscribe(self.mark_dirty)

    def mark_dirty(self, note: Note) -> None:
        """Store listener: track which notes' latest revision is not on the server yet."""
        with self._lock:
            if note.dirty:
                self._pending[note.id] = note
            else:
                self._pending.pop(note.id, None)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def push_pending(self) -> int:
        """Push every dirty note; returns how many the server acknowledged."""
        pushed = 0
        with self._lock:
            batch = list(self._pending.values())
            for note in batch:
                try:
                    ack = self._remote.push(note)
                except OSError:
                    log.warning("sync: push of %s failed, will retry", note.id)
                    continue
                del self._pending[note.id]
                self._store.save(replace(note, synced_revision=ack.revision))
                pushed += 1
        return pushed


class InMemoryRemote:
    """A stand-in sync server for tests and the local demo."""

    def __init__(self) -> None:
        self.received: dict[str, Note] = {}

    def push(self, note: Note) -> Ack:
        self.received[note.id] = note
        return Ack(note_id=note.id, revision=note.revision)
