"""The studio page around the storyboard: the inspector of a turn, "continue from here" on
each strip panel, the prompt's chips and help, labels in the viewer's words, credits rows.

Sessions are written straight to the store (tests/support/storyboard.py).
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import translation

from jaiweb.render.services import PANEL_COST, render_request, wallet_get_or_create
from jaiweb.store.selectors import branch_rows
from jaiweb.studio.labels import people_named, state_value, tool_label
from jaiweb.studio.selectors.strip import strip_view
from journal.entries import AssistantMessage, MessageEntry, ToolCall, ToolResultMessage
from tests.support.spies import calls_of
from tests.support.storyboard import T0, line, rewind, store, turn

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"


def page(client, user, session, language: str = "en") -> str:
    client.force_login(user)
    client.cookies["django_language"] = language
    return client.get(f"/sessions/{session.id}/").content.decode()


def test_the_inspector_shows_a_turn_step_by_step_in_the_viewers_words(client, alice):
    session = store(alice, line(2), "t2f")
    client.force_login(alice)
    body = client.get(f"/sessions/{session.id}/entries/t1f/?from=t1u").content.decode()
    steps = re.findall(r'data-step="(\w+)" data-step-entry="([^"]+)"', body)
    assert steps == [
        ("prompt", "t1u"),
        ("reply", "t1a"),
        ("state", "t1s"),
        ("result", "t1r1"),
        ("result", "t1r2"),
        ("reply", "t1f"),
    ]
    assert (
        "prompt 1" in body and "→ draw a panel" in body and "→ set a character&#x27;s state" in body
    )
    assert 'src="/panels/img_0001"' in body  # the panel as a thumbnail
    assert "img_0001</" not in body.split("<details>")[0]  # its id only in the raw record
    # right after turn 1: the turn's own "continue from here", and one per inner step
    assert 'name="entry_id" value="t1f"' in body and 'data-action="continue-here"' in body
    assert body.count('data-action="continue-step"') == 5
    assert "This is where the session is now" not in body

    zh = client.get(f"/sessions/{session.id}/entries/t1f/?from=t1u", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "→ 画一格" in zh.content.decode() and "→ 设定角色状态" in zh.content.decode()


def test_the_inspector_of_the_leaf_cannot_continue_from_it(client, alice):
    session = store(alice, [*line(2), rewind("b1", "t1f", "t2f")], "b1")
    client.force_login(alice)
    body = client.get(f"/sessions/{session.id}/entries/t1f/?from=t1u").content.decode()
    assert "This is where the session is now" in body  # it rewound to here
    assert re.search(r'data-action="continue-here" disabled', body)


def test_a_denied_call_names_the_person_not_their_id(client, alice):
    entries = turn(1, None, state=False, panel=False)
    call = ToolCall(id="c9", name="generate_image", arguments={"prompt": "x"})
    ask = AssistantMessage(content="drawing", tool_calls=[call], stop_reason="tool_use")
    entries.append(MessageEntry(id="a9", parent_id="t1f", timestamp=T0, message=ask))
    denied = ToolResultMessage(
        tool_call_id="c9",
        tool_name="generate_image",
        content=f"not run: user:{alice.pk} denied it",
        is_error=True,
        details={"code": "denied"},
    )
    entries.append(MessageEntry(id="r9", parent_id="a9", timestamp=T0, message=denied))
    session = store(alice, entries, "r9")
    client.force_login(alice)
    body = client.get(f"/sessions/{session.id}/entries/r9/").content.decode()
    assert f"not run: {alice.username} said no" in body
    assert f"user:{alice.pk}" not in body
    assert people_named(f"by user:{alice.pk} and user:999999") == "by alice and user:999999"


def test_every_strip_panel_continues_from_right_after_it(client, alice):
    # turn 1 draws one panel; turn 2 draws two (a second /draw line); turn 3 draws one
    entries = line(1)
    two = turn(2, "t1f", state=False)
    call = ToolCall(id="c3", name="generate_image", arguments={"prompt": "again"})
    more = AssistantMessage(content="and another", tool_calls=[call], stop_reason="tool_use")
    again = ToolResultMessage(
        tool_call_id="c3", tool_name="generate_image", content="ok", details={"image_id": "img_2b"}
    )
    two[-1:-1] = [
        MessageEntry(id="t2a2", parent_id="t2r2", timestamp=T0, message=more),
        MessageEntry(id="t2r3", parent_id="t2a2", timestamp=T0, message=again),
    ]
    two[-1] = two[-1].model_copy(update={"parent_id": "t2r3"})
    entries.extend([*two, *turn(3, "t2f", state=False)])
    session = store(alice, entries, "t3f")
    strip = strip_view(branch_rows(session=session, lazy=True))
    targets = [(p.image_id, p.continue_id) for p in strip.panels]
    assert targets == [
        ("img_0001", "t1f"),  # right after turn 1
        ("img_0002", "t2r2"),  # right after this panel: another of its turn follows
        ("img_2b", "t2f"),  # right after turn 2
        ("img_0003", None),  # where the session is now
    ]
    # in the tree too: turn 2's node has its two panels, the first with its own "continue"
    body = page(client, alice, session)
    tree = body[body.index('id="tree"') : body.index('id="inspector"')]
    assert re.findall(r'data-action="continue-panel" data-target="([^"]+)"', tree) == ["t2r2"]
    assert 'data-action="continue-turn" data-target="t2f"' in tree


def test_after_a_rewind_the_panel_gone_back_to_is_where_the_session_is(client, alice):
    session = store(alice, [*line(2), rewind("b1", "t1f", "t2f")], "b1")
    strip = strip_view(branch_rows(session=session, lazy=True))
    assert [(p.image_id, p.continue_id) for p in strip.panels] == [("img_0001", None)]
    body = page(client, alice, session)
    assert body.count('data-action="continue-panel"') == 0
    assert 'data-leaf="true"' in body  # turn 1's node: where the session is


def test_the_prompt_has_chips_and_help_with_the_costs(client, alice):
    session = store(alice, line(1), "t1f")
    body = page(client, alice, session)
    for fill in ("/draw ", "/publish ", "/panels", "/say "):
        assert f'data-fill="{fill}"' in body, fill
    assert f"{PANEL_COST} credits</span>" in body  # the chip that spends says how much
    for command in ("/draw", "/state", "/publish", "/panels", "/say"):
        assert f"<code>{command}</code>" in body
    zh = page(client, alice, session, "zh-hans")
    assert "画一格" in zh and f"{PANEL_COST} 积分" in zh and "怎样和导演说话" in zh


def test_defaults_show_in_the_viewers_words_and_stay_stored(client, alice):
    from jaiweb.agent.state import DEFAULT_STATE
    from jaiweb.store.services import session_create

    session = session_create(owner=alice, title="defaults", initial_app_state=DEFAULT_STATE)
    body = page(client, alice, session)
    assert 'placeholder="none"' in body and 'placeholder="calm"' in body
    assert 'value="无"' not in body and 'value="平静"' not in body and ">平静<" not in body
    zh = page(client, alice, session, "zh-hans")
    assert 'placeholder="无"' in zh and 'placeholder="平静"' in zh
    session.refresh_from_db()
    assert session.initial_app_state["characters"]["猪猪侠"]["mood"] == "平静"  # unchanged
    with translation.override("en"):
        assert state_value("无", "buff") == "none" and state_value("发呆", "mood") == "发呆"
        assert tool_label("generate_image") == "draw a panel" and tool_label("x_y") == "x_y"


def test_each_language_is_named_in_itself(client, alice):
    session = store(alice, line(1), "t1f")
    for language in ("en", "zh-hans"):
        body = page(client, alice, session, language)
        names = re.findall(
            r'<option value="[^"]+" lang="[^"]+"(?: selected)?>([^<]+)</option>', body
        )
        assert names == ["English", "简体中文"], language


def test_a_charge_in_the_credit_history_shows_its_panel_and_session(client, alice):
    wallet_get_or_create(user=alice)
    result = render_request(user=alice, key="k_" + "0" * 32, params={"prompt": "a cat"})
    entries = line(1, panel=False, state=False)
    call = ToolCall(id="c1", name="generate_image", arguments={"prompt": "a cat"})
    entries.append(
        MessageEntry(
            id="a1",
            parent_id="t1f",
            timestamp=T0 + timedelta(seconds=1),
            message=AssistantMessage(content="", tool_calls=[call], stop_reason="tool_use"),
        )
    )
    drawn = ToolResultMessage(
        tool_call_id="c1",
        tool_name="generate_image",
        content="panel rendered",
        details={"image_id": result.image_id},
    )
    entries.append(MessageEntry(id="r1", parent_id="a1", timestamp=T0, message=drawn))
    session = store(alice, entries, "r1", title="The cat episode")
    client.force_login(alice)
    body = client.get("/credits/").content.decode()
    row = re.search(r'<tr data-ledger-kind="charge">.*?</tr>', body, re.S).group(0)
    assert "a panel drawn" in row and f"-{PANEL_COST}" in row
    assert f'src="/panels/{result.image_id}"' in row
    assert f'href="/sessions/{session.id}/"' in row and "The cat episode" in row
    assert "k_0" not in row and "render charge" not in row


def test_a_long_branch_with_few_panels_is_not_parsed_whole_for_the_strip(alice, monkeypatch):
    import jaiweb.store.rows as store_rows
    from jaiweb.store.entry_cache import parsed_entries
    from jaiweb.studio.selectors.strip import SCAN_ROWS

    # one panel in turn 1, then 400 turns that draw nothing (800 entries)
    entries = [*line(1), *line(400, start=2, parent="t1f", state=False, panel=False)]
    session = store(alice, entries, entries[-1].id)
    parsed_entries.clear()
    calls = calls_of(monkeypatch, store_rows, "parse_raw")
    strip = strip_view(branch_rows(session=session, lazy=True), session=session)
    assert [p.image_id for p in strip.panels] == ["img_0001"]
    assert strip.panels[0].continue_id == "t1f"
    parsed = sum(len(args[0]) for args, _kwargs in calls)
    assert parsed <= SCAN_ROWS + 40, f"{parsed} of {len(entries)} entries parsed"
