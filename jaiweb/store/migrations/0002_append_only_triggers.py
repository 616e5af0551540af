"""Append-only below the ORM: triggers refuse UPDATE and DELETE of journal facts.

The one exemption: the rows of a session flagged ``deleting`` — the flag is set in the
transaction that deletes the session, so nothing else can use it. An operation's
``outcome``, once set, never changes either. On PostgreSQL ``TRUNCATE`` of the journal
tables is refused unless the session sets ``jaiweb.allow_truncate = 'on'`` (the test
runner's flush does; nothing in the product does).
"""

from django.db import migrations

SQLITE_FORWARD = [
    # entries
    """CREATE TRIGGER store_entry_no_update BEFORE UPDATE ON store_entry
       BEGIN SELECT RAISE(ABORT, 'store_entry is append-only: UPDATE refused'); END""",
    """CREATE TRIGGER store_entry_no_delete BEFORE DELETE ON store_entry
       WHEN COALESCE((SELECT deleting FROM store_comicsession WHERE id = OLD.session_id), 1) = 0
       BEGIN SELECT RAISE(ABORT, 'store_entry is append-only: DELETE refused'); END""",
    # operation records
    """CREATE TRIGGER store_operationrecord_no_update BEFORE UPDATE ON store_operationrecord
       BEGIN SELECT RAISE(ABORT, 'store_operationrecord is append-only: UPDATE refused'); END""",
    """CREATE TRIGGER store_operationrecord_no_delete BEFORE DELETE ON store_operationrecord
       WHEN COALESCE((SELECT s.deleting FROM store_operation o
                      JOIN store_comicsession s ON s.id = o.session_id
                      WHERE o.id = OLD.operation_id), 1) = 0
       BEGIN SELECT RAISE(ABORT, 'store_operationrecord is append-only: DELETE refused'); END""",
    # operations: removable only with their session; a finished outcome is final
    """CREATE TRIGGER store_operation_no_delete BEFORE DELETE ON store_operation
       WHEN COALESCE((SELECT deleting FROM store_comicsession WHERE id = OLD.session_id), 1) = 0
       BEGIN SELECT RAISE(ABORT, 'store_operation is kept with its session: DELETE refused'); END""",
    """CREATE TRIGGER store_operation_outcome_final BEFORE UPDATE OF outcome ON store_operation
       WHEN OLD.outcome IS NOT NULL AND NEW.outcome IS NOT OLD.outcome
       BEGIN SELECT RAISE(ABORT, 'store_operation outcome is final: UPDATE refused'); END""",
    # sessions: deleted only when flagged in the same transaction
    """CREATE TRIGGER store_comicsession_no_delete BEFORE DELETE ON store_comicsession
       WHEN NOT OLD.deleting
       BEGIN SELECT RAISE(ABORT, 'store_comicsession must be flagged deleting first'); END""",
]

SQLITE_BACKWARD = [
    f"DROP TRIGGER IF EXISTS {name}"
    for name in [
        "store_entry_no_update",
        "store_entry_no_delete",
        "store_operationrecord_no_update",
        "store_operationrecord_no_delete",
        "store_operation_no_delete",
        "store_operation_outcome_final",
        "store_comicsession_no_delete",
    ]
]

_REFUSE = (
    "RAISE EXCEPTION USING ERRCODE = 'restrict_violation', "
    "MESSAGE = format('%s is append-only: %s refused', TG_TABLE_NAME, TG_OP);"
)

POSTGRES_FORWARD = [
    f"""CREATE FUNCTION store_entry_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' AND COALESCE(
           (SELECT deleting FROM store_comicsession WHERE id = OLD.session_id), true) THEN
        RETURN OLD;
      END IF;
      {_REFUSE}
    END $$""",
    """CREATE TRIGGER store_entry_append_only BEFORE UPDATE OR DELETE ON store_entry
       FOR EACH ROW EXECUTE FUNCTION store_entry_guard()""",
    f"""CREATE FUNCTION store_operationrecord_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' AND COALESCE(
           (SELECT s.deleting FROM store_operation o
              JOIN store_comicsession s ON s.id = o.session_id
             WHERE o.id = OLD.operation_id), true) THEN
        RETURN OLD;
      END IF;
      {_REFUSE}
    END $$""",
    """CREATE TRIGGER store_operationrecord_append_only BEFORE UPDATE OR DELETE
       ON store_operationrecord FOR EACH ROW EXECUTE FUNCTION store_operationrecord_guard()""",
    f"""CREATE FUNCTION store_operation_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        IF COALESCE((SELECT deleting FROM store_comicsession WHERE id = OLD.session_id), true)
        THEN RETURN OLD; END IF;
        {_REFUSE}
      END IF;
      IF OLD.outcome IS NOT NULL AND NEW.outcome IS DISTINCT FROM OLD.outcome THEN
        RAISE EXCEPTION USING ERRCODE = 'restrict_violation',
          MESSAGE = 'store_operation outcome is final: UPDATE refused';
      END IF;
      RETURN NEW;
    END $$""",
    """CREATE TRIGGER store_operation_kept BEFORE UPDATE OR DELETE ON store_operation
       FOR EACH ROW EXECUTE FUNCTION store_operation_guard()""",
    """CREATE FUNCTION store_comicsession_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.deleting THEN RETURN OLD; END IF;
      RAISE EXCEPTION USING ERRCODE = 'restrict_violation',
        MESSAGE = 'store_comicsession must be flagged deleting first';
    END $$""",
    """CREATE TRIGGER store_comicsession_flagged_delete BEFORE DELETE ON store_comicsession
       FOR EACH ROW EXECUTE FUNCTION store_comicsession_guard()""",
    """CREATE FUNCTION store_truncate_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF current_setting('jaiweb.allow_truncate', true) = 'on' THEN RETURN NULL; END IF;
      RAISE EXCEPTION USING ERRCODE = 'restrict_violation',
        MESSAGE = format('%s is append-only: TRUNCATE refused', TG_TABLE_NAME);
    END $$""",
    *[
        f"""CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
            FOR EACH STATEMENT EXECUTE FUNCTION store_truncate_guard()"""
        for table in (
            "store_entry",
            "store_operationrecord",
            "store_operation",
            "store_comicsession",
        )
    ],
]

POSTGRES_BACKWARD = [
    *[
        f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}"
        for table in (
            "store_entry",
            "store_operationrecord",
            "store_operation",
            "store_comicsession",
        )
    ],
    "DROP TRIGGER IF EXISTS store_entry_append_only ON store_entry",
    "DROP TRIGGER IF EXISTS store_operationrecord_append_only ON store_operationrecord",
    "DROP TRIGGER IF EXISTS store_operation_kept ON store_operation",
    "DROP TRIGGER IF EXISTS store_comicsession_flagged_delete ON store_comicsession",
    "DROP FUNCTION IF EXISTS store_truncate_guard()",
    "DROP FUNCTION IF EXISTS store_entry_guard()",
    "DROP FUNCTION IF EXISTS store_operationrecord_guard()",
    "DROP FUNCTION IF EXISTS store_operation_guard()",
    "DROP FUNCTION IF EXISTS store_comicsession_guard()",
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        statements = statements_by_vendor.get(schema_editor.connection.vendor)
        if statements is None:
            raise RuntimeError(
                f"jaiweb supports SQLite and PostgreSQL, not {schema_editor.connection.vendor}"
            )
        for sql in statements:
            schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("store", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRES_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRES_BACKWARD}),
        )
    ]
