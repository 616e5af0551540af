"""Labels and bookmarks on nodes: a side table beside the journal (``Label``)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("store", "0004_entry_children_in_seq_order"),
    ]

    operations = [
        migrations.CreateModel(
            name="Label",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("entry_id", models.CharField(max_length=128)),
                ("kind", models.CharField(default="label", max_length=16)),
                ("text", models.CharField(max_length=80)),
                ("created_at", models.DateTimeField()),
                (
                    "session",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="labels",
                        to="store.comicsession",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["session", "entry_id"], name="label_node")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("session", "entry_id", "kind", "text"), name="one_label_per_text"
                    )
                ],
            },
        ),
    ]
