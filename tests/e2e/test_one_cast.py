"""A newcomer's own session: their cast is the one cast, with no built-in double.

They create "Pig-Man, Super-Strong-Man, Teacher Muddle" on an English page and tell the
story in their own words: the lollipop in the ring, Teacher Muddle's laxative by mistake
("him" is Pig-Man), a rewind by clicking the first panel, then "knock him flying with the
ten slaps" (Pig-Man strikes with the skill the lollipop gave him; "him" is the other party,
his rival). At every step exactly those three characters exist, each panel draws each
character it names once, every state change lands on the character named, Super-Strong-Man
is the one the SVG draws flying, and nothing Chinese is on the page.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.helpers import (
    SESSION_URL,
    approve_next,
    branch_entry_ids,
    panels,
    send_prompt,
    shot,
    signup,
    unique,
    wait_character_state,
    wait_run_finished,
    wait_tree_has,
    wait_until,
    wait_ws_open,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CAST = ["Pig-Man", "Super-Strong-Man", "Teacher Muddle"]
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
LOLLIPOP = "Draw Pig-Man eating the super lollipop in the ring"
LAXATIVE = "now Teacher Muddle gives him an expired laxative pill by mistake"
KNOCK = "knock him flying with the ten slaps"


def state_of(session_id: str) -> dict:
    from jaiweb.store.models import ComicSession
    from jaiweb.store.selectors import app_state_at

    session = ComicSession.objects.get(pk=session_id)
    return app_state_at(session=session, leaf_id=session.leaf_id)["characters"]


def shown_characters(page) -> list[str]:
    return page.locator("#character-state form.character").evaluate_all(
        "els => els.map(e => e.dataset.character)"
    )


def three_characters(page, session_id: str) -> dict:
    """Exactly the user's three, in the journal and on the page; their states."""
    characters = state_of(session_id)
    assert sorted(characters) == sorted(CAST), characters
    wait_until(lambda: sorted(shown_characters(page)) == sorted(CAST), 10, "the three")
    return characters


def panel_svg(page, index: int) -> str:
    img = panels(page).nth(index).locator("img")
    answer = page.request.get(img.evaluate("e => e.src"))
    assert answer.ok, answer.status
    return answer.text()


def drawn(svg: str) -> list[str]:
    return re.findall(r'<g transform="[^"]*" data-character="([^"]+)"', svg)


def no_chinese(page, svg: str = "") -> None:
    """Nothing Chinese on the English page (but the language switcher's own name for
    Chinese) nor in the panel."""
    text = page.evaluate(
        """() => { const b = document.body.cloneNode(true);
                   b.querySelectorAll('[lang]:not(html)').forEach(e => e.remove());
                   return b.innerText; }"""
    )
    assert not CJK.search(text), CJK.findall(text)
    assert not CJK.search(svg), CJK.findall(svg)


def turn(page, session_id: str, text: str) -> None:
    send_prompt(page, text)
    approve_next(page)
    wait_run_finished(session_id)
    wait_tree_has(page, branch_entry_ids(session_id))


def test_the_newcomers_cast_is_the_one_cast(shared_studio, page):
    base = shared_studio.url
    signup(page, base, unique("cast_"))
    page.locator('input[name="title"]').fill("Pig-Man in the ring")
    page.locator('textarea[name="characters"]').fill(", ".join(CAST))
    page.locator('[data-action="create-session"]').click()
    page.wait_for_url(SESSION_URL)
    session_id = SESSION_URL.search(page.url).group(1)
    wait_ws_open(page)
    characters = three_characters(page, session_id)
    assert {c["mood"] for c in characters.values()} == {"calm"}
    no_chinese(page)

    # 1. the lollipop: Pig-Man's state, Pig-Man drawn once
    turn(page, session_id, LOLLIPOP)
    wait_until(lambda: panels(page).count() == 1, 10, "the first panel")
    characters = three_characters(page, session_id)
    assert characters["Pig-Man"]["skill"] == "Ten Dragon Slaps"
    assert characters["Pig-Man"]["buff"].startswith("Super lollipop")
    assert {characters[n]["buff"] for n in CAST[1:]} == {"none"}
    first = panel_svg(page, 0)
    assert drawn(first) == ["Pig-Man"], drawn(first)
    no_chinese(page, first)
    shot(page, "one-cast-1-lollipop")

    # 2. "him" is Pig-Man: the laxative is his; Teacher Muddle gives it, both drawn once
    turn(page, session_id, LAXATIVE)
    wait_until(lambda: panels(page).count() == 2, 10, "the second panel")
    characters = three_characters(page, session_id)
    assert "laxative" in characters["Pig-Man"]["buff"]
    assert characters["Pig-Man"]["skill"] == "none"
    assert {characters[n]["buff"] for n in CAST[1:]} == {"none"}
    second = panel_svg(page, 1)
    assert sorted(drawn(second)) == ["Pig-Man", "Teacher Muddle"], drawn(second)
    no_chinese(page, second)
    shot(page, "one-cast-2-laxative")

    # 3. a rewind by clicking: back to right after the lollipop
    panels(page).first.locator('[data-action="continue-panel"]').click()
    wait_character_state(page, "Super lollipop", lacks="laxative")
    wait_until(lambda: panels(page).count() == 1, 10, "the strip of the earlier branch")
    characters = three_characters(page, session_id)
    assert characters["Pig-Man"]["skill"] == "Ten Dragon Slaps"
    no_chinese(page)

    # 4. "knock him flying": Pig-Man strikes, his rival flies
    turn(page, session_id, KNOCK)
    wait_until(lambda: panels(page).count() == 2, 10, "the finishing panel")
    characters = three_characters(page, session_id)
    assert characters["Pig-Man"]["skill"] == "Ten Dragon Slaps"
    third = panel_svg(page, 1)
    assert sorted(drawn(third)) == ["Pig-Man", "Super-Strong-Man"], drawn(third)
    flying = re.findall(r'data-character="([^"]+)"[^>]*data-flying="true"', third)
    assert flying == ["Super-Strong-Man"], flying
    striker = re.findall(r'data-character="([^"]+)" data-role="actor"', third)
    assert striker == ["Pig-Man"], striker
    no_chinese(page, third)
    shot(page, "one-cast-3-knocked-flying")


def test_an_unsure_prompt_offers_a_draw_it_button_that_sends_the_draw(shared_studio, page):
    """ "the hero wins" draws nothing and costs nothing; the director's Draw it button sends
    the /draw line itself, and the approval says the cost before anything is drawn."""
    from tests.e2e.helpers import credits, open_new_session, wait_stream_has

    session_id = open_new_session(page, shared_studio.url, "unsure")
    before = credits(page)
    send_prompt(page, "the hero wins")
    wait_run_finished(session_id)
    button = page.locator('#stream [data-action="draw-it"]')
    button.wait_for()
    assert button.get_attribute("data-prompt") == "/draw the hero wins"
    assert "send:" not in page.locator("#stream-text").inner_text()
    assert panels(page).count() == 0 and credits(page) == before
    shot(page, "one-cast-draw-it")

    button.click()
    approve = page.locator('[data-action="approve"]:visible').first
    approve.wait_for()
    wait_stream_has(page, "This panel costs 10 credits")
    approve.click()
    wait_run_finished(session_id)
    wait_until(lambda: panels(page).count() == 1, 10, "the panel the button asked for")
    no_chinese(page)
