"""GET /panels/<id>: a rendered panel, to its owner only until it is published."""

from __future__ import annotations

import pytest

from jaiweb.render.services import image_publish, render_request

pytestmark = pytest.mark.django_db


@pytest.fixture
def panel(alice, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    result = render_request(
        user=alice, key="k1", params={"prompt": "<script>alert(1)</script>", "characters": {}}
    )
    return result.image_id


def test_the_owner_sees_it_as_a_picture_that_runs_nothing(client, alice, panel):
    client.force_login(alice)
    response = client.get(f"/panels/{panel}")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert response["Content-Security-Policy"].startswith("default-src 'none'")
    assert response["X-Content-Type-Options"] == "nosniff"
    body = b"".join(response.streaming_content)
    assert b"<script>" not in body and b"&lt;script&gt;" in body


def test_others_get_a_plain_404(client, bob, panel):
    assert client.get(f"/panels/{panel}").status_code == 404
    client.force_login(bob)
    assert client.get(f"/panels/{panel}").status_code == 404
    assert client.get("/panels/img_nope").status_code == 404


def test_published_panels_are_public(client, panel):
    image_publish(image_id=panel)
    response = client.get(f"/panels/{panel}")
    assert response.status_code == 200 and "public" in response["Cache-Control"]


def test_staff_see_unpublished_panels_as_they_see_every_session(client, django_user_model, panel):
    """Issue 14.9: staff could read a session but its thumbnails were 404 for them."""
    staff = django_user_model.objects.create_user("root", password="root-pass-1", is_staff=True)
    client.force_login(staff)
    response = client.get(f"/panels/{panel}")
    assert response.status_code == 200
    assert response["Cache-Control"] == "private, max-age=3600"
