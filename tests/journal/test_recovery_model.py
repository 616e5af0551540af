"""Model-based property tests of ``journal.recovery.recover_operation``.
See docs/ARCHITECTURE.md §6, §7.

The model is one operation of the agent loop, generated step by step in the loop's real
order (the fault points of docs/ARCHITECTURE.md §11): accept (record and input entry in one
transaction) → call the model (``model_attempted``; the stream may be cut, and the
runner makes a new attempt or gives up ``interrupted``) → the assistant entry (0–3 tool
calls) → ``usage_settled`` → each tool call one by one (maybe an approval, granted or
denied; T1; the tool may crash with the dispatch open, then an automatic re-dispatch for
``read_only``/``idempotent`` calls, or an inbox resolution ``retry``/``confirmed``/
``failed``; T2) → … → ``operation_finished``. Between any two writes the outside world may
queue a steering input or request a stop; the loop writes queued inputs' entries and
honours a stop at its safe points (before a model call, after a reply's usage, after each
tool call).

Every durable write carries the verdict that a crash right after it implies, derived from
where the loop is (its phase), never from §3's rules. The first property crashes every
generated run after every write and compares; the second corrupts valid runs and expects
``CorruptedOperationLog``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, Phase, assume, event, find, given, settings
from hypothesis import strategies as st

from journal import ids
from journal.errors import CorruptedOperationLog
from journal.records import (
    ApprovalDecided,
    ApprovalRequested,
    InputQueued,
    ModelAttempted,
    OperationAccepted,
    OperationFinished,
    Record,
    StopRequested,
    ToolDispatched,
    ToolResolved,
    UsageSettled,
)
from journal.recovery import Dispatch, RecoveryEvidence, Verdict, recover_operation

OP = "op-1"
T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
INPUT_ENTRY = "e-input"
TOOL_NAMES = ("generate_image", "update_state", "charge_credits")
POLICIES = ("read_only", "idempotent", "at_most_once")
AUTO_RETRY_POLICIES = ("read_only", "idempotent")
FINAL_STOP_REASONS = ("stop", "length", "error", "aborted")
OUTCOME_OF_STOP_REASON = {
    "stop": "completed",
    "length": "completed",
    "error": "failed",
    "aborted": "aborted",
}

MAX_REPLIES = 4  # the loop's turn limit: the 4th reply is final
MAX_STREAM_CUTS = 2  # per model call
AUTO_REDISPATCH_LIMIT = 3  # an automatic call that crashes at this attempt goes to the inbox
MAX_DISPATCHES = 4
MAX_OUTSIDE_EVENTS = 4


def make(record_type, **fields):
    """A record of this operation, at the fixed test time."""
    return record_type(operation_id=OP, timestamp=T0, **fields)


@dataclass(frozen=True)
class Write:
    """One transaction of the run, and the verdict a crash right after it implies."""

    step: str
    records: tuple[Record, ...]
    entries: tuple[str, ...]
    final_replies: tuple[tuple[str, str], ...]  # (assistant entry id, stop_reason)
    expected: Verdict

    def __repr__(self) -> str:
        parts = [r.type for r in self.records] + [f"entry {e}" for e in self.entries]
        return f"<{self.step}: {', '.join(parts)} ⇒ {self.expected.status}>"

    def _repr_pretty_(self, printer, cycle) -> None:  # hypothesis prints runs with this
        printer.text(repr(self))


class LoopModel:
    """Generates one run of the agent loop, write by write, with the phase-implied verdicts."""

    def __init__(self, draw: Callable) -> None:
        self.draw = draw
        self.writes: list[Write] = []
        self.counter = itertools.count(1)
        self.stop = False
        self.unwritten_inputs: list[InputQueued] = []  # queued, entry not written yet
        self.unanswered = False  # an input was queued after the latest model_attempted
        self.outside_events_left = MAX_OUTSIDE_EVENTS
        self.phase: Callable[[], Verdict] = self.ready

    # -- decisions ---------------------------------------------------------------------

    def chance(self, percent: int) -> bool:
        """True with about ``percent``% probability; shrinks towards False."""
        return self.draw(st.integers(0, 99)) >= 100 - percent

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self.counter)}"

    # -- the verdicts each phase implies -------------------------------------------------

    def ready(self, redispatch: Sequence[str] = ()) -> Verdict:
        return Verdict(
            status="ready",
            operation_id=OP,
            stop_requested=self.stop,
            pending_inputs=[i.input_id for i in self.unwritten_inputs],
            redispatch=list(redispatch),
        )

    def provider_interrupted(self, attempt_id: str) -> Verdict:
        return Verdict(
            status="provider_interrupted",
            operation_id=OP,
            stop_requested=self.stop,
            attempt_id=attempt_id,
            pending_inputs=[i.input_id for i in self.unwritten_inputs],
        )

    def tool_in_flight(self, dispatch: ToolDispatched) -> Verdict:
        return Verdict(
            status="indeterminate_tool",
            operation_id=OP,
            stop_requested=self.stop,
            dispatches=[
                Dispatch(
                    tool_call_id=dispatch.tool_call_id,
                    tool_name=dispatch.tool_name,
                    result_entry_id=dispatch.result_entry_id,
                    idempotency_key=dispatch.idempotency_key,
                    policy=dispatch.policy,
                    dispatch_attempt=dispatch.dispatch_attempt,
                )
            ],
        )

    def after_final_reply(self, stop_reason: str) -> Verdict:
        """The turn ended; only the finish is missing — unless the loop has more to do."""
        if self.unanswered or self.stop:
            return self.ready()
        return Verdict(
            status="terminal",
            operation_id=OP,
            stop_requested=False,
            finalization="inferred",
            outcome=OUTCOME_OF_STOP_REASON[stop_reason],
        )

    def finished(self, outcome: str) -> Verdict:
        return Verdict(
            status="terminal",
            operation_id=OP,
            stop_requested=self.stop,
            finalization="durable",
            outcome=outcome,
        )

    # -- writes ------------------------------------------------------------------------

    def write(
        self,
        step: str,
        phase: Callable[[], Verdict],
        records: Sequence[Record] = (),
        entries: Sequence[str] = (),
        final_replies: Sequence[tuple[str, str]] = (),
        *,
        outside_events: bool = True,
    ) -> None:
        self.phase = phase
        self.writes.append(
            Write(step, tuple(records), tuple(entries), tuple(final_replies), phase())
        )
        if outside_events:
            self.maybe_outside_events()

    def maybe_outside_events(self) -> None:
        """Steering inputs and stop requests, written by the web process between two steps."""
        while self.outside_events_left and self.chance(20):
            self.outside_events_left -= 1
            if self.draw(st.booleans()):
                n = next(self.counter)
                queued = make(
                    InputQueued, input_id=f"in-{n}", input_entry_id=f"e-in-{n}", text=f"steer {n}"
                )
                self.unwritten_inputs.append(queued)
                self.unanswered = True
                records: tuple[Record, ...] = (queued,)
                step = "input_queued"
            else:
                self.stop = True
                records = (make(StopRequested, by="user"),)
                step = "stop_requested"
            self.writes.append(Write(step, records, (), (), self.phase()))

    def write_queued_inputs(self) -> None:
        """The entries of queued inputs, each its own append; the phase does not change."""
        while self.unwritten_inputs:
            queued = self.unwritten_inputs.pop(0)
            self.write("input_entry", self.phase, entries=[queued.input_entry_id])

    def safe_point(self) -> bool:
        """Write queued inputs; on a stop, finish ``aborted`` (True: the run is over)."""
        self.write_queued_inputs()
        if self.stop:
            self.finish("aborted")
            return True
        return False

    def finish(self, outcome: str) -> None:
        error = None
        if outcome in ("failed", "interrupted"):
            error = {"code": outcome, "message": f"the operation {outcome}"}
        self.write(
            f"finished_{outcome}",
            lambda: self.finished(outcome),
            [make(OperationFinished, outcome=outcome, error=error)],
            outside_events=False,
        )

    # -- the loop ----------------------------------------------------------------------

    def run(self) -> list[Write]:
        start_leaf_id = self.draw(st.sampled_from([None, "e-earlier"]))
        accepted = make(OperationAccepted, input_entry_id=INPUT_ENTRY, start_leaf_id=start_leaf_id)
        self.write("operation_accepted", self.ready, [accepted], [INPUT_ENTRY])
        replies = 0
        while True:
            if self.safe_point():
                return self.writes
            replies += 1
            reply = self.call_model(must_be_final=replies >= MAX_REPLIES)
            if reply is None:
                return self.writes
            assistant_entry_id, call_ids, stop_reason = reply
            if call_ids:
                for call_id in call_ids:
                    if self.safe_point():
                        return self.writes
                    self.run_tool_call(assistant_entry_id, call_id)
                continue
            if self.unanswered:
                continue  # an input came during the stream: the model must answer it
            if self.safe_point():
                return self.writes
            self.finish(OUTCOME_OF_STOP_REASON[stop_reason])
            return self.writes

    def call_model(self, *, must_be_final: bool) -> tuple[str, list[str], str] | None:
        """Attempts until a reply is durable (with its usage); None if the run ended."""
        cuts = 0
        while True:
            attempt_id, assistant_entry_id = self.fresh("att-"), self.fresh("e-asst-")
            self.unanswered = False
            self.write(
                "model_attempted" if cuts == 0 else "model_reattempted",
                lambda attempt_id=attempt_id: self.provider_interrupted(attempt_id),
                [
                    make(
                        ModelAttempted,
                        attempt_id=attempt_id,
                        assistant_entry_id=assistant_entry_id,
                        model="offline",
                    )
                ],
            )
            if cuts < MAX_STREAM_CUTS and self.chance(20):  # the stream is cut
                cuts += 1
                if self.chance(25):  # attempts limit: the runner gives up
                    self.write_queued_inputs()
                    self.finish("aborted" if self.stop else "interrupted")
                    return None
                if self.safe_point():
                    return None
                continue
            break
        n_calls = 0 if must_be_final else self.draw(st.integers(0, 3))
        call_ids = [self.fresh("call_") for _ in range(n_calls)]
        if call_ids:
            stop_reason = "tool_use"
            phase: Callable[[], Verdict] = self.ready
            finals: list[tuple[str, str]] = []
        else:
            stop_reason = self.draw(st.sampled_from(FINAL_STOP_REASONS))
            phase = lambda: self.after_final_reply(stop_reason)  # noqa: E731
            finals = [(assistant_entry_id, stop_reason)]
        self.write("assistant_reply", phase, entries=[assistant_entry_id], final_replies=finals)
        usage = {"input_tokens": 100, "output_tokens": 10}
        self.write("usage_settled", phase, [make(UsageSettled, attempt_id=attempt_id, usage=usage)])
        return assistant_entry_id, call_ids, stop_reason

    def run_tool_call(self, assistant_entry_id: str, call_id: str) -> None:
        tool_name = self.draw(st.sampled_from(TOOL_NAMES))
        policy = self.draw(st.sampled_from(POLICIES))
        args = {"prompt": f"panel for {call_id}"}
        result_entry_id = ids.result_entry_id(assistant_entry_id, call_id)
        if self.chance(30):
            request = make(ApprovalRequested, tool_call_id=call_id, cost=3)
            self.write("approval_requested", self.ready, [request])
            if self.chance(15):  # asked again after a restart
                self.write("approval_requested_again", self.ready, [request])
            decision = self.draw(st.sampled_from(["approved", "denied"]))
            self.write(
                f"approval_{decision}",
                self.ready,
                [make(ApprovalDecided, tool_call_id=call_id, decision=decision, by="user")],
            )
            if decision == "denied":
                self.write("denied_result", self.ready, entries=[result_entry_id])
                return
        attempt = 1
        while True:
            dispatch = make(
                ToolDispatched,
                tool_call_id=call_id,
                tool_name=tool_name,
                assistant_entry_id=assistant_entry_id,
                args=args,
                args_hash=ids.args_hash(args),
                result_entry_id=result_entry_id,
                idempotency_key=ids.idempotency_key(OP, call_id),
                policy=policy,
                dispatch_attempt=attempt,
            )
            self.write(
                "tool_dispatched" if attempt == 1 else "tool_redispatched",
                lambda dispatch=dispatch: self.tool_in_flight(dispatch),
                [dispatch],
            )
            crashed = attempt < MAX_DISPATCHES and self.chance(30)
            if not crashed:
                self.write("tool_result", self.ready, entries=[result_entry_id])
                return
            if policy in AUTO_RETRY_POLICIES and attempt < AUTO_REDISPATCH_LIMIT:
                attempt += 1  # automatic recovery: no record until the re-dispatch
                continue
            resolution = self.draw(st.sampled_from(["retry", "confirmed", "failed"]))
            resolved = make(
                ToolResolved, tool_call_id=call_id, resolution=resolution, by="admin", reason="x"
            )
            if resolution == "retry":
                self.write("inbox_retry", lambda call_id=call_id: self.ready([call_id]), [resolved])
                attempt += 1
                continue
            self.write(f"inbox_{resolution}", self.ready, [resolved], entries=[result_entry_id])
            return


@st.composite
def agent_runs(draw) -> list[Write]:
    """A whole run of one operation, as the list of its writes."""
    return LoopModel(draw).run()


def state_after(writes: Sequence[Write]) -> tuple[list[Record], RecoveryEvidence]:
    """The records and the Session Journal's evidence once these writes are durable."""
    records: list[Record] = []
    entry_ids: set[str] = set()
    finals: dict[str, str] = {}
    for w in writes:
        records.extend(w.records)
        entry_ids.update(w.entries)
        finals.update(w.final_replies)
    return records, RecoveryEvidence(entry_ids=frozenset(entry_ids), final_assistant_entries=finals)


def describe(records: Sequence[Record]) -> str:
    return "\n".join(f"  {r!r}" for r in records)


# -- property 1: a crash after any write gives the verdict the crash point implies ------


@settings(max_examples=1000, deadline=None)
@given(agent_runs())
def test_a_crash_after_any_write_gives_the_verdict_its_phase_implies(run: list[Write]) -> None:
    event(f"{len(run) // 10 * 10}+ writes")
    for n in range(1, len(run) + 1):
        records, evidence = state_after(run[:n])
        verdict = recover_operation(records, evidence)
        assert verdict == run[n - 1].expected, (
            f"crash after write {n} ({run[n - 1]!r}) of {run!r}\n"
            f"records:\n{describe(records)}\nevidence: {evidence}\n"
            f"expected {run[n - 1].expected!r}\ngot      {verdict!r}"
        )


# -- the generator really produces every kind of step and verdict -------------------


def has_step(name: str) -> Callable[[list[Write]], bool]:
    return lambda run: any(w.step == name for w in run)


def has_verdict(status: str, **fields) -> Callable[[list[Write]], bool]:
    def check(run: list[Write]) -> bool:
        return any(
            w.expected.status == status
            and all(getattr(w.expected, k) == v for k, v in fields.items())
            for w in run
        )

    return check


def in_flight_while_steered(run: list[Write]) -> bool:
    """A steering input and a stop, both while a tool call is open."""
    return any(
        w.step == "input_queued" and w.expected.status == "indeterminate_tool" for w in run
    ) and has_verdict("indeterminate_tool", stop_requested=True)(run)


def several_calls_dispatched_for_one_reply(run: list[Write]) -> bool:
    records, _ = state_after(run)
    calls_of: dict[str, set[str]] = {}
    for r in records:
        if isinstance(r, ToolDispatched):
            calls_of.setdefault(r.assistant_entry_id, set()).add(r.tool_call_id)
    return any(len(calls) >= 2 for calls in calls_of.values())


SHAPES = {
    "several tool calls in one reply": several_calls_dispatched_for_one_reply,
    "approval granted": has_step("approval_approved"),
    "approval denied": has_step("approval_denied"),
    "approval asked again": has_step("approval_requested_again"),
    "stream cut and retried": has_step("model_reattempted"),
    "stream cut, runner gave up": has_step("finished_interrupted"),
    "automatic re-dispatch": lambda run: any(
        w.step == "tool_redispatched" and run[i - 1].step != "inbox_retry"
        for i, w in enumerate(run)
    ),
    "inbox retry": has_step("inbox_retry"),
    "inbox confirmed": has_step("inbox_confirmed"),
    "inbox failed": has_step("inbox_failed"),
    "steering input written": has_step("input_entry"),
    "stop → aborted": lambda run: (
        has_step("stop_requested")(run) and run[-1].step.endswith("aborted")
    ),
    "input during a tool, stop during a tool": in_flight_while_steered,
    "reply answered a late input": lambda run: (
        any(w.step == "input_queued" and w.expected.status == "provider_interrupted" for w in run)
        and has_step("finished_completed")(run)
    ),
    "inferred completed": has_verdict("terminal", finalization="inferred", outcome="completed"),
    "inferred failed": has_verdict("terminal", finalization="inferred", outcome="failed"),
    "inferred aborted": has_verdict("terminal", finalization="inferred", outcome="aborted"),
    "ready with a re-dispatch": lambda run: any(w.expected.redispatch for w in run),
    "ready with a pending input": lambda run: any(w.expected.pending_inputs for w in run),
    "provider interrupted after a stop": has_verdict("provider_interrupted", stop_requested=True),
    "finished failed": has_step("finished_failed"),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_the_model_generates(shape: str) -> None:
    no_shrinking = settings(max_examples=5000, database=None, phases=[Phase.generate])
    run = find(agent_runs(), SHAPES[shape], settings=no_shrinking)
    assert SHAPES[shape](run)


# -- property 2: logs no correct run could write are refused -------------------------


def positions(records: Sequence[Record], predicate: Callable[[Record], bool]) -> list[int]:
    return [i for i, r in enumerate(records) if predicate(r)]


def finish_index(records: Sequence[Record]) -> int:
    return positions(records, lambda r: isinstance(r, OperationFinished))[0]


def dispatches(records: Sequence[Record]) -> list[int]:
    return positions(records, lambda r: isinstance(r, ToolDispatched))


def inserted(records: list[Record], at: int, record: Record) -> list[Record]:
    return [*records[:at], record, *records[at:]]


def replaced(records: list[Record], at: int, **changes) -> list[Record]:
    return [*records[:at], records[at].model_copy(update=changes), *records[at + 1 :]]


def without(evidence: RecoveryEvidence, entry_id: str) -> RecoveryEvidence:
    finals = {k: v for k, v in evidence.final_assistant_entries.items() if k != entry_id}
    return RecoveryEvidence(evidence.entry_ids - {entry_id}, finals)


@dataclass(frozen=True)
class Corruption:
    applies: Callable[[list[Record]], bool]
    apply: Callable  # (draw, records, evidence, run) -> (records, evidence)


def _first_record_dropped(draw, records, evidence, run):
    return records[1:], evidence


def _second_accepted(draw, records, evidence, run):
    again = records[0]
    if draw(st.booleans()):
        again = again.model_copy(update={"input_entry_id": "e-input-2"})
    return inserted(records, draw(st.integers(1, len(records))), again), evidence


def _record_after_finished(draw, records, evidence, run):
    extra = draw(
        st.sampled_from(
            [
                make(StopRequested, by="user"),
                make(InputQueued, input_id="in-late", input_entry_id="e-in-late", text="late"),
                make(ModelAttempted, attempt_id="att-late", assistant_entry_id="e-late", model="m"),
                make(OperationFinished, outcome="completed"),
                records[-2],
            ]
        )
    )
    return [*records, extra], evidence


def _at_most_once_redispatched_without_retry(draw, records, evidence, run):
    at = draw(st.sampled_from(positions(records, lambda r: _is_t1(r, "at_most_once"))))
    t1 = records[at]
    later = [
        i
        for i in range(at + 1, len(records))
        if isinstance(records[i], ToolDispatched | ToolResolved | OperationFinished)
        and getattr(records[i], "tool_call_id", t1.tool_call_id) == t1.tool_call_id
    ]
    where = draw(st.integers(at + 1, later[0]))
    again = t1.model_copy(update={"dispatch_attempt": t1.dispatch_attempt + 1})
    return inserted(records, where, again), evidence


def _redispatch_changed(draw, records, evidence, run):
    at = draw(st.sampled_from(positions(records, lambda r: _is_t1(r) and r.dispatch_attempt > 1)))
    t1 = records[at]
    field = draw(st.sampled_from(["result_entry_id", "idempotency_key", "dispatch_attempt"]))
    if field == "dispatch_attempt":
        value = draw(st.sampled_from([1, t1.dispatch_attempt - 1, t1.dispatch_attempt + 2]))
    else:
        value = getattr(t1, field) + "x"
    return replaced(records, at, **{field: value}), evidence


def _resolved_never_dispatched(draw, records, evidence, run):
    first_t1 = {}
    for i in dispatches(records):
        first_t1.setdefault(records[i].tool_call_id, i)
    call_id = draw(st.sampled_from([*sorted(first_t1), "call_never"]))
    last = first_t1.get(call_id, finish_index(records))
    resolution = draw(st.sampled_from(["retry", "confirmed", "failed"]))
    resolved = make(
        ToolResolved, tool_call_id=call_id, resolution=resolution, by="admin", reason="x"
    )
    return inserted(records, draw(st.integers(1, last)), resolved), evidence


def _input_entry_absent(draw, records, evidence, run):
    crash_after = draw(st.integers(1, len(run)))
    records, evidence = state_after(run[:crash_after])
    return records, without(evidence, INPUT_ENTRY)


def _finished_with_open_dispatch(draw, records, evidence, run):
    at = draw(st.sampled_from(dispatches(records)))
    return records, without(evidence, records[at].result_entry_id)


def _usage_settled_twice(draw, records, evidence, run):
    settled = [i for i, r in enumerate(records) if isinstance(r, UsageSettled)]
    at = draw(st.sampled_from(settled))
    again = draw(st.integers(at + 1, finish_index(records)))
    return inserted(records, again, records[at]), evidence


def _usage_for_unknown_attempt(draw, records, evidence, run):
    usage = make(
        UsageSettled, attempt_id="att-unknown", usage={"input_tokens": 1, "output_tokens": 1}
    )
    return inserted(records, draw(st.integers(1, finish_index(records))), usage), evidence


def _dispatch_names_unknown_reply(draw, records, evidence, run):
    at = draw(st.sampled_from(positions(records, lambda r: _is_t1(r) and r.dispatch_attempt == 1)))
    return replaced(records, at, assistant_entry_id="e-unknown"), evidence


def _repeated_id(draw, records, evidence, run):
    kinds = [ModelAttempted, InputQueued]
    candidates = positions(records, lambda r: isinstance(r, tuple(kinds)))
    at = draw(st.sampled_from(candidates))
    original = records[at]
    if isinstance(original, ModelAttempted):
        field = draw(st.sampled_from(["attempt_id", "assistant_entry_id"]))
        copy = make(ModelAttempted, attempt_id="att-x", assistant_entry_id="e-asst-x", model="m")
    else:
        field = draw(st.sampled_from(["input_id", "input_entry_id"]))
        copy = make(InputQueued, input_id="in-x", input_entry_id="e-in-x", text="again")
    copy = copy.model_copy(update={field: getattr(original, field)})
    return inserted(records, draw(st.integers(at + 1, finish_index(records))), copy), evidence


def _input_reuses_the_operation_input_entry(draw, records, evidence, run):
    queued = make(InputQueued, input_id="in-x", input_entry_id=INPUT_ENTRY, text="again")
    return inserted(records, draw(st.integers(1, finish_index(records))), queued), evidence


def _redispatch_after_inbox_closed_it(draw, records, evidence, run):
    """confirmed/failed commit with the result: nothing is left to recover or retry."""
    at = draw(st.sampled_from(positions(records, _is_closing_resolution)))
    call_id = records[at].tool_call_id
    t1 = records[[i for i in dispatches(records[:at]) if records[i].tool_call_id == call_id][-1]]
    where = draw(st.integers(at + 1, finish_index(records)))
    again = t1.model_copy(update={"dispatch_attempt": t1.dispatch_attempt + 1})
    return inserted(records, where, again), evidence


def _is(record: Record, record_type) -> bool:
    return isinstance(record, record_type)


def _is_t1(record: Record, policy: str | None = None) -> bool:
    return isinstance(record, ToolDispatched) and policy in (None, record.policy)


def _is_closing_resolution(record: Record) -> bool:
    return isinstance(record, ToolResolved) and record.resolution in ("confirmed", "failed")


def _any(predicate: Callable[[Record], bool]) -> Callable[[list[Record]], bool]:
    return lambda records: any(predicate(r) for r in records)


CORRUPTIONS = {
    "first record dropped": Corruption(lambda records: True, _first_record_dropped),
    "second operation_accepted": Corruption(lambda records: True, _second_accepted),
    "record after operation_finished": Corruption(lambda records: True, _record_after_finished),
    "at_most_once re-dispatched without a retry": Corruption(
        _any(lambda r: _is_t1(r, "at_most_once")), _at_most_once_redispatched_without_retry
    ),
    "re-dispatch with another result id, key or attempt": Corruption(
        _any(lambda r: _is_t1(r) and r.dispatch_attempt > 1), _redispatch_changed
    ),
    "tool_resolved for a call with no dispatch": Corruption(
        lambda records: True, _resolved_never_dispatched
    ),
    "input entry absent": Corruption(lambda records: True, _input_entry_absent),
    "finished with an open dispatch": Corruption(_any(_is_t1), _finished_with_open_dispatch),
    "usage_settled twice": Corruption(_any(lambda r: _is(r, UsageSettled)), _usage_settled_twice),
    "usage_settled for an unknown attempt": Corruption(
        lambda records: True, _usage_for_unknown_attempt
    ),
    "dispatch naming an unknown assistant entry": Corruption(
        _any(_is_t1), _dispatch_names_unknown_reply
    ),
    "repeated attempt, assistant entry, input or input-entry id": Corruption(
        _any(lambda r: _is(r, ModelAttempted | InputQueued)), _repeated_id
    ),
    "input entry id repeats the operation's input entry": Corruption(
        lambda records: True, _input_reuses_the_operation_input_entry
    ),
    "re-dispatch after the inbox confirmed or failed the call": Corruption(
        _any(_is_closing_resolution), _redispatch_after_inbox_closed_it
    ),
}


@pytest.mark.parametrize("corruption", CORRUPTIONS)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(run=agent_runs(), data=st.data())
def test_a_log_no_correct_run_could_write_is_refused(corruption: str, run, data) -> None:
    records, evidence = state_after(run)
    kind = CORRUPTIONS[corruption]
    assume(kind.applies(records))
    assert recover_operation(records, evidence).status == "terminal"  # the valid log is fine
    bad_records, bad_evidence = kind.apply(data.draw, records, evidence, run)
    with pytest.raises(CorruptedOperationLog):
        verdict = recover_operation(bad_records, bad_evidence)
        pytest.fail(
            f"{corruption}: accepted with {verdict!r}\nrecords:\n{describe(bad_records)}\n"
            f"evidence: {bad_evidence}"
        )


def test_an_automatic_call_re_dispatched_after_the_inbox_confirmed_it_is_refused() -> None:
    """The minimal log of the last corruption above, by hand.

    ``confirmed`` commits with the call's result, so the dispatch is closed: neither a
    ``retry`` nor automatic recovery (which only re-runs an open dispatch) is a reason
    to dispatch it again. docs/ARCHITECTURE.md §7: "a repeated dispatch without its reason".
    """
    args = {"prompt": "p"}
    result_entry_id = ids.result_entry_id("e-asst-1", "call_1")
    t1 = make(
        ToolDispatched,
        tool_call_id="call_1",
        tool_name="generate_image",
        assistant_entry_id="e-asst-1",
        args=args,
        args_hash=ids.args_hash(args),
        result_entry_id=result_entry_id,
        idempotency_key=ids.idempotency_key(OP, "call_1"),
        policy="idempotent",
        dispatch_attempt=1,
    )
    records = [
        make(OperationAccepted, input_entry_id=INPUT_ENTRY, start_leaf_id=None),
        make(ModelAttempted, attempt_id="att-1", assistant_entry_id="e-asst-1", model="m"),
        t1,
        make(ToolResolved, tool_call_id="call_1", resolution="confirmed", by="admin", reason="x"),
        t1.model_copy(update={"dispatch_attempt": 2}),
    ]
    evidence = RecoveryEvidence(frozenset({INPUT_ENTRY, "e-asst-1", result_entry_id}))
    with pytest.raises(CorruptedOperationLog):
        recover_operation(records, evidence)
