"""The studio's import page and its session download: upload a file → a new session of
mine (or the refusal naming the line, nothing written); download a bundle → the same
strip on import, its panels served to me."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.commands.sessions import prompt_submit
from jaiweb.render.models import Image, LedgerEntry
from jaiweb.store.models import ComicSession, Entry, Label
from jaiweb.store.selectors import branch_rows, session_get
from jaiweb.store.services import session_create
from jaiweb.studio.selectors.strip import strip_panels
from tests.support.deep_json import DEEP_FILES, JSON_DEPTH_MAX, TOO_DEEP, deep_file
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(autouse=True)
def _fresh_rate_limit():
    """The prompt counters live in the cache, keyed by user id: ids come back between tests
    (the media folder is tests/studio/conftest.py's)."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def drawn(alice):
    session = session_create(owner=alice, title="一格", initial_app_state=DEFAULT_STATE)
    prompt_submit(session=session, user=alice, text="/draw 猪猪侠吃下棒棒糖")
    run_pending()
    session.refresh_from_db()
    return session


def as_user(client, user):
    client.force_login(user)
    return client


def download(client, session, images=True) -> bytes:
    response = client.get(f"/sessions/{session.id}/session.jsonl" + ("?images=1" if images else ""))
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment; filename=")
    return b"".join(response.streaming_content)


def upload(client, data: bytes, name="session.jsonl"):
    return client.post("/sessions/import", {"file": SimpleUploadedFile(name, data)})


def panels(session_id):
    return strip_panels(branch_rows(session=session_get(session_id=session_id)))


def counts():
    return tuple(m.objects.count() for m in (ComicSession, Entry, Label, Image, LedgerEntry))


def test_the_links_are_on_my_sessions_and_on_the_strip(client, alice, drawn):
    as_user(client, alice)
    home = client.get("/").content.decode()
    assert 'href="/sessions/import" data-action="import"' in home
    page = client.get(f"/sessions/{drawn.id}/").content.decode()
    assert f'href="/sessions/{drawn.id}/session.jsonl?images=1" data-action="export-bundle"' in page
    form = client.get("/sessions/import").content.decode()
    assert 'enctype="multipart/form-data"' in form and 'name="file"' in form
    assert "data-import-error" not in form


def test_download_with_panels_then_upload_gives_the_same_strip(client, alice, bob, drawn):
    data = download(as_user(client, alice), drawn)
    assert json.loads(data.splitlines()[0])["session"]["image_count"] == 1
    plain = download(client, drawn, images=False)
    assert json.loads(plain.splitlines()[0])["session"]["image_count"] == 0
    before = LedgerEntry.objects.count()

    response = upload(as_user(client, bob), data)
    assert response.status_code == 302
    new = ComicSession.objects.get(owner=bob)
    assert response["Location"] == f"/sessions/{new.id}/"
    assert LedgerEntry.objects.count() == before  # nothing charged, nothing granted
    theirs, mine = panels(new.id), panels(drawn.id)
    assert [p.prompt for p in theirs] == [p.prompt for p in mine] and len(theirs) == 1
    page = client.get(f"/sessions/{new.id}/").content.decode()
    assert f'src="/panels/{theirs[0].image_id}"' in page
    picture = client.get(f"/panels/{theirs[0].image_id}")
    assert picture.status_code == 200
    assert b"".join(picture.streaming_content) == b"".join(
        as_user(client.__class__(), alice).get(f"/panels/{mine[0].image_id}").streaming_content
    )


def test_a_refusal_names_the_line_and_writes_nothing(client, alice, drawn):
    lines = download(as_user(client, alice), drawn).decode().splitlines()
    lines[2] = lines[2].replace('"parent_id":"', '"parent_id":"nowhere-', 1)
    before = counts()
    response = upload(client, ("\n".join(lines) + "\n").encode())
    assert response.status_code == 422
    body = response.content.decode()
    assert 'data-import-error data-line="3"' in body
    assert "Line 3: broken session tree: parent &#x27;nowhere-" in body
    assert "Nothing was imported." in body
    assert counts() == before


def test_pi_and_claude_code_files_import_from_the_page(client, alice):
    as_user(client, alice)
    for path in ("pi/episode.jsonl", "claude_code/session.jsonl"):
        response = upload(client, (FIXTURES / path).read_bytes(), name=Path(path).name)
        assert response.status_code == 302, response.content[:500]
    titles = set(ComicSession.objects.filter(owner=alice).values_list("title", flat=True))
    # an import is told apart from its source by its title
    assert titles == {"猪猪侠大战超人强 (imported)", "Kung fu pig panels, then a cat (imported)"}
    for session in ComicSession.objects.filter(owner=alice):
        assert client.get(f"/sessions/{session.id}/").status_code == 200


def test_too_large_is_413_before_the_form_is_read(client, alice, drawn, settings):
    data = download(as_user(client, alice), drawn)
    before = counts()
    settings.JAIWEB_MAX_BUNDLE_BYTES = len(data) - 1
    response = upload(client, data)
    assert response.status_code == 413
    assert f"larger than {len(data) - 1} bytes" in response.content.decode()
    settings.JAIWEB_MAX_BUNDLE_BYTES = 1024
    response = upload(client, b"x" * (1024 + 64 * 1024 + 1))  # refused by its length alone
    assert response.status_code == 413
    assert counts() == before


def test_no_file_is_422(client, alice):
    response = as_user(client, alice).post("/sessions/import", {})
    assert response.status_code == 422 and "Choose a session file" in response.content.decode()


def test_csrf_is_checked(alice):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    data = (FIXTURES / "jaiweb" / "article_v1.jsonl").read_bytes()
    assert upload(client, data).status_code == 403
    assert ComicSession.objects.count() == 0


def test_others_and_anonymous(client, alice, bob, drawn, staff_user):
    assert client.get("/sessions/import").status_code == 302  # to the login page
    assert client.get(f"/sessions/{drawn.id}/session.jsonl").status_code == 302
    assert as_user(client, bob).get(f"/sessions/{drawn.id}/session.jsonl").status_code == 404
    staff = as_user(client, staff_user)
    assert staff.get(f"/sessions/{drawn.id}/session.jsonl?images=1").status_code == 200


@pytest.fixture
def staff_user(django_user_model):
    return django_user_model.objects.create_user("root", password="root-pass-1", is_staff=True)


@pytest.mark.parametrize("kind", DEEP_FILES)
@pytest.mark.parametrize("depth", TOO_DEEP)
def test_a_line_nested_past_the_limit_is_a_422_page_naming_it(client, alice, kind, depth):
    """It was an HTML 500 (a RecursionError in the reader)."""
    as_user(client, alice)
    before = counts()
    response = upload(client, deep_file(kind, depth))
    assert response.status_code == 422
    body = response.content.decode()
    line = DEEP_FILES[kind][1]
    assert f'data-import-error data-line="{line}"' in body
    assert (
        f"Line {line}: JSON nested deeper than {JSON_DEPTH_MAX} levels of arrays and objects. "
        "Nothing was imported."
    ) in body
    assert counts() == before
