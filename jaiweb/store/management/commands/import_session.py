"""`python manage.py import_session FILE --owner USERNAME`: an exported session, as a new one."""

import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from jaiweb.store.transfer import ImportRefused, session_import


class Command(BaseCommand):
    help = "Import a session exported by export_session ('-' reads stdin); all of it or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the JSON lines file, or - for stdin")
        parser.add_argument("--owner", required=True, help="username of the new session's owner")

    def handle(self, *args, **options):
        username = options["owner"]
        owner = get_user_model().objects.filter(username=username).first()
        if owner is None:
            raise CommandError(f"no user {username!r}")
        path = options["file"]
        try:
            if path == "-":
                session = session_import(owner=owner, lines=sys.stdin.buffer)
            else:
                with open(path, "rb") as lines:
                    session = session_import(owner=owner, lines=lines)
        except ImportRefused as exc:
            raise CommandError(f"{path}: {exc}; nothing was imported") from exc
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc}") from exc
        operations = session.operations.count()
        self.stdout.write(
            f"imported session {session.id}: {session.entry_count} entries, {operations} operations"
        )
