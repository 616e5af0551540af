"""A lazily read path (``PathRows``) answers every index as the whole path read at once
does, in whatever order it is walked, across its blocks and the chains it is made of."""

from __future__ import annotations

import random

import pytest

from jaiweb.store.rows import PathRows
from jaiweb.store.selectors import branch_rows
from tests.support.storyboard import line, rewind, store

pytestmark = pytest.mark.django_db


@pytest.fixture
def branched(alice):
    # turns 1-5, back to turn 2, turns 6-8 from there: a path of two chains
    entries = [*line(5), rewind("b1", "t2f", "t5f"), *line(3, start=6, parent="b1")]
    return store(alice, entries, "t8f")


def ids(rows) -> list[str]:
    return [row.entry_id for row in rows]


@pytest.mark.parametrize("block", [3, 7, 256])
def test_any_walk_reads_the_rows_of_the_whole_path(branched, monkeypatch, block):
    monkeypatch.setattr(PathRows, "BLOCK", block)
    whole = ids(branch_rows(session=branched))
    n = len(whole)
    walks = {
        "forward": list(range(n)),
        "backward": list(range(n - 1, -1, -1)),
        "negative": list(range(-1, -n - 1, -1)),
        "shuffled": random.Random(7).sample(range(n), n),
        "to and fro": [i for k in range(n // 2) for i in (k, n - 1 - k)],
    }
    for name, walk in walks.items():
        rows = branch_rows(session=branched, lazy=True)
        assert [rows[i].entry_id for i in walk] == [whole[i] for i in walk], name
    rows = branch_rows(session=branched, lazy=True)
    assert ids(reversed(rows)) == whole[::-1]
    assert ids(rows[2 : n - 2]) == whole[2 : n - 2]
    assert rows[5].entry_id == whole[5] and ids(rows[::3]) == whole[::3]


@pytest.mark.parametrize("index", [10_000, -10_000])
def test_an_index_off_the_path_is_refused(branched, index):
    rows = branch_rows(session=branched, lazy=True)
    rows[-1]  # a block is held: an index off the path is still off it
    with pytest.raises(IndexError):
        rows[index]
    with pytest.raises(IndexError):
        rows[len(rows)]
