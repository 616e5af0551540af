"""The model's side of a run: ask it (``model_attempted`` first), write the reply, bill, compact."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.utils import timezone

from jaiweb.agent.providers.base import PermanentProviderError, ProviderError
from jaiweb.agent.streaming import normalize_calls, stream_reply
from jaiweb.store.ids import new_id
from journal.entries import AssistantMessage, CompactionEntry, Usage
from journal.records import ErrorInfo, ModelAttempted, UsageSettled
from journal.steps import Compact, Finish, ModelCall, SettleUsage, estimate_tokens

if TYPE_CHECKING:
    from jaiweb.agent.loop import OperationRun


def model_call(run: OperationRun, step: ModelCall, *, attempt: ModelAttempted | None) -> None:
    """One attempt: its reply's id fixed in advance, the stream, the reply and its bill.

    ``attempt``: its ``model_attempted``, when it went in with the previous write."""
    if attempt is None:
        attempt = run.record(
            ModelAttempted,
            attempt_id=new_id("att"),
            assistant_entry_id=new_id("e"),
            model=run.provider.name,
        )
        run.writer.write(records=[attempt])
    attempt_id, reply_id = attempt.attempt_id, attempt.assistant_entry_id
    run.faults.reach("after_model_attempted")
    try:
        reply = stream_reply(
            run.provider,
            step.messages,
            run.tool_specs,
            on_text=lambda text: run.emit(
                {
                    "type": "text_delta",
                    "attempt_id": attempt_id,
                    "text": text,
                    "offline": run.provider.offline,
                }
            ),
            interval=run.config.delta_interval_seconds,
            on_first_text=lambda: run.faults.reach("mid_stream"),
            language=run.language,
            app_state=run.writer.state.as_json(),
        )
    except PermanentProviderError as exc:
        _bill_cut_reply(run, attempt_id, exc)
        run.finish(Finish("failed", ErrorInfo(code=exc.code, message=str(exc))))
        return
    except ProviderError as exc:
        _bill_cut_reply(run, attempt_id, exc)
        run.failures += 1
        run.emit({"type": "model_retry", "attempt_id": attempt_id, "error": str(exc)})
        if run.failures > run.config.max_transient_failures:
            message = f"the model server kept failing: {exc}"
            run.finish(Finish("failed", ErrorInfo(code=exc.code, message=message)))
        else:
            run.sleep(run.config.backoff(run.failures - 1))
        return
    run.failures = 0
    calls = normalize_calls(reply.tool_calls, set(step.taken_call_ids))
    usage = reply.usage or Usage(
        input_tokens=estimate_tokens(step.messages), output_tokens=max(1, len(reply.text) // 2)
    )
    stop_reason = (
        "tool_use" if calls else (reply.stop_reason if reply.stop_reason != "tool_use" else "stop")
    )
    message = AssistantMessage(
        content=reply.text, tool_calls=calls, stop_reason=stop_reason, usage=usage
    )
    # The reply and its bill are facts of an effect that happened: written unchecked, and
    # in one transaction, so no crash leaves a reply unbilled (a log of an older version
    # may still hold one: ``SettleUsage`` bills it). Both fault points are this one state.
    # The next step's first record (the first call's T1, or the finish) commits with them.
    usage_record = run.record(UsageSettled, attempt_id=attempt_id, usage=usage)
    run.write_then(entries=[run.message_entry(reply_id, message)], records=[usage_record])
    run.faults.reach("after_assistant_entry")
    run.faults.reach("after_usage")


def settle_usage(run: OperationRun, step: SettleUsage) -> None:
    """The bill of a reply a crash left unbilled, from the reply itself."""
    _settle(run, step.attempt_id, step.usage, checked=True)


def _settle(run: OperationRun, attempt_id: str, usage: Usage, *, checked: bool) -> None:
    record = run.record(UsageSettled, attempt_id=attempt_id, usage=usage)
    run.writer.write(records=[record], checked=checked)
    run.faults.reach("after_usage")


def _bill_cut_reply(run: OperationRun, attempt_id: str, exc: ProviderError) -> None:
    """Tokens a provider reported before the stream was cut or refused are spent all the same."""
    usage = getattr(exc, "partial_usage", None)
    if usage is not None:
        _settle(run, attempt_id, usage, checked=False)


def compact(run: OperationRun, step: Compact) -> None:
    """Summarize the older part of the branch into a compaction entry."""
    summary = run.provider.summarize(list(step.summarize))
    entry = CompactionEntry(
        id=new_id("e"),
        parent_id=run.writer.leaf,
        timestamp=timezone.now(),
        summary=summary,
        first_kept_entry_id=step.first_kept_entry_id,
        tokens_before=step.tokens_before,
        tokens_after=step.tokens_kept + len(summary) // 2,
    )
    run.writer.write(entries=[entry], checked=False)
    run.emit(
        {
            "type": "compaction",
            "tokens_before": entry.tokens_before,
            "tokens_after": entry.tokens_after,
        }
    )
