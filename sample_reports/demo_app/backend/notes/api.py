"""HTTP handlers: JSON in, JSON out. The web app and the Android client both call these.

Routing, authentication and (de)serialisation live in the framework adapter; each
handler gets the signed-in `User` and the decoded request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .models import Note, User, parse_expiry
from .service import NoteService, PermissionDeniedError, ShareExpiredError
from .store import DEFAULT_PAGE_SIZE, NoteNotFoundError

MAX_PAGE_SIZE = 100


@dataclass
class Request:
    user: User
    params: dict[str, str] = field(default_factory=dict)
    json: dict[str, Any] = field(default_factory=dict)


@dataclass
class Response:
    status: int
    body: dict[str, Any]


def note_json(note: Note) -> dict[str, Any]:
    return {
        "id": note.id,
        "title": note.title,
        "body": note.body,
        "revision": note.revision,
        "updatedAt": note.updated_at.isoformat(),
    }


class NotesApi:
    """`GET /notes`, `PUT /notes/{id}`, `POST /notes/{id}/shares`, `GET /s/{token}`."""

    def __init__(self, service: NoteService) -> None:
        self._service = service

    def list_notes(self, request: Request) -> Response:
        page = int(request.params.get("page", "1"))
        per_page = min(int(request.params.get("per_page", DEFAULT_PAGE_SIZE)), MAX_PAGE_SIZE)
        result = self._service.list_notes(request.user, page, per_page)
        return Response(
            200,
            {
                "items": [note_json(note) for note in result.items],
                "page": result.page,
                "pages": result.pages,
                "hasMore": result.has_more,
            },
        )

    def save_note(self, request: Request, note_id: str) -> Response:
        try:
            note = self._service.save_note(
                request.user,
                note_id,
                title=request.json.get("title"),
                body=request.json.get("body"),
            )
        except NoteNotFoundError:
            return Response(404, {"error": "not_found"})
        except PermissionDeniedError:
            return Response(403, {"error": "forbidden"})
        return Response(200, note_json(note))

    def share_note(self, request: Request, note_id: str) -> Response:
        share = self._service.share_note(
            request.user,
            note_id,
            recipient_email=request.json["email"],
            expires_at=parse_expiry(request.json.get("expiresAt")),
        )
        return Response(201, {"token": share.token, "recipient": share.recipient.email})

    def open_share(self, request: Request, token: str) -> Response:
        try:
            note = self._service.open_share(token)
        except ShareExpiredError:
            return Response(410, {"error": "link_expired"})
        except LookupError:
            return Response(404, {"error": "not_found"})
        return Response(200, note_json(note))
