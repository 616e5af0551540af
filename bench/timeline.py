"""The timeline (/sessions/<id>/timeline) of a 10,000-entry session: what the server does
(parse the log, fold it, write the JSON) and what the page ships; with ``--browser``, what
Debian's Chromium spends drawing it (the page's own script on a page of the same shape).

    .venv/bin/python bench/timeline.py [--entries 10000] [--browser]

The session is made of turns shaped like the loop's (prompt, tool calls, state, two
results, closing reply: 6 entries, one panel), with a rewind every 12 turns to a turn 5 to
40 turns back, so it has hundreds of branches. No database: the store's part (reading the
rows) is in bench/store.py; parsing is measured here as the store does it, one pydantic
call per entry type over the rows' JSON.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pydantic import TypeAdapter  # noqa: E402

from bench.common import figure, header, load, timed  # noqa: E402
from journal.entries import (  # noqa: E402
    AppStateEntry,
    AssistantMessage,
    BranchEntry,
    CompactionEntry,
    MessageEntry,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    entry_to_dict,
)
from journal.timeline import timeline, timeline_data  # noqa: E402

T0 = datetime(2026, 11, 29, tzinfo=UTC)
INITIAL = {"characters": {"猪猪侠": {}}, "permission_mode": "ask"}
PROMPT = "画一张猪猪侠在武林大会擂台上对决超人强，掏出超级棒棒糖吃下！第 {n} 回合"


def build_session(count: int) -> list:
    entries: list = []
    turn_ends: list[str] = []
    leaf = None
    n = 0
    while len(entries) < count:
        ts = T0 + timedelta(seconds=len(entries))
        if n and n % 12 == 0 and len(turn_ends) > 5:
            back = 5 + (n * 7) % 35
            target = turn_ends[max(0, len(turn_ends) - back)]
            entries.append(BranchEntry(id=f"b{n}", parent_id=target, timestamp=ts, from_id=leaf))
            leaf = f"b{n}"
        p = f"t{n}"
        calls = [
            ToolCall(id="c1", name="set_character_state", arguments={"character": "猪猪侠"}),
            ToolCall(id="c2", name="generate_image", arguments={"prompt": f"scene {n}"}),
        ]
        value = {"characters": {"猪猪侠": {"mood": f"mood {n}"}}, "permission_mode": "ask"}
        entries += [
            MessageEntry(
                id=f"{p}u",
                parent_id=leaf,
                timestamp=ts,
                message=UserMessage(content=PROMPT.format(n=n)),
            ),
            MessageEntry(
                id=f"{p}a",
                parent_id=f"{p}u",
                timestamp=ts,
                message=AssistantMessage(content="好的", tool_calls=calls, stop_reason="tool_use"),
            ),
            AppStateEntry(id=f"{p}s", parent_id=f"{p}a", timestamp=ts, value=value),
            MessageEntry(
                id=f"{p}r1",
                parent_id=f"{p}s",
                timestamp=ts,
                message=ToolResultMessage(
                    tool_call_id="c1", tool_name="set_character_state", content="ok"
                ),
            ),
            MessageEntry(
                id=f"{p}r2",
                parent_id=f"{p}r1",
                timestamp=ts,
                message=ToolResultMessage(
                    tool_call_id="c2",
                    tool_name="generate_image",
                    content="panel rendered",
                    details={"image_id": f"img_{n:05d}"},
                ),
            ),
            MessageEntry(
                id=f"{p}f",
                parent_id=f"{p}r2",
                timestamp=ts,
                message=AssistantMessage(content="画好了。", stop_reason="stop"),
            ),
        ]
        leaf = f"{p}f"
        turn_ends.append(leaf)
        n += 1
    return entries[:count]


_ADAPTERS = {
    cls.model_fields["type"].default: TypeAdapter(list[cls])
    for cls in (MessageEntry, AppStateEntry, CompactionEntry, BranchEntry)
}


def parse_rows(rows: list[tuple[str, str]]) -> list:
    """(type, JSON) rows → entries in order, one pydantic call per type (as store.rows)."""
    groups: dict[str, list[int]] = {}
    for i, (type_, _raw) in enumerate(rows):
        groups.setdefault(type_, []).append(i)
    out: list = [None] * len(rows)
    for type_, positions in groups.items():
        text = "[" + ",".join(rows[i][1] for i in positions) + "]"
        for i, entry in zip(positions, _ADAPTERS[type_].validate_json(text), strict=True):
            out[i] = entry
    return out


PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<link rel="stylesheet" href="/static/studio/studio.css"></head><body>
<div id="timeline" class="timeline" data-position="{position}" data-panel-url="/panels/IMAGE_ID">
<div class="timeline-controls">
<button data-action="timeline-start">s</button><button data-action="timeline-back">b</button>
<button data-action="timeline-play" data-play="p" data-pause="p">p</button>
<button data-action="timeline-forward">f</button><button data-action="timeline-end">e</button>
<input type="range" id="timeline-slider" min="1" max="{total}" value="{position}"></div>
<div class="timeline-now"><strong id="timeline-step"></strong><time id="timeline-time"></time>
<p id="timeline-what"></p></div><ol id="timeline-recent"></ol>
<div id="timeline-tree" class="timeline-tree"><svg id="timeline-edges"></svg></div></div>
<script id="timeline-data" type="application/json">{data}</script>
<script id="timeline-words" type="application/json">{words}</script>
<script>window.__t0 = performance.now();</script>
<script>{script}</script>
<script>window.__drawn = performance.now() - window.__t0;</script>
</body></html>"""

WORDS = {
    "what": {k: k for k in ("you", "call", "reply", "panel", "characters", "rewind", "tool")},
    "step": "Step %(n)s of %(total)s",
    "tags": {},
    "tools": {},
}


def browser_figures(data_text: str, total: int, repeat: int) -> None:
    from playwright.sync_api import sync_playwright

    # the script inline, so the figure is its own run, not its fetch through the route
    script = (ROOT / "static/studio/timeline.js").read_text()
    page_html = PAGE.format(
        position=total, total=total, data=data_text, words=json.dumps(WORDS), script=script
    ).encode()

    def serve(route):
        path = route.request.url.split("/", 3)[3]
        if path.startswith("static/"):
            file = ROOT / path
            kind = "text/css" if path.endswith(".css") else "text/javascript"
            return route.fulfill(body=file.read_bytes(), content_type=kind)
        if path.startswith("panels/"):
            return route.fulfill(status=404, body=b"")
        return route.fulfill(body=page_html, content_type="text/html; charset=utf-8")

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.route("http://bench.invalid/**", serve)
        firsts = []
        for _ in range(repeat):
            page.goto("http://bench.invalid/timeline")
            firsts.append(page.evaluate("window.__drawn"))
        print(
            f"  page script, first draw at the end (parse the JSON, draw the cards in view): "
            f"{statistics.median(firsts):.0f} ms (median of {repeat} loads)"
        )
        figures = page.evaluate(
            """(total) => {
                const click = (a) => document.querySelector(`[data-action="${a}"]`).click();
                const ms = (fn) => {
                    const t = performance.now();
                    fn();
                    return performance.now() - t;
                };
                const jumps = [], steps = [];
                for (let r = 0; r < 5; r++) {
                    jumps.push(ms(() => click("timeline-start")));
                    jumps.push(ms(() => click("timeline-end")));
                }
                click("timeline-start");
                for (let i = 0; i < 300; i++) steps.push(ms(() => click("timeline-forward")));
                const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
                const cards = document.querySelectorAll("#timeline-tree .tl-node").length;
                return {jump: med(jumps), jumpMax: Math.max(...jumps), step: med(steps),
                        stepMax: Math.max(...steps), cards};
            }""",
            total,
        )
        print(
            f"  jump start ↔ end: median {figures['jump']:.1f} ms, "
            f"max {figures['jumpMax']:.1f} ms; one step forward: median {figures['step']:.2f} ms, "
            f"max {figures['stepMax']:.1f} ms ({figures['cards']} cards in the page); "
            "script time only, layout and paint come after"
        )
        browser.close()


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    args.add_argument("--entries", type=int, default=10_000)
    args.add_argument("--repeat", type=int, default=5)
    args.add_argument("--browser", action="store_true", help="also draw it in Chromium")
    ns = args.parse_args()
    header(workload=f"a session of {ns.entries} entries, turns of 6, a rewind every 12 turns")
    entries = build_session(ns.entries)
    rows = [(e.type, json.dumps(entry_to_dict(e), ensure_ascii=False)) for e in entries]
    parsed = parse_rows(rows)
    assert parsed == entries
    line = timeline(parsed, INITIAL)
    data_text = json.dumps(timeline_data(line), ensure_ascii=False, separators=(",", ":"))
    lanes = 1 + max(n.lane for n in line.nodes)
    depth = 1 + max(n.depth for n in line.nodes)
    print(
        f"  {len(line.steps)} steps, {len(line.nodes)} nodes in {lanes} lanes "
        f"(deepest {depth}), {len(line.panels)} panels"
    )
    t_parse = timed(lambda: parse_rows(rows), ns.repeat)
    t_fold = timed(lambda: timeline(parsed, INITIAL), ns.repeat)
    # the floor: the least a fold of the log can do, look at each entry and its parent once
    t_floor = timed(lambda: {e.id: (e.parent_id, e.type) for e in parsed}, ns.repeat)
    t_json = timed(
        lambda: json.dumps(timeline_data(line), ensure_ascii=False, separators=(",", ":")),
        ns.repeat,
    )
    print(f"  parse the rows' JSON: {t_parse * 1000:.0f} ms (median of {ns.repeat})")
    print(
        f"  timeline(): {t_fold * 1000:.0f} ms = {t_fold / t_floor:.0f}x a dict fold of the "
        f"entries' ids and parents ({t_floor * 1000:.1f} ms, the floor); "
        f"timeline_data + json.dumps: {t_json * 1000:.0f} ms"
    )
    figure(
        f"timeline fold of {len(parsed):,} entries",
        t_fold * 1000,
        t_floor * 1000,
        unit="ms",
        floor_name="a dict of the entries' ids and parents",
    )
    raw = data_text.encode()
    print(
        f"  shipped: {len(raw) / 1024:.0f} KiB of JSON "
        f"({len(gzip.compress(raw)) / 1024:.0f} KiB gzipped)"
    )
    if ns.browser:
        browser_figures(data_text, len(line.steps), ns.repeat)
    print(f"{load()} at the end")


if __name__ == "__main__":
    main()
