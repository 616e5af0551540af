"""/wallet: my credits and their ledger; asking an admin for more."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status

from jaiweb.api.schemas import CreditRequestIn, CreditRequestOut, ErrorOut, WalletOut
from jaiweb.api.selectors import wallet_of
from jaiweb.render.selectors import credits_view
from jaiweb.render.services import credit_request_create

router = Router(tags=["wallet"])


@router.get("/wallet", response={200: WalletOut, 401: ErrorOut})
def read_wallet(request: HttpRequest):
    """The balance, the monthly top-up, whether a panel is left, the open ask for credits,
    and the ledger, newest first."""
    return wallet_of(user=request.auth)


@router.post(
    "/wallet/requests",
    response={
        201: CreditRequestOut,
        200: CreditRequestOut,
        401: ErrorOut,
        413: ErrorOut,
        422: ErrorOut,
    },
)
def ask_for_credits(request: HttpRequest, body: CreditRequestIn):
    """Ask an admin for more credits: the request waits in the recovery inbox, where an
    admin grants it (one ledger entry, whoever clicks first) or declines it. 201 a new
    request; 200 the open one, unchanged, when one is open already."""
    before = credits_view(user=request.auth).open_request
    made = credit_request_create(user=request.auth, amount=body.amount, message=body.message)
    return Status(200 if before is not None else 201, made)
