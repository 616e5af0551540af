"""The episode feed: the signed webhook publish_panel posts to, and its public page."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from jaiweb.feed.models import FeedPost
from jaiweb.feed.signing import HEADER, sign
from jaiweb.render.models import Image
from jaiweb.render.services import render_request
from journal.jsonvalues import SURROGATE
from tests.support.deep_json import TOO_DEEP, nested

pytestmark = pytest.mark.django_db
SECRET = "feed-test-secret"


@pytest.fixture(autouse=True)
def secret(settings, tmp_path):
    settings.JAIWEB_FEED_SECRET = SECRET
    settings.MEDIA_ROOT = tmp_path / "media"


def post(client, body: bytes, signature: str | None):
    headers = {f"HTTP_{HEADER.upper().replace('-', '_')}": signature} if signature else {}
    return client.post("/feed/webhook", body, content_type="application/json", **headers)


def test_a_signed_post_is_published(client, alice):
    image_id = render_request(user=alice, key="k", params={"prompt": "p"}).image_id
    body = json.dumps(
        {
            "image_id": image_id,
            "owner": alice.pk,
            "caption": "第一格 <b>",
            "idempotency_key": "k_1",
        },
        ensure_ascii=False,
    ).encode()
    response = post(client, body, sign(SECRET, body))
    assert response.status_code == 201
    stored = FeedPost.objects.get(pk=response.json()["post_id"])
    assert stored.caption == "第一格 <b>" and stored.idempotency_key == "k_1"
    assert Image.objects.get(pk=image_id).published_at is not None
    page = client.get("/feed/").content.decode()
    assert "第一格 &lt;b&gt;" in page and "<b>" not in page.split("<main>")[-1]


def test_bad_or_missing_signatures_are_refused_and_nothing_is_kept(client):
    body = b'{"image_id": "img_1", "caption": "x"}'
    assert post(client, body, None).status_code == 401
    assert post(client, body, sign("other-secret", body)).status_code == 401
    assert post(client, body + b" ", sign(SECRET, body)).status_code == 401
    assert not FeedPost.objects.exists()


def test_bad_json_is_a_400(client):
    deep = [nested(depth).encode() for depth in TOO_DEEP]  # a RecursionError, once: a 500
    deep += [b'{"image_id":"img_1","caption":' + nested(3_000).encode() + b"}"]
    for body in (b"[1, 2", b'{"caption": "no image"}', b'"img_1"', b'{"image_id": 7}', *deep):
        response = post(client, body, sign(SECRET, body))
        assert response.status_code == 400
        assert response.json() == {"error": "expected JSON with image_id and caption"}
    assert not FeedPost.objects.exists()


@pytest.fixture
def panel(alice) -> str:
    return render_request(user=alice, key="k", params={"prompt": "p"}).image_id


def hmac_forgeries(body: bytes) -> list[str]:
    """Signatures anyone could make: with an empty key, with the old constant dev secret."""
    return [
        "sha256=" + hmac.new(b"", body, hashlib.sha256).hexdigest(),
        "sha256=" + hmac.new(b"jaiweb-dev-only-feed-secret", body, hashlib.sha256).hexdigest(),
    ]


@pytest.mark.parametrize("configured", [None, ""])
def test_without_a_secret_no_signature_is_good(client, settings, panel, configured):
    """Issue 14.1: an unset secret was the empty key, with which anyone could sign."""
    settings.JAIWEB_FEED_SECRET = configured
    body = json.dumps({"image_id": panel, "caption": "forged"}).encode()
    for signature in hmac_forgeries(body):
        response = post(client, body, signature)
        assert response.status_code == 401
        assert response.json() == {"error": "bad or missing signature"}
    assert not FeedPost.objects.exists()
    assert Image.objects.get(pk=panel).published_at is None
    assert client.get(f"/panels/{panel}").status_code == 404


def test_the_development_secret_is_no_constant(client, settings, panel, alice):
    """With DEBUG on the default secret is derived from this checkout's SECRET_KEY: neither
    the empty key nor the constant that settings.py once held signs a post."""
    from jaiweb.settings import derived_secret

    settings.JAIWEB_FEED_SECRET = derived_secret(settings.SECRET_KEY, "feed-webhook")
    body = json.dumps({"image_id": panel, "owner": alice.pk, "caption": "forged"}).encode()
    for signature in hmac_forgeries(body):
        assert post(client, body, signature).status_code == 401
    assert not FeedPost.objects.exists()
    assert Image.objects.get(pk=panel).published_at is None
    good = post(client, body, sign(settings.JAIWEB_FEED_SECRET, body))
    assert good.status_code == 201


def test_nothing_signs_with_an_empty_key():
    with pytest.raises(ValueError, match="empty secret"):
        sign("", b"{}")


def test_an_unknown_image_is_refused_and_nothing_is_kept(client, panel, alice):
    """Issue 14.2: the post was saved, then publishing the unknown image answered 500."""
    body = json.dumps({"image_id": "img_nosuch", "owner": alice.pk, "caption": "x"}).encode()
    response = post(client, body, sign(SECRET, body))
    assert response.status_code == 422
    assert response.json() == {"error": "image_id: no such image"}
    assert not FeedPost.objects.exists()
    assert Image.objects.get(pk=panel).published_at is None


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"caption": 5}, "caption must be a string"),
        ({"caption": "a\x00b"}, "caption: text must not contain the NUL character (U+0000)"),
        ({"caption": "a\udfffb"}, "caption: " + SURROGATE),
        ({"session_id": ["s"]}, "session_id must be a string"),
        ({"owner": None}, "owner: the id of the user the post is for is required"),
        ({"owner": True}, "owner: the id of the user the post is for is required"),
    ],
)
def test_bad_fields_are_refused_and_nothing_is_kept(client, panel, alice, fields, error):
    body = json.dumps({"image_id": panel, "owner": alice.pk, "caption": "ok", **fields}).encode()
    response = post(client, body, sign(SECRET, body))
    assert response.status_code == 422
    assert response.json() == {"error": error}
    assert not FeedPost.objects.exists()
    assert Image.objects.get(pk=panel).published_at is None


def test_a_post_whose_publishing_fails_is_not_kept(client, panel, alice, monkeypatch):
    """Both in one transaction: the post goes when the panel cannot be made public."""

    def broken(**kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("jaiweb.feed.services.image_publish", broken)
    body = json.dumps({"image_id": panel, "owner": alice.pk, "caption": "x"}).encode()
    with pytest.raises(RuntimeError):
        post(client, body, sign(SECRET, body))
    assert not FeedPost.objects.exists()


@pytest.mark.parametrize("owner", ["bob", "missing"])
def test_a_post_of_another_users_image_is_refused_and_nothing_is_kept(client, panel, bob, owner):
    """Issue 27: a signed post naming Alice's panel for Bob (or for nobody) publishes nothing."""
    fields = {"owner": bob.pk} if owner == "bob" else {}
    body = json.dumps({"image_id": panel, "caption": "hers", **fields}).encode()
    response = post(client, body, sign(SECRET, body))
    assert response.status_code == 422
    assert not FeedPost.objects.exists()
    assert Image.objects.get(pk=panel).published_at is None
    assert client.get(f"/panels/{panel}").status_code == 404
