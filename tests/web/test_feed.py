"""The episode feed: the signed webhook publish_panel posts to, and its public page."""

from __future__ import annotations

import json

import pytest

from jaiweb.feed.models import FeedPost
from jaiweb.feed.signing import HEADER, sign
from jaiweb.render.models import Image
from jaiweb.render.services import render_request

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
        {"image_id": image_id, "caption": "第一格 <b>", "idempotency_key": "k_1"},
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
    body = b"[1, 2"
    assert post(client, body, sign(SECRET, body)).status_code == 400
    body = b'{"caption": "no image"}'
    assert post(client, body, sign(SECRET, body)).status_code == 400
