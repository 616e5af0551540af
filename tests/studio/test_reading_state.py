"""Reading state (store/reading.py): which branches each person has opened, behind the
tree's unread dots and "next unread" (issue 30). A side table per user, never an entry."""

from __future__ import annotations

import pytest

from jaiweb.store.models import BranchRead, Entry
from jaiweb.store.services import entry_append, session_create
from tests.support.factories import assistant, branch, user

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("root", password="root-pass-1", is_staff=True)


@pytest.fixture
def forks(alice):
    """Three ways on from a0: uA (the root's own run), b1 → uB, and b2 → uC, the active one."""
    session = session_create(owner=alice, title="forks")
    entry_append(
        session_id=session.id,
        entries=[
            user("u0", None, "start"),
            assistant("a0", "u0", "ok"),
            user("uA", "a0", "way A"),
            assistant("aA", "uA", "A"),
            branch("b1", "a0", "aA"),
            user("uB", "b1", "way B"),
            assistant("aB", "uB", "B"),
            branch("b2", "a0", "aB"),
            user("uC", "b2", "way C"),
            assistant("aC", "uC", "C"),
        ],
        expected_leaf_id=None,
    )
    session.refresh_from_db()
    return session


def unread(client, session) -> list[tuple[str, str, str]]:
    got = client.post(f"/sessions/{session.id}/reading")
    assert got.status_code == 200, got.content
    return [(b["head_id"], b["start_id"], b["parent_id"]) for b in got.json()["unread"]]


def test_the_other_branches_are_unread_where_they_leave_the_path(client, alice, forks):
    client.force_login(alice)
    # the root's run goes on past a0 with uA (off the path); b1's branch from its head
    assert unread(client, forks) == [("u0", "uA", "a0"), ("b1", "b1", "a0")]


def test_dots_go_as_staff_opens_the_branches_and_only_for_staff(client, alice, staff, forks):
    owner, reader = client, type(client)()
    owner.force_login(alice)
    reader.force_login(staff)
    entries = Entry.objects.filter(session=forks).count()
    assert len(unread(reader, forks)) == 2
    # opening the node of way A (its turn uA → aA) reads the root's branch
    assert reader.get(f"/sessions/{forks.id}/entries/aA/?from=uA").status_code == 200
    assert unread(reader, forks) == [("b1", "b1", "a0")]
    assert reader.get(f"/sessions/{forks.id}/entries/aB/?from=uB").status_code == 200
    assert unread(reader, forks) == []
    # the owner has opened nothing: theirs are all still unread
    assert len(unread(owner, forks)) == 2
    assert set(BranchRead.objects.filter(user=alice).values_list("head_id", flat=True)) == {"b2"}
    assert Entry.objects.filter(session=forks).count() == entries  # no story fact


def test_opening_a_node_of_the_active_path_reads_no_other_branch(client, alice, forks):
    client.force_login(alice)
    client.get(f"/sessions/{forks.id}/entries/a0/?from=u0")  # the fork point, on the path
    assert len(unread(client, forks)) == 2


def test_next_unread_jumps_to_the_first_unread_branch(client, alice, forks):
    client.force_login(alice)
    got = client.get(f"/sessions/{forks.id}/tree/unread-next")
    body = got.content.decode()
    assert 'data-node="aA"' in body and 'data-entry="uA"' in body
    client.get(f"/sessions/{forks.id}/entries/aA/")  # the jump opens the inspector there
    body = client.get(f"/sessions/{forks.id}/tree/unread-next").content.decode()
    assert 'data-node="aB"' in body
    client.get(f"/sessions/{forks.id}/entries/aB/")
    body = client.get(f"/sessions/{forks.id}/tree/unread-next").content.decode()
    assert 'data-node=""' in body  # all read: an empty jump


def test_the_new_leaf_is_read_on_sight_and_the_rest_leave_the_path_where_they_do(
    client, alice, staff, forks
):
    reader = client
    reader.force_login(staff)
    unread(reader, forks)
    entry_append(
        session_id=forks.id,
        entries=[branch("b3", "uA", "aC"), assistant("aD", "b3", "D")],
        expected_leaf_id="aC",
    )
    forks.refresh_from_db()
    # b3 is the active leaf's branch now, read on sight; way C (b2) was read when it was;
    # the root's run now leaves the path after uA, at aA
    assert unread(reader, forks) == [("u0", "aA", "uA"), ("b1", "b1", "a0")]


def test_another_user_gets_404(client, bob, forks):
    client.force_login(bob)
    assert client.post(f"/sessions/{forks.id}/reading").status_code == 404
    assert client.get(f"/sessions/{forks.id}/tree/unread-next").status_code == 404
    assert not BranchRead.objects.exists()


def test_a_session_of_many_branches_lists_them_all(client, alice):
    """More branches than one query looks up at once (STARTS_AT_ONCE)."""
    session = session_create(owner=alice, title="many")
    entries = [user("u0", None), assistant("a0", "u0")]
    leaf = "a0"
    for n in range(450):
        entries += [branch(f"b{n}", "a0", leaf), user(f"p{n}", f"b{n}", f"way {n}")]
        leaf = f"p{n}"
    entry_append(session_id=session.id, entries=entries, expected_leaf_id=None)
    session.refresh_from_db()
    client.force_login(alice)
    found = unread(client, session)
    assert len(found) == 449  # the active leaf's branch is read on sight
    # the first way is the root's own run, the others each a branch of its own
    assert found[0] == ("u0", "b0", "a0") and found[-1] == ("b448", "b448", "a0")
