"""A panel put on a branch from another (a cherry-pick's ``place_panel``) is a panel of the
strip, of the export and of the tree's node, marked as picked, never as drawn."""

from __future__ import annotations

import pytest
from django.utils import timezone

from jaiweb.store.selectors import branch_rows, entry_get
from jaiweb.studio import tree
from jaiweb.studio.selectors.strip import SCAN_ROWS, strip_panels, strip_view
from journal.branches import cherry_pick_entries
from tests.support.storyboard import line, rewind, store

pytestmark = pytest.mark.django_db


def _picked(alice, quiet_turns: int):
    """Turn 1 draws img_0001, turn 2 img_0002; a rewind to turn 1, turn 2's panel placed
    there, then ``quiet_turns`` turns that draw nothing."""
    entries = [*line(2), rewind("b1", "t1f", "t2f")]
    session = store(alice, entries, "b1")
    panel = entry_get(session=session, entry_id="t2r2").entry
    entries += cherry_pick_entries(
        panel, leaf_id="b1", ids=("p_call", "p_res", "p_state"), now=timezone.now()
    )
    entries += line(quiet_turns, start=3, parent="p_res", state=False, panel=False)
    return store(alice, entries, entries[-1].id, title="picked")


@pytest.mark.parametrize("quiet_turns", [1, SCAN_ROWS])  # near the leaf; past the scan
def test_the_strip_shows_a_picked_panel_marked_as_picked(alice, quiet_turns):
    session = _picked(alice, quiet_turns)
    rows = branch_rows(session=session, lazy=True)
    strip = strip_view(rows, session=session)
    assert [(p.image_id, p.picked) for p in strip.panels] == [
        ("img_0001", False),
        ("img_0002", True),
    ]
    assert strip.panels[1].entry_id == "p_res"
    assert [p.picked for p in strip_panels(branch_rows(session=session))] == [False, True]


def test_the_tree_draws_the_placement_as_a_picked_panel(alice):
    session = _picked(alice, 1)
    [*_, placed, quiet] = tree.active_path_view(session)
    assert placed.tag == "picked" and placed.panels == (("img_0002", "p_res"),)
    assert not placed.state_changed  # its state was not taken
    assert quiet.tag == "you" and quiet.panels == ()
