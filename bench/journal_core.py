"""The pure journal core in memory: replay beside a plain dict fold, branch_of and
derive_messages at depth 10,000, cost by depth not session size (docs/PERFORMANCE.md).

    .venv/bin/python bench/journal_core.py
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import figure, header, load, ratio_line, timed
from journal.context import derive_messages
from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    BranchEntry,
    MessageEntry,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from journal.snapshot import (
    SessionSnapshot,
    _replay_stepwise,
    apply_entry,
    branch_app_state,
    replay,
)
from journal.tree import TreeIndex, branch_of

T0 = datetime(2026, 11, 29, tzinfo=UTC)
INITIAL = {"characters": {}, "permission_mode": "ask"}


def build_session(n: int, *, rewind_every: int = 500) -> list:
    """A session of n entries on mostly one line, with a rewind now and then."""
    entries: list = []
    leaf = None
    for i in range(n):
        eid = f"e{i}"
        ts = T0 + timedelta(milliseconds=i)
        if i and i % rewind_every == 0:
            target = f"e{i - rewind_every // 2}"
            entry = BranchEntry(id=eid, parent_id=target, timestamp=ts, from_id=leaf)
        elif i % 10 == 5:
            entry = AppStateEntry(
                id=eid,
                parent_id=leaf,
                timestamp=ts,
                value={"characters": {"猪猪侠": {"buff": f"b{i}"}}},
            )
        elif i % 10 == 3:
            call = ToolCall(id=f"c{i}", name="generate_image", arguments={"prompt": "p"})
            msg = AssistantMessage(content="panel", tool_calls=[call], stop_reason="tool_use")
            entry = MessageEntry(id=eid, parent_id=leaf, timestamp=ts, message=msg)
        elif i % 10 == 4:
            msg = ToolResultMessage(
                tool_call_id=f"c{i - 1}", tool_name="generate_image", content="done"
            )
            entry = MessageEntry(id=eid, parent_id=leaf, timestamp=ts, message=msg)
        else:
            msg = UserMessage(content=f"turn {i}")
            entry = MessageEntry(id=eid, parent_id=leaf, timestamp=ts, message=msg)
        entries.append(entry)
        leaf = eid
    return entries


def chain(n: int, depth: int) -> tuple[list, str]:
    """A session of n entries whose chosen leaf is at the given depth; the rest is side branches."""
    entries = build_session(depth, rewind_every=10**9)
    leaf = entries[-1].id
    for j in range(n - depth):  # side entries hang off random-ish nodes of the main line
        parent = f"e{(j * 7919) % depth}"
        msg = UserMessage(content="side")
        entries.append(
            MessageEntry(
                id=f"s{j}", parent_id=parent, timestamp=T0 + timedelta(seconds=j), message=msg
            )
        )
    return entries, leaf


def dict_walk(by_id: dict, leaf: str) -> list:
    """The floor of any path read: parent links followed through a plain dict, reversed."""
    out = []
    entry_id = leaf
    while entry_id is not None:
        entry = by_id[entry_id]
        out.append(entry)
        entry_id = entry.parent_id
    out.reverse()
    return out


def cpu_timed(fn, repeat: int) -> float:
    """The median CPU time of ``repeat`` calls, in seconds: steadier than wall time on a
    busy box, for work that waits on nothing."""
    runs = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        runs.append(time.process_time() - start)
    return statistics.median(runs)


def dict_fold(entries: list) -> tuple:
    """The floor of any replay: one dict entry per id, the last app state and the leaf
    carried along (no parent check, no branches: wrong on a rewind, and the least a fold
    of these entries can cost)."""
    by_id: dict = {}
    state, leaf = INITIAL, None
    for entry in entries:
        by_id[entry.id] = entry
        if entry.type == "app_state":
            state = entry.value
        leaf = entry.id
    return by_id, state, leaf


def article_replay(entries: list) -> None:
    """The article's applyEntry, transcribed: the whole array copied on every append."""
    snapshot_entries: list = []
    app_state = INITIAL
    leaf = None
    for entry in entries:
        snapshot_entries = [*snapshot_entries, entry]
        if isinstance(entry, AppStateEntry):
            app_state = entry.value
        elif entry.parent_id != leaf:
            app_state = branch_app_state(snapshot_entries, entry.id, INITIAL)
        leaf = entry.id
    return app_state


def main() -> None:
    header(workload="in memory, fixed ids and timestamps; medians of repeated runs")

    big = build_session(100_000)
    runs = []
    for _ in range(7):  # the floor and the product alternate, so both see the same box
        floor = timed(lambda: dict_fold(big), 1)
        ours = timed(lambda: replay(big, INITIAL, T0), 1)
        runs.append((ours, floor))
    t, t_floor = (statistics.median(r[i] for r in runs) for i in (0, 1))
    print(ratio_line("replay, 100,000 entries / dict fold", t * 1e3, t_floor * 1e3, 3))
    figure(
        "replay of 100,000 entries",
        t * 1e3,
        t_floor * 1e3,
        unit="ms",
        floor_name="a dict fold of the same entries",
        target=3,
    )
    t_step = timed(lambda: _replay_stepwise(big, INITIAL, T0), 3)
    print(
        f"  the same entries folded with apply_entry one by one (replay before e268d59): "
        f"{t_step * 1e3:.1f} ms = {t_step / t_floor:.1f}x the floor (target for replay <= 1 s)"
    )
    t_index = timed(lambda: TreeIndex(big), 7)
    print(
        f"  TreeIndex(100,000 entries): {t_index * 1e3:.1f} ms = {t_index / t_floor:.1f}x the floor"
    )

    deep, leaf = chain(100_000, 10_000)
    index = TreeIndex(deep)
    by_id = {e.id: e for e in deep}
    walks = []
    for _ in range(7):  # the floor and the product alternate, so both see the same box
        walks.append(
            (
                cpu_timed(lambda: dict_walk(by_id, leaf), 9),
                cpu_timed(lambda: branch_of(index, leaf), 9),
                cpu_timed(lambda: derive_messages(index, leaf), 9),
            )
        )
    t_walk, t_branch, t_ctx = (statistics.median(w[i] for w in walks) for i in range(3))
    print(
        f"CPU, depth 10,000: dict walk {t_walk * 1e3:.2f} ms (the floor); branch_of "
        f"{t_branch * 1e3:.2f} ms = {t_branch / t_walk:.2f}x; derive_messages "
        f"{t_ctx * 1e3:.2f} ms = {t_ctx / t_walk:.2f}x   (goal <= 2x)"
    )
    for name, value in (("branch_of", t_branch), ("derive_messages", t_ctx)):
        figure(
            f"{name} at depth 10,000 (CPU)",
            value * 1e3,
            t_walk * 1e3,
            unit="ms",
            floor_name="a dict walk from the leaf to the root",
            target=2,
        )
    t_state = timed(lambda: branch_app_state(index, leaf, INITIAL), 21)
    print(f"branch_app_state, depth 10,000:             {t_state * 1000:8.3f} ms   (early exit)")

    small_entries, small_leaf = chain(10_000, 1_000)
    large_entries, large_leaf = chain(100_000, 1_000)
    small, large = TreeIndex(small_entries), TreeIndex(large_entries)
    t_small = timed(lambda: branch_of(small, small_leaf), 101)
    t_large = timed(lambda: branch_of(large, large_leaf), 101)
    print(
        f"branch_of at depth 1,000: 10k session {t_small * 1e6:7.1f} us, 100k session "
        f"{t_large * 1e6:7.1f} us, ratio {t_large / t_small:.2f}   (target <= 1.5)"
    )

    sample = build_session(10_000)
    t_ours = timed(lambda: replay(sample, INITIAL, T0), 5)
    t_article = timed(lambda: article_replay(sample), 3)
    print(
        f"replay of 10,000 entries: ours {t_ours * 1000:.1f} ms, article's applyEntry "
        f"{t_article * 1000:.1f} ms, ratio {t_article / t_ours:.1f}x"
    )

    step = SessionSnapshot.empty(INITIAL, T0)
    for e in sample:
        step = apply_entry(step, e)
    assert step.app_state == replay(sample, INITIAL, T0).app_state == article_replay(sample)
    print(f"({load()} at the end)")


if __name__ == "__main__":
    main()
