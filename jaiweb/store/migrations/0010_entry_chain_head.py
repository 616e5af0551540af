"""The heads of a session's chains, indexed: the sessions list counts branches by them."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("store", "0009_entry_tool_result"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("chain_pos", 0)),
                fields=["session", "chain"],
                name="entry_chain_head",
            ),
        ),
    ]
