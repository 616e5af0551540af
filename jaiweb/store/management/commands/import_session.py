"""`python manage.py import_session FILE --owner USERNAME`: an exported session (or a pi or
Claude Code session file), as a new one."""

import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from jaiweb.store.errors import BundleTooLarge, ImportConflict, ImportRefused
from jaiweb.store.transfer import session_import


class Command(BaseCommand):
    help = (
        "Import a session exported by export_session, or a pi or Claude Code session file "
        "('-' reads stdin); all of it or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the JSON lines file, or - for stdin")
        parser.add_argument("--owner", required=True, help="username of the new session's owner")
        parser.add_argument(
            "--max-bytes",
            type=int,
            default=None,
            help="refuse a larger file (default: JAIWEB_MAX_BUNDLE_BYTES; 0: no limit)",
        )

    def handle(self, *args, **options):
        username = options["owner"]
        owner = get_user_model().objects.filter(username=username).first()
        if owner is None:
            raise CommandError(f"no user {username!r}")
        path = options["file"]
        limit = options["max_bytes"]
        limits = {} if limit is None else {"max_bytes": limit or None}
        try:
            if path == "-":
                session = session_import(owner=owner, lines=sys.stdin.buffer, **limits)
            else:
                with open(path, "rb") as lines:
                    session = session_import(owner=owner, lines=lines, **limits)
        except (ImportRefused, BundleTooLarge, ImportConflict) as exc:
            raise CommandError(f"{path}: {exc}; nothing was imported") from exc
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc}") from exc
        operations = session.operations.count()
        labels = session.labels.count()
        self.stdout.write(
            f"imported session {session.id}: {session.entry_count} entries, "
            f"{operations} operations"
            + (f", {labels} label{'s' if labels > 1 else ''}" if labels else "")
        )
