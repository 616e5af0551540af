"""The credit ledger is append-only below the ORM too: no UPDATE of a ledger row, ever."""

from django.db import migrations

SQLITE = [
    """CREATE TRIGGER render_ledgerentry_no_update BEFORE UPDATE ON render_ledgerentry
       BEGIN SELECT RAISE(ABORT, 'render_ledgerentry is append-only: UPDATE refused'); END""",
]
SQLITE_BACK = ["DROP TRIGGER IF EXISTS render_ledgerentry_no_update"]
POSTGRES = [
    """CREATE FUNCTION render_ledger_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION USING ERRCODE = 'restrict_violation',
        MESSAGE = 'render_ledgerentry is append-only: UPDATE refused';
    END $$""",
    """CREATE TRIGGER render_ledgerentry_no_update BEFORE UPDATE ON render_ledgerentry
       FOR EACH ROW EXECUTE FUNCTION render_ledger_guard()""",
]
POSTGRES_BACK = [
    "DROP TRIGGER IF EXISTS render_ledgerentry_no_update ON render_ledgerentry",
    "DROP FUNCTION IF EXISTS render_ledger_guard()",
]


def _run(by_vendor):
    def run(apps, schema_editor):
        for sql in by_vendor[schema_editor.connection.vendor]:
            schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("render", "0001_initial")]
    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE, "postgresql": POSTGRES}),
            _run({"sqlite": SQLITE_BACK, "postgresql": POSTGRES_BACK}),
        )
    ]
