"""`python manage.py recover`: one recovery pass; one line per operation, found and done."""

from django.core.management.base import BaseCommand

from jaiweb.agent.runner import Runner


class Command(BaseCommand):
    help = "Recover every unfinished operation once and say what was found and done."

    def handle(self, *args, **options):
        lines = Runner().recover()
        for line in lines:
            self.stdout.write(line)
        self.stdout.write(f"{len(lines)} unfinished operation(s) looked at")
