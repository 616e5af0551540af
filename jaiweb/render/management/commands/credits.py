"""`python manage.py credits`: show or set a user's credits and monthly top-up.

credits alice                      the balance, the monthly top-up, the open request
credits alice --set 200            the balance becomes 200 (one "adjust" ledger entry)
credits alice --add 50             50 more credits (a grant, like grant_credits)
credits alice --monthly 100        100 credits at the first movement of each month
credits --topup                    write every top-up that is due (from cron, on the 1st)
credits --grant-request 7 [--amount 50]   grant a user's open request
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from jaiweb.render.models import CreditRequest
from jaiweb.render.selectors import credits_view
from jaiweb.render.services import (
    MAX_CREDITS,
    RequestDecided,
    credit_request_grant,
    credits_grant,
    credits_set,
    credits_topup_due,
)


class Command(BaseCommand):
    help = "Show or set a user's credits and monthly top-up; grant requests; write top-ups."

    def add_arguments(self, parser):
        parser.add_argument("username", nargs="?")
        parser.add_argument("--set", type=int, dest="balance", help="the new balance")
        parser.add_argument("--add", type=int, help="credits to add (a grant)")
        parser.add_argument("--monthly", type=int, help="the monthly top-up (0: none)")
        parser.add_argument("--note", default="", help="kept in the ledger")
        parser.add_argument("--key", help="with --add: grant once under this key")
        parser.add_argument("--topup", action="store_true", help="write the due top-ups")
        parser.add_argument("--grant-request", type=int, help="a credit request's number")
        parser.add_argument("--amount", type=int, help="what to grant (default: as asked)")

    def handle(self, *args, username, balance, add, monthly, note, topup, **options):
        request_id, amount = options["grant_request"], options["amount"]
        if topup:
            self.stdout.write(f"topped up {credits_topup_due()} wallets")
        if request_id is not None:
            self._grant_request(request_id, amount)
        if username is None:
            if not (topup or request_id is not None):
                raise CommandError("name a user, or give --topup or --grant-request")
            return
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username!r}")
        for name, value in (("--set", balance), ("--monthly", monthly)):
            if value is not None and not 0 <= value <= MAX_CREDITS:
                raise CommandError(f"{name} is 0 to {MAX_CREDITS} credits, got {value}")
        if add is not None and not 1 <= add <= MAX_CREDITS:
            raise CommandError(f"--add is 1 to {MAX_CREDITS} credits, got {add}")
        if balance is not None or monthly is not None:
            credits_set(
                user=user,
                balance=balance,
                monthly_topup=monthly,
                note=note or "set from the command line",
            )
        if add is not None:
            key = options["key"]
            credits_grant(
                user=user,
                amount=add,
                note=note or "granted from the command line",
                key=None if key is None else f"cli:{user.pk}:{key}"[:128],
            )
        view = credits_view(user=user)
        asked = view.open_request
        self.stdout.write(
            f"{username}: balance {view.balance}, monthly top-up {view.monthly_topup}"
            + (f", open request #{asked.pk} for {asked.amount}" if asked else "")
        )

    def _grant_request(self, request_id: int, amount: int | None) -> None:
        request = CreditRequest.objects.filter(pk=request_id).first()
        if request is None:
            raise CommandError(f"no credit request {request_id}")
        amount = request.amount if amount is None else amount
        if not 1 <= amount <= MAX_CREDITS:
            raise CommandError(f"--amount is 1 to {MAX_CREDITS} credits, got {amount}")
        try:
            entry, now = credit_request_grant(
                request_id=request_id, amount=amount, by="command line"
            )
        except RequestDecided as exc:
            raise CommandError(str(exc)) from None
        if not now:
            self.stdout.write(f"request #{request_id} was granted already: nothing added")
            return
        self.stdout.write(
            f"request #{request_id} granted: {entry.amount} credits, balance {entry.balance_after}"
        )
