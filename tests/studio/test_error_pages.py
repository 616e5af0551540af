"""Not found and not allowed are pages of the studio, in the viewer's language."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_an_unknown_page_is_a_styled_404(client, alice, settings):
    settings.DEBUG = False  # Django's own debug page otherwise
    client.force_login(alice)
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    body = response.content.decode()
    assert 'data-status="404"' in body and 'id="account"' in body


def test_the_403_page_speaks_chinese_too(client, alice):
    client.force_login(alice)
    response = client.get("/inbox/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert response.status_code == 403
    assert "这个页面不对你开放" in response.content.decode()
