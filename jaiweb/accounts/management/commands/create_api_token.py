"""`python manage.py create_api_token USER [--name NAME]`: print a new API token.

See docs/ARCHITECTURE.md §9.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from jaiweb.accounts.services import api_token_create


class Command(BaseCommand):
    help = "Create an API token for a user and print its secret (shown only this once)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="command line", help="a label for the token")

    def handle(self, *args, **options):
        user_model = get_user_model()
        try:
            user = user_model.objects.get(**{user_model.USERNAME_FIELD: options["username"]})
        except user_model.DoesNotExist:
            raise CommandError(f"no user {options['username']!r}") from None
        try:
            _, secret = api_token_create(user=user, name=options["name"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        # Only the secret on stdout, so a script can capture it: TOKEN=$(manage.py …).
        self.stdout.write(secret)
