"""GET /sessions/{id}/comic?chapter=: a chapter of a branch exported alone (issue 30)."""

from __future__ import annotations

import io

import pypdf
import pytest

from jaiweb.store.selectors import branch_rows
from journal.entries import MessageEntry, UserMessage
from tests.support.comics import cbz_contents, draw_panels

pytestmark = pytest.mark.django_db

STORY = ["猪猪侠吃下超级棒棒糖", "the ring", "降龙十巴掌", "the bow", "the end"]


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def prompts(session) -> list[str]:
    """The ids of the branch's prompts, in order: one a panel here."""
    return [
        r.entry_id
        for r in branch_rows(session=session)
        if isinstance(r.entry, MessageEntry) and isinstance(r.entry.message, UserMessage)
    ]


@pytest.fixture
def two_chapters(session, as_alice):
    """Five panels; chapter 1 "The lollipop" from the first, chapter 2 "The fight" from the
    fourth."""
    draw_panels(session, STORY)
    ids = prompts(session)
    for entry_id, title in ((ids[3], "The fight"), (ids[0], "The lollipop")):
        got = as_alice.post(
            f"/sessions/{session.id}/chapters", {"entry_id": entry_id, "title": title}
        )
        assert got.status_code == 200, got.content
    session.refresh_from_db()
    return session


def pdf_text(data: bytes) -> str:
    pages = pypdf.PdfReader(io.BytesIO(data)).pages
    return "\n".join(p.extract_text().replace("\x00", "") for p in pages)


def test_each_chapter_exports_alone(two_chapters, as_alice):
    url = f"/sessions/{two_chapters.id}/comic"
    first = as_alice.get(url, format="pdf", chapter=1)
    second = as_alice.get(url, format="pdf", chapter=2)
    assert first.status_code == second.status_code == 200
    one, two = pdf_text(first.content), pdf_text(second.content)
    assert all(t in one for t in STORY[:3]) and not any(t in one for t in STORY[3:])
    assert all(t in two for t in STORY[3:]) and not any(t in two for t in STORY[:3])
    assert first["X-Comic-Pages"] == "1" and second["X-Comic-Pages"] == "1"
    assert first["Content-Disposition"].endswith(f'{two_chapters.leaf_id}-chapter1.pdf"')
    # the same chapter twice: the same bytes
    assert as_alice.get(url, format="pdf", chapter=1).content == first.content
    # the whole branch is still one comic of all five
    whole = pdf_text(as_alice.get(url, format="pdf").content)
    assert all(t in whole for t in STORY)


def test_a_chapters_cbz_names_the_chapter(two_chapters, as_alice):
    got = as_alice.get(f"/sessions/{two_chapters.id}/comic", format="cbz", chapter=2)
    names, info = cbz_contents(got.content)
    assert names == ["page-001.png", "ComicInfo.xml"]
    assert info.findtext("Title") == f"{two_chapters.title} · The fight"
    assert f"session={two_chapters.id}" in info.findtext("Notes")


def test_an_older_node_has_only_its_own_chapters(two_chapters, as_alice):
    # the node before the marks were written: its state has no chapters
    before_marks = prompts(two_chapters)[-1]
    got = as_alice.get(
        f"/sessions/{two_chapters.id}/comic", format="pdf", chapter=1, leaf_id=before_marks
    )
    assert got.status_code == 404


def test_no_such_chapter_is_404_a_bad_number_422_another_user_404(two_chapters, as_alice, as_bob):
    url = f"/sessions/{two_chapters.id}/comic"
    assert as_alice.get(url, format="png", chapter=3).status_code == 404
    for bad in (0, -1, "two"):
        got = as_alice.get(url, format="png", chapter=bad)
        assert got.status_code == 422 and got.json()["field"] == "chapter"
    assert as_bob.get(url, format="pdf", chapter=1).status_code == 404


def test_the_trees_chapter_heading_downloads_that_chapter(two_chapters, client, alice, bob):
    client.force_login(alice)
    page = client.get(f"/sessions/{two_chapters.id}/").content.decode()
    link = f'href="/sessions/{two_chapters.id}/comic.pdf?chapter=2"'
    assert link in page and 'data-action="chapter-pdf"' in page
    got = client.get(f"/sessions/{two_chapters.id}/comic.pdf?chapter=2")
    assert got.status_code == 200
    text = pdf_text(got.content)
    assert all(t in text for t in STORY[3:]) and not any(t in text for t in STORY[:3])
    for bad in ("3", "0x", "99999"):
        assert client.get(f"/sessions/{two_chapters.id}/comic.pdf?chapter={bad}").status_code == 404
    client.force_login(bob)
    assert client.get(f"/sessions/{two_chapters.id}/comic.pdf?chapter=1").status_code == 404
