"""The offline director through the real loop: chat costs nothing, a panel costs its price."""

from __future__ import annotations

import pytest

from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.render.models import RenderJob
from jaiweb.render.selectors import wallet_balance
from jaiweb.store.selectors import app_state_at, operation_records
from jaiweb.store.services import operation_approval_decide
from journal.entries import AssistantMessage, MessageEntry
from journal.recovery import fold_operation

pytestmark = pytest.mark.django_db


def approving(op_id: str):
    """A ``sleep`` for the loop that approves whatever is waiting, as the user would."""

    def sleep(_seconds):
        for call_id, call in fold_operation(operation_records(operation_id=op_id)).calls.items():
            if call.approval == "pending":
                operation_approval_decide(
                    operation_id=op_id, tool_call_id=call_id, decision="approved", by="alice"
                )

    return sleep


def play(harness, prompt: str) -> str:
    op = harness.prompt(prompt)
    assert harness.run(OfflineDirector(), sleep=approving(op)) == "finished"
    return op


def said(harness) -> str:
    """The director's last words."""
    replies = [
        e.message
        for e in harness.entries()
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
    ]
    return replies[-1].content


@pytest.mark.parametrize(
    "prompt",
    [
        "Hi! Can you help me make a comic?",
        "What's Pig-Man's state?",
        "Undo the last panel",
        "猪猪侠现在什么状态？",
        "撤销",
        "the hero wins",
    ],
)
def test_a_chat_prompt_is_answered_in_words_and_charges_nothing(harness, prompt):
    op = play(harness, prompt)

    assert harness.record_types(op) == [
        "operation_accepted",
        "model_attempted",
        "usage_settled",
        "operation_finished",
    ]  # no approval asked, no tool dispatched
    assert wallet_balance(user=harness.session.owner) == 100
    assert not RenderJob.objects.exists()
    assert harness.entry_kinds() == ["user", "assistant"]


def test_make_someone_sad_changes_the_state_and_draws_nothing(harness):
    op = play(harness, "Make Pig-Man sad")

    assert "approval_requested" not in harness.record_types(op)
    harness.session.refresh_from_db()
    assert app_state_at(session=harness.session)["characters"]["猪猪侠"]["mood"] == "sad"
    assert wallet_balance(user=harness.session.owner) == 100
    assert not RenderJob.objects.exists()


def test_a_panel_is_announced_with_its_cost_asked_for_and_charged_once(harness):
    op = play(harness, "The teacher accidentally gives him expired medicine")

    assert "approval_requested" in harness.record_types(op)
    harness.session.refresh_from_db()
    hero = app_state_at(session=harness.session)["characters"]["猪猪侠"]
    assert hero["buff"].startswith("拉肚子虚脱") and hero["skill"] == "无"
    assert wallet_balance(user=harness.session.owner) == 90
    (job,) = RenderJob.objects.all()
    assert job.params["characters"]["猪猪侠"]["mood"] == "狼狈"  # drawn in the new state
    first_reply = next(
        e.message
        for e in harness.entries()
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
    )
    assert "This panel costs 10 credits." in first_reply.content
    assert "img_" not in said(harness)


def _cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


@pytest.mark.parametrize(
    ("language", "prompt", "chinese"),
    [
        ("zh-hans", "Hi! Can you help me make a comic?", True),
        ("en", "你好！能帮我画漫画吗？", False),
        ("zh-hans", "你好！能帮我画漫画吗？", True),
        ("en", "Hi! Can you help me make a comic?", False),
    ],
)
def test_the_narration_follows_the_pages_language_not_the_prompts_script(
    harness, language, prompt, chinese
):
    from jaiweb.store.services import operation_accept

    op = operation_accept(session_id=harness.session.id, text=prompt, language=language)
    assert harness.run(OfflineDirector(), sleep=approving(op.operation_id)) == "finished"
    assert _cjk(said(harness)) is chinese, said(harness)


def test_the_director_sees_a_hand_edited_state(harness):
    from jaiweb.commands.sessions import character_set

    harness.session.refresh_from_db()
    character_set(
        session=harness.session,
        name="猪猪侠",
        fields={"mood": "sleepy-by-hand"},
        expected_leaf_id=harness.session.leaf_id,
    )
    play(harness, "What's Pig-Man's state?")
    assert "sleepy-by-hand" in said(harness)
