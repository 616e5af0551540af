"""GET /sessions/{id}/comic: a branch as PNG, PDF or CBZ, to whoever may read the session."""

from __future__ import annotations

import io

import pypdf
import pytest
from django.test import Client
from PIL import Image

from jaiweb.comic import art
from tests.api.conftest import BASE, api_for
from tests.support.comics import cbz_contents, draw_panels

pytestmark = pytest.mark.django_db

TYPES = {"png": "image/png", "pdf": "application/pdf", "cbz": "application/vnd.comicbook+zip"}


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def drawn(session):
    """Alice's session with three panels; its leaf is the node exported."""
    draw_panels(session, ["猪猪侠吃下超级棒棒糖", "the ring", "降龙十巴掌"])
    return session


def comic(api, session_id: str, **params):
    return api.get(f"/sessions/{session_id}/comic", **params)


@pytest.mark.parametrize("fmt", ["png", "pdf", "cbz"])
def test_the_owner_gets_each_format_as_an_attachment(drawn, as_alice, fmt):
    r = comic(as_alice, drawn.id, format=fmt, leaf_id=drawn.leaf_id)
    assert r.status_code == 200, r.content
    assert r["Content-Type"] == TYPES[fmt]
    assert r["Content-Disposition"] == (
        f'attachment; filename="{drawn.id}-{drawn.leaf_id}'
        + ("-page-001.png" if fmt == "png" else f".{fmt}")
        + '"'
    )
    assert r["X-Comic-Pages"] == "1"
    if fmt == "png":
        with Image.open(io.BytesIO(r.content)) as page:
            assert page.size == (1240, 1754)
    elif fmt == "pdf":
        assert len(pypdf.PdfReader(io.BytesIO(r.content)).pages) == 1
    else:
        names, info = cbz_contents(r.content)
        assert names == ["page-001.png", "ComicInfo.xml"]
        assert f"node={drawn.leaf_id}" in info.findtext("Notes")


def test_the_layout_and_page_choose_what_comes(drawn, as_alice):
    r = comic(as_alice, drawn.id, format="png", layout="splash", page=3)
    assert r.status_code == 200 and r["X-Comic-Pages"] == "3"
    assert comic(as_alice, drawn.id, format="png", layout="splash", page=4).status_code == 404


def test_two_requests_give_the_same_bytes(drawn, as_alice):
    first = comic(as_alice, drawn.id, format="pdf").content
    assert comic(as_alice, drawn.id, format="pdf", leaf_id=drawn.leaf_id).content == first


def test_staff_may_read_another_user_gets_404_and_no_login_401(drawn, as_bob, as_staff):
    assert comic(as_staff, drawn.id, format="cbz").status_code == 200
    r = comic(as_bob, drawn.id, format="cbz")
    assert r.status_code == 404 and r.json() == {"detail": "no such session", "code": "not_found"}
    r = comic(api_for(None), drawn.id, format="cbz")
    assert r.status_code == 401
    # the bare address too, with no client state at all
    assert Client().get(f"{BASE}/sessions/{drawn.id}/comic?format=pdf").status_code == 401


def test_an_unknown_node_or_one_of_another_session_is_404(drawn, as_alice, alice):
    from jaiweb.store.services import session_create

    other = session_create(owner=alice, title="other")
    elsewhere = draw_panels(other, ["a cat"])
    for leaf in ("e_nowhere", elsewhere):
        r = comic(as_alice, drawn.id, format="pdf", leaf_id=leaf)
        assert r.status_code == 404 and r.json()["code"] == "not_found"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"format": "gif"}, "format"),
        ({}, "format"),
        ({"format": "pdf", "layout": "3x3"}, "layout"),
        ({"format": "png", "page": 0}, "page"),
        ({"format": "pdf", "leaf_id": "bad id\x00"}, "leaf_id"),
    ],
)
def test_bad_parameters_are_422_naming_the_field(drawn, as_alice, params, field):
    r = comic(as_alice, drawn.id, **params)
    assert r.status_code == 422 and r.json()["field"] == field


def test_without_the_cairo_library_it_is_503_saying_what_to_install(drawn, as_alice, monkeypatch):
    def no_cairo(data: bytes, *, width: int):
        raise art.ExportUnavailable("SVG panels need the Cairo library: install libcairo2")

    monkeypatch.setattr(art, "svg_drawn", no_cairo)
    r = comic(as_alice, drawn.id, format="pdf")
    assert r.status_code == 503
    assert r.json()["code"] == "export_unavailable" and "libcairo2" in r.json()["detail"]


def test_the_document_declares_the_operation(as_alice):
    doc = as_alice.get("/openapi.json").json()
    op = doc["paths"]["/api/v1/sessions/{session_id}/comic"]["get"]
    assert set(op["responses"]) >= {"200", "401", "404", "422", "503"}
    assert set(op["responses"]["200"]["content"]) == set(TYPES.values())
    params = {p["name"]: p for p in op["parameters"]}
    assert params["format"]["required"] and set(params) >= {"leaf_id", "layout", "page"}
