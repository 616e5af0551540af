"""Operation Journal records: facts about one run, never copies of entries.

See docs/ARCHITECTURE.md §6.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    Field,
    StrictBool,
    StrictInt,
    TypeAdapter,
    model_serializer,
    model_validator,
)

from journal.entries import Frozen, NonNegative, ToolCallId, Usage
from journal.jsonvalues import Id, JsonObject, Text

Policy = Literal["read_only", "idempotent", "at_most_once"]
Outcome = Literal["completed", "failed", "aborted", "interrupted"]


class RecordBase(Frozen):
    operation_id: Id
    timestamp: AwareDatetime


class OperationAccepted(RecordBase):
    type: Literal["operation_accepted"] = "operation_accepted"
    kind: Literal["prompt"] = "prompt"
    input_entry_id: Id
    start_leaf_id: Id | None


class ModelAttempted(RecordBase):
    """Written before the provider is called; its reply will get ``assistant_entry_id``."""

    type: Literal["model_attempted"] = "model_attempted"
    attempt_id: Id
    assistant_entry_id: Id
    model: Text


class UsageSettled(RecordBase):
    type: Literal["usage_settled"] = "usage_settled"
    attempt_id: Id
    usage: Usage


class ApprovalRequested(RecordBase):
    """Asking again after a restart writes another one; the latest counts."""

    type: Literal["approval_requested"] = "approval_requested"
    tool_call_id: ToolCallId
    cost: NonNegative


class ApprovalDecided(RecordBase):
    type: Literal["approval_decided"] = "approval_decided"
    tool_call_id: ToolCallId
    decision: Literal["approved", "denied"]
    auto_from_now: StrictBool = False
    by: Text


class ToolDispatched(RecordBase):
    """T1: written after validation and approval, before the tool's effect starts."""

    type: Literal["tool_dispatched"] = "tool_dispatched"
    tool_call_id: ToolCallId
    tool_name: Annotated[str, Field(min_length=1, max_length=64)]
    assistant_entry_id: Id
    args: JsonObject
    args_hash: Id
    result_entry_id: Id
    idempotency_key: Id
    policy: Policy
    dispatch_attempt: Annotated[StrictInt, Field(ge=1)] = 1


class ToolResolved(RecordBase):
    """A decision on an open call; ``confirmed``/``failed`` commit with its result.

    An admin decides a parked call (``resolved_by`` ``admin``, the default, so logs written
    before the reconciler existed read the same). Recovery decides one itself when what the
    other side recorded under the call's key settles it (``resolved_by`` ``reconciler``,
    ``by`` ``reconciler``): it then keeps that ``evidence``, and it never retries. An
    admin's record is stored and exported without the two fields, exactly as before.
    """

    type: Literal["tool_resolved"] = "tool_resolved"
    tool_call_id: ToolCallId
    resolution: Literal["retry", "confirmed", "failed"]
    by: Text
    reason: Text
    resolved_by: Literal["admin", "reconciler"] = "admin"
    evidence: JsonObject | None = None

    @model_validator(mode="after")
    def _reconciler_keeps_its_evidence(self) -> ToolResolved:
        if self.resolved_by == "reconciler":
            if self.resolution == "retry":
                raise ValueError("the reconciler confirms or fails a call; it never retries one")
            if not self.evidence:
                raise ValueError("a reconciler's resolution keeps the evidence that decided it")
        return self

    # No return annotation: pydantic then keeps the model's own schema for what this returns
    # (an annotated dict would make the API document describe the record as any object).
    @model_serializer(mode="wrap")
    def _admin_shape(self, handler: Any):
        data = handler(self)
        if self.resolved_by == "admin" and self.evidence is None:
            data.pop("resolved_by", None)
            data.pop("evidence", None)
        return data


class InputQueued(RecordBase):
    """Steering text typed during a run, kept here until the loop writes its entry."""

    type: Literal["input_queued"] = "input_queued"
    input_id: Id
    delivery: Literal["steer"] = "steer"
    input_entry_id: Id
    text: Text


class StopRequested(RecordBase):
    type: Literal["stop_requested"] = "stop_requested"
    by: Text


class ErrorInfo(Frozen):
    code: Text
    message: Text


class OperationFinished(RecordBase):
    type: Literal["operation_finished"] = "operation_finished"
    outcome: Outcome
    error: ErrorInfo | None = None


Record = Annotated[
    OperationAccepted
    | ModelAttempted
    | UsageSettled
    | ApprovalRequested
    | ApprovalDecided
    | ToolDispatched
    | ToolResolved
    | InputQueued
    | StopRequested
    | OperationFinished,
    Field(discriminator="type"),
]

record_adapter: TypeAdapter[Record] = TypeAdapter(Record)


def parse_record(data: str | bytes | dict[str, Any]) -> Record:
    """A record from its JSON text or its decoded dict; raises pydantic's ValidationError."""
    if isinstance(data, str | bytes):
        return record_adapter.validate_json(data)
    return record_adapter.validate_python(data)


def record_to_dict(record: Record) -> dict[str, Any]:
    """The record as plain JSON data (what is stored and exported)."""
    return record.model_dump(mode="json")


__all__ = [
    "ApprovalDecided",
    "ApprovalRequested",
    "ErrorInfo",
    "InputQueued",
    "JsonObject",
    "ModelAttempted",
    "OperationAccepted",
    "OperationFinished",
    "Outcome",
    "Policy",
    "Record",
    "RecordBase",
    "StopRequested",
    "ToolDispatched",
    "ToolResolved",
    "UsageSettled",
    "parse_record",
    "record_adapter",
    "record_to_dict",
]
