"""The stream as the journal has it: what a watcher that missed the run's events is sent."""

from __future__ import annotations

import pytest

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.render.services import wallet_get_or_create
from jaiweb.store.services import operation_accept, session_create
from jaiweb.studio.stream import stream_html, stream_state
from tests.support.builders import left_by_a_crash
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db


@pytest.fixture
def auto_session(alice):
    wallet_get_or_create(user=alice)
    state = {**DEFAULT_STATE, "permission_mode": "auto"}
    return session_create(owner=alice, title="stream", initial_app_state=state)


def test_a_session_with_no_run_has_an_empty_stream(auto_session):
    assert stream_state(session=auto_session).operation_id is None
    html = stream_html(session=auto_session, language="en")
    assert 'id="stream-text"' in html and "<li" not in html


def test_a_finished_run_shows_its_replies_its_done_steps_and_how_it_ended(auto_session, media):
    operation_accept(session_id=auto_session.id, text="/draw 猪猪侠吃下超级棒棒糖")
    assert run_pending() == "finished"
    state = stream_state(session=auto_session)
    assert state.replies and state.outcome == "completed"
    assert [(s.tool, s.done, s.failed, s.started_ms) for s in state.steps] == [
        ("generate_image", True, False, None)
    ]
    html = stream_html(session=auto_session, language="en")
    assert "done: draw a panel" in html and "Finished: completed" in html
    assert "data-started" not in html  # nothing ticks
    chinese = stream_html(session=auto_session, language="zh-hans")
    assert "Finished" not in chinese and "done:" not in chinese  # the watcher's language


def test_a_call_dispatched_with_no_result_is_the_one_step_that_ticks(auto_session):
    left_by_a_crash(auto_session, call="generate_image")
    [step] = stream_state(session=auto_session).steps
    assert step.tool == "generate_image" and not step.done and step.started_ms > 0
    html = stream_html(session=auto_session, language="en")
    assert "rendering panel" in html and f'data-started="{step.started_ms}"' in html
    assert "Finished" not in html


def test_what_a_run_said_is_escaped(auto_session, media):
    operation_accept(session_id=auto_session.id, text="/say <script>alert(1)</script>")
    assert run_pending() == "finished"
    html = stream_html(session=auto_session, language="en")
    assert "<script>" not in html
