"""Recovery's decisive step for one operation: ``next_step`` restricted to what needs no one.

A recovery pass (``manage.py recover``, a runner's start-up) finishes what only lacks its
end, settles what may have had its effect when the evidence under its key decides it (the
reconciler), parks the rest of that, and dispatches again what its key makes safe;
anything else is left for a runner to go on with. One line says what was found and done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jaiweb.store.errors import LeaseLost, StaleLog
from jaiweb.store.selectors import operation_reading
from journal import steps
from journal.recovery import describe

if TYPE_CHECKING:
    from jaiweb.agent.loop import OperationRun


def recover_once(run: OperationRun) -> str:
    try:
        run.start()
        reading = operation_reading(operation_id=run.operation_id, session=run.session)
        if reading.log.finished is not None:
            return f"finished already ({reading.log.finished.outcome})"
        found = describe(reading.verdict())
        run.writer.seen(len(reading.records))
        step = steps.next_step(reading.log, reading.evidence, run.branch(), run.limits)
        if not isinstance(step, steps.DECISIVE):
            return f"{found}: a runner goes on from here"
        if isinstance(step, steps.Park):
            done = run.park(step)
        else:
            run.execute(step)
    except LeaseLost:
        return "another runner took it over meanwhile"
    except StaleLog:
        return "someone wrote to it meanwhile; a runner goes on from here"
    if isinstance(step, steps.Finish):
        return f"{found}: wrote operation_finished ({step.outcome})"
    if isinstance(step, steps.Park):
        settled = f"settled by the reconciler ({done.summary()})" if done.settled else ""
        if not done.undecided:
            return f"{found}: {settled}; a runner goes on"
        return f"{found}: " + (f"{settled}; " if settled else "") + "parked in the recovery inbox"
    return f"{found}: dispatched again with the same key; a runner goes on"
