"""The timeline in Chromium: the whole journal replayed as a slider over the tree.

The offline director plays the story: 猪猪侠 steps into the ring (a narration), eats the
laxative (a panel of the stomach ache), the user goes back to right after the first turn
and feeds him the lollipop instead (功夫大师). The timeline is then moved by the browser
only — a drag of the slider, its keys, the step buttons, the page's arrows — and must
show the tree growing: one turn at first, the laxative branch active before the rewind,
left visible but abandoned after it, and at the end the studio's own tree. The database is
read to know when a run is over and where the rewind is in the log.
"""

from __future__ import annotations

import re

import pytest

from tests.support.browser import (
    branch_entry_ids,
    node_of,
    run_with_approval,
    send_prompt,
    shot,
    signup,
    tree_turns,
    unique,
    wait_run_finished,
    wait_tree_has,
    wait_until,
    wait_ws_open,
)
from tests.support.stories import LAXATIVE, LOLLIPOP

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("postgres"),  # on the deployment's stack (docs/TESTING.md)
]

OPENING = "/say 武林大会开幕，猪猪侠走上擂台"
SESSION_URL = re.compile(r"/sessions/([^/]+)/$")


def timeline_state(page) -> dict:
    """What the timeline shows: its position, the cards drawn, what happened at the step."""
    return page.evaluate(
        """() => ({
            position: Number(document.getElementById("timeline").dataset.position),
            slider: Number(document.getElementById("timeline-slider").value),
            total: Number(document.getElementById("timeline-slider").max),
            step: document.getElementById("timeline-step").textContent,
            what: document.getElementById("timeline-what").textContent,
            kind: document.getElementById("timeline-what").dataset.what,
            nodes: [...document.querySelectorAll("#timeline-tree .tl-node")]
                .filter(e => e.checkVisibility())  // drawn, not merely in the page
                .map(e => ({
                    id: e.dataset.entryId, parent: e.dataset.parentId || null,
                    lane: Number(e.dataset.lane), depth: Number(e.dataset.depth),
                    active: e.dataset.active === "true", here: e.dataset.here === "true",
                    label: e.querySelector(".tl-label").textContent,
                    thumbs: [...e.querySelectorAll("img.tl-thumb")]
                        .filter(t => t.checkVisibility()).length,
                })),
        })"""
    )


def wait_position(page, position: int) -> dict:
    wait_until(
        lambda: timeline_state(page)["position"] == position, 10, f"the timeline at {position}"
    )
    return timeline_state(page)


def ids(state: dict, **where) -> list[str]:
    return [n["id"] for n in state["nodes"] if all(n[k] == v for k, v in where.items())]


def test_the_slider_replays_the_story_and_the_tree_grows(shared_studio, page):
    from jaiweb.store.models import Entry

    base = shared_studio.url
    signup(page, base, unique("e2e_"))
    page.locator('input[name="title"]').fill("猪猪侠的时间线")
    page.locator('textarea[name="characters"]').fill("猪猪侠")
    page.locator('[data-action="create-session"]').click()
    page.wait_for_url(SESSION_URL)
    session_id = SESSION_URL.search(page.url).group(1)
    wait_ws_open(page)

    send_prompt(page, OPENING)  # narration only: free, nothing to approve
    wait_until(lambda: branch_entry_ids(session_id), 10, "the opening prompt to be written")
    wait_run_finished(session_id)
    first = branch_entry_ids(session_id)
    wait_tree_has(page, first)
    run_with_approval(page, session_id, LAXATIVE)  # the stomach-ache panel
    second = branch_entry_ids(session_id)[len(first) :]
    # back to right after the opening, and the lollipop instead
    node_of(page, first[0]).locator("xpath=ancestor::li[1]").locator(
        ':scope > .card [data-action="continue-turn"]'
    ).click()
    rewind = wait_until(
        lambda: Entry.objects.filter(session_id=session_id, type="branch").first(), 10, "the rewind"
    )
    # the page knows it (the prompt is sent for that leaf), or the prompt is refused as stale
    page.locator(f'#prompt-leaf[value="{rewind.entry_id}"]').wait_for(state="attached")
    run_with_approval(page, session_id, LOLLIPOP)
    third = branch_entry_ids(session_id)[len(first) + 1 :]  # after the rewind's entry
    studio_tree = tree_turns(page)
    total = Entry.objects.filter(session_id=session_id).count()
    rewind_at = rewind.seq

    # one link from the session page; it opens at the end: the tree as it is now
    page.locator('[data-action="open-timeline"]').click()
    page.wait_for_url(re.compile(r"/timeline"))
    end = wait_position(page, total)
    assert end["slider"] == end["total"] == total
    assert sorted(ids(end)) == sorted(t["first"] for t in studio_tree)
    assert ids(end, active=True) == [t["first"] for t in studio_tree if t["active"]]
    assert ids(end, here=True) == [third[0]]
    opening, laxative, lollipop = first[0], second[0], third[0]
    by_id = {n["id"]: n for n in end["nodes"]}
    assert (by_id[laxative]["parent"], by_id[lollipop]["parent"]) == (opening, opening)
    assert (by_id[laxative]["lane"], by_id[lollipop]["lane"]) == (0, 1)  # a fork: 2 lanes
    assert by_id[laxative]["thumbs"] == by_id[lollipop]["thumbs"] == 1
    assert by_id[lollipop]["label"] == LOLLIPOP and by_id[laxative]["label"] == LAXATIVE
    thumbs = page.locator("#timeline-tree img.tl-thumb")
    wait_until(
        lambda: thumbs.evaluate_all("els => els.every(e => e.complete && e.naturalWidth > 0)"),
        10,
        "the panels' thumbnails",
    )
    shot(page, "timeline-end")

    # a drag of the slider from its start to its end: the tree only grows on the way
    slider = page.locator("#timeline-slider")
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 2, y)
    page.mouse.down()
    seen = [wait_position(page, 1)]
    for k in range(1, 11):
        page.mouse.move(box["x"] + 2 + (box["width"] - 4) * k / 10, y, steps=3)
        page.wait_for_function(
            "p => Number(document.getElementById('timeline').dataset.position) >= p",
            arg=seen[-1]["position"],
        )
        seen.append(timeline_state(page))
    page.mouse.up()
    assert seen[0]["position"] == 1 and seen[-1]["position"] == total
    positions = [s["position"] for s in seen]
    assert positions == sorted(positions) and len(set(positions)) > 5
    counts = [len(s["nodes"]) for s in seen]
    assert counts == sorted(counts) and counts[0] == 1 and counts[-1] == 3

    # the slider's own keys: Home is the first entry, the opening prompt, and nothing else
    slider.focus()
    page.keyboard.press("Home")
    start = wait_position(page, 1)
    assert ids(start) == [opening] and ids(start, here=True) == [opening]
    assert start["kind"] == "you" and "武林大会开幕" in start["what"]
    assert start["step"] == f"Step 1 of {total}"
    wait_until(
        lambda: page.evaluate("location.search") == "?at=1", 5, "the address to name the step"
    )

    # → up to just before the rewind: the laxative branch is the active one, with its panel
    for _ in range(rewind_at - 2):
        page.keyboard.press("ArrowRight")
    before = wait_position(page, rewind_at - 1)
    assert ids(before) == [opening, laxative]
    assert ids(before, active=True) == [opening, laxative]
    assert ids(before, here=True) == [laxative]
    assert [n["thumbs"] for n in before["nodes"]] == [0, 1]

    # one step on (the step button): the rewind — the laxative branch stays, abandoned
    page.locator('[data-action="timeline-forward"]').click()
    rewound = wait_position(page, rewind_at)
    assert rewound["kind"] == "rewind" and "武林大会开幕" in rewound["what"]
    assert ids(rewound) == [opening, laxative]
    assert ids(rewound, active=True) == [opening] and ids(rewound, here=True) == [opening]
    shot(page, "timeline-rewind")

    # the page's arrows (focus off the slider): the lollipop's prompt opens a second lane
    page.locator("#timeline-tree").focus()
    page.keyboard.press("ArrowRight")
    fork = wait_position(page, rewind_at + 1)
    assert ids(fork) == [opening, laxative, lollipop]
    assert ids(fork, active=True) == [opening, lollipop]
    assert [n["lane"] for n in fork["nodes"]] == [0, 0, 1]
    page.keyboard.press("ArrowLeft")
    assert ids(wait_position(page, rewind_at)) == [opening, laxative]

    # play runs to the end by itself; the end is the tree the studio draws
    page.locator('[data-action="timeline-play"]').click()
    done = wait_position(page, total)
    wait_until(
        lambda: (
            page.locator('[data-action="timeline-play"]').get_attribute("aria-pressed") == "false"
        ),
        10,
        "play to stop at the end",
    )
    assert done["nodes"] == end["nodes"]
    page.locator('[data-action="timeline-start"]').click()
    assert len(wait_position(page, 1)["nodes"]) == 1
    page.locator('[data-action="timeline-end"]').click()
    assert wait_position(page, total)["nodes"] == end["nodes"]


TURNS = 1667  # of 6 entries, and a rewind every 50: 10,035 entries


def _long_session(owner):
    """~10,000 entries written straight to the store: turns shaped like the loop's, and
    every 50 turns a rewind to 10 turns back, so the tree has branches all the way down."""
    from tests.support.storyboard import rewind, store, turn

    entries: list = []
    parent = None
    for n in range(1, TURNS + 1):
        if n % 50 == 0:
            entries.append(rewind(f"b{n}", f"t{n - 10}f", parent, n))
            parent = f"b{n}"
        entries.extend(turn(n, parent))
        parent = entries[-1].id
    return store(owner, entries, parent, title="long"), len(entries)


def cards_in_view(page) -> list[str]:
    """The cards in the page that lie within the tree's scrolled view."""
    return page.evaluate(
        """() => {
            const view = document.getElementById("timeline-tree").getBoundingClientRect();
            return [...document.querySelectorAll("#timeline-tree .tl-node")]
                .filter(e => {
                    const r = e.getBoundingClientRect();
                    return r.right > view.left && r.left < view.right
                        && r.bottom > view.top && r.top < view.bottom;
                })
                .map(e => e.dataset.entryId);
        }"""
    )


def test_a_session_of_10000_entries_draws_only_the_cards_in_view(shared_studio, page):
    from tests.support.browser import PASSWORD, login, user_for_the_studio

    name = unique("long_")
    session, total = _long_session(user_for_the_studio(name, PASSWORD))
    assert total >= 10_000
    login(page, shared_studio.url, name)
    page.goto(f"{shared_studio.url}/sessions/{session.id}/timeline")
    end = wait_position(page, total)
    in_page = page.locator("#timeline-tree .tl-node")
    assert 0 < in_page.count() <= 80, f"a few dozen cards, not {TURNS}"
    last, before = f"t{TURNS}u", f"t{TURNS - 1}u"
    assert ids(end, here=True) == [last] and last in cards_in_view(page)
    assert {last, before} <= set(ids(end, active=True))

    # Home: the first turn, alone, in view — the page scrolled the tree to it
    page.locator("#timeline-tree").focus()
    page.keyboard.press("Home")
    start = wait_position(page, 1)
    assert ids(start) == ["t1u"] and cards_in_view(page) == ["t1u"]

    # the end again, then scroll the tree to its top: the first turns are drawn there
    page.keyboard.press("End")
    wait_position(page, total)
    page.locator("#timeline-tree").evaluate("e => { e.scrollTop = 0; e.scrollLeft = 0; }")
    wait_until(lambda: "t1u" in cards_in_view(page), 10, "the root's card once scrolled to")
    assert in_page.count() <= 80
    # down the tree to depth 40: a rewind 10 turns back opened a lane there, hanging from
    # turn 40 (cards 118 px apart)
    page.locator("#timeline-tree").evaluate("e => { e.scrollTop = 39 * 118; }")
    wait_until(lambda: "t50u" in cards_in_view(page), 10, "the first fork once scrolled to")
    assert "t1u" not in cards_in_view(page) and in_page.count() <= 80
    first_fork = page.locator('#timeline-tree .tl-node[data-entry-id="t50u"]')
    assert first_fork.get_attribute("data-lane") == "1"
    assert first_fork.get_attribute("data-parent-id") == "t40u"
    shot(page, "timeline-long")
