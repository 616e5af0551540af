"""An operation remembers the language of the page its prompt came from (for narration)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("store", "0007_share_links"),
    ]

    operations = [
        migrations.AddField(
            model_name="operation",
            name="language",
            field=models.CharField(blank=True, max_length=16, null=True),
        ),
    ]
