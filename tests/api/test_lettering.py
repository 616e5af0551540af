"""A panel's lettering and the page layout through the API: free edits kept in the app
state (a rewind brings the old words back), refused whole when the input is bad."""

from __future__ import annotations

import io

import pypdf
import pytest

from jaiweb.render.selectors import wallet_balance
from jaiweb.store.selectors import entries_after
from journal.lettering import CAPTION_MAX, SPEECH_MAX
from tests.support.comics import draw_panels

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def drawn(session):
    """Alice's session with two panels."""
    draw_panels(session, ["猪猪侠吃下超级棒棒糖", "the ring"])
    return session


def panels_of(api, session_id: str) -> list[str]:
    r = api.get(f"/sessions/{session_id}/page")
    assert r.status_code == 200, r.content
    return r.json()["order"]


def lettering(api, session_id: str, entry_id: str, **params):
    return api.get(f"/sessions/{session_id}/entries/{entry_id}/lettering", **params)


def pdf_text(data: bytes) -> str:
    """The PDF's text (its font's CMap reads with a NUL before each character: dropped)."""
    pages = pypdf.PdfReader(io.BytesIO(data)).pages
    return " ".join(page.extract_text().replace("\x00", "") for page in pages)


def entry_count(session) -> int:
    return len(list(entries_after(session=session, after_seq=0)))


def test_an_edit_is_free_shows_in_the_export_and_a_rewind_brings_the_old_words_back(
    drawn, as_alice, alice
):
    first = panels_of(as_alice, drawn.id)[0]
    before_leaf = drawn.leaf_id
    old = lettering(as_alice, drawn.id, first).json()
    assert old["edited"] is False and old["caption"]
    balance = wallet_balance(user=alice.pk)
    r = as_alice.post(
        f"/sessions/{drawn.id}/entries/{first}/lettering",
        {
            "caption": "Pig-Man licks the giant lollipop",
            "speech": [{"character": "猪猪侠", "text": "好甜！", "x": 0.25, "y": 0.1}],
            "expected_leaf_id": before_leaf,
        },
    )
    assert r.status_code == 200, r.content
    drawn.refresh_from_db()
    assert r.json() == {
        "leaf_id": drawn.leaf_id,  # CONTRACT §6: the new leaf
        "entry_id": first,
        "caption": "Pig-Man licks the giant lollipop",
        "speech": [{"character": "猪猪侠", "text": "好甜！", "x": 0.25, "y": 0.1}],
        "edited": True,
        "number": 1,
    }
    assert wallet_balance(user=alice.pk) == balance  # nothing charged, nothing drawn
    drawn.refresh_from_db()
    assert drawn.leaf_id != before_leaf
    pdf = as_alice.get(f"/sessions/{drawn.id}/comic", format="pdf").content
    assert "Pig-Man licks the giant lollipop" in pdf_text(pdf)
    assert "好甜" in pdf_text(pdf)
    old_pdf = as_alice.get(f"/sessions/{drawn.id}/comic", format="pdf", leaf_id=before_leaf)
    assert "Pig-Man licks" not in pdf_text(old_pdf.content)
    nav = as_alice.post(f"/sessions/{drawn.id}/navigate", {"entry_id": before_leaf})
    assert nav.status_code == 200, nav.content
    after = lettering(as_alice, drawn.id, first).json()
    assert after.pop("leaf_id") != old.pop("leaf_id")  # the rewind's branch entry
    assert after == old


def test_the_layout_and_order_are_state_and_exports_follow_them(drawn, as_alice):
    first, second = panels_of(as_alice, drawn.id)
    r = as_alice.post(f"/sessions/{drawn.id}/page", {"layout": "splash", "order": [second]})
    assert r.status_code == 200, r.content
    assert r.json()["layout"] == "splash" and r.json()["order"] == [second, first]
    out = as_alice.get(f"/sessions/{drawn.id}/comic", format="pdf")
    assert out["X-Comic-Pages"] == "2"  # one panel a page
    assert (
        as_alice.get(f"/sessions/{drawn.id}/comic", format="pdf", layout="2x2")["X-Comic-Pages"]
        == "1"
    )


TOO_LONG_CAPTION = "x" * (CAPTION_MAX + 1)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"caption": ""},
        {"caption": "   "},
        {"caption": TOO_LONG_CAPTION},
        {"caption": "a\u0000b"},
        {"speech": [{"character": "猪猪侠", "text": ""}]},
        {"speech": [{"character": "猪猪侠", "text": "y" * (SPEECH_MAX + 1)}]},
        {"speech": [{"character": "猪猪侠", "text": "ok", "x": 2}]},
        {"speech": [{"text": "ok"}] * 5},
    ],
)
def test_bad_lettering_is_422_and_nothing_is_written(drawn, as_alice, body):
    first = panels_of(as_alice, drawn.id)[0]
    count = entry_count(drawn)
    r = as_alice.post(f"/sessions/{drawn.id}/entries/{first}/lettering", body)
    assert r.status_code == 422, r.content
    assert entry_count(drawn) == count


def test_a_lone_surrogate_is_422_and_nothing_is_written(drawn, as_alice):
    first = panels_of(as_alice, drawn.id)[0]
    count = entry_count(drawn)
    r = as_alice.client.post(
        f"/api/v1/sessions/{drawn.id}/entries/{first}/lettering",
        data=b'{"caption": "a\\udcffb"}',
        content_type="application/json",
    )
    assert r.status_code == 422, r.content
    assert entry_count(drawn) == count


def test_script_tags_are_kept_as_words_and_escaped_on_the_page(drawn, as_alice, client, alice):
    first = panels_of(as_alice, drawn.id)[0]
    r = as_alice.post(
        f"/sessions/{drawn.id}/entries/{first}/lettering",
        {"caption": "<script>alert(1)</script>"},
    )
    assert r.status_code == 200 and r.json()["caption"] == "<script>alert(1)</script>"
    client.force_login(alice)
    page = client.get(f"/sessions/{drawn.id}/").content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_stale_leaf_is_409_another_users_session_or_an_unknown_panel_404(drawn, as_alice, as_bob):
    first = panels_of(as_alice, drawn.id)[0]
    count = entry_count(drawn)
    path = f"/sessions/{drawn.id}/entries/{first}/lettering"
    stale = as_alice.post(path, {"caption": "new", "expected_leaf_id": first})
    assert stale.status_code == 409, stale.content
    assert as_bob.post(path, {"caption": "new"}).status_code == 404
    assert lettering(as_bob, drawn.id, first).status_code == 404
    unknown = as_alice.post(f"/sessions/{drawn.id}/entries/e_nope/lettering", {"caption": "x"})
    assert unknown.status_code == 404
    bad_order = as_alice.post(f"/sessions/{drawn.id}/page", {"order": ["e_nope"]})
    assert bad_order.status_code == 422
    assert as_alice.post(f"/sessions/{drawn.id}/page", {"layout": "3x3"}).status_code == 422
    assert entry_count(drawn) == count


def test_the_rewind_preview_says_which_words_and_layout_go_back(drawn, as_alice):
    before_leaf = drawn.leaf_id
    first = panels_of(as_alice, drawn.id)[0]
    r = as_alice.post(f"/sessions/{drawn.id}/entries/{first}/lettering", {"caption": "new"})
    assert r.status_code == 200, r.content
    assert as_alice.post(f"/sessions/{drawn.id}/page", {"layout": "strip"}).status_code == 200
    preview = as_alice.get(f"/sessions/{drawn.id}/entries/{before_leaf}/rewind-preview").json()
    assert (preview["lettering"], preview["layout"], preview["order"]) == (1, "2x2", False)
    leaf = as_alice.get(f"/sessions/{drawn.id}").json()["leaf_id"]
    same = as_alice.get(f"/sessions/{drawn.id}/entries/{leaf}/rewind-preview").json()
    assert (same["lettering"], same["layout"], same["order"]) == (0, None, False)
