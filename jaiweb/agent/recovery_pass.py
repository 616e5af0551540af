"""Recovery's decisive step for one operation: ``next_step`` restricted to what needs no one.

A recovery pass (``manage.py recover``, a runner's start-up) finishes what only lacks its
end, parks what may have had its effect, and dispatches again what its key makes safe;
anything else is left for a runner to go on with. One line says what was found and done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jaiweb.store.errors import LeaseLost, StaleLog
from jaiweb.store.selectors import operation_records, recovery_evidence
from journal import steps
from journal.recovery import describe, fold_operation, verdict_for

if TYPE_CHECKING:
    from jaiweb.agent.loop import OperationRun


def recover_once(run: OperationRun) -> str:
    try:
        run.start()
        records = operation_records(operation_id=run.operation_id)
        olog = fold_operation(records)
        if olog.finished is not None:
            return f"finished already ({olog.finished.outcome})"
        evidence = recovery_evidence(session=run.session, records=records, log=olog)
        found = describe(verdict_for(olog, evidence))
        run.writer.seen(len(records))
        step = steps.next_step(olog, evidence, run.branch(), run.limits)
        if not isinstance(step, steps.DECISIVE):
            return f"{found}: a runner goes on from here"
        run.execute(step)
    except LeaseLost:
        return "another runner took it over meanwhile"
    except StaleLog:
        return "someone wrote to it meanwhile; a runner goes on from here"
    if isinstance(step, steps.Finish):
        return f"{found}: wrote operation_finished ({step.outcome})"
    if isinstance(step, steps.Park):
        return f"{found}: parked in the recovery inbox"
    return f"{found}: dispatched again with the same key; a runner goes on"
