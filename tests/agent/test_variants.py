"""Variants in a run: "draw 3 variants of …" is three calls of one set, each with its own T1,
key, seed, charge and picture, approved once for the whole set's cost."""

from __future__ import annotations

import re

import pytest

from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.render.models import Image, LedgerEntry, RenderJob
from jaiweb.store.selectors import branch_get
from journal.ids import render_seed
from journal.pages import panels_on
from journal.variants import sets_on
from tests.support.runs import decide_when_asked

pytestmark = pytest.mark.django_db

EN = "draw 3 variants of Pig-Man eating the lollipop"
ZH = "画3个版本：猪猪侠吃下超级棒棒糖，上擂台对决超人强！"


def draws(harness, op):
    return [
        r
        for r in harness.records(op)
        if r.type == "tool_dispatched" and r.tool_name == "generate_image"
    ]


@pytest.mark.parametrize("prompt", [EN, ZH])
def test_three_variants_are_three_calls_approved_once(harness, media, prompt):
    op = harness.prompt(prompt)
    outcome = harness.run(OfflineDirector(), sleep=decide_when_asked(op, ("approved", False)))
    assert outcome == "finished"
    records = harness.records(op)
    asked = [r for r in records if r.type == "approval_requested"]
    assert [r.cost for r in asked] == [30]  # one approval, for the whole set
    assert len([r for r in records if r.type == "approval_decided"]) == 1
    t1s = draws(harness, op)
    assert len(t1s) == 3
    assert all(t.args["variants"] == 3 for t in t1s)
    assert len({t.args["prompt"] for t in t1s}) == 1
    keys = [t.idempotency_key for t in t1s]
    assert len(set(keys)) == 3 and len({render_seed(k) for k in keys}) == 3
    assert sorted(j.key for j in RenderJob.objects.all()) == sorted(keys)
    charges = LedgerEntry.objects.filter(kind="charge")
    assert sorted(c.job_key for c in charges) == sorted(keys)
    assert sum(c.amount for c in charges) == -30
    images = list(Image.objects.all())
    assert len(images) == 3
    assert len({(media / i.path).read_bytes() for i in images}) == 3  # three pictures

    harness.session.refresh_from_db()
    branch = branch_get(session=harness.session)
    [variant_set] = sets_on(branch)
    assert variant_set.size == 3 and len(variant_set.members) == 3
    # a reader sees one panel: the first variant, until another is chosen
    [shown] = panels_on(branch)
    assert shown.entry_id == variant_set.members[0]


def test_a_denied_set_draws_and_charges_nothing(harness, media):
    op = harness.prompt(EN)
    outcome = harness.run(OfflineDirector(), sleep=decide_when_asked(op, ("denied", False)))
    assert outcome == "finished"
    records = harness.records(op)
    assert [r.type for r in records].count("approval_requested") == 1
    assert draws(harness, op) == []
    results = [
        e.message
        for e in harness.entries()
        if e.type == "message" and e.message.role == "tool_result"
    ]
    drawn = [m for m in results if m.tool_name == "generate_image"]
    assert len(drawn) == 3 and all(m.is_error and "denied" in m.content for m in drawn)
    assert not LedgerEntry.objects.filter(kind="charge").exists()


def test_approve_and_auto_covers_the_set_and_later_draws(harness, media):
    op = harness.prompt(EN)
    outcome = harness.run(OfflineDirector(), sleep=decide_when_asked(op, ("approved", True)))
    assert outcome == "finished"
    assert [r.type for r in harness.records(op)].count("approval_requested") == 1
    assert len(draws(harness, op)) == 3
    assert LedgerEntry.objects.filter(kind="charge").count() == 3


def test_list_panels_lists_the_variant_chosen_and_not_the_others(harness, media):
    from jaiweb.commands.variants import variant_choose
    from journal.entries import MessageEntry, ToolResultMessage

    op = harness.prompt(EN)
    harness.run(OfflineDirector(), sleep=decide_when_asked(op, ("approved", False)))
    harness.session.refresh_from_db()
    [variant_set] = sets_on(branch_get(session=harness.session))
    variant_choose(
        session=harness.session,
        entry_id=variant_set.id,
        variant=2,
        expected_leaf_id=harness.session.leaf_id,
    )
    harness.session.refresh_from_db()
    harness.prompt("/panels")
    assert harness.run(OfflineDirector()) == "finished"
    harness.session.refresh_from_db()
    [listed] = [
        e.message
        for e in branch_get(session=harness.session)
        if isinstance(e, MessageEntry)
        and isinstance(e.message, ToolResultMessage)
        and e.message.tool_name == "list_panels"
    ]
    second = variant_set.members[1]
    assert [p["entry_id"] for p in listed.details["panels"]] == [second]
    [panel] = listed.details["panels"]
    assert (panel["variant"], panel["of"]) == (2, 3)
    assert re.findall(r"^\d+\. img_\w+", listed.content, re.M) == [f"1. {panel['image_id']}"]
    assert listed.content.startswith(f"1. {panel['image_id']} (variant 2 of 3, the one chosen): ")
