"""The crash matrix on ComfyUI: `manage.py studio` is killed with SIGKILL at a point of a
panel's render, ComfyUI has one of three fates while the studio is down, and a second
studio recovers. Every case ends with one charge under the call's key, the picture ComfyUI
made as the panel, the session's operation completed, nothing for a person in the inbox,
and a clean journal.

The points, as the journal and ComfyUI see them:

* ``after_t1`` (``JAIWEB_CRASH_AT``): the call's T1 is durable and nothing was sent, so
  ComfyUI never heard of the prompt.
* ``during_tool``: killed from outside while the tool waits for ComfyUI, which holds the
  prompt (its run is held at the server's gate): the external call is sent and its answer
  not back, as docs/ARCHITECTURE.md §11 defines the point. The render job under the key is in
  progress, nothing is charged.
* ``during_tool_stored`` (``JAIWEB_PAUSE_AT=during_tool`` and a SIGKILL while paused):
  where the product's own ``during_tool`` fault point sits for ``generate_image``, after
  the render service stored and charged the panel, before the tool's answer is used.
* ``after_tool_effect`` (``JAIWEB_CRASH_AT``): the tool returned; the render is done,
  stored under the key and charged, and its result (T2) is not written.

The three fates of ComfyUI during our downtime, and what each means at each point:

* (a) ``up``: ComfyUI stays up. At ``during_tool`` the prompt is still running when the
  second studio takes the render over; it waits for it, and the gate opens only then.
* (b) ``restarted_done``: ComfyUI restarts after the prompt is done, so its history and
  queue are empty and only the output file is left. At ``during_tool`` the prompt finishes
  while the studio is down, then ComfyUI restarts. At ``after_t1`` there is no prompt to
  be done: ComfyUI restarts with nothing of ours, and the render is queued once.
* (c) ``restarted_lost``: ComfyUI restarts and the prompt's work is lost. At
  ``during_tool`` it restarts while the prompt is still running, which loses it without a
  trace; recovery finds it nowhere and queues it again under the same id, so ComfyUI
  executes it twice for one charge. At ``after_t1`` ComfyUI restarts and empties its
  output folder, with nothing of ours in it. Where the render is done and stored
  (``during_tool_stored``, ``after_tool_effect``), ComfyUI restarts and empties its output
  folder too; the panel stored under the key decides, and ComfyUI is not asked again.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.commands.inbox import inbox_items
from jaiweb.render.backends.comfyui import output_filename, prompt_id_for
from jaiweb.render.models import Image, LedgerEntry, RenderJob
from jaiweb.store.models import Entry, Operation
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_accept, session_create
from tests.support import comfyui_server
from tests.support.children import studio
from tests.support.comfyui_server import FakeComfyUI
from tests.support.comfyui_server import comfyui as comfyui  # the fixture
from tests.support.stories import STORY, STORY_SHAPE, entry_kinds
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

POINTS = ("after_t1", "during_tool", "during_tool_stored", "after_tool_effect")
STORED = ("during_tool_stored", "after_tool_effect")  # the panel stored before the crash
FATES = ("up", "restarted_done", "restarted_lost")
# How often ComfyUI ran the prompt in each case: twice only where its run was lost.
EXECUTIONS = {("during_tool", "restarted_lost"): 2}


@pytest.fixture
def env(tmp_path, comfyui: FakeComfyUI, monkeypatch) -> dict[str, str]:
    """The studio on the comfyui backend, pointed at the loopback ComfyUI, with short
    leases so the second studio takes over the dead one's run and render in seconds."""
    monkeypatch.setattr(comfyui_server, "GATE_LIMIT", 60.0)  # the test opens it in time
    return {
        "JAIWEB_MEDIA_ROOT": str(tmp_path / "media"),
        "JAIWEB_LEASE_SECONDS": "5",
        "JAIWEB_RENDER_LEASE_SECONDS": "3",
        "JAIWEB_IMAGE_BACKEND": "comfyui",
        "JAIWEB_COMFYUI_URL": comfyui.url,
    }


@pytest.fixture
def auto_session(alice):
    state = {**DEFAULT_STATE, "permission_mode": "auto"}
    return session_create(owner=alice, title="comfyui crash", initial_app_state=state)


def dispatches(op: str) -> list:
    return [
        r
        for r in operation_records(operation_id=op)
        if r.type == "tool_dispatched" and r.tool_name == "generate_image"
    ]


def image_result(session):
    [result] = [
        e.message
        for e in (row.to_journal() for row in Entry.objects.filter(session=session))
        if e.type == "message"
        and e.message.role == "tool_result"
        and e.message.tool_name == "generate_image"
    ]
    return result


def journal_clean() -> None:
    out = io.StringIO()
    call_command("journal_check", stdout=out)
    assert out.getvalue().rstrip().endswith("OK"), out.getvalue()


def crash_at(point: str, env: dict) -> None:
    """The studio dies at the fault point ``point`` of ``generate_image``."""
    crashing = {**env, "JAIWEB_CRASH_AT": f"{point}:generate_image"}
    first = studio(connection.settings_dict, env=crashing)
    try:
        assert first.wait_exit(60) == 137, first.stderr_tail()
        assert first.line_with(f"JAIWEB_CRASHED {point}") is not None, first.stderr_tail()
    finally:
        first.stop()


def kill_while_comfyui_runs(op: str, env: dict, comfyui: FakeComfyUI) -> None:
    """The studio is killed while ComfyUI runs the call's prompt (held at its gate)."""
    comfyui.gate.clear()
    first = studio(connection.settings_dict, env=env)
    try:
        [t1] = wait_until(lambda: dispatches(op), 60, "the render's T1")
        prompt_id = prompt_id_for(t1.idempotency_key)
        wait_until(lambda: prompt_id in comfyui.running_ids(), 60, "ComfyUI running the prompt")
        assert first.returncode is None, first.stderr_tail()
    finally:
        first.stop()  # SIGKILL, from outside
    assert RenderJob.objects.get(key=t1.idempotency_key).status == RenderJob.IN_PROGRESS


def kill_while_paused(env: dict, tmp_path: Path) -> None:
    """The studio is killed while it pauses at the product's ``during_tool`` point."""
    pause_file = tmp_path / "paused"
    paused = {
        **env,
        "JAIWEB_PAUSE_AT": "during_tool:generate_image",
        "JAIWEB_PAUSE_FILE": str(pause_file),
    }
    first = studio(connection.settings_dict, env=paused)
    try:
        wait_until(pause_file.exists, 60, "the pause inside the tool")
        first.wait_for("JAIWEB_PAUSED during_tool")  # stderr is read by a thread of its own
    finally:
        first.stop()  # SIGKILL, from outside


def output_of(comfyui: FakeComfyUI, prompt_id: str) -> Path:
    return comfyui.output_dir / "jaiweb" / output_filename(prompt_id)


@pytest.mark.parametrize("fate", FATES)
@pytest.mark.parametrize("point", POINTS)
def test_a_crash_on_comfyui_renders_once_charges_once_and_completes(
    point, fate, auto_session, env, comfyui, client, alice, media, tmp_path
):
    op = operation_accept(session_id=auto_session.id, text=STORY).operation_id
    if point == "during_tool":
        kill_while_comfyui_runs(op, env, comfyui)
    elif point == "during_tool_stored":
        kill_while_paused(env, tmp_path)
    else:
        crash_at(point, env)
    [t1] = dispatches(op)
    key = t1.idempotency_key
    prompt_id = prompt_id_for(key)
    assert Operation.objects.get(pk=op).outcome is None
    # what the crash left: the runs ComfyUI started, the charges made
    ran, charged = {"after_t1": (0, 0), "during_tool": (1, 0)}.get(point, (1, 1))
    assert comfyui.executions[prompt_id] == ran
    assert LedgerEntry.objects.filter(kind="charge").count() == charged

    drawn: bytes | None = None  # ComfyUI's picture, when it made one before the restart
    if point in STORED:
        drawn = output_of(comfyui, prompt_id).read_bytes()
    if point == "during_tool" and fate == "restarted_done":
        comfyui.gate.set()
        wait_until(lambda: comfyui.history_of(prompt_id), 30, "ComfyUI finishing the prompt")
        drawn = output_of(comfyui, prompt_id).read_bytes()
    if fate == "restarted_done":
        comfyui.restart()
        assert comfyui.history_of(prompt_id) is None and comfyui.running_ids() == []
    elif fate == "restarted_lost":
        comfyui.restart(lose_outputs=(point != "during_tool"))
        assert comfyui.output_files() == [] and comfyui.running_ids() == []
    if point == "during_tool" and fate == "restarted_lost":
        comfyui.gate.set()  # the prompt queued again runs through
    posts_before = len(comfyui.posts)
    requests_before = len(comfyui.requests)

    second = studio(connection.settings_dict, env=env)  # recovers the run
    try:
        if point == "during_tool" and fate == "up":
            # The second studio takes the render over once the dead one's lease is out and
            # finds the prompt still running: it waits for it rather than queueing again.
            wait_until(lambda: RenderJob.objects.get(key=key).attempts == 2, 30, "the takeover")
            asked = ("GET", f"/history/{prompt_id}")
            wait_until(
                lambda: comfyui.requests[requests_before:].count(asked) >= 3,
                30,
                "the recovering render waiting for the prompt",
            )
            assert comfyui.running_ids() == [prompt_id] and len(comfyui.posts) == posts_before
            comfyui.gate.set()
        wait_until(lambda: Operation.objects.get(pk=op).outcome is not None, 60, "the run")
    finally:
        second.stop()

    operation = Operation.objects.get(pk=op)
    assert operation.outcome == "completed"
    assert entry_kinds(auto_session) == STORY_SHAPE
    assert [t.dispatch_attempt for t in dispatches(op)] == [1, 2]  # the same key, again

    # exactly one charge, under the call's key
    assert LedgerEntry.objects.filter(kind="charge").count() == 1
    assert LedgerEntry.objects.filter(kind="charge", job_key=key).count() == 1

    # ComfyUI ran the prompt once, or twice where its run was lost; never queued again
    # once it had run
    executions = EXECUTIONS.get((point, fate), 1)
    assert comfyui.executions[prompt_id] == executions <= 2
    assert [p["prompt_id"] for p in comfyui.posts] == [prompt_id] * executions

    # the panel shown is the picture ComfyUI made in the run that counted
    image = Image.objects.get()
    result = image_result(auto_session)
    assert not result.is_error
    assert result.details["image_id"] == image.id and result.details["backend"] == "comfyui"
    assert result.details["cost"] == 10
    assert result.details["replayed"] is (point in STORED)
    if drawn is None:  # drawn after the crash: the file ComfyUI has now
        drawn = output_of(comfyui, prompt_id).read_bytes()
    stored = (media / image.path).read_bytes()
    assert stored == drawn and stored.startswith(b"\x89PNG")
    if not (point in STORED and fate == "restarted_lost"):
        # one output file of this prompt: a lost run wrote none, and none ran again
        assert [p.name for p in comfyui.output_files()] == [output_filename(prompt_id)]
    client.force_login(alice)
    page = client.get(f"/sessions/{auto_session.id}/").content.decode()
    assert f'data-panel="{image.id}"' in page
    served = client.get(f"/panels/{image.id}")
    assert served.status_code == 200
    body = b"".join(served.streaming_content) if served.streaming else served.content
    assert body == drawn

    # nothing for a person: never parked, nothing resolved by anyone
    assert operation.parked_at is None and not operation.is_parked
    assert [r.type for r in operation_records(operation_id=op)].count("tool_resolved") == 0
    assert inbox_items() == []
    journal_clean()
