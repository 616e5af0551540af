"""A node's children come from (session, parent_id, seq), already in append order.

With (session, parent_id) alone, SQLite chose the unique (session, seq) index to satisfy
``ORDER BY seq`` and filtered the whole session for the parent: O(session) per children
or fork read instead of O(children). The new index covers every read the old one served.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("store", "0003_operation_waiting_since"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="entry", name="entry_children"),
        migrations.AddIndex(
            model_name="entry",
            index=models.Index(fields=["session", "parent_id", "seq"], name="entry_children"),
        ),
    ]
