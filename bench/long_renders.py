"""Long renders hold nothing: an embedded studio drawing ten panels at once on a ComfyUI
whose every render takes ``--seconds``, and another user's chat prompt sent meanwhile.

Prints the chat's time from accepted to finished with the renders running, beside its
floor (the same chat on the same studio with nothing else running), and checks that every
render ran exactly once on the server (none was taken over while it ran) and was charged
once. The ComfyUI is the tests' loopback server (tests/support/comfyui_server.py), which
sleeps for the render time. docs/PERFORMANCE.md ("A chat during long renders").

    .venv/bin/python bench/long_renders.py                # 10 renders of 30 s
    .venv/bin/python bench/long_renders.py --renders 4 --seconds 5
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import figure, header, parser, scratch_django  # noqa: E402


def wait(predicate, timeout: float, what: str, every: float = 0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(every)
    raise SystemExit(f"timed out after {timeout:.0f} s waiting for {what}")


def chat_seconds(user, title: str) -> float:
    """Seconds from a chat prompt's acceptance to its operation finishing."""
    from jaiweb.commands.sessions import prompt_submit
    from jaiweb.store.models import Operation
    from jaiweb.store.services import session_create

    session = session_create(owner=user, title=title)
    started = time.perf_counter()
    op = prompt_submit(session=session, user=user, text="/say 你好").operation_id
    wait(lambda: Operation.objects.filter(pk=op, outcome="completed").exists(), 120, "the chat")
    return time.perf_counter() - started


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--renders", type=int, default=10, help="panels drawn at once")
    p.add_argument("--seconds", type=float, default=30.0, help="each render's time on the GPU")
    p.add_argument("--chats", type=int, default=3, help="chat prompts timed, each phase")
    args = p.parse_args()
    header(
        args,
        f"{args.renders} renders of {args.seconds:g} s at once on a loopback ComfyUI, embedded "
        f"studio on SQLite (4 workers); {args.chats} chats timed alone, then during them",
    )
    from tests.support.comfyui_server import FakeComfyUI

    with scratch_django("sqlite", args, prefix="jaiweb-long-renders-") as scratch:
        server = FakeComfyUI(scratch.tmp / "comfyui-output", workers=args.renders)
        server.run_seconds = args.seconds
        server.start()
        try:
            run(args, scratch, server)
        finally:
            server.stop()


def run(args, scratch, server) -> None:
    from django.contrib.auth import get_user_model

    from jaiweb.agent.state import DEFAULT_STATE
    from jaiweb.commands.sessions import prompt_submit
    from jaiweb.render.backends.comfyui import prompt_id_for
    from jaiweb.render.models import LedgerEntry
    from jaiweb.render.services import credits_grant
    from jaiweb.store.models import Operation
    from jaiweb.store.selectors import operation_records
    from jaiweb.store.services import session_create
    from journal.records import ToolDispatched
    from tests.support.children import studio

    users = get_user_model().objects
    artist = users.create_user("artist", password="artist-pass-1")
    reader = users.create_user("reader", password="reader-pass-1")
    credits_grant(user=artist, amount=10 * args.renders)
    child = studio(
        scratch.database_url,
        env={
            "JAIWEB_IMAGE_BACKEND": "comfyui",
            "JAIWEB_COMFYUI_URL": server.url,
            "JAIWEB_MEDIA_ROOT": str(scratch.tmp / "media"),
        },
    )
    try:
        child.wait_for("listening on", 60)
        floor = [chat_seconds(reader, f"alone {i}") for i in range(args.chats)]
        auto = {**DEFAULT_STATE, "permission_mode": "auto"}
        ops = []
        for i in range(args.renders):
            session = session_create(owner=artist, title=f"render {i}", initial_app_state=auto)
            ops.append(
                prompt_submit(session=session, user=artist, text=f"/draw 第{i}格").operation_id
            )
        wait(lambda: len(server.executions) == args.renders, 120, "every render on the GPU")
        during = [chat_seconds(reader, f"during {i}") for i in range(args.chats)]
        still = Operation.objects.filter(pk__in=ops, outcome__isnull=True).count()
        wait(
            lambda: Operation.objects.filter(pk__in=ops, outcome="completed").count() == len(ops),
            args.seconds * 3 + 120,
            "the renders to finish",
        )
        keys = [
            r.idempotency_key
            for op in ops
            for r in operation_records(operation_id=op)
            if isinstance(r, ToolDispatched)
        ]
        runs = [server.executions[prompt_id_for(k)] for k in keys]
        charges = LedgerEntry.objects.filter(kind="charge").count()
    finally:
        child.stop()
    print(f"chat, nothing else running: median {statistics.median(floor):.3f} s  {floor}")
    print(
        f"chat, {still} of {args.renders} renders running: median "
        f"{statistics.median(during):.3f} s, max {max(during):.3f} s  {during}"
    )
    print(f"renders: runs on the server per key {runs}; charges {charges} (expected {len(ops)})")
    figure(
        f"a chat prompt while {args.renders} renders of {args.seconds:g} s run",
        statistics.median(during),
        statistics.median(floor),
        unit="s",
        floor_name="the same chat with nothing else running",
    )
    if runs != [1] * len(ops) or charges != len(ops):
        raise SystemExit("a render ran twice or was charged twice")


if __name__ == "__main__":
    main()
