"""An index of the tool results of a session by tool name (``selectors.tool_results_at``).

The strip finds the ``publish_panel`` (and ``generate_image``) results on a long stretch of
a path with one query; without this index that query read the JSON of every entry of the
session. An expression index, so SQL of each database's own: the selector sends the same
expression, which is how each planner matches a query to such an index. Partial: only the
rows that are tool results (their payload has ``message.tool_name``) are in it; ``seq``
last, so the latest result of a tool is the first row of a backward walk.
"""

from django.db import migrations

FORWARD = {
    "sqlite": [
        """CREATE INDEX entry_tool_result ON "store_entry"
           (session_id, json_extract(payload, '$.message.tool_name'), seq)
           WHERE json_extract(payload, '$.message.tool_name') IS NOT NULL"""
    ],
    "postgresql": [
        """CREATE INDEX entry_tool_result ON "store_entry"
           (session_id, ((payload -> 'message') ->> 'tool_name'), seq)
           WHERE ((payload -> 'message') ->> 'tool_name') IS NOT NULL"""
    ],
}
BACKWARD = {vendor: ["DROP INDEX entry_tool_result"] for vendor in FORWARD}


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
    dependencies = [("store", "0008_operation_language")]

    operations = [migrations.RunPython(_run(FORWARD), _run(BACKWARD))]
