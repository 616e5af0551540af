"""The strip's lettering layer and editor: the words over and under each panel, edited by
a form (an app_state entry, no render), refused whole when the input is bad."""

from __future__ import annotations

import pytest

from jaiweb.render.selectors import wallet_balance
from jaiweb.store.models import Entry
from jaiweb.store.selectors import app_state_at
from tests.support.comics import draw_panels

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def drawn(episode, media):
    draw_panels(episode, ["猪猪侠吃下超级棒棒糖"])
    return episode


def first_panel(session) -> str:
    from jaiweb.comic.selectors import page_at

    return page_at(session=session)["order"][0]


def test_the_editor_saves_the_words_for_free_and_the_strip_shows_them(client, alice, drawn):
    client.force_login(alice)
    panel = first_panel(drawn)
    editor = client.get(f"/sessions/{drawn.id}/panels/{panel}/lettering?from=caption")
    assert editor.status_code == 200
    body = editor.content.decode()
    assert 'name="caption"' in body and "autofocus" in body
    balance = wallet_balance(user=alice.pk)
    rows = Entry.objects.filter(session=drawn).count()
    r = client.post(
        f"/sessions/{drawn.id}/panels/{panel}/lettering",
        {"caption": "<b>new</b> caption", "expected_leaf_id": drawn.leaf_id},
        **HX,
    )
    assert r.status_code == 200
    page = r.content.decode()
    assert "&lt;b&gt;new&lt;/b&gt; caption" in page and "<b>new</b>" not in page
    assert 'id="lettering-editor"' in page  # the editor closes
    assert wallet_balance(user=alice.pk) == balance
    assert Entry.objects.filter(session=drawn).count() == rows + 1
    drawn.refresh_from_db()
    assert app_state_at(session=drawn)["lettering"][panel]["caption"] == "<b>new</b> caption"
    tree = client.get(f"/sessions/{drawn.id}/").content.decode()
    assert "a panel&#x27;s words changed" in tree or "a panel's words changed" in tree


@pytest.mark.parametrize(
    "form",
    [
        {"caption": "   "},
        {"caption": "x" * 301},
        {"caption": "a\x00b"},
        {"caption": "fine", "speech-0-text": "", "speech-0-x": "10"},
        {"caption": "fine", "speech-0-text": "ok", "speech-0-x": "101"},
        {"caption": "fine", "speech-0-text": "ok", "speech-0-y": "far"},
    ],
)
def test_bad_words_are_refused_and_nothing_is_written(client, alice, drawn, form):
    client.force_login(alice)
    panel = first_panel(drawn)
    rows = Entry.objects.filter(session=drawn).count()
    r = client.post(
        f"/sessions/{drawn.id}/panels/{panel}/lettering",
        {**form, "expected_leaf_id": drawn.leaf_id},
        **HX,
    )
    assert r.status_code == 422, r.content
    assert Entry.objects.filter(session=drawn).count() == rows


def test_an_unknown_panel_or_another_users_session_is_404(client, alice, bob, drawn):
    client.force_login(alice)
    assert client.get(f"/sessions/{drawn.id}/panels/e_nope/lettering").status_code == 404
    client.force_login(bob)
    panel = first_panel(drawn)
    assert client.get(f"/sessions/{drawn.id}/panels/{panel}/lettering").status_code == 404
    r = client.post(f"/sessions/{drawn.id}/panels/{panel}/lettering", {"caption": "x"}, **HX)
    assert r.status_code == 404


def test_the_page_layout_is_chosen_in_the_strip(client, alice, drawn):
    client.force_login(alice)
    r = client.post(
        f"/sessions/{drawn.id}/page-layout",
        {"layout": "splash", "expected_leaf_id": drawn.leaf_id},
        **HX,
    )
    assert r.status_code == 200
    assert '<option value="splash" selected>' in r.content.decode()
    drawn.refresh_from_db()
    assert app_state_at(session=drawn)["page"]["layout"] == "splash"
    bad = client.post(
        f"/sessions/{drawn.id}/page-layout",
        {"layout": "3x3", "expected_leaf_id": drawn.leaf_id},
        **HX,
    )
    assert bad.status_code == 422


def test_a_shared_branch_shows_the_words_as_edited_at_its_node(client, alice, drawn):
    from jaiweb.comic.services import panel_lettering_set
    from jaiweb.store.shares import share_link_create

    panel = first_panel(drawn)
    panel_lettering_set(
        session=drawn,
        entry_id=panel,
        edit={"caption": "Shared <i>caption</i>", "speech": [{"text": "Hello reader"}]},
        expected_leaf_id=drawn.leaf_id,
    )
    _, token = share_link_create(session_id=drawn.id)
    page = client.get(f"/s/{token}/").content.decode()
    assert "Shared &lt;i&gt;caption&lt;/i&gt;" in page and "Hello reader" in page
    reading = page.split("data-reading", 1)[1]  # the reader's pages: nothing to edit there
    assert "hx-get" not in reading and "data-lettering-form" not in reading


def test_the_rewind_preview_says_which_words_layout_and_order_go_back(client, alice, episode):
    from jaiweb.comic.services import page_layout_set, panel_lettering_set
    from jaiweb.store.comparisons import rewind_preview_at
    from jaiweb.store.selectors import branch_rows
    from jaiweb.studio.selectors.rewinds import rewind_preview_of
    from journal.lettering import ComicChanges

    drawn_at = draw_panels(episode, ["猪猪侠吃下超级棒棒糖", "迷糊老师在教室里"])
    from jaiweb.comic.selectors import page_at

    one, two = page_at(session=episode)["order"]
    for panel in (one, two):
        episode.refresh_from_db()
        panel_lettering_set(
            session=episode,
            entry_id=panel,
            edit={"caption": f"new words of {panel}"},
            expected_leaf_id=episode.leaf_id,
        )
    episode.refresh_from_db()
    page_layout_set(
        session=episode, layout="splash", order=[two, one], expected_leaf_id=episode.leaf_id
    )
    episode.refresh_from_db()
    want = ComicChanges(panels=2, layout="2x2", order=True)
    assert rewind_preview_at(session=episode, target_id=drawn_at).comic == want
    got = rewind_preview_of(
        session=episode,
        target_rows=branch_rows(session=episode, leaf_id=drawn_at, lazy=True),
        leaf_rows=branch_rows(session=episode, lazy=True),
    )
    assert got.comic == want
    client.force_login(alice)
    body = client.get(f"/sessions/{episode.id}/entries/{drawn_at}/").content.decode()
    assert body.count("The captions and bubbles of 2 panels go back to their words there.") == 2
    assert "The pages go back to their layout there: 2×2 (four panels a page)" in body
    assert 'data-change="order"' in body
    zh = client.get(
        f"/sessions/{episode.id}/entries/{drawn_at}/", HTTP_ACCEPT_LANGUAGE="zh-CN"
    ).content.decode()
    assert "2 格的旁白和对话气泡回到那时的文字。" in zh


def test_read_mode_moves_a_panel_for_free_and_a_rewind_puts_it_back(client, alice, episode):
    from django.test import Client

    from jaiweb.comic.selectors import page_at
    from jaiweb.store.shares import share_link_create

    draw_panels(episode, ["猪猪侠吃下超级棒棒糖", "迷糊老师在教室里", "the ring"])
    one, two, three = page_at(session=episode)["order"]
    before_leaf = episode.leaf_id
    client.force_login(alice)
    read = client.get(f"/sessions/{episode.id}/read", **HX).content.decode()
    assert read.count('class="arrange"') == 3
    assert read.count('aria-label="Move panel 1 earlier" title') == 1
    first_form = read[read.index('data-entry-id="' + one) :]
    assert 'value="earlier" data-action="move-earlier"' in first_form.split("</form>")[0]
    assert "disabled" in first_form.split('data-action="move-later"')[0]  # earlier: disabled
    balance = wallet_balance(user=alice.pk)
    rows = Entry.objects.filter(session=episode).count()
    moves = f"/sessions/{episode.id}/page-order"
    form = {"entry_id": one, "move": "later", "expected_leaf_id": before_leaf}
    assert client.post(moves, form, **HX).status_code == 200
    episode.refresh_from_db()
    assert page_at(session=episode)["order"] == [two, one, three]
    assert wallet_balance(user=alice.pk) == balance
    assert Entry.objects.filter(session=episode).count() == rows + 1
    # refused, and nothing written: a move past an end, a way that is none, no such panel
    here = {"expected_leaf_id": episode.leaf_id}
    refused = [
        client.post(moves, {**here, "entry_id": two, "move": "earlier"}, **HX),
        client.post(moves, {**here, "entry_id": one, "move": "sideways"}, **HX),
    ]
    assert [r.status_code for r in refused] == [422, 422]
    gone = client.post(moves, {**here, "entry_id": "e_nope", "move": "later"}, **HX)
    assert gone.status_code == 404
    assert Entry.objects.filter(session=episode).count() == rows + 1
    # a rewind to before the move puts the order back
    client.post(f"/sessions/{episode.id}/rewind", {"entry_id": before_leaf}, **HX)
    episode.refresh_from_db()
    assert page_at(session=episode)["order"] == [one, two, three]
    # only the owner's Read mode in the studio offers the moves
    standalone = client.get(f"/sessions/{episode.id}/read").content.decode()
    _link, token = share_link_create(session_id=episode.id)
    shared = Client().get(f"/s/{token}/").content.decode()
    episode_page = client.get(f"/sessions/{episode.id}/episode.html").content.decode()
    for html in (standalone, shared, episode_page):
        assert 'class="arrange"' not in html
    zh = client.get(f"/sessions/{episode.id}/read", HTTP_ACCEPT_LANGUAGE="zh-CN", **HX)
    assert "把第 1 格往后移" in zh.content.decode()


def test_a_staff_reader_gets_no_moves_and_cannot_move(client, episode, django_user_model):
    from jaiweb.comic.selectors import page_at

    draw_panels(episode, ["the ring", "the park"])
    one, _two = page_at(session=episode)["order"]
    staff = django_user_model.objects.create_user("root", password="root-pass-1", is_staff=True)
    client.force_login(staff)
    read = client.get(f"/sessions/{episode.id}/read", **HX)
    assert read.status_code == 200 and 'class="arrange"' not in read.content.decode()
    form = {"entry_id": one, "move": "later", "expected_leaf_id": episode.leaf_id}
    assert client.post(f"/sessions/{episode.id}/page-order", form, **HX).status_code == 404
