"""`manage.py seed_demo`: a demo login that works, and the article's session to look at."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from jaiweb.store.models import ComicSession
from jaiweb.store.selectors import branch_get

pytestmark = pytest.mark.django_db


def seed():
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    text = out.getvalue()
    password = re.search(r"^demo user: demo / (\S+)$", text, re.M)[1]
    session_id, path = re.search(r"^session (s_\w+): (/sessions/s_\w+/)$", text, re.M).groups()
    assert path == f"/sessions/{session_id}/"
    return text, password, ComicSession.objects.get(pk=session_id)


def test_seed_demo_gives_a_working_login_and_the_article_session():
    text, password, session = seed()
    assert len(password) >= 16 and "existed" not in text
    user = authenticate(username="demo", password=password)
    assert user is not None and session.owner == user
    assert not user.is_staff
    assert [e.id for e in branch_get(session=session)] == ["e0", "e1", "e2", "e5", "e6"]
    assert session.entry_count == 7 and session.leaf_id == "e6"


def test_seeding_again_makes_a_new_password_and_a_second_session():
    _, first_password, first = seed()
    text, password, second = seed()
    assert password != first_password and second.id != first.id
    assert "the user existed" in text and "1 earlier session(s) are kept" in text
    assert authenticate(username="demo", password=first_password) is None
    assert authenticate(username="demo", password=password) is not None
    assert ComicSession.objects.filter(owner__username="demo").count() == 2
