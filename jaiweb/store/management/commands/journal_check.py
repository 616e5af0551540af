"""`python manage.py journal_check`: prove the stored journals are intact; exit 1 if not."""

from django.core.management.base import BaseCommand, CommandError

from jaiweb.store.integrity import journal_check_all


class Command(BaseCommand):
    help = "Check every session's tree, sequences, stored leaf and operation logs."

    def handle(self, *args, **options):
        sessions = entries = operations = 0
        bad: list[str] = []
        for report in journal_check_all():
            sessions += 1
            entries += report.entries
            operations += report.operations
            for problem in report.problems:
                line = f"session {report.session_id}: {problem}"
                bad.append(line)
                self.stderr.write(line)
        summary = f"{sessions} sessions, {entries} entries, {operations} operations checked"
        if bad:
            raise CommandError(f"{summary}: {len(bad)} problems")
        self.stdout.write(f"{summary}: OK")
