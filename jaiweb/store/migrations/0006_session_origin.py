"""A session remembers where it came from (a fork: its source session and node)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("store", "0005_labels"),
    ]

    operations = [
        migrations.AddField(
            model_name="comicsession",
            name="origin",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
