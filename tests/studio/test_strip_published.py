"""The strip marks a panel published when its branch published it after it was drawn: over
a short stretch by reading the rows, over a long one by a search of the session's results
by tool name (``tool_results_at``), and only the results on the branch count."""

from __future__ import annotations

from datetime import timedelta

import pytest

from jaiweb.store.selectors import branch_rows
from jaiweb.studio.selectors.strip import SCAN_ROWS, strip_view
from journal.entries import MessageEntry, ToolResultMessage
from tests.support.storyboard import T0, line, store

pytestmark = pytest.mark.django_db


def published(id_: str, parent: str, image: str) -> MessageEntry:
    result = ToolResultMessage(
        tool_call_id=f"c_{id_}",
        tool_name="publish_panel",
        content="published",
        details={"image_id": image, "post_id": f"post_{image}"},
    )
    return MessageEntry(id=id_, parent_id=parent, timestamp=T0 + timedelta(days=1), message=result)


@pytest.mark.parametrize("quiet_turns", [1, SCAN_ROWS])  # read as rows; past the scan: searched
def test_a_panel_published_on_its_branch_is_marked_and_one_published_elsewhere_is_not(
    alice, quiet_turns
):
    entries = [
        *line(2),  # img_0001 and img_0002
        published("pub1", "t2f", "img_0001"),  # on the branch: continues t2f's chain
        published("pub2_elsewhere", "t2f", "img_0002"),  # a side branch of its own
    ]
    entries += line(quiet_turns, start=3, parent="pub1", state=False, panel=False)
    session = store(alice, entries, entries[-1].id)
    rows = branch_rows(session=session, lazy=True)
    after_first_panel = len(rows) - rows.position("t1r2")
    assert (after_first_panel > SCAN_ROWS) == (quiet_turns == SCAN_ROWS)  # which way is tried
    strip = strip_view(rows, session=session)
    assert [(p.image_id, p.published) for p in strip.panels] == [
        ("img_0001", True),
        ("img_0002", False),
    ]
