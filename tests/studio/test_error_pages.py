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


def test_a_server_error_is_a_styled_500_with_nothing_that_could_fail_again(rf):
    from django.utils import translation
    from django.views.defaults import server_error

    response = server_error(rf.get("/sessions/s_x/"))  # as Django calls it: no context
    assert response.status_code == 500
    body = response.content.decode()
    assert 'data-status="500"' in body and "/static/studio/studio.css" in body
    assert "csrf" not in body.lower()  # no form that would need the request's token
    with translation.override("zh-hans"):
        assert "出了点问题" in server_error(rf.get("/")).content.decode()


def test_a_revoked_share_link_is_the_styled_404(client, alice, settings):
    from jaiweb.store.demo import article_session_create
    from jaiweb.store.shares import share_link_create, share_link_revoke

    settings.DEBUG = False
    session = article_session_create(owner=alice)
    link, token = share_link_create(session_id=session.id)
    assert client.get(f"/s/{token}/").status_code == 200
    share_link_revoke(session_id=session.id, link_id=link.id)
    response = client.get(f"/s/{token}/")
    assert response.status_code == 404
    assert 'data-status="404"' in response.content.decode()


def test_a_refused_csrf_token_is_a_styled_page(alice):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post("/sessions/new", {"title": "no token"})
    assert response.status_code == 403
    body = response.content.decode()
    assert 'data-reason="csrf"' in body and "<style>" not in body
    zh = client.post("/sessions/new", {"title": "x"}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "这个表单已经过期" in zh.content.decode()
