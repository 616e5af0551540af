"""/wallet: my credits and their ledger."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from jaiweb.api.schemas import ErrorOut, WalletOut
from jaiweb.api.selectors import wallet_of

router = Router(tags=["wallet"])


@router.get("/wallet", response={200: WalletOut, 401: ErrorOut})
def read_wallet(request: HttpRequest):
    """The balance and the ledger, newest first."""
    return wallet_of(user=request.auth)
