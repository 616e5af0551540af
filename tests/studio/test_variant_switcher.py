"""The strip's switcher: "‹ 2/3 ›" on a panel drawn as variants chooses what readers see
(free, app state), and on a turn with sibling prompts opens the rewind to a sibling's end
in the inspector, previewed like any rewind."""

from __future__ import annotations

import re

import pytest

from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.render.models import LedgerEntry
from jaiweb.store.models import Entry, Operation
from jaiweb.store.selectors import branch_get
from jaiweb.store.services import entry_append, session_create
from journal.variants import sets_on
from tests.support.factories import assistant, branch, panel, user
from tests.support.runs import Harness

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
AUTO = {"characters": {"猪猪侠": {}}, "permission_mode": "auto"}


@pytest.fixture
def drawn(alice):
    session = session_create(owner=alice, title="variants", initial_app_state=AUTO)
    harness = Harness(session)
    harness.prompt("画3个版本：猪猪侠吃下超级棒棒糖，上擂台对决超人强！")
    assert harness.run(OfflineDirector()) == "finished"
    session.refresh_from_db()
    [variant_set] = sets_on(branch_get(session=session))
    images = {
        e.id: e.message.details["image_id"]
        for e in branch_get(session=session)
        if e.id in variant_set.members
    }
    return session, variant_set, [images[m] for m in variant_set.members]


def strip_of(client, session) -> str:
    page = client.get(f"/sessions/{session.id}/").content.decode()
    return page[page.index('id="strip"') :]


def writes(session) -> tuple[int, int, int]:
    return (
        Entry.objects.filter(session=session).count(),
        Operation.objects.filter(session=session).count(),
        LedgerEntry.objects.filter(kind="charge").count(),
    )


def test_the_strip_shows_the_chosen_variant_with_its_switcher(client, alice, drawn):
    session, variant_set, images = drawn
    client.force_login(alice)
    strip = strip_of(client, session)
    assert f'data-panel="{images[0]}"' in strip
    assert all(f'data-panel="{i}"' not in strip for i in images[1:])
    assert 'data-variant="1" data-variant-count="3"' in strip
    assert re.search(r'data-action="variant-previous"[^>]*disabled', strip)
    before = writes(session)
    got = client.post(
        f"/sessions/{session.id}/variant",
        {"entry_id": variant_set.id, "variant": "2", "expected_leaf_id": session.leaf_id},
        **HX,
    )
    assert got.status_code == 200
    entries, operations, charges = writes(session)
    assert (entries, operations, charges) == (before[0] + 1, before[1], before[2])
    strip = strip_of(client, session)
    assert f'data-panel="{images[1]}"' in strip and f'data-panel="{images[0]}"' not in strip
    assert 'data-variant="2" data-variant-count="3"' in strip
    # the storyboard's node for the choice says so, not "characters changed"
    page = client.get(f"/sessions/{session.id}/").content.decode()
    tree = page[page.index('id="tree"') : page.index('id="strip"')]
    assert "variant chosen" in tree


@pytest.mark.parametrize(
    ("fields", "status"),
    [
        ({"variant": "x"}, 422),
        ({"variant": ""}, 422),
        ({"variant": "0"}, 422),
        ({"variant": "9"}, 422),
        ({"variant": "2", "entry_id": "r_nothing"}, 404),
        ({"variant": "2", "expected_leaf_id": "e_gone"}, 409),
        # the switcher's HTML names no leaf: posted without the page's script, it is stale
        ({"variant": "2", "expected_leaf_id": ""}, 409),
    ],
)
def test_a_bad_choice_is_refused_and_writes_nothing(client, alice, drawn, fields, status):
    session, variant_set, _images = drawn
    client.force_login(alice)
    before = writes(session)
    body = {"entry_id": variant_set.id, "expected_leaf_id": session.leaf_id, **fields}
    got = client.post(f"/sessions/{session.id}/variant", body, **HX)
    assert got.status_code == status
    assert writes(session) == before


def test_a_leaf_that_is_a_lone_surrogate_is_refused_and_writes_nothing(client, alice, drawn):
    session, variant_set, _images = drawn
    client.force_login(alice)
    before = writes(session)
    body = f"entry_id={variant_set.id}&variant=2&expected_leaf_id=%ED%A0%80"  # "\ud800"
    got = client.post(
        f"/sessions/{session.id}/variant",
        body,
        content_type="application/x-www-form-urlencoded",
        **HX,
    )
    assert got.status_code == 409
    assert writes(session) == before


def test_someone_elses_switcher_is_404(client, bob, drawn):
    session, variant_set, _images = drawn
    client.force_login(bob)
    before = writes(session)
    body = {"entry_id": variant_set.id, "variant": "2", "expected_leaf_id": session.leaf_id}
    assert client.post(f"/sessions/{session.id}/variant", body, **HX).status_code == 404
    assert writes(session) == before


def test_the_prompt_form_asks_for_variants(client, alice):
    session = session_create(owner=alice, title="t", initial_app_state=AUTO)
    client.force_login(alice)
    got = client.post(
        f"/sessions/{session.id}/prompts", {"text": "the hero wins", "variants": "3"}, **HX
    )
    assert got.status_code == 202
    [prompt] = Entry.objects.filter(session=session)
    assert prompt.to_journal().message.content == "Draw 3 variants of this panel: the hero wins"
    page = client.get(f"/sessions/{session.id}/").content.decode()
    assert 'name="variants"' in page


@pytest.mark.parametrize("count", ["5", "0", "x", "22", "３"])
def test_a_bad_count_on_the_form_is_422(client, alice, count):
    session = session_create(owner=alice, title="t", initial_app_state=AUTO)
    client.force_login(alice)
    got = client.post(
        f"/sessions/{session.id}/prompts", {"text": "the hero wins", "variants": count}, **HX
    )
    assert got.status_code == 422
    assert not Entry.objects.filter(session=session).exists()


@pytest.fixture
def siblings(alice):
    """A turn drawn, then drawn again as a sibling (a regenerate: a rewind to the node the
    prompt hangs from, the same prompt again); the second is the active branch."""
    session = session_create(owner=alice, title="siblings", initial_app_state=AUTO)
    entry_append(
        session_id=session.id,
        entries=[
            user("u0", None, "start"),
            assistant("a0", "u0", "ok"),
            user("u1", "a0", "draw it"),
            assistant("c1", "u1", calls=[("c_p1", "generate_image")]),
            panel("p1", "c1"),
            assistant("f1", "p1", "done"),
            branch("b1", "a0", "f1"),
            user("u2", "b1", "draw it"),
            assistant("c2", "u2", calls=[("c_p2", "generate_image")]),
            panel("p2", "c2"),
            assistant("f2", "p2", "done again"),
        ],
        expected_leaf_id=None,
    )
    session.refresh_from_db()
    return session


def test_a_turns_siblings_flip_through_the_rewind_preview(client, alice, siblings):
    client.force_login(alice)
    strip = strip_of(client, siblings)
    assert 'data-panel="img_p2"' in strip
    assert 'data-sibling="2" data-sibling-count="2"' in strip
    assert re.search(r'data-action="sibling-previous" [^>]*data-target="f1"', strip)
    assert re.search(r'data-action="sibling-next"[^>]*disabled', strip)
    before = writes(siblings)
    # a flip opens the inspector at the sibling's end: the preview and "continue here"
    inspector = client.get(f"/sessions/{siblings.id}/entries/f1/", **HX).content.decode()
    assert 'data-preview="rewind"' in inspector and 'data-action="continue-here"' in inspector
    assert writes(siblings) == before  # nothing happens until the person continues
    got = client.post(
        f"/sessions/{siblings.id}/rewind",
        {"entry_id": "f1", "expected_leaf_id": siblings.leaf_id},
        **HX,
    )
    assert got.status_code == 200
    siblings.refresh_from_db()
    strip = strip_of(client, siblings)
    assert 'data-panel="img_p1"' in strip and 'data-panel="img_p2"' not in strip
    assert 'data-sibling="1" data-sibling-count="2"' in strip
    assert re.search(r'data-action="sibling-next" [^>]*data-target="f2"', strip)


def test_a_turn_without_siblings_has_no_switcher(client, alice, siblings):
    client.force_login(alice)
    entry_append(
        session_id=siblings.id,
        entries=[
            user("u3", "f2", "more"),
            assistant("c3", "u3", calls=[("c_p3", "generate_image")]),
            panel("p3", "c3"),
        ],
        expected_leaf_id="f2",
    )
    siblings.refresh_from_db()
    strip = strip_of(client, siblings)
    assert strip.count("data-sibling-switcher") == 1  # the second turn's, not the third's


def test_the_switchers_speak_chinese(client, alice, drawn, siblings):
    client.force_login(alice)
    client.cookies["django_language"] = "zh-hans"
    session, _set, _images = drawn
    strip = strip_of(client, session)
    assert ">版本<" in strip and "第 1 个版本，共 3 个" in strip
    assert "Variant" not in strip and "previous variant" not in strip
    strip = strip_of(client, siblings)
    assert ">回复<" in strip and "第 2 个回复，共 2 个" in strip and "Reply" not in strip
