"""/sessions/{id}/entries/{entry}/variant: which variant of a panel readers see."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from jaiweb.api.schemas import ErrorOut, StateWriteOut, VariantChoiceIn
from jaiweb.commands.access import session_for
from jaiweb.commands.variants import variant_choose

router = Router(tags=["branches"])

E409 = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut, 413: ErrorOut, 422: ErrorOut}


@router.post(
    "/sessions/{session_id}/entries/{entry_id}/variant", response={200: StateWriteOut, **E409}
)
def choose_variant(request: HttpRequest, session_id: str, entry_id: str, body: VariantChoiceIn):
    """Show readers and exports the ``variant``-th variant (from 1) of the panel ``entry_id``.

    ``entry_id`` may be any variant's result entry or the set's id. The choice is an
    ``app_state`` entry at the leaf, so nothing is drawn or charged, and a rewind past it
    brings the earlier choice back. Answer 404 when no variant set on the active branch has
    that entry, and 422 naming ``variant`` for a variant not drawn. Answer 409 unless the
    session is idle, or when ``expected_leaf_id`` is not the leaf; left out, it is the leaf
    as it is now."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    state = variant_choose(
        session=session,
        entry_id=entry_id,
        variant=body.variant,
        expected_leaf_id=body.expected_leaf_id or session.leaf_id,
    )
    session.refresh_from_db(fields=["leaf_id"])
    return {"leaf_id": session.leaf_id, "app_state": state}
