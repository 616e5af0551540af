"""The live stream (#stream) as the journal has it, for a watcher that missed its events.

A page that was away (a restart, a dropped socket) gets the latest run's committed
replies and its steps from the journal: a step still ticks only while its call is
dispatched with no result, and a finished run says how it ended.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from jaiweb.prepared import Prepared, from_row, model_columns
from jaiweb.store.models import ComicSession, Operation
from jaiweb.store.selectors import entries_among, operation_reading
from jaiweb.studio.labels import outcome_label, tool_label
from journal.entries import AssistantMessage, MessageEntry, ToolResultMessage
from journal.errors import CorruptedOperationLog

TOOL_STEPS = {
    "generate_image": gettext_noop("rendering panel…"),
    "publish_panel": gettext_noop("publishing to the feed…"),
    "set_character_state": gettext_noop("changing a character…"),
    "list_panels": gettext_noop("looking at the panels…"),
}
RUNNING_A_TOOL = gettext_noop("running a tool…")
# The mark of a finished step: "done: draw a panel" (tool names come from studio.labels).


def step_label(tool: str, *, finished: bool, failed: bool = False) -> str:
    """A step's words in the active language: what it is doing, or how it ended."""
    if not finished:
        return _(TOOL_STEPS.get(tool, RUNNING_A_TOOL))
    if failed:
        return _("failed: %(tool)s") % {"tool": tool_label(tool)}
    return _("done: %(tool)s") % {"tool": tool_label(tool)}


def progress_label(tool: str, value: int, maximum: int) -> str:
    """A running step's words with how far it is: "rendering panel… 40 %"."""
    percent = max(0, min(100, round(100 * value / maximum))) if maximum > 0 else 0
    return _("%(step)s %(percent)d %%") % {
        "step": _(TOOL_STEPS.get(tool, RUNNING_A_TOOL)),
        "percent": percent,
    }


def end_label(outcome: str, error: str | None = None) -> str:
    line = _("Finished: %(outcome)s") % {"outcome": outcome_label(outcome)}
    return f"{line} — {error}" if error else line


@dataclass(frozen=True, slots=True)
class StreamStep:
    id: str
    tool: str
    done: bool
    failed: bool = False
    started_ms: int | None = None  # a running step's dispatch, ms since the epoch


@dataclass(frozen=True, slots=True)
class StreamState:
    operation_id: str | None = None
    replies: list[str] = field(default_factory=list)
    steps: list[StreamStep] = field(default_factory=list)
    outcome: str | None = None  # set once the run finished
    error: str | None = None


_LATEST_OPERATION = Prepared(
    lambda session_id: (
        Operation.objects.filter(session_id=session_id)
        .order_by("-created_at", "-id")
        .values_list(*model_columns(Operation))[:1]
    ),
    session_id=str,
)


def stream_state(*, session: ComicSession) -> StreamState:
    """The latest run of the session, as far as the journals say."""
    op = from_row(Operation, _LATEST_OPERATION.first(session_id=session.pk))
    if op is None:
        return StreamState()
    try:
        reading = operation_reading(operation_id=op.id, session=session)
    except CorruptedOperationLog:
        return StreamState(op.id)
    log = reading.log
    named = [a.assistant_entry_id for a in log.attempts]
    named += [c.dispatch.result_entry_id for c in log.calls.values() if c.dispatch]
    entries = entries_among(session=session, ids=named)
    replies = [
        m.content
        for a in log.attempts
        if isinstance(e := entries.get(a.assistant_entry_id), MessageEntry)
        and isinstance(m := e.message, AssistantMessage)
        and m.content
    ]
    steps = []
    for call_id in log.dispatch_order:
        t1 = log.calls[call_id].dispatch
        result = entries.get(t1.result_entry_id)
        message = result.message if isinstance(result, MessageEntry) else None
        done = isinstance(message, ToolResultMessage)
        steps.append(
            StreamStep(
                id=f"step-{call_id}",
                tool=t1.tool_name,
                done=done,
                failed=done and message.is_error,
                started_ms=None if done else int(t1.timestamp.timestamp() * 1000),
            )
        )
    finished = log.finished
    return StreamState(
        op.id,
        replies,
        steps,
        outcome=finished.outcome if finished else None,
        error=finished.error.message if finished and finished.error else None,
    )


def stream_html(*, session: ComicSession, language: str) -> str:
    """#stream-text and #stream-steps from the journal, swapped in out of band."""
    state = stream_state(session=session)
    with translation.override(language):
        steps = [
            {
                "id": "".join(c if c.isalnum() or c in "-_" else "_" for c in s.id),
                "tool": s.tool,
                "done": s.done,
                "label": step_label(s.tool, finished=s.done, failed=s.failed),
                "started_ms": s.started_ms,
            }
            for s in state.steps
        ]
        end = end_label(state.outcome, state.error) if state.outcome else None
        return render_to_string(
            "studio/stream/journal.html",
            {"replies": state.replies, "steps": steps, "end": end, "op": state.operation_id},
        ).strip()
