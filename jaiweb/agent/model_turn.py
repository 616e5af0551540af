"""A run's model calls: ``model_attempted`` first, then the reply with its bill; and compaction."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from jaiweb.agent.faults import Faults
from jaiweb.agent.providers.base import (
    PermanentProviderError,
    Provider,
    ProviderError,
    ToolSpec,
)
from jaiweb.agent.streaming import normalize_calls, stream_reply
from jaiweb.agent.writer import FactsWrite, FencedWriter
from jaiweb.store.ids import new_id
from journal.entries import AssistantMessage, CompactionEntry, Usage
from journal.records import ErrorInfo, ModelAttempted, UsageSettled
from journal.steps import Compact, Finish, ModelCall, SettleUsage, estimate_tokens

if TYPE_CHECKING:
    from jaiweb.agent.loop import LoopConfig


class ModelTurn:
    """Asks the model for a run's replies, writes each with its bill, and compacts the branch.

    It counts the transient provider failures in a row, to back off and then to give up."""

    def __init__(
        self,
        *,
        provider: Provider,
        tool_specs: list[ToolSpec],
        language: str | None,
        writer: FencedWriter,
        write_facts: FactsWrite,
        emit: Callable[[dict[str, Any]], None],
        faults: Faults,
        config: LoopConfig,
        sleep: Callable[[float], None],
    ) -> None:
        self.provider, self.tool_specs, self.language = provider, tool_specs, language
        self.writer, self.write_facts, self.emit = writer, write_facts, emit
        self.faults, self.config, self.sleep = faults, config, sleep
        self.failures = 0

    def new_attempt(self) -> ModelAttempted:
        """Make the ``model_attempted`` record that fixes an attempt's id and its reply's id."""
        return self.writer.record(
            ModelAttempted,
            attempt_id=new_id("att"),
            assistant_entry_id=new_id("e"),
            model=self.provider.name,
        )

    def ask(self, step: ModelCall, *, attempt: ModelAttempted | None) -> Finish | None:
        """Make one attempt: stream the reply, then write it with its bill.

        ``attempt`` is its ``model_attempted`` when that went in with the previous write.
        It returns the failed finish when the provider refused for good or kept failing."""
        if attempt is None:
            attempt = self.new_attempt()
            self.writer.write(records=[attempt])
        attempt_id, reply_id = attempt.attempt_id, attempt.assistant_entry_id
        self.faults.reach("after_model_attempted")
        try:
            reply = stream_reply(
                self.provider,
                step.messages,
                self.tool_specs,
                on_text=lambda text: self.emit(
                    {
                        "type": "text_delta",
                        "attempt_id": attempt_id,
                        "text": text,
                        "offline": self.provider.offline,
                    }
                ),
                interval=self.config.delta_interval_seconds,
                on_first_text=lambda: self.faults.reach("mid_stream"),
                language=self.language,
                app_state=self.writer.state.as_json(),
            )
        except PermanentProviderError as exc:
            self._bill_cut_reply(attempt_id, exc)
            return Finish("failed", ErrorInfo(code=exc.code, message=str(exc)))
        except ProviderError as exc:
            self._bill_cut_reply(attempt_id, exc)
            return self._after_transient_failure(attempt_id, exc)
        self.failures = 0
        calls = normalize_calls(reply.tool_calls, set(step.taken_call_ids))
        usage = reply.usage or Usage(
            input_tokens=estimate_tokens(step.messages), output_tokens=max(1, len(reply.text) // 2)
        )
        stop_reason = (
            "tool_use"
            if calls
            else (reply.stop_reason if reply.stop_reason != "tool_use" else "stop")
        )
        message = AssistantMessage(
            content=reply.text, tool_calls=calls, stop_reason=stop_reason, usage=usage
        )
        # The reply and its bill are facts of an effect that happened: written unchecked, and
        # in one transaction, so no crash leaves a reply unbilled (a log of an older version
        # may still hold one: ``SettleUsage`` bills it). Both fault points are this one state.
        # The next step's first record (the first call's T1, or the finish) commits with them.
        usage_record = self.writer.record(UsageSettled, attempt_id=attempt_id, usage=usage)
        self.write_facts(
            entries=[self.writer.message_entry(reply_id, message)], records=[usage_record]
        )
        self.faults.reach("after_assistant_entry")
        self.faults.reach("after_usage")
        return None

    def _after_transient_failure(self, attempt_id: str, exc: ProviderError) -> Finish | None:
        """Back off before the next attempt, or fail once the failures in a row are too many."""
        self.failures += 1
        self.emit({"type": "model_retry", "attempt_id": attempt_id, "error": str(exc)})
        if self.failures > self.config.max_transient_failures:
            message = f"the model server kept failing: {exc}"
            return Finish("failed", ErrorInfo(code=exc.code, message=message))
        self.sleep(self.config.backoff(self.failures - 1))
        return None

    def settle_usage(self, step: SettleUsage) -> None:
        """Bill a reply that a crash left unbilled, from the reply itself."""
        self._settle(step.attempt_id, step.usage, checked=True)

    def _settle(self, attempt_id: str, usage: Usage, *, checked: bool) -> None:
        record = self.writer.record(UsageSettled, attempt_id=attempt_id, usage=usage)
        self.writer.write(records=[record], checked=checked)
        self.faults.reach("after_usage")

    def _bill_cut_reply(self, attempt_id: str, exc: ProviderError) -> None:
        """Bill the tokens a provider reported before it cut or refused the stream."""
        usage = getattr(exc, "partial_usage", None)
        if usage is not None:
            self._settle(attempt_id, usage, checked=False)

    def compact(self, step: Compact) -> None:
        """Summarize the older part of the branch into a compaction entry."""
        summary = self.provider.summarize(list(step.summarize))
        entry = CompactionEntry(
            id=new_id("e"),
            parent_id=self.writer.leaf,
            timestamp=timezone.now(),
            summary=summary,
            first_kept_entry_id=step.first_kept_entry_id,
            tokens_before=step.tokens_before,
            tokens_after=step.tokens_kept + len(summary) // 2,
        )
        self.writer.write(entries=[entry], checked=False)
        self.emit(
            {
                "type": "compaction",
                "tokens_before": entry.tokens_before,
                "tokens_after": entry.tokens_after,
            }
        )
