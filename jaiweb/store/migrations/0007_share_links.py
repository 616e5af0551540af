"""Read-only share links pinned to one node (only the token's hash is kept)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("store", "0006_session_origin"),
    ]

    operations = [
        migrations.CreateModel(
            name="ShareLink",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("leaf_id", models.CharField(max_length=128)),
                ("token_sha256", models.CharField(max_length=64, unique=True)),
                ("created_at", models.DateTimeField()),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "session",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="shares",
                        to="store.comicsession",
                    ),
                ),
            ],
        ),
    ]
