"""A newcomer's own session: their cast is the one cast, with no built-in double.

(The same story runs on a Chinese page with 猪猪侠，超人强，迷糊老师 and Chinese prompts.)

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

from tests.support.browser import (
    approve_next,
    branch_entry_ids,
    open_new_session,
    panels,
    send_prompt,
    shot,
    wait_character_state,
    wait_run_finished,
    wait_tree_has,
    wait_until,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]

CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
# The story in each language: the cast as typed, the four steps' words, what the states say.
STORIES = {
    "en": {
        "cast": ["Pig-Man", "Super-Strong-Man", "Teacher Muddle"],
        "lollipop": "Draw Pig-Man eating the super lollipop in the ring",
        "laxative": "now Teacher Muddle gives him an expired laxative pill by mistake",
        "knock": "knock him flying with the ten slaps",
        "skill": "Ten Dragon Slaps",
        "kung_fu": "Super lollipop",
        "sick": "laxative",
        "none": "none",
        "calm": "calm",
    },
    "zh": {
        "cast": ["猪猪侠", "超人强", "迷糊老师"],
        "lollipop": "画猪猪侠在擂台上吃超级棒棒糖",
        "laxative": "接着迷糊老师拿错了药，给他吃了一颗过期泻药丸",
        "knock": "用降龙十巴掌把他拍飞",
        "skill": "降龙十巴掌",
        "kung_fu": "超级棒棒糖",
        "sick": "拉肚子",
        "none": "无",
        "calm": "平静",
    },
}
CAST = STORIES["en"]["cast"]


def state_of(session_id: str) -> dict:
    from jaiweb.store.models import ComicSession
    from jaiweb.store.selectors import app_state_at

    session = ComicSession.objects.get(pk=session_id)
    return app_state_at(session=session, leaf_id=session.leaf_id)["characters"]


def shown_characters(page) -> list[str]:
    return page.locator("#character-state form.character").evaluate_all(
        "els => els.map(e => e.dataset.character)"
    )


def three_characters(page, session_id: str, cast: list[str] = CAST) -> dict:
    """Exactly the user's three, in the journal and on the page; their states."""
    characters = state_of(session_id)
    assert sorted(characters) == sorted(cast), characters
    wait_until(lambda: sorted(shown_characters(page)) == sorted(cast), 10, "the three")
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


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_newcomers_cast_is_the_one_cast(shared_studio, browser, new_page, lang):
    story = STORIES[lang]
    cast = story["cast"]
    hero, rival, teacher = cast
    locale = "zh-CN" if lang == "zh" else "en-US"
    page = new_page(browser.new_context(viewport={"width": 1280, "height": 800}, locale=locale))
    english = lang == "en"
    base = shared_studio.url
    typed = ("，" if not english else ", ").join(cast)
    session_id = open_new_session(page, base, f"{hero} in the ring", characters=typed)
    characters = three_characters(page, session_id, cast)
    assert {c["mood"] for c in characters.values()} == {story["calm"]}
    if english:
        no_chinese(page)

    # 1. the lollipop: the hero's state, the hero drawn once
    turn(page, session_id, story["lollipop"])
    wait_until(lambda: panels(page).count() == 1, 10, "the first panel")
    characters = three_characters(page, session_id, cast)
    assert characters[hero]["skill"] == story["skill"]
    assert characters[hero]["buff"].startswith(story["kung_fu"])
    assert {characters[n]["buff"] for n in (rival, teacher)} == {story["none"]}
    first = panel_svg(page, 0)
    assert drawn(first) == [hero], drawn(first)
    if english:
        no_chinese(page, first)
    shot(page, f"one-cast-{lang}-1-lollipop")

    # 2. "him" is the hero: the laxative is his; the teacher gives it, both drawn once
    turn(page, session_id, story["laxative"])
    wait_until(lambda: panels(page).count() == 2, 10, "the second panel")
    characters = three_characters(page, session_id, cast)
    assert story["sick"] in characters[hero]["buff"]
    assert characters[hero]["skill"] == story["none"]
    assert {characters[n]["buff"] for n in (rival, teacher)} == {story["none"]}
    second = panel_svg(page, 1)
    assert sorted(drawn(second)) == sorted([hero, teacher]), drawn(second)
    if english:
        no_chinese(page, second)
    shot(page, f"one-cast-{lang}-2-laxative")

    # 3. a rewind by clicking: back to right after the lollipop
    panels(page).first.locator('[data-action="continue-panel"]').click()
    wait_character_state(page, story["kung_fu"], lacks=story["sick"])
    wait_until(lambda: panels(page).count() == 1, 10, "the strip of the earlier branch")
    characters = three_characters(page, session_id, cast)
    assert characters[hero]["skill"] == story["skill"]
    if english:
        no_chinese(page)

    # 4. "knock him flying": the hero strikes with his skill, his rival flies
    turn(page, session_id, story["knock"])
    wait_until(lambda: panels(page).count() == 2, 10, "the finishing panel")
    characters = three_characters(page, session_id, cast)
    assert characters[hero]["skill"] == story["skill"]
    third = panel_svg(page, 1)
    assert sorted(drawn(third)) == sorted([hero, rival]), drawn(third)
    flying = re.findall(r'data-character="([^"]+)"[^>]*data-flying="true"', third)
    assert flying == [rival], flying
    striker = re.findall(r'data-character="([^"]+)" data-role="actor"', third)
    assert striker == [hero], striker
    if english:
        no_chinese(page, third)
    shot(page, f"one-cast-{lang}-3-knocked-flying")


def test_an_unsure_prompt_offers_a_draw_it_button_that_sends_the_draw(shared_studio, page):
    """ "the hero wins" draws nothing and costs nothing; the director's Draw it button sends
    the /draw line itself, and the approval says the cost before anything is drawn."""
    from tests.support.browser import credits, open_new_session, wait_stream_has

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
