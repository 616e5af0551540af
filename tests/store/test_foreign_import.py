"""Importing a pi or a Claude Code session file: stored as the expected tree, checked by
journal_check, exported and imported again unchanged, continued by the director; a
malformed one is refused naming the line, with nothing written."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from jaiweb.commands.sessions import prompt_submit
from jaiweb.store.errors import ImportRefused
from jaiweb.store.labels import labels_of
from jaiweb.store.models import ComicSession, Entry, Label, Operation
from jaiweb.store.selectors import branch_rows
from jaiweb.store.transfer import session_export, session_import
from journal.importers import session_read
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# The trees the pure readers make of these files are pinned in tests/journal/test_importers.py;
# here the store keeps exactly what the reader made.
CASES = [
    ("pi/episode.jsonl", "猪猪侠大战超人强", 1),
    ("claude_code/session.jsonl", "Kung fu pig panels, then a cat", 0),
]


def read_tree(path: str) -> list[tuple]:
    with open(FIXTURES / path, "rb") as lines:
        parsed = session_read(lines)
    return [
        (e.id, e.parent_id, e.message.role if e.type == "message" else e.type)
        for e in parsed.entries
    ]


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    cache.clear()
    yield
    cache.clear()


def imported(path: str, owner):
    with open(FIXTURES / path, "rb") as lines:
        return session_import(owner=owner, lines=lines)


def stored_tree(session) -> list[tuple]:
    rows = Entry.objects.filter(session=session).order_by("seq")
    out = []
    for entry_id, parent_id, type_, payload in rows.values_list(
        "entry_id", "parent_id", "type", "payload"
    ):
        kind = payload["message"]["role"] if type_ == "message" else type_
        out.append((entry_id, parent_id, kind))
    return out


def counts():
    return tuple(m.objects.count() for m in (ComicSession, Entry, Operation, Label))


@pytest.mark.parametrize(("path", "title", "labels"), CASES, ids=["pi", "claude_code"])
def test_it_is_stored_as_the_expected_tree(alice, path, title, labels):
    tree = read_tree(path)
    assert len(tree) > 15
    session = imported(path, alice)
    assert stored_tree(session) == tree
    assert (session.title, session.leaf_id, session.entry_count) == (title, tree[-1][0], len(tree))
    assert session.owner == alice and session.operations.count() == 0
    assert len(labels_of(session_id=session.id)) == labels
    assert [r.entry_id for r in branch_rows(session=session)][-1] == tree[-1][0]
    out = io.StringIO()
    call_command("journal_check", stdout=out)
    assert "checked: OK" in out.getvalue()


@pytest.mark.parametrize(("path", "title", "labels"), CASES, ids=["pi", "claude_code"])
def test_export_and_import_again_keep_it(alice, bob, path, title, labels):
    tree = read_tree(path)
    first = list(session_export(session=imported(path, alice), images=True))
    again = session_import(owner=bob, lines=first)
    second = list(session_export(session=again, images=True))
    assert stored_tree(again) == tree
    assert first[1:] == second[1:]  # no operations: every line after the header is the same
    header_one, header_two = json.loads(first[0]), json.loads(second[0])
    assert header_one["session"].pop("id") != header_two["session"].pop("id")
    assert header_one == header_two


def test_the_director_continues_an_imported_session(alice):
    session = imported("claude_code/session.jsonl", alice)
    prompt_submit(session=session, user=alice, text="/say 接着画")
    run_pending()
    session.refresh_from_db()
    old_leaf = read_tree("claude_code/session.jsonl")[-1][0]
    path = [r.entry_id for r in branch_rows(session=session)]
    assert path[-3] == old_leaf  # the prompt and the reply follow the old leaf
    assert session.operations.get().outcome == "completed"


def test_a_malformed_file_is_refused_naming_the_line_and_nothing_is_written(alice, tmp_path):
    lines = (FIXTURES / "pi" / "episode.jsonl").read_text(encoding="utf-8").splitlines()
    lines[5] = lines[5].replace('"parentId":"d4e5f6a7"', '"parentId":"nowhere"')
    before = counts()
    with pytest.raises(ImportRefused, match=r"^line 6: parent 'nowhere' is not earlier"):
        session_import(owner=alice, lines=lines)
    assert counts() == before
    broken = tmp_path / "broken.jsonl"
    text = (FIXTURES / "claude_code" / "session.jsonl").read_text(encoding="utf-8").splitlines()
    text[7] = text[7][:-5]  # cut short
    broken.write_text("\n".join(text) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"line 8: not JSON .*; nothing was imported"):
        call_command("import_session", str(broken), "--owner", "alice")
    assert counts() == before


def test_the_command_imports_them(alice):
    out = io.StringIO()
    call_command(
        "import_session", str(FIXTURES / "pi" / "episode.jsonl"), "--owner", "alice", stdout=out
    )
    assert "21 entries, 0 operations, 1 label\n" in out.getvalue()
