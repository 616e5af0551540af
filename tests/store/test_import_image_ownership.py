"""A property of imports (issue 27): whatever image ids a session file names, and wherever
it names them, the import either gives the importer a session whose every image is the
importer's own, or is refused with nothing written. Never anything else."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.commands.sessions import prompt_submit
from jaiweb.render.models import Image
from jaiweb.render.services import render_request
from jaiweb.store.errors import ImportRefused
from jaiweb.store.models import ComicSession, Entry, Label, Operation, OperationRecord
from jaiweb.store.services import session_create
from jaiweb.store.transfer import session_export, session_import
from journal import ids as journal_ids
from journal.session_file import images_mentioned, session_file_read
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def world(alice, bob):
    """Bob's bundle of a one-panel session, the id of another image of his that the bundle
    does not carry, and Alice's image id."""
    session = session_create(owner=bob, title="Bob's", initial_app_state=DEFAULT_STATE)
    prompt_submit(session=session, user=bob, text="/draw 鲍勃的风筝")
    run_pending()
    session.refresh_from_db()
    lines = [json.loads(line) for line in session_export(session=session, images=True)]
    other = render_request(user=bob, key="k_other", params={"prompt": "other"}).image_id
    hers = render_request(user=alice, key="k_hers", params={"prompt": "hers"}).image_id
    carried = next(line["id"] for line in lines if line.get("type") == "image")
    return {"lines": lines, "carried": carried, "own": other, "hers": hers}


# Where an id can stand, and which id stands there.
PLACES = ("result", "arguments", "dispatch", "character", "image_line", "duplicate", "no_images")
WHICH = ("carried", "own", "hers", "missing")


def _results(lines):
    return [line for line in lines if line.get("message", {}).get("role") == "tool_result"]


def _edit(lines: list[dict], place: str, image_id: str) -> None:
    """Write ``image_id`` into one field of the file that holds an image id."""
    if place == "result":
        _results(lines)[0]["message"]["details"]["image_id"] = image_id
    elif place == "arguments":
        for line in lines:
            for call in line.get("message", {}).get("tool_calls") or []:
                call["arguments"]["image_id"] = image_id
    elif place == "dispatch":
        for line in lines:
            if line.get("type") == "tool_dispatched":
                line["args"]["image_id"] = image_id
                line["args_hash"] = journal_ids.args_hash(line["args"])
    elif place == "character":
        for line in lines:
            if line.get("type") == "app_state":
                for character in line["value"].get("characters", {}).values():
                    character["reference_image_id"] = image_id
    elif place == "image_line":
        for line in lines:
            if line.get("type") == "image":
                line["id"] = image_id
    elif place == "no_images":  # a plain export: it carries no image at all
        lines[:] = [line for line in lines if line.get("type") != "image"]
        lines[0]["session"]["image_count"] = 0
    elif place == "duplicate":
        images = [line for line in lines if line.get("type") == "image"]
        if images:
            lines.append(copy.deepcopy(images[0]))
            lines[0]["session"]["image_count"] += 1


def counts():
    models = (ComicSession, Entry, Operation, OperationRecord, Label, Image)
    return tuple(m.objects.count() for m in models)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    edits=st.lists(
        st.tuples(st.sampled_from(PLACES), st.sampled_from(WHICH)), min_size=1, max_size=4
    )
)
def test_an_import_reaches_only_the_importers_images_or_is_refused(world, bob, alice, edits):
    lines = copy.deepcopy(world["lines"])
    for place, which in edits:
        image_id = "img_nosuch0000000000" if which == "missing" else world[which]
        _edit(lines, place, image_id)
    text = [json.dumps(line, ensure_ascii=False) for line in lines]
    before = counts()
    try:
        imported = session_import(owner=bob, lines=text)
    except ImportRefused:
        assert counts() == before
        return
    stored = session_file_read(session_export(session=imported, images=False))
    named = {m.image_id for m in images_mentioned(stored)}
    owners = dict(Image.objects.filter(id__in=named).values_list("id", "user_id"))
    assert named and all(owners.get(i) == bob.pk for i in named), (edits, named, owners)
    assert Image.objects.get(pk=world["hers"]).published_at is None
