"""Webhook deliveries: their id, their event, and whether we act on them (WEBHOOKS.md).

`inspect(route, headers, body)` runs after the signature check and before any work, so
the request can answer at once: a 2xx that says "ignored" for events we do not act on,
a 2xx that says "accepted" (or "duplicate", by `delivery_id`) for the rest.

| route      | delivery id          | event                     | acted on                 |
|------------|----------------------|---------------------------|--------------------------|
| `sentry`   | `Request-ID`         | resource[.action]         | `SENTRY_RESOURCES`       |
|            |                      |                           | (`issue`: `created` only)|
| `github`   | `X-GitHub-Delivery`  | `X-GitHub-Event`[.action] | `issues` with an action  |
|            |                      |                           | in `GITHUB_ISSUE_ACTIONS`;|
|            |                      |                           | `check_run.completed`    |
|            |                      |                           | that failed              |
| `bugsnag`  | sha256 of the body   | `trigger.type`            | `BUGSNAG_TRIGGERS`       |
| `rollbar`  | sha256 of the body   | `event_name`              | `ROLLBAR_EVENTS`         |
| `standard` | `webhook-id`         | `type`                    | every event              |
| `reviews`  | sha256 of the body   | `review`                  | every review             |

Bugsnag, Rollbar and the review sources send no delivery id, so the id is
`sha256:<hex of the raw body>`: a retried delivery (Rollbar retries up to 10 times) is
the same bytes, hence the same id, and two byte-identical bodies are the same report
anyway (Rollbar occurrences carry their own uuid). A provider id header that is missing
also falls back to the body hash, and one over `MAX_DELIVERY_ID_CHARS` is replaced by
its own hash. Deduplicate on `(provider, delivery_id)`. Only `webhook-id` is covered by
its signature: Sentry's and GitHub's id headers are not, so dedup on them stops retries,
not a deliberate replay with a fresh id.

The body is parsed only where the decision needs it, with intake's bounded parser. When
we cannot tell (the body is not JSON, a field is absent) we act: the job's intake then
fails with a message naming the problem, and the request still answers at once. Only
what we positively know is not a bug report is ignored.

Parsing a 2 MB body takes ~15 ms of the request, to read one field that providers put
first (`{"action": "opened", …`). `_peek` reads it from the raw bytes instead when that
cannot differ from the parse: it is the first key, no other `"action"` occurs in the
body, and no `\\u` escape could spell one. A peeked value that we act on decides at once
(on a body that then turns out not to be JSON we act all the same); any other value is
confirmed by the parse, so an ignored delivery is always valid JSON that says so.

`Delivery.provider` is the intake provider name to pass to `from_payload`
(`ROUTE_PROVIDERS`, refined for the reviews route by the shape of the body).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Final

from api.signatures import STANDARD_ID_HEADER, get_header
from diagnoser.intake.body import load_json
from diagnoser.intake.payloads import IntakeError

ROUTE_PROVIDERS: Final[Mapping[str, str]] = {
    "sentry": "sentry",
    "github": "github",
    "bugsnag": "bugsnag",
    "rollbar": "rollbar",
    "standard": "standard",
    # AppFollow and any Slack-style `{"text"}` relay; `inspect` switches to `app_store`
    # or `google_play` when the body is one of their review pages.
    "reviews": "appfollow",
}
"""Our webhook route name → the intake provider (`diagnoser.intake.payloads.PROVIDERS`)."""

SENTRY_REQUEST_ID_HEADER = "Request-ID"
SENTRY_RESOURCE_HEADER = "Sentry-Hook-Resource"
GITHUB_DELIVERY_HEADER = "X-GitHub-Delivery"
GITHUB_EVENT_HEADER = "X-GitHub-Event"

SENTRY_RESOURCES = frozenset({"event_alert", "issue", "error"})
"""Resources that carry a bug; `installation`, `metric_alert`, `comment`, `seer`,
`preprod-artifacts` do not."""
SENTRY_ISSUE_ACTIONS = frozenset({"created"})
"""`issue` actions we act on: `resolved`, `assigned`, `archived`, `unresolved` are
triage of an issue already diagnosed."""
GITHUB_ISSUES_EVENT = "issues"
GITHUB_PING_EVENT = "ping"
GITHUB_ISSUE_ACTIONS = frozenset({"opened", "reopened"})
GITHUB_CHECK_RUN_EVENT = "check_run"
"""A CI check: diagnosed when it completed and failed, at its `head_sha`."""
GITHUB_CHECK_COMPLETED = "completed"
GITHUB_FAILED_CONCLUSIONS = frozenset({"failure", "timed_out"})
"""Not `edited`: GitHub sends it for every title or body change, ticking a task-list
checkbox included, and each would start a new investigation of the same issue. The
report arrives with `opened`; `reopened` says it came back."""
BUGSNAG_TRIGGERS = frozenset(
    {"firstException", "exception", "errorEventFrequency", "powerTen", "reopened"}
)
"""Triggers about an error; `projectSpiking`, `comment`, `release`, … are not."""
ROLLBAR_EVENTS = frozenset(
    {
        "new_item",
        "occurrence",
        "exp_repeat_item",
        "item_velocity",
        "reactivated_item",
        "reopened_item",
    }
)
"""Events carrying an item; `resolved_item` closes one, `deploy` carries none."""
REVIEW_EVENT = "review"
APP_STORE_REVIEW_TYPE = "customerReviews"
"""`data[].type` of an App Store Connect review page."""
GOOGLE_PLAY_KEYS = frozenset({"reviews", "reviewId", "tokenPagination"})
"""Top-level keys of a Google Play `reviews.list` page (maybe empty: only its
token) or a `reviews.get` review."""

PEEK_BYTES = 1024
"""How far into a body its first key and value are looked for (`_peek`)."""
_FIRST_PAIR = re.compile(
    rb'(?:\xef\xbb\xbf)?[ \t\n\r]*\{[ \t\n\r]*"([A-Za-z_]{1,32})"[ \t\n\r]*:[ \t\n\r]*'
    rb'"([^"\\\x00-\x1f]{1,64})"'
)
"""A JSON object's first key and its plain string value (no escapes), after an optional
BOM and JSON whitespace."""
BODY_ID_PREFIX = "sha256:"
MAX_DELIVERY_ID_CHARS = 200
"""Provider ids are UUIDs or short `msg_…` strings; a longer header is hashed rather
than stored as a key."""


@dataclass(frozen=True)
class Delivery:
    """What one webhook delivery is, decided before any work is queued."""

    provider: str
    """The intake provider to parse the body with (one of `PROVIDERS`)."""
    delivery_id: str
    """The provider's delivery id, or `sha256:<hex>` of the body where it sends none."""
    event: str
    """The provider's event name (`issues.opened`, `event_alert`, `new_item`); empty when
    unknown."""
    act: bool
    """Whether to queue a diagnosis; `False` answers 2xx "ignored"."""
    reason: str = ""
    """Why it is ignored, fit to show the sender; empty when acted on."""


def inspect(route: str, headers: Mapping[str, str], body: bytes) -> Delivery:
    """The delivery id, event and decision for a delivery to `/webhooks/{route}`.

    Never raises for a bad body; raises `ValueError` for a route not in
    `ROUTE_PROVIDERS` (a programming error).
    """
    if route not in ROUTE_PROVIDERS:
        raise ValueError(f"unknown webhook route {route!r}")
    provider = ROUTE_PROVIDERS[route]
    if route == "sentry":
        return _sentry(headers, body)
    if route == "github":
        return _github(headers, body)
    if route == "standard":  # acted on whatever its type: the type is only a label
        kind = _top_text(body, "type", None)
        return Delivery(provider, _id(headers, STANDARD_ID_HEADER, body), kind or "", True)
    delivery_id = body_id(body)
    if route == "rollbar":
        event = _top_text(body, "event_name", ROLLBAR_EVENTS)
        return _decide(provider, delivery_id, event, ROLLBAR_EVENTS)
    payload = _json(body)
    if route == "reviews":
        return Delivery(_review_provider(payload), delivery_id, REVIEW_EVENT, True)
    trigger = _object(payload, "trigger")  # bugsnag: not its first key, so parsed
    return _decide(provider, delivery_id, _text(trigger, "type"), BUGSNAG_TRIGGERS)


def body_id(body: bytes) -> str:
    """The delivery id of a provider that sends none: `sha256:` and the body's hex hash."""
    return BODY_ID_PREFIX + hashlib.sha256(body).hexdigest()


def _sentry(headers: Mapping[str, str], body: bytes) -> Delivery:
    delivery_id = _id(headers, SENTRY_REQUEST_ID_HEADER, body)
    resource = get_header(headers, SENTRY_RESOURCE_HEADER)
    if resource is None:  # a legacy plugin or service hook body: intake tells them apart
        return Delivery("sentry", delivery_id, "", True)
    if resource not in SENTRY_RESOURCES:
        return _ignored("sentry", delivery_id, resource, f"sentry resource {resource!r}")
    action = _top_text(body, "action", SENTRY_ISSUE_ACTIONS if resource == "issue" else None)
    event = f"{resource}.{action}" if action else resource
    if resource == "issue" and action is not None and action not in SENTRY_ISSUE_ACTIONS:
        return _ignored("sentry", delivery_id, event, f"sentry {event!r}")
    return Delivery("sentry", delivery_id, event, True)


def _github(headers: Mapping[str, str], body: bytes) -> Delivery:
    delivery_id = _id(headers, GITHUB_DELIVERY_HEADER, body)
    kind = get_header(headers, GITHUB_EVENT_HEADER)
    if kind == GITHUB_PING_EVENT:
        return Delivery("github", delivery_id, kind, False, GITHUB_PING_EVENT)
    if kind is None:  # cannot tell: intake reads it as an issues body or says why not
        return Delivery("github", delivery_id, "", True)
    if kind == GITHUB_CHECK_RUN_EVENT:
        return _check_run(delivery_id, body)
    if kind == GITHUB_ISSUES_EVENT:
        return _issue(delivery_id, body)
    return _ignored("github", delivery_id, kind, f"github event {kind!r}")


def _issue(delivery_id: str, body: bytes) -> Delivery:
    action = _top_text(body, "action", GITHUB_ISSUE_ACTIONS)
    if action is None:
        return Delivery("github", delivery_id, GITHUB_ISSUES_EVENT, True)
    event = f"{GITHUB_ISSUES_EVENT}.{action}"
    if action not in GITHUB_ISSUE_ACTIONS:
        return _ignored("github", delivery_id, event, f"github {event!r}")
    return Delivery("github", delivery_id, event, True)


def _check_run(delivery_id: str, body: bytes) -> Delivery:
    """A check run that completed and failed is acted on; one still running or that
    passed (or was skipped, cancelled…) is not."""
    action = _top_text(body, "action", None)
    event = f"{GITHUB_CHECK_RUN_EVENT}.{action}" if action else GITHUB_CHECK_RUN_EVENT
    if action is not None and action != GITHUB_CHECK_COMPLETED:
        return _ignored("github", delivery_id, event, f"github {event!r}")
    conclusion = _text(_object(_json(body), "check_run"), "conclusion")
    if conclusion is not None and conclusion not in GITHUB_FAILED_CONCLUSIONS:
        return _ignored("github", delivery_id, event, f"a check run that ended {conclusion!r}")
    return Delivery("github", delivery_id, event, True)


def _decide(provider: str, delivery_id: str, event: str | None, acted: frozenset[str]) -> Delivery:
    if event is None:
        return Delivery(provider, delivery_id, "", True)
    if event not in acted:
        return _ignored(provider, delivery_id, event, f"{provider} event {event!r}")
    return Delivery(provider, delivery_id, event, True)


def _ignored(provider: str, delivery_id: str, event: str, what: str) -> Delivery:
    return Delivery(provider, delivery_id, event, False, f"{what} is not acted on")


def _review_provider(payload: object) -> str:
    """`google_play` or `app_store` for their review pages, else the Slack-style default."""
    if not isinstance(payload, dict):
        return ROUTE_PROVIDERS["reviews"]
    if GOOGLE_PLAY_KEYS & payload.keys():
        return "google_play"
    data = payload.get("data")
    items = data if isinstance(data, list) else [data]
    if any(isinstance(i, dict) and i.get("type") == APP_STORE_REVIEW_TYPE for i in items):
        return "app_store"
    return ROUTE_PROVIDERS["reviews"]


def _id(headers: Mapping[str, str], name: str, body: bytes) -> str:
    value = get_header(headers, name)
    if value is None:
        return body_id(body)
    if len(value) > MAX_DELIVERY_ID_CHARS:
        return BODY_ID_PREFIX + hashlib.sha256(value.encode()).hexdigest()
    return value


def _top_text(body: bytes, key: str, decisive: Collection[str] | None) -> str | None:
    """The body's top-level `key` when it is a non-empty string, else None — as parsing
    the body says, but from `_peek` when the peeked value is one of `decisive` (None:
    any value), whose outcome no parse could change."""
    peeked = _peek(body, key)
    if peeked is not None and (decisive is None or peeked in decisive):
        return peeked
    return _text(_json(body), key)


def _peek(body: bytes, key: str) -> str | None:
    """`key`'s string value if it is the first key of the body's object and the only key
    that can be `key` anywhere in it; None when that cannot be told from the bytes."""
    pair = _FIRST_PAIR.match(body, 0, PEEK_BYTES)
    if pair is None or pair[1] != key.encode():
        return None
    if body.count(b'"' + pair[1] + b'"') != 1 or _escapes(key).search(body):
        return None  # another key could be `key` (the parse keeps the last one)
    try:
        return pair[2].decode()
    except UnicodeDecodeError:
        return None


@functools.cache
def _escapes(key: str) -> re.Pattern[bytes]:
    """A `\\u` escape of one of `key`'s letters: the only way JSON can spell `key` without
    the bytes `"key"` (the other escapes stand for punctuation and control characters)."""
    codes = "|".join(f"{ord(letter):04x}" for letter in sorted(set(key)))
    return re.compile(rb"\\u(?i:" + codes.encode() + rb")")


def _json(body: bytes) -> object:
    """The parsed body, or `None` when it is not JSON we accept (intake will say why)."""
    try:
        return load_json(body)
    except IntakeError:
        return None


def _object(payload: object, key: str) -> object:
    return payload.get(key) if isinstance(payload, dict) else None


def _text(payload: object, key: str) -> str | None:
    value = _object(payload, key)
    return value if isinstance(value, str) and value else None
