"""/operations…: a run's state, verdict and records, and the owner's approvals."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from jaiweb.api.schemas import ApprovalIn, ApprovalOut, ErrorOut, OperationOut
from jaiweb.api.selectors import operation_detail
from jaiweb.commands.access import operation_for
from jaiweb.commands.sessions import approval_decide

router = Router(tags=["operations"])

# The journal records the decision in the past tense; the page's buttons are verbs.
DECISIONS = {"approve": "approved", "deny": "denied", "approved": "approved", "denied": "denied"}


@router.get(
    "/operations/{operation_id}", response={200: OperationOut, 401: ErrorOut, 404: ErrorOut}
)
def read_operation(request: HttpRequest, operation_id: str):
    """running / parked / finished, what recovery would decide now, and every record."""
    return operation_detail(operation=operation_for(user=request.auth, operation_id=operation_id))


@router.post(
    "/operations/{operation_id}/approvals",
    response={
        200: ApprovalOut,
        401: ErrorOut,
        403: ErrorOut,
        404: ErrorOut,
        409: ErrorOut,
        413: ErrorOut,  # a body over DATA_UPLOAD_MAX_MEMORY_SIZE
        422: ErrorOut,
    },
)
def decide_approval(request: HttpRequest, operation_id: str, body: ApprovalIn):
    """Approve or deny a paid tool call; 409 when that call is not awaiting a decision."""
    op = operation_for(user=request.auth, operation_id=operation_id, write=True)
    decision = DECISIONS[body.decision]
    approval_decide(
        operation=op,
        tool_call_id=body.tool_call_id,
        decision=decision,
        user=request.auth,
        auto_from_now=body.auto_from_now,
    )
    return {"operation_id": op.id, "tool_call_id": body.tool_call_id, "decision": decision}
