"""App reviews → `Intake` (WEBHOOKS.md §5). Reviews are text only: `traces` is empty.

- AppFollow / Slack-style `{"text": …}`: lines `app`, `store, publisher`,
  `★★★★★ Country`, `*title*`, body…, `_by_ *author* _for vX_`, links. Slack
  `attachments[]`/`blocks[]` text is used when `text` is absent.
- App Store Connect `GET …/customerReviews` (polled): `data[].attributes`.
- Google Play `reviews.list` (polled): `reviews[].comments[].userComment`, whose `text`
  is the title and the body joined by a tab.
"""

from __future__ import annotations

import re
from dataclasses import replace

from diagnoser.constants import MAX_REVIEWS
from diagnoser.intake.payloads._fields import Cap, Node, nodes_of, root
from diagnoser.intake.payloads._render import join_text, make_report
from diagnoser.intake.payloads.errors import IntakeError
from diagnoser.intake.payloads.result import Intake
from diagnoser.intake.report import Source

MIN_RATING, MAX_RATING = 1, 5
FILLED_STAR = "★"
STAR_LINE = re.compile(r"^\s*(?P<stars>[★☆]{1,10})\s*(?P<country>.*)$")
TITLE_LINE = re.compile(r"^\*(?P<title>[^*].*)\*\s*$")
BY_LINE = re.compile(r"^_by_\s*\*(?P<author>[^*]*)\*(?:\s*_for\s+v?(?P<version>[^_\s]+)\s*_)?")
LINK = re.compile(
    r"\[(?P<label>[^\[\]]*)\]\((?P<md>[^()\s]+)\)"
    r"|<(?P<slack>https?://[^|<>\s]+)(?:\|(?P<slabel>[^<>]*))?>"
)
"""A markdown or Slack link. No part may contain the character that opens another
link: a failed match then stops at the next opener, so the scan stays linear (the
unbounded classes took 85 s on 160 KB of `<http://`)."""
PLAY_EMPTY_KEYS = frozenset({"tokenPagination", "pageInfo"})
"""Google APIs omit an empty `reviews` list: a page with only these keys has no reviews."""
APP_STORE_REVIEW_TYPE = "customerReviews"
REVIEWS = Cap(MAX_REVIEWS, "reviews", "the first")


def from_review_text(payload: object) -> Intake:
    """One AppFollow (or other Slack-style) review notification."""
    top = root(payload, "review")
    text = top.text("text") or _slack_text(top)
    if not text:
        raise top.fail("text", "missing")
    parsed = _parse_review(text)
    rating = parsed.get("rating")
    report = make_report(
        top,
        text=join_text([parsed.get("title"), parsed.get("body")]) or text,
        source=Source.REVIEW,
        text_field="text",
        title=parsed.get("title"),
        app_version=parsed.get("version"),
        rating=int(rating) if rating else None,
        url=parsed.get("url"),
        metadata={
            "provider": "appfollow",
            "app": parsed.get("app"),
            "store": parsed.get("store"),
            "country": parsed.get("country"),
            "author": parsed.get("author"),
        },
    )
    return Intake(report=report, traces=(), truncated=tuple(top.cuts))


def _slack_text(top: Node) -> str | None:
    parts: list[str | None] = []
    for attachment in top.children("attachments"):
        parts += [attachment.text("pretext"), attachment.text("title"), attachment.text("text")]
        parts += [field.text("value") for field in attachment.children("fields")]
    for block in top.children("blocks"):
        inner = block.value.get("text")
        if isinstance(inner, dict):
            parts.append(block.child("text").text("text"))
    return join_text(parts) or None


def _parse_review(text: str) -> dict[str, str]:
    """Fields of an AppFollow review text; a text without a star line is all body."""
    lines = text.strip().splitlines()
    star_at = next((i for i, line in enumerate(lines) if STAR_LINE.match(line)), None)
    if star_at is None:
        return {"body": text.strip()}
    star = STAR_LINE.match(lines[star_at])
    assert star is not None  # matched just above
    rating = star["stars"].count(FILLED_STAR)
    if not MIN_RATING <= rating <= MAX_RATING:
        raise IntakeError(f"review: star rating {rating} out of 1..5 in text", field="text")
    out = {"rating": str(rating), "country": star["country"].strip()}
    header = lines[:star_at]
    if header:
        out["app"] = header[0].strip()
    if len(header) > 1:
        out["store"] = header[1].split(",")[0].strip()
    rest = lines[star_at + 1 :]
    if rest and (title := TITLE_LINE.match(rest[0].strip())):
        out["title"] = title["title"].strip()
        rest = rest[1:]
    by_at = next((i for i, line in enumerate(rest) if BY_LINE.match(line.strip())), len(rest))
    out["body"] = "\n".join(rest[:by_at]).strip()
    if by_at < len(rest) and (by := BY_LINE.match(rest[by_at].strip())):
        out["author"] = by["author"].strip()
        if by["version"]:
            out["version"] = by["version"]
    if url := _permalink("\n".join(rest[by_at + 1 :])):
        out["url"] = url
    return {key: value for key, value in out.items() if value}


def _permalink(text: str) -> str | None:
    links = [(m["label"] or m["slabel"] or "", m["md"] or m["slack"]) for m in LINK.finditer(text)]
    labelled = [url for label, url in links if label.strip().lower() == "permalink"]
    return (labelled or [url for _, url in links] or [None])[0]


def _rating(node: Node, key: str) -> int | None:
    if node.value.get(key) is None:
        return None
    rating = node.integer(key)
    if rating is None or not MIN_RATING <= rating <= MAX_RATING:
        raise node.fail(key, "expected a rating of 1..5 at")
    return rating


def from_app_store(payload: object) -> list[Intake]:
    """A `customerReviews` page from App Store Connect: one `Intake` per review."""
    top = root(payload, "app_store customerReviews")
    raw = top.value.get("data")
    if isinstance(raw, dict):
        reviews = [top.child("data")]
    elif isinstance(raw, list):
        reviews = nodes_of(raw, top, "data", REVIEWS)
    else:
        raise top.fail("data", "missing list")
    return [_app_store_review(_own_cuts(review)) for review in reviews]


def _own_cuts(review: Node) -> Node:
    """The review with notes of its own, starting from those about the whole poll."""
    return replace(review, cuts=list(review.cuts))


def _app_store_review(review: Node) -> Intake:
    kind = review.text("type")
    if kind is not None and kind != APP_STORE_REVIEW_TYPE:
        raise review.fail("type", f"unsupported {kind!r} (expected {APP_STORE_REVIEW_TYPE}) at")
    attributes = review.child("attributes")
    title, body = attributes.text("title"), attributes.text("body")
    report = make_report(
        review,
        text=join_text([title, body]),
        source=Source.APP_STORE,
        text_field=attributes.at("body"),
        title=title,
        platform="ios",
        rating=_rating(attributes, "rating"),
        metadata={
            "provider": "app_store",
            "review_id": review.label("id"),
            "author": attributes.text("reviewerNickname"),
            "territory": attributes.text("territory"),
            "created": attributes.text("createdDate"),
        },
    )
    return Intake(report=report, traces=(), truncated=tuple(review.cuts))


def from_google_play(payload: object) -> list[Intake]:
    """A `reviews.list` page (or one `reviews.get` review): one `Intake` per review."""
    top = root(payload, "google_play reviews")
    if top.has("reviewId") and top.has("comments"):
        return [_play_review(top)]
    if not top.has("reviews"):
        if set(top.value) <= PLAY_EMPTY_KEYS:
            return []
        raise top.fail("reviews", "missing")
    reviews = nodes_of(top.items("reviews") or [], top, "reviews", REVIEWS)
    return [_play_review(_own_cuts(review)) for review in reviews]


def _play_review(review: Node) -> Intake:
    comments = [c for c in review.children("comments") if c.has("userComment")]
    if not comments:
        raise review.fail("comments", "no userComment in")
    comment = comments[0].child("userComment")
    raw = comment.text("text") or comment.text("originalText")
    if raw is None:
        raise comment.fail("text", "missing")
    title, _, body = raw.partition("\t") if "\t" in raw else ("", "", raw)
    device = comment.maybe_child("deviceMetadata")
    report = make_report(
        review,
        text=join_text([title.strip(), body.strip()]),
        source=Source.GOOGLE_PLAY,
        text_field=comment.at("text"),
        title=title.strip() or None,
        platform="android",
        app_version=comment.label("appVersionName"),
        rating=_rating(comment, "starRating"),
        metadata={
            "provider": "google_play",
            "review_id": review.text("reviewId"),
            "author": review.text("authorName"),
            "language": comment.text("reviewerLanguage"),
            "device": (device.text("productName") if device else None) or comment.text("device"),
            "android_os_version": comment.label("androidOsVersion"),
            "app_version_code": comment.label("appVersionCode"),
            "original_text": comment.text("originalText"),
        },
    )
    return Intake(report=report, traces=(), truncated=tuple(review.cuts))
