"""Variants under a crash: `manage.py studio` draws 3 variants of a panel and is killed
with SIGKILL at ``after_tool_effect`` of the second (its render stored and charged, its
result not written); a second studio recovers the run.

The set ends with 30 credits charged, once under each variant's key, three different
pictures, no key rendered twice, and a clean journal. Choosing variant 3 afterwards
changes what the reader's page and the comic export show, and charges nothing; a rewind
past the choice brings variant 1 back.
"""

from __future__ import annotations

import base64
import io
import json
import zipfile

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client

from jaiweb.comic.exports import comic_pages
from jaiweb.render.models import Image, LedgerEntry, RenderJob
from jaiweb.store.models import ComicSession, Operation
from jaiweb.store.selectors import branch_get, operation_records
from jaiweb.store.services import (
    operation_accept,
    operation_approval_decide,
    session_create,
)
from journal.recovery import fold_operation
from journal.variants import sets_on
from tests.support.children import studio
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

PROMPT = "draw 3 variants of Pig-Man eating the lollipop"
STATE = {"characters": {"猪猪侠": {}}, "permission_mode": "ask"}


@pytest.fixture
def env(tmp_path):
    return {"JAIWEB_MEDIA_ROOT": str(tmp_path / "media"), "JAIWEB_LEASE_SECONDS": "5"}


def approve_when_asked(op: str) -> None:
    """Play the user: approve the call of ``op`` that waits for a decision, once asked."""

    def pending():
        calls = fold_operation(operation_records(operation_id=op)).calls
        return next((c for c, s in calls.items() if s.approval == "pending"), None)

    wait_until(lambda: pending() is not None, 60, "the approval request")
    operation_approval_decide(
        operation_id=op, tool_call_id=pending(), decision="approved", by="alice"
    )


def draws(op: str) -> list:
    return [
        r
        for r in operation_records(operation_id=op)
        if r.type == "tool_dispatched" and r.tool_name == "generate_image"
    ]


def journal_clean() -> None:
    out = io.StringIO()
    call_command("journal_check", stdout=out)
    assert out.getvalue().rstrip().endswith("OK"), out.getvalue()


def post(client: Client, path: str, body: dict):
    return client.post(f"/api/v1{path}", data=json.dumps(body), content_type="application/json")


def episode_page(client: Client, session_id: str) -> str:
    response = client.get(f"/sessions/{session_id}/episode.html")
    assert response.status_code == 200
    return response.content.decode()


def cbz_pages(client: Client, session_id: str) -> dict[str, bytes]:
    """The comic export's page pictures (its ComicInfo.xml names the leaf, which moves)."""
    data = client.get(f"/api/v1/sessions/{session_id}/comic?format=cbz").content
    with zipfile.ZipFile(io.BytesIO(data)) as cbz:
        return {n: cbz.read(n) for n in cbz.namelist() if n.endswith(".png")}


def inlined(path) -> str:
    """How the episode page inlines a panel file (its base64)."""
    return base64.b64encode(path.read_bytes()).decode()


def test_three_variants_with_a_sigkill_after_the_second_render(alice, env, tmp_path):
    session = session_create(owner=alice, title="variants", initial_app_state=STATE)
    op = operation_accept(session_id=session.id, text=PROMPT).operation_id
    media = tmp_path / "media"

    pause_file = tmp_path / "paused"
    paused = {
        **env,
        "JAIWEB_PAUSE_AT": "after_tool_effect:generate_image@2",
        "JAIWEB_PAUSE_FILE": str(pause_file),
    }
    first = studio(connection.settings_dict, env=paused)
    try:
        approve_when_asked(op)  # one approval, for the set
        wait_until(pause_file.exists, 60, "the pause after the second variant's render")
        first.wait_for("JAIWEB_PAUSED after_tool_effect")  # stderr is read by a thread of its own
    finally:
        first.stop()  # SIGKILL, from outside
    # what the crash left: two renders stored and charged, the second's result not written
    t1s = draws(op)
    assert len(t1s) == 2
    assert LedgerEntry.objects.filter(kind="charge").count() == 2
    assert Operation.objects.get(pk=op).outcome is None

    second = studio(connection.settings_dict, env=env)
    try:
        wait_until(lambda: Operation.objects.get(pk=op).outcome is not None, 60, "the run")
    finally:
        second.stop()
    assert Operation.objects.get(pk=op).outcome == "completed"

    records = operation_records(operation_id=op)
    assert [r.cost for r in records if r.type == "approval_requested"] == [30]
    t1s = draws(op)
    calls = list(dict.fromkeys(t.tool_call_id for t in t1s))
    assert len(calls) == 3
    # the second variant was dispatched again under its own key; the others once
    assert [(t.tool_call_id, t.dispatch_attempt) for t in t1s] == [
        (calls[0], 1),
        (calls[1], 1),
        (calls[1], 2),
        (calls[2], 1),
    ]
    keys = list(dict.fromkeys(t.idempotency_key for t in t1s))
    assert len(keys) == 3

    # 30 credits, once under each key
    charges = LedgerEntry.objects.filter(kind="charge")
    assert sorted(c.job_key for c in charges) == sorted(keys)
    assert sum(c.amount for c in charges) == -30
    # no key rendered twice: one job each, never taken over, one picture file each
    jobs = RenderJob.objects.filter(key__in=keys)
    assert jobs.count() == 3 and {j.attempts for j in jobs} == {1}
    files = sorted(p for p in (media / "panels").rglob("*") if p.is_file())
    assert len(files) == 3 and Image.objects.count() == 3
    assert len({p.read_bytes() for p in files}) == 3  # three different pictures
    journal_clean()

    session = ComicSession.objects.get(pk=session.id)
    [variant_set] = sets_on(branch_get(session=session))
    assert len(variant_set.members) == 3
    image_of = {}
    for entry in branch_get(session=session):
        if entry.id in variant_set.members:
            image_of[entry.id] = entry.message.details["image_id"]
    first_image = image_of[variant_set.members[0]]
    third_image = image_of[variant_set.members[2]]
    path_of = {i.id: media / i.path for i in Image.objects.all()}

    client = Client()
    client.force_login(alice)
    page = episode_page(client, session.id)
    assert inlined(path_of[first_image]) in page and inlined(path_of[third_image]) not in page
    [[frame]] = [p.frames for p in comic_pages(session=session, leaf_id=None)[0]]
    assert frame.panel.image_id == first_image
    before_export = cbz_pages(client, session.id)
    assert len(before_export) == 1
    balance = client.get("/api/v1/wallet").json()["balance"]
    leaf_before_choice = session.leaf_id

    # choose variant 3: free, an app_state entry, and what readers and exports see
    chosen = post(
        client, f"/sessions/{session.id}/entries/{variant_set.members[1]}/variant", {"variant": 3}
    )
    assert chosen.status_code == 200, chosen.content
    assert chosen.json()["app_state"]["variants"] == {variant_set.id: variant_set.members[2]}
    assert client.get("/api/v1/wallet").json()["balance"] == balance
    assert LedgerEntry.objects.filter(kind="charge").count() == 3
    session.refresh_from_db()
    page = episode_page(client, session.id)
    assert inlined(path_of[third_image]) in page and inlined(path_of[first_image]) not in page
    [[frame]] = [p.frames for p in comic_pages(session=session, leaf_id=None)[0]]
    assert frame.panel.image_id == third_image
    assert cbz_pages(client, session.id) != before_export
    studio_page = client.get(f"/sessions/{session.id}/").content.decode()
    assert f'data-panel="{third_image}"' in studio_page
    assert f'data-panel="{first_image}"' not in studio_page
    assert 'data-variant="3" data-variant-count="3"' in studio_page

    # a rewind past the choice brings variant 1 back, on the page and in the export
    back = post(client, f"/sessions/{session.id}/navigate", {"entry_id": leaf_before_choice})
    assert back.status_code == 200, back.content
    assert "variants" not in back.json()["app_state"]
    session.refresh_from_db()
    page = episode_page(client, session.id)
    assert inlined(path_of[first_image]) in page and inlined(path_of[third_image]) not in page
    [[frame]] = [p.frames for p in comic_pages(session=session, leaf_id=None)[0]]
    assert frame.panel.image_id == first_image
    assert cbz_pages(client, session.id) == before_export
    assert client.get("/api/v1/wallet").json()["balance"] == balance
    journal_clean()
