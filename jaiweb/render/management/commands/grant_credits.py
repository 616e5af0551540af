"""`python manage.py grant_credits USER AMOUNT`: add credits to a user's wallet."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from jaiweb.render.services import credits_grant


class Command(BaseCommand):
    help = "Grant credits to a user (an entry in their append-only ledger)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("amount", type=int)
        parser.add_argument("--note", default="granted from the command line")
        parser.add_argument(
            "--key", help="grant once under this key: the same command run again adds nothing"
        )

    def handle(self, *args, username, amount, note, key, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username!r}")
        if amount <= 0:
            raise CommandError(f"AMOUNT must be a positive number of credits, got {amount}")
        entry = credits_grant(
            user=user,
            amount=amount,
            note=note,
            key=None if key is None else f"cli:{user.pk}:{key}"[:128],
        )
        self.stdout.write(f"granted {amount} credits to {username}: balance {entry.balance_after}")
