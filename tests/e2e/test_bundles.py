"""Bundles in Chromium: download a session with its panels from the studio, import it as
another person on the import page, and see the same strip, every panel's picture loaded;
a broken file is refused on the page, naming its line.

The offline director draws the panels (each asks for approval in "ask" mode). The
database is read only to know when a run is over.
"""

from __future__ import annotations

import json

import pytest

from tests.support.browser import (
    open_new_session,
    panels,
    run_with_approval,
    shot,
    signup,
    unique,
    wait_ws_open,
)
from tests.support.waiting import wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("postgres"),  # on the deployment's stack (docs/TESTING.md)
]

FIRST = "Draw a panel: the hero eats a super lollipop and steps into the ring"
SECOND = "Draw a panel: the hero wins the bout with one slap"


def strip_of(page) -> list[dict]:
    """Each panel of #strip: its image id, caption and whether its picture loaded."""
    figures = panels(page)
    wait_until(
        lambda: figures.evaluate_all(
            "els => els.every(e => { const i = e.querySelector('img');"
            " return i && i.complete && i.naturalWidth > 0; })"
        ),
        15,
        "every panel's picture to load",
    )
    return figures.evaluate_all(
        "els => els.map(e => ({id: e.dataset.panel,"
        " caption: e.querySelector('figcaption').innerText.trim(),"
        " loaded: e.querySelector('img').naturalWidth > 0}))"
    )


def test_export_with_panels_then_import_shows_the_same_strip(shared_studio, new_page, tmp_path):
    base = shared_studio.url
    alice = new_page()
    session_id = open_new_session(alice, base, "a bundle")
    run_with_approval(alice, session_id, FIRST)
    run_with_approval(alice, session_id, SECOND)
    panels(alice).nth(1).wait_for()
    mine = strip_of(alice)
    assert len(mine) == 2 and all(p["loaded"] for p in mine)

    with alice.expect_download() as download:
        alice.locator('[data-action="export-bundle"]').click()
    bundle = tmp_path / download.value.suggested_filename
    download.value.save_as(bundle)
    assert bundle.name == f"{session_id}.bundle.jsonl"
    header = json.loads(bundle.read_text(encoding="utf-8").splitlines()[0])
    assert header["session"]["image_count"] == 2

    bob = new_page()
    signup(bob, base, unique("e2e_"))
    bob.locator('[data-action="import"]').click()
    bob.wait_for_url(f"{base}/sessions/import")
    bob.locator('#import-form input[name="file"]').set_input_files(str(bundle))
    bob.locator('[data-action="import-session"]').click()
    bob.wait_for_url(lambda url: url.startswith(f"{base}/sessions/") and "import" not in url)
    assert bob.url != f"{base}/sessions/{session_id}/"
    wait_ws_open(bob)
    theirs = strip_of(bob)
    # the same panels, pictures and all, under ids of bob's own (alice's are hers)
    assert [p["caption"] for p in theirs] == [p["caption"] for p in mine]
    assert all(p["loaded"] for p in theirs)
    assert not {p["id"] for p in theirs} & {p["id"] for p in mine}
    shot(bob, "bundle-imported")

    # alice's panels stay hers: bob's browser cannot load them
    status = bob.request.get(f"{base}/panels/{mine[0]['id']}").status
    assert status == 404


def test_a_broken_file_is_refused_on_the_page_naming_the_line(shared_studio, page, tmp_path):
    base = shared_studio.url
    signup(page, base, unique("e2e_"))
    page.goto(f"{base}/sessions/import")
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        '{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00Z"}\n'
        '{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01Z",'
        '"message":{"role":"user","content":"hi"}}\n'
        '{"type":"message","id":"b","parentId":"nowhere","timestamp":"2026-01-01T00:00:02Z",'
        '"message":{"role":"user","content":"lost"}}\n',
        encoding="utf-8",
    )
    page.locator('#import-form input[name="file"]').set_input_files(str(broken))
    page.locator('[data-action="import-session"]').click()
    error = page.locator("[data-import-error]")
    error.wait_for()
    assert error.get_attribute("data-line") == "3"
    assert "Line 3: parent 'nowhere' is not earlier in the file" in error.inner_text()
    page.goto(f"{base}/")
    assert page.locator(".session-card").count() == 0  # nothing was imported
