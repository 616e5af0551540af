"""Each rule that used to be written in several places now has one home; here the callers
that each had their own copy are asked the same questions and must give the same answers."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory
from django.utils import timezone

from jaiweb.accounts.services import api_token_create
from jaiweb.agent.providers.offline.limits import FIELD_LIMITS
from jaiweb.agent.runner import Runner
from jaiweb.agent.tools.character import CharacterStateArgs, max_length
from jaiweb.api.selectors import operation_detail
from jaiweb.commands.inbox import inbox_items
from jaiweb.commands.sessions import character_set
from jaiweb.commands.status import session_status
from jaiweb.store.demo import article_session_create
from jaiweb.store.errors import (
    InvalidEntry,
    NotApplicable,
    OperationNotFound,
    OperationStateConflict,
    PromptRateLimited,
    PromptTooLong,
    SessionBusy,
    SessionNotFound,
    SessionParked,
    StaleLeaf,
    StoreError,
)
from jaiweb.store.leases import operation_claim
from jaiweb.store.models import Operation
from jaiweb.store.rows import parse_rows
from jaiweb.store.selectors import (
    app_state_at,
    branch_rows,
    operation_reading,
    operation_verdict,
)
from jaiweb.store.services import operation_accept, operation_park, session_create
from jaiweb.studio.consumers import _watchable
from jaiweb.studio.selectors.sessions_list import my_sessions
from jaiweb.studio.views.answers import write_refused
from jaiweb.studio.views.sessions import SessionForm
from journal.snapshot import replay
from tests.support.builders import left_by_a_crash

pytestmark = pytest.mark.django_db

STATE = {"characters": {"猪猪侠": {"buff": "无", "skill": "无", "mood": "平静"}}}


def _sessions_in_every_state(owner):
    idle = session_create(owner=owner, title="idle", initial_app_state=STATE)
    running = session_create(owner=owner, title="running", initial_app_state=STATE)
    operation_accept(session_id=running.id, text="draw")
    parked = session_create(owner=owner, title="parked", initial_app_state=STATE)
    op = operation_accept(session_id=parked.id, text="draw").operation_id
    lease = operation_claim(owner="t", now=timezone.now(), lease_seconds=60, operation_id=op)
    operation_park(operation_id=op, fencing=lease.fencing, reason="may have run")
    return {"idle": idle, "running": running, "parked": parked}


def test_the_state_of_a_run_is_one_rule_for_the_studio_the_cards_and_the_api(alice):
    sessions = _sessions_in_every_state(alice)
    cards = {card.session.id: card.state for card in my_sessions(owner=alice).cards}
    for expected, session in sessions.items():
        assert session_status(session=session).state == expected
        assert cards[session.id] == expected
        op = Operation.objects.filter(session=session).first()
        if op is not None:  # the API's operation state: the same words, and "finished"
            assert op.state == expected
            assert operation_detail(operation=op)["state"] == expected


def test_owner_or_staff_read_only_is_one_rule_for_pages_the_api_and_the_socket(
    alice, bob, django_user_model
):
    staff = django_user_model.objects.create_user("staff", password="x", is_staff=True)
    session = session_create(owner=alice, title="mine")
    tokens = {u.username: api_token_create(user=u, name="t")[1] for u in (alice, bob, staff)}
    for user, may_read, may_write in (
        (alice, True, True),
        (staff, True, False),
        (bob, False, False),
    ):
        browser = Client()
        browser.force_login(user)
        page = browser.get(f"/sessions/{session.id}/").status_code
        rename = browser.post(f"/sessions/{session.id}/rename", {"title": "x"}).status_code
        auth = {"HTTP_AUTHORIZATION": f"Bearer {tokens[user.username]}"}
        api = Client().get(f"/api/v1/sessions/{session.id}", **auth).status_code
        api_write = (
            Client()
            .patch(
                f"/api/v1/sessions/{session.id}",
                data='{"title": "x"}',
                content_type="application/json",
                **auth,
            )
            .status_code
        )
        watch = _watchable(session.id, user) is not None
        assert (page == 200, api == 200, watch) == (may_read,) * 3, user
        assert (rename == 302, api_write == 200) == (may_write,) * 2, user
        assert (page, api) == ((200, 200) if may_read else (404, 404))  # never a 403: no hint


REFUSALS = [
    SessionNotFound("s"),
    OperationNotFound("o"),
    StaleLeaf("s", "a", "b"),
    InvalidEntry("bad"),
    SessionBusy("s", "o", parked=False),
    SessionParked("s", "o"),
    PromptTooLong(10, 5),
    PromptRateLimited(3, 20),
    OperationStateConflict("no"),
    NotApplicable("not a panel"),
]


@pytest.mark.parametrize("refusal", REFUSALS, ids=lambda e: type(e).__name__)
def test_a_refusal_has_one_status_in_the_api_and_the_studio(refusal: StoreError, alice):
    from jaiweb.api.api import api

    request = RequestFactory().post("/", HTTP_HX_REQUEST="true")
    request.user = alice
    handler = api._lookup_exception_handler(refusal)
    assert handler(request, refusal).status_code == refusal.http_status
    session = session_create(owner=alice, title="t")
    assert write_refused(request, session, refusal).status_code == refusal.http_status


def test_a_characters_limits_are_the_tools_for_the_agent_a_hand_edit_and_the_new_session_form(
    alice,
):
    session = session_create(owner=alice, title="t", initial_app_state=STATE)
    limit = max_length("character")
    assert limit == CharacterStateArgs.model_fields["character"].metadata[-1].max_length
    for field in ("character", "buff", "skill", "mood"):  # the offline director's own checks
        assert FIELD_LIMITS[field] == max_length(field)
    for name, ok in (("猪" * limit, True), ("猪" * (limit + 1), False)):
        tool = CharacterStateArgs.model_validate({"character": name}) if ok else None
        if not ok:
            with pytest.raises(ValueError):
                CharacterStateArgs.model_validate({"character": name})
        form = SessionForm({"title": "t", "characters": name})
        assert form.is_valid() is ok
        session.refresh_from_db()
        if ok:
            character_set(session=session, name=name, fields={}, expected_leaf_id=session.leaf_id)
            assert tool is not None
        else:
            with pytest.raises(InvalidEntry):
                character_set(
                    session=session, name=name, fields={}, expected_leaf_id=session.leaf_id
                )
    mood = "难" * (max_length("mood") + 1)  # a hand edit allowed 200 here, the tool 40
    session.refresh_from_db()
    with pytest.raises(InvalidEntry, match="mood"):
        character_set(
            session=session, name="猪猪侠", fields={"mood": mood}, expected_leaf_id=session.leaf_id
        )


def test_the_app_state_at_a_node_is_one_read_for_loaded_rows_the_query_and_a_replay(alice):
    session = article_session_create(owner=alice)
    rows = branch_rows(session=session, leaf_id=None)
    parse_rows(rows)
    entries = [row.entry for row in rows]
    for n in range(1, len(rows) + 1):
        node = rows[n - 1].entry_id
        snapshot = replay(entries[:n], session.initial_app_state, session.created_at)
        loaded = app_state_at(session=session, rows=rows[:n])
        walked = app_state_at(session=session, leaf_id=node)
        assert loaded == walked == snapshot.app_state, node


@pytest.mark.django_db(transaction=True)
def test_records_fold_evidence_verdict_is_one_reading_for_the_inbox_the_api_and_recovery(
    alice,
):
    session = session_create(owner=alice, title="t", initial_app_state=STATE)
    op = left_by_a_crash(session, call="publish_panel")  # T1 written, no T2
    Runner().recover()
    operation = Operation.objects.get(pk=op)
    assert operation.state == "parked"
    verdict = operation_verdict(operation=operation)
    assert verdict.status == "indeterminate_tool"
    assert operation_reading(operation_id=op, session=session).verdict() == verdict
    assert operation_detail(operation=operation)["verdict"] == verdict
    [item] = [i for i in inbox_items() if i.operation_id == op]
    assert [item.tool_call_id] == [d.tool_call_id for d in verdict.dispatches]


def test_a_refusal_reads_the_same_from_a_page_write_and_from_the_socket(alice):
    from jaiweb.studio.consumers import alert_html

    request = RequestFactory().post("/", HTTP_HX_REQUEST="true")
    request.user = alice
    session = session_create(owner=alice, title="t")
    refusal = InvalidEntry("a <b>bold</b> name")  # what a person typed comes back in it
    page = write_refused(request, session, refusal).content.decode().strip()
    assert page == alert_html(refusal.user_message())  # one template, one shape
    assert 'id="form-error"' in page and "&lt;b&gt;bold&lt;/b&gt;" in page
