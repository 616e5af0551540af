"""`python manage.py export_session ID [-o FILE] [--images]`: a session as canonical JSON lines
(with ``--images``, a bundle: the panel images its entries name, docs/BUNDLES.md)."""

from django.core.management.base import BaseCommand, CommandError

from jaiweb.store.errors import SessionNotFound
from jaiweb.store.selectors import session_get
from jaiweb.store.transfer import session_export


class Command(BaseCommand):
    help = (
        "Write a session (header, entries, operation records, labels; with --images its "
        "panel images too) as JSON lines."
    )

    def add_arguments(self, parser):
        parser.add_argument("session_id")
        parser.add_argument("-o", "--output", help="file to write (default: stdout)")
        parser.add_argument(
            "--images",
            action="store_true",
            help="also the panel images the entries name (the session owner's), base64",
        )

    def handle(self, *args, **options):
        try:
            session = session_get(session_id=options["session_id"])
        except SessionNotFound as exc:
            raise CommandError(str(exc)) from exc
        lines = session_export(session=session, images=options["images"])
        if options["output"] is None:
            for line in lines:
                self.stdout.write(line)
            return
        try:
            with open(options["output"], "w", encoding="utf-8", newline="\n") as out:
                for line in lines:
                    out.write(line + "\n")
        except OSError as exc:
            raise CommandError(f"cannot write {options['output']}: {exc}") from exc
