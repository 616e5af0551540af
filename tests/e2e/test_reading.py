"""The comic as readers see it, in Chromium: the studio's Read mode, a share link and the
exported episode page show panels, captions and speech, and no cost, no credits, no
"approve" and no "[offline director]", in both languages; in every page layout, the speech
bubbles sit over the pictures while screen readers get the words as text. And after each
turn the strip shows its newest panel, clear of the sticky prompt box, at desktop and phone
widths, unless the reader scrolled away from it."""

from __future__ import annotations

import re

import pytest

from tests.support.browser import (
    approve_next,
    branch_entry_ids,
    open_new_session,
    panels,
    run_with_approval,
    send_prompt,
    shot,
    wait_page_at_leaf,
    wait_run_finished,
    wait_tree_has,
    wait_until,
    wait_ws_open,
)
from tests.support.stories import FINISHER, LAXATIVE, LOLLIPOP

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]

PROMPTS = {
    "en": ["Pig-Man eats the super lollipop", "/draw Teacher Muddle in the classroom"],
    "zh-hans": ["猪猪侠吃下超级棒棒糖", "/draw 迷糊老师在教室里"],
}
SPEECH = {"en": "Super lollipop, full power!", "zh-hans": "超级棒棒糖，能量满满！"}
# Billing and tool talk a reader must never see, in either language.
FORBIDDEN = re.compile(
    r"credit|cost|approve|offline director|点券|积分|批准|离线导演|花费", re.IGNORECASE
)
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}


def speak(page, base: str, language: str) -> None:
    page.context.add_cookies([{"name": "django_language", "value": language, "url": base}])
    page.reload()
    wait_ws_open(page)


def clean(text: str, where: str) -> None:
    found = FORBIDDEN.search(text)
    assert found is None, f"{where} shows {found.group()!r}: {text!r}"


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_read_mode_a_share_link_and_the_episode_page_show_no_billing_talk(
    shared_studio, new_page, language
):
    base = shared_studio.url
    page = new_page()
    session_id = open_new_session(page, base, "reading")
    speak(page, base, language)
    for text in PROMPTS[language]:
        run_with_approval(page, session_id, text)
    panels(page).nth(1).wait_for()
    stream = page.locator("#stream").inner_text()
    assert FORBIDDEN.search(stream), "the director talked of no cost: nothing to hide"

    # the working view keeps the narration, folded under each panel
    folds = page.locator("#strip details[data-narration]")
    assert folds.count() == 2
    assert not page.locator("#strip .narration").first.is_visible()
    folds.first.locator("summary").click()
    assert FORBIDDEN.search(page.locator("#strip .narration").first.inner_text())

    # Read mode: the comic alone
    page.locator('[data-mode-target="read"]').click()
    reading = page.locator("#reading [data-reading]")
    reading.locator("[data-page]").first.wait_for()
    wait_until(
        lambda: reading.locator("img").evaluate_all(
            "els => els.length === 2 && els.every(i => i.complete && i.naturalWidth > 0)"
        ),
        15,
        "both panels to load",
    )
    assert reading.locator("[data-panel]").count() == 2
    studio_text = page.locator(".studio").inner_text()  # what shows, the header apart
    assert SPEECH[language] in studio_text
    clean(studio_text, f"Read mode ({language})")
    for hidden in ("#prompt-form", "#tree", "#credits", "#stream", "#character-state"):
        assert not page.locator(hidden).is_visible(), hidden
    assert page.url.endswith("#read")
    shot(page, f"read-mode-{language}")
    page.set_viewport_size(PHONE)
    page.reload()  # "#read" keeps the mode
    page.locator("#reading [data-page]").first.wait_for()
    clean(page.locator(".studio").inner_text(), f"Read mode at 390 px ({language})")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shot(page, f"read-mode-390-{language}")
    page.set_viewport_size(DESKTOP)
    page.locator('[data-mode-target="work"]').click()
    page.locator("#prompt-form").wait_for(state="visible")

    # a share link, read by a stranger in the same language
    page.locator('[data-action="open-share"]').click()
    page.locator('[data-action="create-share"]').click()
    url = page.locator("[data-share-url]").input_value()
    stranger = new_page()
    stranger.context.add_cookies([{"name": "django_language", "value": language, "url": base}])
    assert stranger.goto(url).status == 200
    shared = stranger.locator("[data-shared-branch]")
    assert shared.locator("[data-panel]").count() == 2
    assert SPEECH[language] in shared.inner_text()
    clean(stranger.locator("body").inner_text(), f"the share page ({language})")
    shot(stranger, f"shared-{language}")

    # the exported episode page, opened as the file it is
    episode = page.request.get(f"{base}/sessions/{session_id}/episode.html")
    assert episode.ok
    html = episode.text()
    viewer = new_page()
    viewer.set_content(html)
    assert viewer.locator("[data-reading] [data-panel]").count() == 2
    assert SPEECH[language] in viewer.locator("body").inner_text()
    clean(viewer.locator("body").inner_text(), f"episode.html ({language})")

    # Read mode follows the branch live: a panel drawn in another tab shows up in it
    page.locator('[data-mode-target="read"]').click()
    page.locator("#reading [data-page]").first.wait_for()
    other = new_page(page.context)
    other.goto(f"{base}/sessions/{session_id}/")
    wait_ws_open(other)
    run_with_approval(other, session_id, PROMPTS[language][1])
    wait_until(
        lambda: page.locator("#reading [data-panel]").count() == 3, 15, "the new panel in Read"
    )
    clean(page.locator(".studio").inner_text(), f"Read mode after a live turn ({language})")


# Each frame's picture and the boxes of the bubbles drawn over it, in page pixels.
FRAMES = """() => [...document.querySelectorAll('[data-reading] .frame')].map(f => {
  const box = e => {
    const r = e.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom];
  };
  return {art: box(f.querySelector('.art')),
          bubbles: [...f.querySelectorAll('svg.lettering .bubble rect')].map(box)};
})"""


CHOOSE = """(select, layout) => {
  select.value = layout;
  select.form.querySelector('[data-action="choose-layout"]').click();
}"""


def leaf_of(session_id: str) -> str:
    from jaiweb.store.models import ComicSession

    return ComicSession.objects.values_list("leaf_id", flat=True).get(pk=session_id)


def inside(inner: list[float], outer: list[float]) -> bool:
    left, top, right, bottom = inner
    return (
        left >= outer[0] - 1
        and top >= outer[1] - 1
        and right <= outer[2] + 1
        and bottom <= outer[3] + 1
    )


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440", "390"])
def test_read_mode_draws_the_bubbles_over_the_pictures_in_every_layout(
    shared_studio, new_page, viewport
):
    base = shared_studio.url
    page = new_page()
    session_id = open_new_session(page, base, "bubbles")
    for text in (LOLLIPOP, LAXATIVE, FINISHER):
        run_with_approval(page, session_id, text)
    wait_page_at_leaf(page, session_id)
    wait_until(lambda: panels(page).count() == 3, 10, "three panels in the strip")
    reader = new_page(page.context)
    reader.set_viewport_size(viewport)
    for layout in ("strip", "2x2", "3-tier", "splash"):
        before = leaf_of(session_id)
        # chosen and sent at once: the strip may be drawn again (the last write's echo)
        # between a choice and a click, and that would put the old layout back in the form
        page.locator('select[data-action="page-layout"]').evaluate(CHOOSE, layout)
        wait_until(lambda b=before: leaf_of(session_id) != b, 10, f"the {layout} layout kept")
        wait_page_at_leaf(page, session_id)
        reader.goto(f"{base}/sessions/{session_id}/read")
        reading = reader.locator(f'[data-reading][data-layout="{layout}"]')
        reading.wait_for()
        wait_until(
            lambda reading=reading: reading.locator("img").evaluate_all(
                "els => els.length === 3 && els.every(i => i.complete && i.naturalWidth > 0)"
            ),
            15,
            "the three pictures",
        )
        frames = reader.evaluate(FRAMES)
        assert len(frames) == 3, layout
        bubbles = [(f["art"], b) for f in frames for b in f["bubbles"]]
        assert bubbles, f"no bubble drawn in {layout}"
        for art, bubble in bubbles:
            assert inside(bubble, art), (layout, bubble, art)
        assert reader.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        # the layer is for the eye; screen readers read each bubble's words once, whole
        hidden = "els => els.every(e => e.getAttribute('aria-hidden') === 'true')"
        assert reading.locator("svg.lettering").evaluate_all(hidden)
        said = reading.locator("figcaption .speech q").all_text_contents()
        assert len(said) >= len(bubbles) > 0
        tree = reading.aria_snapshot()
        for words in said:
            assert words in tree, (layout, words)
        shot(reader, f"read-bubbles-{layout}-{viewport['width']}")


# Where the newest panel is, and whether anything covers its top or bottom edge.
NEWEST = """() => {
  const all = document.querySelectorAll('#strip [data-panel]');
  const panel = all[all.length - 1];
  const r = panel.getBoundingClientRect();
  const x = r.left + r.width / 2;
  const on = y => { const e = document.elementFromPoint(x, y); return !!e && panel.contains(e); };
  return {count: all.length, top: r.top, bottom: r.bottom, scrollY: window.scrollY,
          whole: r.top >= 0 && r.bottom <= innerHeight && on(r.top + 4) && on(r.bottom - 4)};
}"""


def newest(page) -> dict:
    return page.evaluate(NEWEST)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440", "390"])
def test_the_newest_panel_shows_whole_after_each_turn(shared_studio, new_page, viewport):
    page = new_page()
    page.set_viewport_size(viewport)
    session_id = open_new_session(page, shared_studio.url, "newest")
    for n, scene in enumerate(["in the ring", "at the beach", "on a rooftop at night"], 1):
        run_with_approval(page, session_id, f"/draw Pig-Man {scene}")
        wait_until(lambda n=n: newest(page)["count"] == n, 10, f"panel {n} on the strip")
        wait_until(lambda: newest(page)["whole"], 10, f"panel {n} whole in view")
    img = panels(page).last.locator("img")
    wait_until(lambda: img.evaluate("i => i.complete && i.naturalWidth > 0"), 15, "its picture")
    shot(page, f"newest-panel-{viewport['width']}")

    # scrolled back to the first panel on purpose: a panel drawn from another tab does
    # not take the reader away from it
    page.evaluate("window.scrollTo(0, 0)")
    wait_until(lambda: page.evaluate("window.scrollY") == 0, 5, "the page at its top")
    other = new_page(page.context)
    other.set_viewport_size(viewport)
    other.goto(page.url)
    wait_ws_open(other)
    run_with_approval(other, session_id, "/draw Pig-Man in the park")
    wait_until(lambda: newest(page)["count"] == 4, 10, "panel 4 on the first tab")
    wait_until(lambda: page.locator('#controls[data-state="idle"]').count() == 1, 10, "idle")
    assert page.evaluate("window.scrollY") == 0 and not newest(page)["whole"]

    # sending a prompt is being back with the newest panel. The first tab is brought to
    # the front first, as a person switching back does: Chromium gives a tab behind
    # another almost no animation frames, and the click then waited for the button to
    # hold still, scrolling the page away from the newest panel meanwhile.
    page.bring_to_front()
    send_prompt(page, "/draw Pig-Man in the city")
    approve_next(page)
    wait_run_finished(session_id)
    wait_tree_has(page, branch_entry_ids(session_id))
    wait_until(lambda: newest(page)["count"] == 5, 10, "panel 5 on the strip")
    wait_until(lambda: newest(page)["whole"], 10, "panel 5 whole in view")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440", "390"])
def test_read_mode_moves_a_panel_later_and_keeps_the_focus_on_it(shared_studio, new_page, viewport):
    page = new_page()
    page.set_viewport_size(viewport)
    session_id = open_new_session(page, shared_studio.url, "arrange")
    for scene in ("in the ring", "at the beach", "on a rooftop at night"):
        run_with_approval(page, session_id, f"/draw Pig-Man {scene}")
    wait_until(lambda: panels(page).count() == 3, 10, "three panels in the strip")
    wait_page_at_leaf(page, session_id)
    page.locator('[data-mode-target="read"]').click()
    frames = page.locator("#reading [data-reading] .frame")
    wait_until(lambda: frames.count() == 3, 10, "three frames in Read mode")
    pictures = frames.locator("img").evaluate_all("els => els.map(i => i.getAttribute('src'))")
    assert frames.first.locator('[data-action="move-earlier"]').is_disabled()
    assert frames.last.locator('[data-action="move-later"]').is_disabled()
    before = leaf_of(session_id)
    frames.first.locator('[data-action="move-later"]').click()
    wait_until(lambda: leaf_of(session_id) != before, 10, "the move kept")
    order = [pictures[1], pictures[0], pictures[2]]
    wait_until(
        lambda: (
            frames.locator("img").evaluate_all("els => els.map(i => i.getAttribute('src'))")
            == order
        ),
        10,
        "the first panel second on the page",
    )
    # the focus followed the panel: its "later" button, now under the second frame
    wait_until(
        lambda: page.evaluate(
            "() => { const b = document.activeElement;"
            " return b && b.dataset.action === 'move-later'"
            " && b.closest('.frame').dataset.panel === '2'; }"
        ),
        5,
        "the focus on the moved panel's button",
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    clean(page.locator(".studio").inner_text(), "Read mode with its order controls")
    shot(page, f"read-arrange-{viewport['width']}")
