"""Fixtures the web apps' test folders share (tests/studio, tests/inbox, tests/feed,
tests/accounts), brought in by each folder's conftest.py: a media folder of the test's own,
and a session to work on."""

from __future__ import annotations

import pytest

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.render.services import wallet_get_or_create
from jaiweb.store.services import session_create


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    """Rendered panels go to the test's own folder; the feed webhook has a known secret."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.JAIWEB_FEED_SECRET = "test-feed-secret"
    return settings.MEDIA_ROOT


@pytest.fixture
def episode(alice):
    """Alice's session (its title needs escaping), her wallet made."""
    wallet_get_or_create(user=alice)
    return session_create(owner=alice, title="Kung fu <b>pig</b>", initial_app_state=DEFAULT_STATE)
