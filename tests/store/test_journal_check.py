"""`manage.py journal_check`: clean on good data, a readable report and exit 1 on bad."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from jaiweb.store.demo import article_session_create
from jaiweb.store.services import operation_accept

pytestmark = pytest.mark.django_db


def run(capsys):
    call_command("journal_check")
    return capsys.readouterr().out


def test_clean_database(alice, capsys):
    s = article_session_create(owner=alice)
    operation_accept(session_id=s.id, text="go")
    out = run(capsys)
    assert "1 sessions, 8 entries, 1 operations checked: OK" in out


def _tamper(sql, params):
    """Change a fact behind the triggers' back, as a broken disk or a bad restore would."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("DROP TRIGGER store_entry_no_update")
            cursor.execute("DROP TRIGGER store_operationrecord_no_update")
        else:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # fire pending FK checks first
            cursor.execute("ALTER TABLE store_entry DISABLE TRIGGER USER")
            cursor.execute("ALTER TABLE store_operationrecord DISABLE TRIGGER USER")
        cursor.execute(sql, params)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("UPDATE store_comicsession SET leaf_id = 'e4'", "stored leaf 'e4', but the last append"),
        ("UPDATE store_entry SET seq = seq + 10 WHERE entry_id = 'e6'", "(gap)"),
        ("UPDATE store_entry SET parent_id = 'e9' WHERE entry_id = 'e6'", "disagrees"),
        ("UPDATE store_operationrecord SET seq = 5", "(gap)"),
    ],
)
def test_problems_are_reported(alice, capsys, sql, expected):
    s = article_session_create(owner=alice)
    operation_accept(session_id=s.id, text="go")
    _tamper(sql, [])
    with pytest.raises(CommandError, match="problems"):
        call_command("journal_check")
    err = capsys.readouterr().err
    assert f"session {s.id}:" in err and expected in err


def test_a_broken_tree_is_reported(alice, capsys):
    s = article_session_create(owner=alice)
    payload_sql = "UPDATE store_entry SET parent_id = 'e9', payload = %s WHERE entry_id = 'e6'"

    row = s.entries.get(entry_id="e6")
    payload = dict(row.payload, parent_id="e9")
    _tamper(payload_sql, [json.dumps(payload)])
    with pytest.raises(CommandError):
        call_command("journal_check")
    assert "do not form a tree" in capsys.readouterr().err


def test_an_accepted_input_with_no_entry_is_named_with_its_text(alice, capsys):
    """What the lost-prompt bug left in databases: a run finished past a queued input."""
    from django.utils import timezone

    from jaiweb.store.appends import append_records
    from journal.records import InputQueued, OperationFinished

    s = article_session_create(owner=alice)
    op = operation_accept(session_id=s.id, text="go").operation_id
    now = timezone.now()
    lost = InputQueued(
        operation_id=op, timestamp=now, input_id="in_1", input_entry_id="e_lost", text="也画菲菲"
    )
    done = OperationFinished(operation_id=op, timestamp=now, outcome="completed")
    append_records(op, [lost, done], fencing=None, now=now)  # as the old runner did
    with pytest.raises(CommandError, match="1 problems"):
        call_command("journal_check")
    err = capsys.readouterr().err
    assert f"session {s.id}: operation {op!r}: input 'in_1' was accepted but never written" in err
    assert "'也画菲菲'" in err
