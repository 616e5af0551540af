"""Posting a studio form as its page's htmx does, in the views' tests."""

from __future__ import annotations

HX = {"HTTP_HX_REQUEST": "true"}


def form_refused_writing_nothing(client, session, url: str, body: str) -> None:
    """Post ``body`` (already form-encoded, as a forged or script-less page would send it)
    to ``url`` and check that the studio refuses it with 409 and appends no entry."""
    session.refresh_from_db()
    count = session.entry_count
    r = client.post(url, body, content_type="application/x-www-form-urlencoded", **HX)
    assert r.status_code == 409
    session.refresh_from_db()
    assert session.entry_count == count
