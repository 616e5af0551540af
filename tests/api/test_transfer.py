"""GET /sessions/{id}/export?images=true and POST /sessions/import: the API does what the
commands do — export with images → import → the same strip, the panels served to the
importer; 422 naming the line, 413 over the cap, 415 for another body, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client

from jaiweb.render.models import Image, LedgerEntry, Wallet
from jaiweb.store.labels import label_add, labels_of
from jaiweb.store.models import ComicSession, Entry, Label, Operation
from jaiweb.store.selectors import branch_rows, session_get
from jaiweb.studio.selectors.strip import strip_panels
from tests.api.conftest import BASE, api_for
from tests.support.deep_json import DEEP_FILES, TOO_DEEP, deep_file, refusal
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.JAIWEB_FEED_SECRET = "test-feed-secret"
    return settings.MEDIA_ROOT


@pytest.fixture
def drawn(alice):
    """Alice's session with two panels and a bookmark."""
    from jaiweb.agent.state import DEFAULT_STATE
    from jaiweb.commands.sessions import prompt_submit
    from jaiweb.store.services import session_create

    session = session_create(owner=alice, title="两格", initial_app_state=DEFAULT_STATE)
    for text in ("/draw 猪猪侠吃下棒棒糖", "/draw 一掌拍飞超人强"):
        prompt_submit(session=session, user=alice, text=text)
        run_pending()
    session.refresh_from_db()
    label_add(session_id=session.id, entry_id=session.leaf_id, kind="bookmark", text="★")
    return session


def export_body(user, session, images=True) -> bytes:
    response = api_for(user).client.get(
        f"{BASE}/sessions/{session.id}/export" + ("?images=true" if images else "")
    )
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "application/jsonl; charset=utf-8"
    return b"".join(response.streaming_content)


def upload(user, data: bytes, *, name="session.jsonl", field="file"):
    return api_for(user).client.post(f"{BASE}/sessions/import", {field: _file(data, name)})


def raw(user, data: bytes, content_type="application/jsonl"):
    return api_for(user).client.post(
        f"{BASE}/sessions/import", data=data, content_type=content_type
    )


def _file(data: bytes, name: str):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data, content_type="application/jsonl")


def panels(session_id):
    return strip_panels(branch_rows(session=session_get(session_id=session_id)))


def counts():
    return tuple(m.objects.count() for m in (ComicSession, Entry, Operation, Label, Image))


def served(user, image_id) -> tuple[int, bytes]:
    client = Client()
    client.force_login(user)
    response = client.get(f"/panels/{image_id}")
    return response.status_code, (
        b"".join(response.streaming_content) if response.status_code == 200 else b""
    )


def test_export_with_images_then_import_gives_the_same_strip(drawn, alice, bob, media):
    body = export_body(alice, drawn)
    lines = body.decode().splitlines()
    assert json.loads(lines[0])["session"]["image_count"] == 2
    plain = export_body(alice, drawn, images=False).decode().splitlines()
    assert json.loads(plain[0])["session"]["image_count"] == 0
    assert plain[1:] == [line for line in lines[1:] if '"type":"image"' not in line]

    ledger = (LedgerEntry.objects.count(), list(Wallet.objects.values_list("pk", "balance")))
    response = upload(bob, body)
    assert response.status_code == 201, response.content
    new = response.json()
    assert new["owner"] == "bob" and new["title"] == "两格 (imported)" and new["state"] == "idle"
    assert new["leaf_id"] == drawn.leaf_id and new["entry_count"] == drawn.entry_count
    assert (LedgerEntry.objects.count(), list(Wallet.objects.values_list("pk", "balance"))) == (
        ledger
    )

    theirs, mine = panels(new["id"]), panels(drawn.id)
    assert [(p.prompt, p.narration, p.asked) for p in theirs] == [
        (p.prompt, p.narration, p.asked) for p in mine
    ]
    for their, my in zip(theirs, mine, strict=True):
        status, data = served(bob, their.image_id)
        assert status == 200 and data == served(alice, my.image_id)[1]
    assert [(la.kind, la.entry_id) for la in labels_of(session_id=new["id"])] == [
        ("bookmark", drawn.leaf_id)
    ]
    # the API reads the new session like any other
    assert api_for(bob).get(f"/sessions/{new['id']}").json()["id"] == new["id"]


def test_the_raw_body_and_a_token_work_too(drawn, alice, alice_token):
    body = export_body(alice, drawn)
    for media_type in ("application/jsonl", "application/x-ndjson", "application/octet-stream"):
        response = Client().post(
            f"{BASE}/sessions/import",
            data=body,
            content_type=media_type,
            headers={"Authorization": f"Bearer {alice_token}"},
        )
        assert response.status_code == 201, (media_type, response.content)
        assert [p.image_id for p in panels(response.json()["id"])] == [
            p.image_id for p in panels(drawn.id)
        ]  # alice's own images: the same ids, nothing copied


@pytest.mark.parametrize(
    ("path", "title"),
    [("pi/episode.jsonl", "猪猪侠大战超人强"), ("claude_code/session.jsonl", None)],
)
def test_pi_and_claude_code_files_import(alice, path, title):
    response = upload(alice, (FIXTURES / path).read_bytes(), name=Path(path).name)
    assert response.status_code == 201, response.content
    assert title is None or response.json()["title"] == f"{title} (imported)"


def test_a_version_1_file_imports(alice):
    response = raw(alice, (FIXTURES / "jaiweb" / "article_v1.jsonl").read_bytes())
    assert response.status_code == 201 and response.json()["leaf_id"] == "e6"


def test_a_bad_file_is_422_naming_the_line_and_writes_nothing(drawn, alice, bob):
    lines = export_body(alice, drawn).decode().splitlines()
    image = next(i for i, line in enumerate(lines) if '"type":"image"' in line)
    data = json.loads(lines[image])
    data["sha256"] = "0" * 64
    lines[image] = json.dumps(data)
    before = counts()
    response = upload(bob, ("\n".join(lines) + "\n").encode())
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "import_refused" and body["line"] == image + 1
    assert body["detail"].startswith(f"line {image + 1}: image ")
    assert counts() == before
    for bad, line in ((b"{oops\n", 1), (b"\n\n" + b'{"format":"jaiweb-session"}', 3)):
        response = raw(bob, bad)
        assert (response.status_code, response.json()["line"]) == (422, line), bad
    assert counts() == before


def test_over_the_cap_is_413_and_writes_nothing(drawn, alice, bob, settings):
    body = export_body(alice, drawn)
    settings.JAIWEB_MAX_BUNDLE_BYTES = len(body) - 1
    before = counts()
    for response in (upload(bob, body), raw(bob, body)):
        assert response.status_code == 413
        assert response.json()["code"] == "bundle_too_large"
        assert f"larger than {len(body) - 1} bytes" in response.json()["detail"]
    # a body the middleware sees is too large is refused before it is read
    settings.JAIWEB_MAX_BUNDLE_BYTES = 1024
    response = raw(bob, b"x" * (1024 + 64 * 1024 + 1))
    assert response.status_code == 413 and response.json()["code"] == "body_too_large"
    assert counts() == before
    settings.JAIWEB_MAX_BUNDLE_BYTES = len(body)
    assert upload(bob, body).status_code == 201


def test_the_import_takes_a_bigger_body_than_other_writes(drawn, alice, settings):
    """DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) stays the limit of every other body."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = export_body(alice, drawn)
    assert len(body) > 1000
    assert raw(alice, body).status_code == 201
    big = api_for(alice).post("/sessions", {"title": "x" * 1001})
    assert big.status_code == 413


def test_another_body_is_415_and_a_form_without_the_file_422(alice):
    response = api_for(alice).post("/sessions/import", {"lines": []})
    assert response.status_code == 415 and response.json()["code"] == "unsupported_media_type"
    response = upload(alice, b"{}", field="other")
    assert response.status_code == 422 and "field 'file'" in response.json()["detail"]


def test_the_browser_needs_csrf_and_anonymous_gets_401(alice):
    client = Client(enforce_csrf_checks=True)
    assert (
        client.post(f"{BASE}/sessions/import", data=b"x", content_type="application/jsonl")
    ).status_code == 401
    client.force_login(alice)
    response = client.post(
        f"{BASE}/sessions/import",
        {"file": _file((FIXTURES / "jaiweb" / "article_v1.jsonl").read_bytes(), "a.jsonl")},
    )
    assert response.status_code == 403 and response.json()["code"] == "csrf_failed"
    assert ComicSession.objects.count() == 0


def test_images_must_be_a_boolean(drawn, alice):
    response = api_for(alice).get(f"/sessions/{drawn.id}/export?images=maybe")
    assert response.status_code == 422 and response.json()["field"] == "images"


def test_the_document_says_every_limit(client, settings):
    schema = client.get(f"{BASE}/openapi.json").json()
    op = schema["paths"]["/api/v1/sessions/import"]["post"]
    content = op["requestBody"]["content"]
    assert set(content) == {
        "multipart/form-data",
        "application/jsonl",
        "application/x-ndjson",
        "application/octet-stream",
    }
    limit = settings.JAIWEB_MAX_BUNDLE_BYTES
    assert content["multipart/form-data"]["schema"]["properties"]["file"]["maxLength"] == limit
    assert content["multipart/form-data"]["schema"]["required"] == ["file"]
    for media in ("application/jsonl", "application/x-ndjson", "application/octet-stream"):
        assert content[media]["schema"]["format"] == "binary"
        assert content[media]["schema"]["maxLength"] == limit
    assert {"201", "401", "413", "415", "422"} <= set(op["responses"])
    assert "line" in schema["components"]["schemas"]["ImportRefusedOut"]["properties"]
    export = schema["paths"]["/api/v1/sessions/{session_id}/export"]["get"]
    images = next(p for p in export["parameters"] if p["name"] == "images")
    assert images["schema"]["type"] == "boolean" and images["schema"]["default"] is False


def test_the_documented_example_is_a_file_that_imports(client, alice):
    schema = client.get(f"{BASE}/openapi.json").json()
    content = schema["paths"]["/api/v1/sessions/import"]["post"]["requestBody"]["content"]
    example = content["application/octet-stream"]["example"]
    assert content["multipart/form-data"]["example"] == {"file": example}
    response = raw(alice, example.encode())
    assert response.status_code == 201, response.content
    assert response.json()["title"] == "猪猪侠大战超人强 (imported)"


@pytest.mark.parametrize("kind", DEEP_FILES)
@pytest.mark.parametrize("depth", TOO_DEEP)
@pytest.mark.parametrize("send", ["body", "form"])
def test_a_line_nested_past_the_limit_is_422_naming_it_and_writes_nothing(bob, kind, depth, send):
    """It was a RecursionError and a 500 (three formats, any depth Python cannot recurse)."""
    data = deep_file(kind, depth)
    before = counts()
    response = raw(bob, data) if send == "body" else upload(bob, data)
    line = DEEP_FILES[kind][1]
    assert (response.status_code, response.json()) == (
        422,
        {
            "detail": refusal(line),
            "code": "import_refused",
            "field": None,
            "errors": None,
            "leaf_id": None,
            "line": line,
        },
    )
    assert counts() == before
    assert raw(bob, deep_file(kind, 3)).status_code == 201  # the same file, shallow
