from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("store", "0002_append_only_triggers")]

    operations = [
        migrations.AddField(
            model_name="operation",
            name="waiting_since",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
