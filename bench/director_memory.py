"""The offline director's memory of a conversation: what it reads again at every model turn
(the prompts, the panels drawn, the characters named), beside a walk over the same messages
that reads each one's text and nothing more (docs/PERFORMANCE.md).

    .venv/bin/python bench/director_memory.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jaiweb.settings")  # no database is opened

import django

django.setup()

from bench.common import figure, header, ratio_line  # noqa: E402
from jaiweb.agent.providers.offline.memory import remember  # noqa: E402
from journal.entries import (  # noqa: E402
    AssistantMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

STATE = {"characters": {"猪猪侠": {}, "超人强": {}}, "permission_mode": "auto", "language": "zh"}
RUNS, READS = 7, 200


def conversation(turns: int, name: str = "擂台") -> list:
    """``turns`` drawn panels as the loop's context holds them: a prompt, the director's
    call, the panel's result and the closing reply (``name`` makes its prompts its own)."""
    messages: list = []
    for n in range(turns):
        call = f"call_{n:04d}"
        prompt = f"猪猪侠和超人强在{name}上，第{n + 1}回合（共{turns}回合），超人强被打飞"
        messages += [
            UserMessage(content=f"/draw {prompt}"),
            AssistantMessage(
                content="画一格分镜。",
                tool_calls=[ToolCall(id=call, name="generate_image", arguments={"prompt": prompt})],
                stop_reason="tool_use",
            ),
            ToolResultMessage(
                tool_call_id=call,
                tool_name="generate_image",
                content="drawn",
                details={"image_id": f"img_{n:020d}"},
            ),
            AssistantMessage(content="画好了。", stop_reason="stop"),
        ]
    return messages


def walk(messages: list) -> int:
    """The floor: every message's text read once."""
    return sum(len(getattr(m, "content", "")) for m in messages)


def per_read(read) -> float:
    """The median milliseconds of one ``read`` over RUNS runs of READS calls."""
    runs = []
    for _ in range(RUNS):
        started = time.perf_counter()
        for _ in range(READS):
            read()
        runs.append((time.perf_counter() - started) / READS * 1e3)
    return statistics.median(runs)


def main() -> None:
    header(workload=f"in memory; medians of {RUNS} runs of {READS} reads")
    remember(conversation(2, "操场"), STATE)  # the process's first read: imports, patterns
    for turns in (24, 100):
        firsts = []  # the first turn of conversations this process never read
        for n in range(RUNS):
            fresh = conversation(turns, f"擂台{n}")
            started = time.perf_counter()
            remember(fresh, STATE)
            firsts.append((time.perf_counter() - started) * 1e3)
        first = statistics.median(firsts)
        messages = conversation(turns)
        remember(messages, STATE)
        ours = per_read(lambda messages=messages: remember(messages, STATE))
        floor = per_read(lambda messages=messages: walk(messages))
        print(ratio_line(f"memory of {turns} drawn turns / a walk", ours, floor, None))
        print(f"  a first read, before any of its prompts' mentions were kept: {first:.3f} ms")
        figure(
            f"the offline director's memory of {turns} drawn turns, a model turn",
            ours,
            floor,
            unit="ms",
            floor_name="a walk reading each message's text",
        )


if __name__ == "__main__":
    main()
