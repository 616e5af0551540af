"""The article's story as a comic, in Chromium: three turns drawn, the lollipop panel's
caption and bubble edited for free, a rewind bringing the old words back, a 2×2 page
chosen, and the branch exported as PNG, PDF and CBZ, byte for byte the same each time.

The offline director answers and the local renderer draws; the files are read with
Pillow, pypdf and zipfile. The database is read for the journal's entries (to know the
nodes and what the director said, which no export may hold).
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pypdf
import pytest
from PIL import Image

from tests.support.browser import (
    branch_entry_ids,
    credits,
    open_new_session,
    panels,
    run_with_approval,
    shot,
    wait_page_at_leaf,
    wait_until,
    watch_csp,
)
from tests.support.stories import FINISHER, LAXATIVE, LOLLIPOP

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]

NEW_CAPTION = "Pig-Man licks the giant lollipop 猪猪侠舔棒棒糖"
NEW_WORDS = "Sweet power! 好甜！"


def pdf_text(data: bytes) -> list[str]:
    """Each page's text (the font's CMap reads with a NUL before each character: dropped)."""
    return [p.extract_text().replace("\x00", "") for p in pypdf.PdfReader(io.BytesIO(data)).pages]


def director_words(session_id: str) -> list[str]:
    """What the director said on the session (its narration), from the journal."""
    from jaiweb.store.models import ComicSession
    from jaiweb.store.selectors import branch_get

    session = ComicSession.objects.get(pk=session_id)
    said = []
    for entry in branch_get(session=session):
        message = getattr(entry, "message", None)
        if message is not None and message.role == "assistant" and message.content.strip():
            said.append(message.content.strip())
    return said


def state_at_leaf(session_id: str) -> dict:
    from jaiweb.store.models import ComicSession
    from jaiweb.store.selectors import app_state_at

    return app_state_at(session=ComicSession.objects.get(pk=session_id))


def download(page, url: str) -> bytes:
    r = page.request.get(url)
    assert r.status == 200, (url, r.status, r.text()[:300])
    return r.body()


def caption_of(figure) -> str:
    return figure.locator('[data-lettering="caption"]').inner_text()


def bubble_words(figure) -> str:
    """The words of a panel's bubbles as drawn (each bubble's lines run together)."""
    return " ".join(figure.locator("svg.lettering text").all_text_contents())


def test_the_articles_story_as_a_comic_with_lettering_you_can_edit(shared_studio, page):
    violations = watch_csp(page.context)
    base = shared_studio.url
    session_id = open_new_session(page, base, "lettering")
    for text in (LOLLIPOP, LAXATIVE, FINISHER):
        run_with_approval(page, session_id, text)
    wait_page_at_leaf(page, session_id)
    wait_until(lambda: panels(page).count() == 3, 10, "three panels in the strip")
    lollipop = panels(page).first
    entry = lollipop.get_attribute("data-entry-id")
    old_caption = lollipop.locator('[data-lettering="caption"]').inner_text()
    old_words = bubble_words(lollipop)
    assert old_caption and old_words, "the lollipop panel has a caption and a bubble"
    shot(page, "lettering-before")
    spent = credits(page)

    # the caption and the bubble: click, edit, save; nothing is charged or drawn
    form = page.locator(f'[data-lettering-form="{entry}"]')
    lollipop.locator('[data-lettering="caption"]').click()
    form.wait_for()
    assert form.locator('textarea[name="caption"]').input_value() == old_caption
    lollipop.locator("svg.lettering .bubble").first.click()  # the same editor, from its bubble
    form = page.locator(f'[data-lettering-form="{entry}"][data-opened-by="bubble-0"]')
    form.wait_for()
    form.locator('input[name="speech-0-text"]').fill(NEW_WORDS)
    form.locator('input[name="speech-0-x"]').fill("30")
    form.locator('textarea[name="caption"]').fill(NEW_CAPTION)
    shot(page, "lettering-editor")
    images = {img.get_attribute("src") for img in panels(page).locator("img").all()}
    form.locator('[data-action="save-lettering"]').click()
    wait_until(
        lambda: NEW_CAPTION in caption_of(panels(page).first), 10, "the new caption on the panel"
    )
    lollipop = panels(page).first
    assert "Sweetpower!好甜！" in bubble_words(lollipop).replace(" ", "")
    assert credits(page) == spent, "editing the words costs nothing"
    assert {img.get_attribute("src") for img in panels(page).locator("img").all()} == images
    edited_node = branch_entry_ids(session_id)[-1]
    assert entry in state_at_leaf(session_id)["lettering"]
    shot(page, "lettering-edited")

    # a rewind to before the edit: the old words are back
    wait_page_at_leaf(page, session_id)
    panels(page).last.locator('[data-action="continue-panel"]').click()
    wait_until(
        lambda: caption_of(panels(page).first) == old_caption,
        10,
        "the old caption back after the rewind",
    )
    assert bubble_words(panels(page).first) == old_words
    assert credits(page) == spent

    # a 2×2 page, chosen in the strip: app state at the leaf
    wait_page_at_leaf(page, session_id)
    page.locator('select[data-action="page-layout"]').select_option("2x2")
    page.locator('[data-action="choose-layout"]').click()
    wait_until(
        lambda: state_at_leaf(session_id).get("page", {}).get("layout") == "2x2",
        10,
        "the layout in the app state",
    )
    shot(page, "lettering-rewound")

    # the edited node's comic, in every format, and the leaf's from the strip's own links
    comic = f"{base}/sessions/{session_id}/comic"
    pdf = download(page, f"{comic}.pdf?leaf_id={edited_node}&layout=2x2")
    text = pdf_text(pdf)
    assert len(text) == 1, "three panels, four a page"
    assert "Pig-Man licks the giant lollipop" in text[0] and "Sweet power!" in text[0]
    cbz = download(page, f"{comic}.cbz?leaf_id={edited_node}&layout=2x2")
    with zipfile.ZipFile(io.BytesIO(cbz)) as archive:
        assert archive.namelist() == ["page-001.png", "ComicInfo.xml"]
        info = ElementTree.fromstring(archive.read("ComicInfo.xml"))
        with Image.open(io.BytesIO(archive.read("page-001.png"))) as cbz_page:
            assert cbz_page.size == (1240, 1754)
    assert f"session={session_id} node={edited_node}" in info.findtext("Notes")
    png = download(page, f"{comic}.png?leaf_id={edited_node}&layout=2x2")
    with Image.open(io.BytesIO(png)) as first_page:
        assert first_page.size == (1240, 1754)
    strip_pdf = page.locator('[data-action="export-comic-pdf"]').get_attribute("href")
    leaf_bytes = download(page, base + strip_pdf)
    leaf_pdf = pdf_text(leaf_bytes)
    assert len(leaf_pdf) == 1 and "Pig-Man licks" not in leaf_pdf[0]  # the rewound words
    # clicked, the strip's link draws it in the background, shows it, and downloads it
    with page.expect_download(timeout=60_000) as clicked:
        page.locator('[data-action="export-comic-pdf"]').click()
    assert Path(clicked.value.path()).read_bytes() == leaf_bytes
    assert page.locator("[data-export-status]").inner_text().strip() == "Done: downloading."

    # no narration and no costs in any file
    said = director_words(session_id)
    assert said
    info_text = ElementTree.tostring(info, encoding="unicode")
    for words in said:
        for chunk in re.split(r"[。！？\n]", words):
            if len(chunk.strip()) >= 12:
                assert chunk.strip() not in text[0] and chunk.strip() not in info_text
    for exported in (text[0], leaf_pdf[0], info_text):
        assert "credit" not in exported.casefold() and "积分" not in exported

    # reproducible: the same node gives the same bytes, whatever came after it
    assert download(page, f"{comic}.pdf?leaf_id={edited_node}&layout=2x2") == pdf
    assert download(page, f"{comic}.cbz?leaf_id={edited_node}&layout=2x2") == cbz
    assert download(page, f"{comic}.png?leaf_id={edited_node}&layout=2x2") == png
    assert violations == []
