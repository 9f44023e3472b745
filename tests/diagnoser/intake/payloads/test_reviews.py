from __future__ import annotations

import time
from typing import Any

import pytest

from diagnoser.intake.payloads import (
    IntakeError,
    from_app_store,
    from_google_play,
    from_review_text,
)
from diagnoser.intake.report import Source
from tests.diagnoser.intake.payloads._fixtures import load, load_reference

ZULIP_APPFOLLOW = {
    "text": "Acme - Group chat\nApp Store, Acme Technologies, Inc.\n★★★★★ United States\n"
    "*Great for Information Management*\nAcme enables me to manage the flow of information "
    "quite well.\n_by_ *Mr RESOLUTIONARY* _for v3.9_\n"
    "[Permalink](http://appfollow.io/permalink) · [Add tag](http://watch.appfollow.io/add_tag)"
}


def test_appfollow_review_fields() -> None:
    intake = from_review_text(ZULIP_APPFOLLOW)
    report = intake.report
    assert intake.traces == ()
    assert report.source is Source.REVIEW
    assert report.rating == 5
    assert report.title == "Great for Information Management"
    assert report.text == (
        "Great for Information Management\n\n"
        "Acme enables me to manage the flow of information quite well."
    )
    assert report.app_version == "3.9"
    assert report.url == "http://appfollow.io/permalink"
    assert report.metadata == {
        "provider": "appfollow",
        "app": "Acme - Group chat",
        "store": "App Store",
        "country": "United States",
        "author": "Mr RESOLUTIONARY",
    }


def test_german_one_star_review_with_slack_links() -> None:
    report = from_review_text(load("appfollow_review_1star_de.json")).report
    assert report.rating == 1
    assert report.title == "Stürzt beim Bezahlen ab"
    assert report.text == (
        "Stürzt beim Bezahlen ab\n\nSeit dem Update schließt sich die App jedes Mal, "
        "wenn ich auf „Bezahlen“ tippe.\nBitte schnell beheben!"
    )
    assert report.app_version == "2.3.1"
    assert report.url == "https://watch.appfollow.io/reviews/8812"
    assert report.metadata["author"] == "Jürgen Müller"
    assert report.metadata["store"] == "Google Play"


def test_unstructured_slack_text_is_all_body() -> None:
    report = from_review_text({"text": "the app is slow since 4.0"}).report
    assert report.text == "the app is slow since 4.0"
    assert report.rating is None
    assert report.title is None


def test_slack_attachments_when_text_is_absent() -> None:
    payload = {"attachments": [{"title": "New review", "text": "★★☆☆☆ France\n*Lent*\nTrès lent"}]}
    report = from_review_text(payload).report
    assert report.rating == 2
    assert report.title == "Lent"


def test_app_store_poll_one_intake_per_review() -> None:
    intakes = from_app_store(load("appstore_reviews_ja.json"))
    assert [i.report.rating for i in intakes] == [1, 4]
    first = intakes[0].report
    assert first.source is Source.APP_STORE
    assert first.title == "起動しない"
    assert (
        first.text
        == "起動しない\n\nアップデート後、アプリを開くとすぐに落ちます。iPhone 15、iOS 17.4。"
    )
    assert first.app_version is None  # App Store reviews carry no version
    assert first.metadata["territory"] == "JPN"
    assert intakes[1].report.text == "Good app"  # empty body
    assert all(i.traces == () for i in intakes)


def test_app_store_reference_sample() -> None:
    (intake,) = from_app_store(load_reference("appstoreconnect_customerReviews_poll.json"))
    assert intake.report.rating == 1
    assert intake.report.title == "Crashes at checkout"


def test_google_play_title_and_body_are_split_on_the_tab() -> None:
    first, second = from_google_play(load("googleplay_reviews_fr.json"))
    assert first.report.source is Source.GOOGLE_PLAY
    assert first.report.title == "Plante au paiement"
    assert first.report.text == (
        "Plante au paiement\n\nL'application se ferme quand j'ouvre mon panier "
        "depuis la mise à jour."
    )
    assert first.report.rating == 1
    assert first.report.app_version == "2.3.1"
    assert first.report.metadata["language"] == "fr"
    assert first.report.metadata["author"] == "Élodie"
    assert second.report.title is None
    assert second.report.text == "Works fine now"
    assert second.report.rating == 5


def test_google_play_reference_sample_and_empty_page() -> None:
    (intake,) = from_google_play(load_reference("googleplay_reviews_poll.json"))
    assert intake.report.text == "App crashes when I open my cart after the 2.3.1 update"
    assert intake.report.metadata["device"] == "a52q (Galaxy A52)"
    assert from_google_play({}) == []
    assert from_google_play({"tokenPagination": {}}) == []


REVIEW_BROKEN: list[tuple[Any, str]] = [
    ([], ""),
    ({}, "text"),
    ({"text": 3}, "text"),
    ({"text": "App\nStore\n☆☆☆☆☆ France\n*t*\nb"}, "text"),
    ({"text": "App\nStore\n★★★★★★ France\n*t*\nb"}, "text"),
    ({"attachments": {}}, "attachments"),
    ({"attachments": [{"fields": [1]}]}, "attachments[0].fields[0]"),
]


@pytest.mark.parametrize(("payload", "field"), REVIEW_BROKEN)
def test_broken_review_text_names_the_field(payload: Any, field: str) -> None:
    with pytest.raises(IntakeError) as caught:
        from_review_text(payload)
    assert caught.value.field == field


APP_STORE_BROKEN: list[tuple[Any, str]] = [
    ({}, "data"),
    ({"data": "x"}, "data"),
    ({"data": [1]}, "data[0]"),
    ({"data": [{"type": "customerReviews"}]}, "data[0].attributes"),
    ({"data": [{"attributes": {"rating": 0, "body": "b"}}]}, "data[0].attributes.rating"),
    ({"data": [{"attributes": {"rating": "5 stars", "body": "b"}}]}, "data[0].attributes.rating"),
    ({"data": [{"attributes": {"rating": 3}}]}, "data[0].attributes.body"),
    ({"data": {"type": "betaFeedbackCrashSubmissionCreated", "id": "a"}}, "data.type"),
]


@pytest.mark.parametrize(("payload", "field"), APP_STORE_BROKEN)
def test_broken_app_store_names_the_field(payload: Any, field: str) -> None:
    with pytest.raises(IntakeError) as caught:
        from_app_store(payload)
    assert caught.value.field == field
    assert str(caught.value).startswith("app_store")


PLAY_BROKEN: list[tuple[Any, str]] = [
    ({"nextPageToken": "x"}, "reviews"),
    ({"reviews": {}}, "reviews"),
    ({"reviews": [None]}, "reviews[0]"),
    ({"reviews": [{}]}, "reviews[0].comments"),
    ({"reviews": [{"comments": [{"developerComment": {}}]}]}, "reviews[0].comments"),
    ({"reviews": [{"comments": [{"userComment": {}}]}]}, "reviews[0].comments[0].userComment.text"),
    (
        {"reviews": [{"comments": [{"userComment": {"text": "\t", "starRating": 3}}]}]},
        "reviews[0].comments[0].userComment.text",
    ),
    (
        {"reviews": [{"comments": [{"userComment": {"text": "x", "starRating": 6}}]}]},
        "reviews[0].comments[0].userComment.starRating",
    ),
]


@pytest.mark.parametrize(("payload", "field"), PLAY_BROKEN)
def test_broken_google_play_names_the_field(payload: Any, field: str) -> None:
    with pytest.raises(IntakeError) as caught:
        from_google_play(payload)
    assert caught.value.field == field
    assert str(caught.value).startswith("google_play")


def test_a_poll_of_too_many_reviews_keeps_the_first_and_each_says_so() -> None:
    review = {"reviewId": "r", "comments": [{"userComment": {"text": "slow\tso slow"}}]}
    intakes = from_google_play({"reviews": [review] * 5_000})
    assert len(intakes) == 200
    note = "google_play reviews: 5,000 reviews in reviews; kept the first 200"
    assert all(i.truncated == (note,) for i in intakes)
    app_store = from_app_store({"data": [{"attributes": {"body": "b"}}] * 201})
    assert len(app_store) == 200
    assert app_store[0].truncated == (
        "app_store customerReviews: 201 reviews in data; kept the first 200",
    )


def test_a_note_about_one_review_stays_on_that_review() -> None:
    long_body = {"attributes": {"body": "b" * 2_100_000}}
    first, second = from_app_store({"data": [long_body, {"attributes": {"body": "ok"}}]})
    assert first.truncated == (
        "app_store customerReviews: report text of 2,100,000 characters; kept the first 2,000,000",
    )
    assert second.truncated == ()


def test_link_scan_is_linear_on_unclosed_links() -> None:
    # Each unclosed opener used to rescan the rest of the text: 160 KB took 85 s.
    for junk in ("<http://" * 100_000, "[a](" * 100_000, "[" * 400_000):
        started = time.monotonic()
        intake = from_review_text({"text": f"★☆☆☆☆ DE\n*t*\nbody\n_by_ *a*\n{junk}"})
        assert time.monotonic() - started < 5
        assert intake.report.url is None
