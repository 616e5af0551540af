"""The article's whole story, played by the offline director through the real runtime."""

from __future__ import annotations

import pytest

from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.agent.tools.panels import panels_on
from jaiweb.render.models import RenderJob
from jaiweb.render.selectors import wallet_balance
from jaiweb.store.selectors import app_state_at, branch_get, children_rows
from jaiweb.store.services import rewind_append
from journal.entries import AssistantMessage, MessageEntry
from tests.support.runs import decide_when_asked
from tests.support.stories import FINISHER, LAXATIVE, LOLLIPOP

pytestmark = pytest.mark.django_db


def play(harness, prompt: str) -> str:
    op = harness.prompt(prompt)
    outcome = harness.run(OfflineDirector(), sleep=decide_when_asked(op, ("approved", False)))
    assert outcome == "finished"
    return op


def hero(harness) -> dict:
    harness.session.refresh_from_db()
    return app_state_at(session=harness.session)["characters"]["猪猪侠"]


def test_lollipop_side_story_rewind_and_the_finishing_move(harness):
    play(harness, LOLLIPOP)
    assert hero(harness)["skill"] == "降龙十巴掌"
    harness.session.refresh_from_db()
    e2 = harness.session.leaf_id  # the director's closing words after the first panel

    play(harness, LAXATIVE)
    assert hero(harness)["buff"].startswith("拉肚子虚脱") and hero(harness)["skill"] == "无"
    harness.session.refresh_from_db()
    side_story_tip = harness.session.leaf_id

    rewind = rewind_append(session_id=harness.session.id, target_id=e2)
    assert rewind.app_state["characters"]["猪猪侠"]["buff"] == "超级棒棒糖(功夫大师)"

    play(harness, FINISHER)
    harness.session.refresh_from_db()
    branch = branch_get(session=harness.session)
    panels = panels_on(branch)
    assert len(panels) == 2  # the lollipop panel and the finishing move, not the side story
    final = RenderJob.objects.get(result__image_id=panels[-1]["image_id"])
    drawn = final.params["characters"]["猪猪侠"]
    assert drawn["buff"] == "超级棒棒糖(功夫大师)" and drawn["skill"] == "降龙十巴掌"
    assert "拉肚子" not in str(final.params)  # the side story's state never leaks
    assert hero(harness)["skill"] == "降龙十巴掌"

    # the side story is still in the tree, one click away
    assert side_story_tip not in {e.id for e in branch}
    side = branch_get(session=harness.session, leaf_id=side_story_tip)
    assert "拉肚子" in str(app_state_at(session=harness.session, leaf_id=side_story_tip))
    assert len(panels_on(side)) == 2
    forks = [r.entry.id for r in children_rows(session=harness.session, entry_id=e2)]
    assert len(forks) == 2  # the side story's prompt and the rewind

    # three panels drawn, three charged; every reply labelled as the offline director
    assert wallet_balance(user=harness.session.owner) == 100 - 3 * 10
    replies = [
        e.message
        for e in side + branch
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
    ]
    assert replies and all(m.content.startswith("[离线导演]") for m in replies)
