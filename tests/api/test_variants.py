"""The API of variants: a variants count on a prompt, choosing a variant, and every bad
input refused with nothing written."""

from __future__ import annotations

import pytest

from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.render.models import LedgerEntry
from jaiweb.store.models import Entry, Operation
from jaiweb.store.selectors import branch_get
from jaiweb.store.services import session_create
from journal.variants import sets_on
from tests.api.conftest import start_run
from tests.support.fixtures import media as media  # the fixture
from tests.support.runs import Harness

pytestmark = pytest.mark.django_db

AUTO = {"characters": {"猪猪侠": {}}, "permission_mode": "auto"}


@pytest.fixture
def drawn(alice):
    """Alice's session after "draw 3 variants of …" ran (auto mode): one set, 3 members."""
    session = session_create(owner=alice, title="variants", initial_app_state=AUTO)
    harness = Harness(session)
    harness.prompt("draw 3 variants of Pig-Man eating the lollipop")
    assert harness.run(OfflineDirector()) == "finished"
    session.refresh_from_db()
    [variant_set] = sets_on(branch_get(session=session))
    assert len(variant_set.members) == 3
    return session, variant_set


def written(session) -> tuple[int, int, int]:
    """What a refused request must leave as it was: entries, operations, charges."""
    return (
        Entry.objects.filter(session=session).count(),
        Operation.objects.filter(session=session).count(),
        LedgerEntry.objects.filter(kind="charge").count(),
    )


def test_a_prompt_with_a_count_asks_for_that_many_variants(as_alice, session):
    got = as_alice.post(f"/sessions/{session.id}/prompts", {"text": "the hero wins", "variants": 3})
    assert got.status_code == 202, got.content
    [prompt] = [e for e in Entry.objects.filter(session=session)]
    assert prompt.to_journal().message.content == "Draw 3 variants of this panel: the hero wins"


def test_the_count_goes_in_in_the_senders_language(as_alice, session):
    as_alice.headers["Accept-Language"] = "zh-hans"
    got = as_alice.post(f"/sessions/{session.id}/prompts", {"text": "猪猪侠赢了", "variants": 2})
    assert got.status_code == 202, got.content
    [prompt] = [e for e in Entry.objects.filter(session=session)]
    assert prompt.to_journal().message.content == "画2个版本：猪猪侠赢了"


@pytest.mark.parametrize("count", [0, 1, 5, -3, "x", "3", 2.5, True, None, [3]])
def test_a_bad_variants_count_is_422_and_nothing_is_written(as_alice, session, count):
    before = written(session)
    body = {"text": "the hero wins", "variants": count}
    got = as_alice.post(f"/sessions/{session.id}/prompts", body)
    if count is None:  # null: no variants asked for, a plain prompt
        assert got.status_code == 202
        return
    assert got.status_code == 422, got.content
    assert got.json()["field"] == "variants"
    assert written(session) == before


def test_choosing_a_variant_is_free_and_rolls_back(as_alice, drawn):
    session, variant_set = drawn
    balance = as_alice.get("/wallet").json()["balance"]
    leaf = session.leaf_id
    got = as_alice.post(
        f"/sessions/{session.id}/entries/{variant_set.members[2]}/variant",
        {"variant": 2, "expected_leaf_id": leaf},
    )
    assert got.status_code == 200, got.content
    assert got.json()["app_state"]["variants"] == {variant_set.id: variant_set.members[1]}
    session.refresh_from_db()
    [entry] = [e for e in branch_get(session=session) if e.id == session.leaf_id]
    assert entry.type == "app_state" and entry.parent_id == leaf
    assert as_alice.get("/wallet").json()["balance"] == balance
    state = as_alice.get(f"/sessions/{session.id}/state").json()["app_state"]
    assert state["variants"] == {variant_set.id: variant_set.members[1]}
    # choosing the variant shown writes nothing
    again = as_alice.post(
        f"/sessions/{session.id}/entries/{variant_set.id}/variant", {"variant": 2}
    )
    assert again.status_code == 200
    assert written(session)[0] == Entry.objects.filter(session=session).count()
    session.refresh_from_db()
    assert session.leaf_id == entry.id
    preview = as_alice.get(f"/sessions/{session.id}/entries/{leaf}/rewind-preview").json()
    assert preview["choices"] == 1 and preview["changes"] == []
    back = as_alice.post(f"/sessions/{session.id}/navigate", {"entry_id": leaf})
    assert "variants" not in back.json()["app_state"]


@pytest.mark.parametrize("variant", [0, 4, 5, -1, "x", "2", 1.5, None, True])
def test_an_unknown_variant_is_422_and_nothing_is_written(as_alice, drawn, variant):
    session, variant_set = drawn
    before = written(session)
    got = as_alice.post(
        f"/sessions/{session.id}/entries/{variant_set.id}/variant", {"variant": variant}
    )
    assert got.status_code == 422, got.content
    assert got.json()["field"] == "variant"
    assert written(session) == before


def test_no_such_set_is_404_and_nothing_is_written(as_alice, drawn):
    session, _set = drawn
    before = written(session)
    prompt = branch_get(session=session)[0].id  # an entry, but no variant of anything
    for entry_id in ("r_nothing", prompt, "x" * 300):
        got = as_alice.post(f"/sessions/{session.id}/entries/{entry_id}/variant", {"variant": 1})
        assert got.status_code == 404, got.content
    assert written(session) == before


def test_another_users_set_is_404(as_bob, drawn):
    session, variant_set = drawn
    before = written(session)
    got = as_bob.post(f"/sessions/{session.id}/entries/{variant_set.id}/variant", {"variant": 2})
    assert got.status_code == 404
    assert written(session) == before


def test_a_stale_leaf_is_409_with_the_leaf(as_alice, drawn):
    session, variant_set = drawn
    before = written(session)
    prompt = branch_get(session=session)[0].id
    got = as_alice.post(
        f"/sessions/{session.id}/entries/{variant_set.id}/variant",
        {"variant": 2, "expected_leaf_id": prompt},
    )
    assert got.status_code == 409, got.content
    assert got.json()["leaf_id"] == session.leaf_id
    assert written(session) == before


def test_choosing_during_a_run_is_409(as_alice, drawn):
    session, variant_set = drawn
    start_run(session)
    before = written(session)
    got = as_alice.post(f"/sessions/{session.id}/entries/{variant_set.id}/variant", {"variant": 2})
    assert got.status_code == 409
    assert written(session) == before


def test_a_set_off_the_active_branch_is_404(as_alice, drawn):
    session, variant_set = drawn
    prompt = branch_get(session=session)[0]
    as_alice.post(f"/sessions/{session.id}/navigate", {"entry_id": prompt.id})
    got = as_alice.post(f"/sessions/{session.id}/entries/{variant_set.id}/variant", {"variant": 2})
    assert got.status_code == 404
