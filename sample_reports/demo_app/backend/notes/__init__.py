"""Jotter: a small notes-and-sharing service.

The backend keeps notes in a `NoteStore`, applies the rules in `NoteService`, replicates
changes through `SyncEngine`, tells people about shares through `Notifier`, and exposes
all of it as plain request handlers in `api`.
"""

__all__ = ["__version__"]

__version__ = "2.4.1"
