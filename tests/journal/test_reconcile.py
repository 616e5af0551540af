"""The reconciler's decision: what the evidence under an open at-most-once call's key says."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from journal.ids import args_hash, idempotency_key, result_entry_id
from journal.reconcile import (
    FeedPostSeen,
    KeyEvidence,
    RenderJobSeen,
    Settled,
    Undecided,
    settle_call,
)
from journal.records import ToolDispatched, ToolResolved, parse_record, record_to_dict

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
KEY = idempotency_key("op_1", "call_1")


def t1(tool: str, args: dict, policy: str = "at_most_once") -> ToolDispatched:
    return ToolDispatched(
        operation_id="op_1",
        timestamp=NOW,
        tool_call_id="call_1",
        tool_name=tool,
        assistant_entry_id="A1",
        args=args,
        args_hash=args_hash(args),
        result_entry_id=result_entry_id("A1", "call_1"),
        idempotency_key=KEY,
        policy=policy,
    )


IMAGE = t1("generate_image", {"prompt": "猪猪侠吃棒棒糖"})
PUBLISH = t1("publish_panel", {"image_id": "img_1", "caption": "第一格"})


def job(**fields) -> RenderJobSeen:
    base = dict(
        key=KEY,
        status="succeeded",
        image_id="img_7",
        content_type="image/png",
        backend="openai",
        charged=10,
        prompt="猪猪侠吃棒棒糖",
    )
    return RenderJobSeen(**{**base, **fields})


def post(**fields) -> FeedPostSeen:
    base = dict(post_id="post_9", image_id="img_1", key=KEY, session_id="s1")
    return FeedPostSeen(**{**base, **fields})


def settle(dispatch, evidence):
    return settle_call(dispatch, evidence, session_id="s1")


def as_record(decision: Settled) -> ToolResolved:
    """The record the shell writes for a decision: it must be a valid one."""
    return ToolResolved(
        operation_id="op_1",
        timestamp=NOW,
        tool_call_id=decision.tool_call_id,
        resolution=decision.resolution,
        by="reconciler",
        reason=decision.reason,
        resolved_by="reconciler",
        evidence=decision.evidence,
    )


# -- a render job under the key --------------------------------------------------------


def test_a_stored_render_confirms_the_call_with_that_image_charged_once():
    decision = settle(IMAGE, KeyEvidence(render_job=job()))
    assert isinstance(decision, Settled)
    assert decision.resolution == "confirmed" and not decision.is_error
    # what generate_image itself writes for the stored result of an earlier request
    assert decision.details == {
        "image_id": "img_7",
        "content_type": "image/png",
        "backend": "openai",
        "cost": 10,
        "replayed": True,
    }
    assert decision.content.startswith("panel rendered")
    assert decision.evidence == {
        "kind": "render_job",
        "idempotency_key": KEY,
        "status": "succeeded",
        "backend": "openai",
        "charged": 10,
        "image_id": "img_7",
    }
    assert "img_7" in decision.reason and "10 credits" in decision.reason
    record = as_record(decision)
    assert parse_record(record_to_dict(record)) == record


def test_a_failed_render_fails_the_call_with_the_stored_error_and_no_charge():
    decision = settle(
        IMAGE, KeyEvidence(render_job=job(status="failed", image_id=None, charged=0, error="500"))
    )
    assert isinstance(decision, Settled)
    assert decision.resolution == "failed" and decision.is_error
    assert decision.details == {"code": "render_failed", "backend": "openai"}
    assert "failed: 500" in decision.content and "nothing was charged" in decision.content
    assert decision.evidence["status"] == "failed" and decision.evidence["error"] == "500"
    assert decision.evidence["charged"] == 0
    as_record(decision)


def test_no_render_job_under_the_key_is_for_a_person():
    decision = settle(IMAGE, KeyEvidence())
    assert isinstance(decision, Undecided) and not decision.later
    assert "no job under the call's key" in decision.reason


def test_a_render_in_progress_under_a_live_lease_waits_for_a_later_pass():
    decision = settle(
        IMAGE, KeyEvidence(render_job=job(status="in_progress", image_id=None, lease_live=True))
    )
    assert isinstance(decision, Undecided) and decision.later
    assert "still in progress" in decision.reason


def test_a_render_that_started_and_never_finished_is_for_a_person():
    decision = settle(
        IMAGE, KeyEvidence(render_job=job(status="in_progress", image_id=None, lease_live=False))
    )
    assert isinstance(decision, Undecided) and not decision.later
    assert "never finished" in decision.reason


@pytest.mark.parametrize(
    "seen",
    [
        job(key="k_other"),
        job(same_owner=False),
        job(prompt="another picture"),
        job(image_id=None),
        job(status="failed", charged=10),
    ],
    ids=["other key", "other owner", "other prompt", "no image", "failed but charged"],
)
def test_a_render_job_that_does_not_match_the_call_decides_nothing(seen):
    assert isinstance(settle(IMAGE, KeyEvidence(render_job=seen)), Undecided)


def test_feed_posts_never_decide_a_render():
    assert isinstance(settle(IMAGE, KeyEvidence(feed_posts=(post(),))), Undecided)


# -- a feed post under the key ---------------------------------------------------------


def test_one_feed_post_with_the_key_confirms_the_publish():
    decision = settle(PUBLISH, KeyEvidence(feed_posts=(post(),)))
    assert isinstance(decision, Settled) and decision.resolution == "confirmed"
    # what publish_panel itself writes
    assert decision.details == {"post_id": "post_9", "image_id": "img_1"}
    assert decision.content == "published to the feed as post_9"
    assert decision.evidence == {
        "kind": "feed_post",
        "idempotency_key": KEY,
        "post_id": "post_9",
        "image_id": "img_1",
    }
    as_record(decision)


@pytest.mark.parametrize(
    "posts",
    [
        (),
        (post(key="k_other"),),
        (post(), post(post_id="post_10")),
        (post(image_id="img_2"),),
        (post(session_id="s2"),),
    ],
    ids=["none", "other key", "two posts", "other panel", "other session"],
)
def test_anything_but_one_matching_post_is_for_a_person(posts):
    decision = settle(PUBLISH, KeyEvidence(feed_posts=posts))
    assert isinstance(decision, Undecided) and not decision.later


def test_a_render_job_never_decides_a_publish():
    assert isinstance(settle(PUBLISH, KeyEvidence(render_job=job())), Undecided)


# -- what is never settled -------------------------------------------------------------


def test_only_at_most_once_calls_of_known_tools_are_settled():
    idempotent = t1("generate_image", {"prompt": "猪猪侠吃棒棒糖"}, policy="idempotent")
    assert isinstance(settle(idempotent, KeyEvidence(render_job=job())), Undecided)
    other = t1("send_email", {"to": "x"})
    decision = settle(other, KeyEvidence(render_job=job(), feed_posts=(post(),)))
    assert isinstance(decision, Undecided) and "send_email" in decision.reason


# -- the record ------------------------------------------------------------------------


def test_a_reconciler_record_keeps_its_evidence_and_never_retries():
    base = dict(operation_id="op_1", timestamp=NOW, tool_call_id="call_1", reason="seen")
    with pytest.raises(ValueError, match="keeps the evidence"):
        ToolResolved(**base, resolution="confirmed", by="reconciler", resolved_by="reconciler")
    with pytest.raises(ValueError, match="never retries"):
        ToolResolved(
            **base,
            resolution="retry",
            by="reconciler",
            resolved_by="reconciler",
            evidence={"kind": "render_job"},
        )


def test_an_admin_record_reads_and_writes_as_before():
    data = {
        "type": "tool_resolved",
        "operation_id": "op_1",
        "timestamp": "2026-12-01T12:00:00Z",
        "tool_call_id": "call_1",
        "resolution": "confirmed",
        "by": "root",
        "reason": "seen on the feed",
    }
    record = parse_record(data)
    assert record.resolved_by == "admin" and record.evidence is None
    assert record_to_dict(record) == data  # no new fields in an admin's record
    assert parse_record(record.model_dump_json()) == record
