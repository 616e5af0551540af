"""The reading view: the share page, the exported episode page and the studio's Read mode
show the comic as its readers see it (pages of panels, captions, speech) and none of the
director's narration, costs or tool talk, in both languages. The working strip keeps the
narration, folded under each panel."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from jaiweb.commands.sessions import prompt_submit
from jaiweb.store.selectors import branch_get
from jaiweb.store.shares import share_link_create
from journal.entries import AssistantMessage, MessageEntry
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
PROMPTS = {
    "en": ["Pig-Man eats the super lollipop", "/draw Teacher Muddle in the classroom"],
    "zh-hans": ["猪猪侠吃下超级棒棒糖", "/draw 迷糊老师在教室里"],
}
# What the lollipop's panel says (the director's story), and a word of its caption.
SPEECH = {"en": "Super lollipop, full power!", "zh-hans": "超级棒棒糖，能量满满！"}
CAPTION = {"en": "kung-fu master", "zh-hans": "功夫大师"}
# Billing and tool talk a reader must never see, in either language.
FORBIDDEN = re.compile(
    r"credit|cost|approve|offline director|点券|积分|批准|离线导演|花费|扣", re.IGNORECASE
)


def drawn(episode, alice, language: str) -> list[str]:
    """Two panels drawn (approved as a user would) with the director speaking ``language``;
    the director's replies on the branch."""
    for text in PROMPTS[language]:
        prompt_submit(session=episode, user=alice, text=text, language=language)
        run_pending()
    episode.refresh_from_db()
    replies = [
        e.message.content
        for e in branch_get(session=episode)
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
    ]
    assert any(FORBIDDEN.search(r) for r in replies), "the director talked of no cost"
    return replies


def visible_text(html: str) -> str:
    """The page's text as a reader meets it: tags, attributes, scripts and styles dropped."""
    html = re.sub(r"<(style|script)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


def reader_pages(client: Client, episode, alice, language: str) -> dict[str, str]:
    _share, token = share_link_create(session_id=episode.id)
    client.cookies["django_language"] = language
    stranger = Client()
    stranger.cookies["django_language"] = language
    client.force_login(alice)
    pages = {
        "share": stranger.get(f"/s/{token}/"),
        "episode": client.get(f"/sessions/{episode.id}/episode.html"),
        "read": client.get(f"/sessions/{episode.id}/read"),
        "read mode": client.get(f"/sessions/{episode.id}/read", **HTMX),
    }
    for name, response in pages.items():
        assert response.status_code == 200, name
    return {name: response.content.decode() for name, response in pages.items()}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_readers_see_panels_captions_and_speech_and_no_billing_talk(
    client, alice, episode, language
):
    replies = drawn(episode, alice, language)
    speech, caption = SPEECH[language], CAPTION[language]
    for name, html in reader_pages(client, episode, alice, language).items():
        where = f"{name} ({language})"
        # the share page and the Read mode's own page have the site's header; its links
        # (one is to the user's credits) are the site's, not the comic's
        body = html.split("</header>", 1)[-1]
        assert html.count('class="frame"') == 2, where
        assert 'data-page="1"' in html and 'data-layout="2x2"' in html, where
        assert caption in body and speech in body, where
        found = FORBIDDEN.search(visible_text(body))
        assert found is None, f"{where} shows {found.group()!r}"
        for reply in replies:
            assert reply not in html, f"{where} shows the director's narration"
    # the session's own studio keeps the narration, folded under each panel
    studio = client.get(f"/sessions/{episode.id}/").content.decode()
    fold = r'<details class="narration-fold" data-narration>.*?</details>'
    folds = re.findall(fold, studio, re.S)
    assert len(folds) == 2 and all(FORBIDDEN.search(f) for f in folds)


def test_the_pages_follow_the_layout_four_panels_a_page(client, alice, episode):
    for n in range(5):
        prompt_submit(session=episode, user=alice, text=f"/draw panel {n} in the park")
        run_pending()
    client.force_login(alice)
    html = client.get(f"/sessions/{episode.id}/read", **HTMX).content.decode()
    pages = re.findall(r'<section class="comic-page" data-page="(\d+)"', html)
    assert pages == ["1", "2"]
    frames = re.findall(r'data-panel="(\d+)"', html)
    assert frames == ["1", "2", "3", "4", "5"]
    assert html.index('data-page="2"') > html.index('data-panel="4"')


def test_what_was_typed_is_escaped_and_an_empty_branch_says_so(client, alice, episode):
    client.force_login(alice)
    empty = client.get(f"/sessions/{episode.id}/read", **HTMX).content.decode()
    assert 'class="empty"' in empty and "data-page" not in empty
    prompt_submit(session=episode, user=alice, text="/draw a <script>pig</script> in the ring")
    run_pending()
    html = client.get(f"/sessions/{episode.id}/read", **HTMX).content.decode()
    assert "<script>" not in html and "&lt;script&gt;pig&lt;/script&gt;" in html


def test_read_mode_is_the_owners_and_staffs_only(client, bob, episode):
    client.force_login(bob)
    assert client.get(f"/sessions/{episode.id}/read").status_code == 404
    assert client.get(f"/sessions/{episode.id}/read", **HTMX).status_code == 404
    anonymous = Client().get(f"/sessions/{episode.id}/read")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]


def test_the_bubbles_are_drawn_over_the_picture_and_said_as_text(client, alice, episode):
    from jaiweb.comic.selectors import comic_panels_at
    from jaiweb.comic.services import panel_lettering_set

    prompt_submit(session=episode, user=alice, text="/draw Pig-Man in the ring")
    run_pending()
    episode.refresh_from_db()
    entry_id = comic_panels_at(session=episode)[0].entry_id
    bubbles = [
        {"character": "猪猪侠", "text": "<b>Hi</b> & bye", "x": 0.2, "y": 0.1},
        {"character": "", "text": "超级棒棒糖，能量满满！"},
    ]
    panel_lettering_set(
        session=episode,
        entry_id=entry_id,
        edit={"speech": bubbles},
        expected_leaf_id=episode.leaf_id,
    )
    client.force_login(alice)
    html = client.get(f"/sessions/{episode.id}/read", **HTMX).content.decode()
    art = re.search(r'<div class="art">(.*?)</div>', html, re.S).group(1)
    layer = re.search(r"<svg class=\"lettering\"[^>]*>", art).group(0)
    assert 'aria-hidden="true"' in layer  # drawn for the eye
    assert art.count('class="bubble"') == 2 and "hx-get" not in art  # not the strip's editor
    assert "<b>" not in html and "&lt;b&gt;Hi&lt;/b&gt; &amp; bye" in art
    words = re.search(r'<figcaption class="words">(.*?)</figcaption>', html, re.S).group(1)
    said = re.findall(r'<p class="speech visually-hidden">(.*?)</p>', words, re.S)
    assert len(said) == 2
    assert '<span class="speaker">猪猪侠</span>' in said[0]
    assert "<q>&lt;b&gt;Hi&lt;/b&gt; &amp; bye</q>" in said[0]
    assert "<q>超级棒棒糖，能量满满！</q>" in said[1]
