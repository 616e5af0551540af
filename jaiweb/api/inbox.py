"""/inbox…: parked calls with their evidence, and an admin's decision (staff only)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from jaiweb.api.access import staff_only
from jaiweb.api.links import link, links
from jaiweb.api.schemas import ErrorOut, InboxItemOut, InboxResolveIn, InboxResolveOut
from jaiweb.commands.inbox import inbox_items
from jaiweb.commands.sessions import inbox_call_resolve
from jaiweb.store.selectors import operation_get

router = Router(tags=["inbox"])


@router.get(
    "/inbox",
    response={200: list[InboxItemOut], 401: ErrorOut, 403: ErrorOut},
    openapi_extra=links(
        200,
        ResolveInboxCall=link(
            "resolve_inbox_call",
            operation_id="$response.body#/0/operation_id",
            tool_call_id="$response.body#/0/tool_call_id",
        ),
        ReadOperation=link("read_operation", operation_id="$response.body#/0/operation_id"),
    ),
)
def list_inbox(request: HttpRequest):
    """Every parked call (or parked operation), oldest first."""
    staff_only(request.auth)
    return inbox_items()


@router.post(
    "/inbox/{operation_id}/{tool_call_id}",
    response={
        200: InboxResolveOut,
        401: ErrorOut,
        403: ErrorOut,
        404: ErrorOut,
        409: ErrorOut,
        413: ErrorOut,  # a body over DATA_UPLOAD_MAX_MEMORY_SIZE
        422: ErrorOut,
    },
)
def resolve_inbox_call(
    request: HttpRequest, operation_id: str, tool_call_id: str, body: InboxResolveIn
):
    """retry / confirmed / failed, with a reason; 409 when that call is not parked."""
    staff_only(request.auth)
    op = operation_get(operation_id=operation_id)
    inbox_call_resolve(
        user=request.auth,
        operation=op,
        tool_call_id=tool_call_id,
        resolution=body.resolution,
        reason=body.reason,
        result=body.result.model_dump() if body.result else None,
    )
    return {"operation_id": op.id, "tool_call_id": tool_call_id, "resolution": body.resolution}
