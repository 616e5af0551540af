"""Runners: claim accepted operations from the database and run them, one thread each.

The queue is the operations table itself. A runner first takes over the leases of
holders that ran on this host and are gone (so a restarted studio recovers at once),
then claims the oldest claimable operation under a lease, and runs it in a worker
thread — a run goes on when the browser tab that started it closes. An operation that
keeps killing its runner is not retried forever.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from jaiweb.agent.events import EventSink, NullSink
from jaiweb.agent.faults import Faults
from jaiweb.agent.loop import LoopConfig, OperationRun
from jaiweb.agent.providers import provider_for_settings
from jaiweb.agent.providers.base import Provider
from jaiweb.agent.reconciler import parked_reconcile
from jaiweb.agent.slots import Slot, holding
from jaiweb.agent.state import UnreadableAppState
from jaiweb.agent.tools import default_tools
from jaiweb.agent.tools.base import Tool
from jaiweb.store.errors import LeaseLost, StaleLog
from jaiweb.store.leases import (
    Lease,
    lease_release,
    leases_of_dead_holders_release,
    operation_claim,
)
from jaiweb.store.models import Operation
from jaiweb.store.selectors import operation_claims, operation_reading
from jaiweb.store.services import operation_park, run_append
from jaiweb.store.wakeups import WorkListener, work_announce
from journal.errors import CorruptedOperationLog
from journal.records import ErrorInfo, OperationFinished

log = logging.getLogger(__name__)
MAX_BACKOFF = 5.0  # seconds between claims while the database keeps failing


def _host() -> str:
    """This host as a runner sees it: the hostname and the pid namespace.

    Pids are only comparable inside one pid namespace: two containers may share a
    hostname (host networking) yet not see each other's processes, and a runner there
    must wait for the other's lease to expire instead of judging it dead by its pid.
    """
    try:
        namespace = os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]"
    except OSError:
        return socket.gethostname()
    digits = "".join(c for c in namespace if c.isdigit())
    return f"{socket.gethostname()}.pidns{digits}" if digits else socket.gethostname()


HOST = _host()


def _start_ticks(pid: int) -> str | None:
    """When a process started (Linux clock ticks since boot): tells a reused pid apart.

    Read from /proc rather than psutil: psutil gives seconds since the epoch, derived
    from the boot time, and the leases runners wrote name the ticks; comparing one form
    with the other would judge a live runner dead."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def runner_identity() -> str:
    """``host:pid:start``: enough to tell, on this host, whether the holder still runs."""
    return f"{HOST}:{os.getpid()}:{_start_ticks(os.getpid()) or 0}"


def holder_is_gone(owner: str) -> bool:
    """True only for a holder of this host (and pid namespace) whose process is gone."""
    host, _, rest = owner.partition(":")
    pid, _, start = rest.partition(":")
    if host != HOST or not pid.isdigit():
        return False  # another host's runner: wait for its lease to expire
    return _start_ticks(int(pid)) != start


@dataclass
class RunnerConfig:
    workers: int = 4
    # Threads beyond the workers, for operations that lent their slot while they wait on an
    # outside server (jaiweb.agent.slots): this many such waits at once, per runner.
    outside_waits: int = 32
    poll_seconds: float = 0.25
    max_claims: int = 8  # claims of one operation (a recovery pass counts) before giving up
    lease_seconds: int = field(default_factory=lambda: settings.JAIWEB_LEASE_SECONDS)


# The runners of this process, so that a prompt accepted here starts without waiting for
# their next poll.
_LOCAL_RUNNERS: weakref.WeakSet[Runner] = weakref.WeakSet()


def wake_local_runners() -> None:
    for runner in list(_LOCAL_RUNNERS):
        runner.wake.set()


class Runner:
    """Claims and runs operations; ``recover`` is the pass made before anything else."""

    def __init__(
        self,
        *,
        provider_factory: Callable[[], Provider] = provider_for_settings,
        tools_factory: Callable[[], dict[str, Tool]] = default_tools,
        events: EventSink | None = None,
        faults: Faults | None = None,
        config: RunnerConfig | None = None,
        loop_config: Callable[[], LoopConfig] = LoopConfig,
    ) -> None:
        self.identity = runner_identity()
        self.provider_factory = provider_factory
        self.tools_factory = tools_factory
        self.events = events or NullSink()
        self.faults = faults or Faults.from_environ()
        self.config = config or RunnerConfig()
        self.loop_config = loop_config
        self.wake = threading.Event()
        self.stopping = threading.Event()  # set by shutdown(): no new claims, runs hand back
        self._failures = 0  # claims in a row the database refused
        self._in_hand = 0  # runs in worker threads right now
        self._in_hand_changed = threading.Condition()
        _LOCAL_RUNNERS.add(self)

    # -- one operation ------------------------------------------------------------------

    def claim(self, operation_id: str | None = None, *, counted: bool = True) -> Lease | None:
        now = timezone.now()
        leases_of_dead_holders_release(is_dead=holder_is_gone, now=now)
        return operation_claim(
            owner=self.identity,
            now=now,
            lease_seconds=self.config.lease_seconds,
            operation_id=operation_id,
            counted=counted,
        )

    def claim_or_wait(self) -> Lease | None:
        """``claim``, but a database that is down or refusing connections costs a pause
        (growing to ``MAX_BACKOFF`` seconds while it lasts), never the runner itself: the
        claim is tried again, and the work is still in the database when it comes back."""
        try:
            lease = self.claim()
        except DatabaseError as exc:
            self._failures += 1
            pause = min(MAX_BACKOFF, self.config.poll_seconds * 2**self._failures)
            log.warning(
                "runner %s: the database failed (%s); trying again in %.1f s",
                self.identity,
                str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
                pause,
            )
            connection.close()
            time.sleep(pause)
            return None
        self._failures = 0
        return lease

    def _operation_run(self, lease: Lease) -> OperationRun:
        return OperationRun(
            lease=lease,
            provider=self.provider_factory(),
            tools=self.tools_factory(),
            events=self.events,
            faults=self.faults,
            config=self.loop_config(),
            should_stop=self.stopping.is_set,
        )

    def run_claimed(self, lease: Lease) -> str:
        """Run a claimed operation to its end, its parking, the loss of its lease, or, once
        the runner is stopping, the next step boundary (``handed back``)."""
        with self._in_hand_changed:
            self._in_hand += 1
        try:
            return self._run_claimed(lease)
        finally:
            with self._in_hand_changed:
                self._in_hand -= 1
                self._in_hand_changed.notify_all()

    def shutdown(self, timeout: float) -> int:
        """Stop claiming, and wait up to ``timeout`` seconds for the runs to hand back.

        Each run hands its operation back at its next step boundary, and a lease released there
        is claimable by any runner at once. Return how many runs are still inside a step, waiting
        on a slow model or tool. Their leases go to whoever finds this process gone, or to anyone
        once they expire."""
        self.stopping.set()
        self.wake.set()
        deadline = time.monotonic() + timeout
        with self._in_hand_changed:
            while self._in_hand and time.monotonic() < deadline:
                self._in_hand_changed.wait(max(0.0, deadline - time.monotonic()))
            return self._in_hand

    def _run_claimed(self, lease: Lease) -> str:
        try:
            if self._given_up(lease):
                return "given up"
            return self._operation_run(lease).run()
        except CorruptedOperationLog as exc:
            return self._park(lease, f"the operation log is corrupted: {exc.reason}")
        except UnreadableAppState as exc:  # no claim would read it better: end it, once
            return self._end_unreadable(lease, str(exc))
        except Exception:
            # Not a crash of the process: let another claim try (the claims are counted).
            log.exception("operation %s failed in its runner", lease.operation_id)
            lease_release(lease=lease)
            return "released"
        finally:
            close_old_connections()

    def _given_up(self, lease: Lease) -> bool:
        """After too many claims: finish ``interrupted``, or, with an open dispatch, park."""
        claims = operation_claims(operation_id=lease.operation_id)
        if claims is None or claims <= self.config.max_claims:
            return False
        op = Operation.objects.select_related("session").get(pk=lease.operation_id)
        verdict = operation_reading(operation_id=op.id, session=op.session).verdict()
        why = f"its runner stopped {claims - 1} times while running it"
        if verdict.status == "indeterminate_tool":
            self._park(lease, f"needs attention: {why}")
        else:
            message = f"stopped retrying: {why}"
            self._finish(lease, op.session_id, "interrupted", "crash_loop", message)
        return True

    def _finish(
        self,
        lease: Lease,
        session_id: str,
        outcome: str,
        code: str,
        message: str,
        expected_seq: int | None = None,
    ) -> None:
        finished = OperationFinished(
            operation_id=lease.operation_id,
            timestamp=timezone.now(),
            outcome=outcome,
            error=ErrorInfo(code=code, message=message),
        )
        run_append(
            operation_id=lease.operation_id,
            fencing=lease.fencing,
            records=[finished],
            expected_seq=expected_seq,
        )
        self.events.emit(
            session_id,
            {"type": "operation_finished", "operation_id": lease.operation_id, "outcome": outcome},
        )

    def _end_unreadable(self, lease: Lease, why: str) -> str:
        """The session's app state is one the agent cannot read (a row written before it was
        checked): the operation fails saying so, instead of a claim after claim that crashes
        the same way. With an open dispatch it waits for an admin, as any such run does."""
        message = f"the session's app state cannot be read: {why}"
        log.warning("operation %s: %s", lease.operation_id, message)
        op = Operation.objects.select_related("session").get(pk=lease.operation_id)
        reading = operation_reading(operation_id=op.id, session=op.session)
        if reading.log.finished is not None:
            return "finished"
        verdict = reading.verdict()
        if verdict.status == "indeterminate_tool":
            return self._park(lease, f"needs attention: {message}")
        # A pending input may only be left by an operation that gave up (docs/ARCHITECTURE.md §7).
        outcome = "interrupted" if verdict.pending_inputs else "failed"
        try:  # decided from this read of the log: a prompt typed since refuses the finish
            self._finish(
                lease,
                op.session_id,
                outcome,
                "unreadable_app_state",
                message,
                len(reading.records),
            )
        except LeaseLost:
            return "lost"
        except StaleLog:
            lease_release(lease=lease)
            return "released"
        return "finished"

    def _park(self, lease: Lease, reason: str) -> str:
        try:
            operation_park(operation_id=lease.operation_id, fencing=lease.fencing, reason=reason)
        except LeaseLost:
            return "lost"
        return "parked"

    # -- passes -------------------------------------------------------------------------

    def recover(self) -> list[str]:
        """One pass over every unfinished, unparked operation: one line each, found and done.

        Decisive steps only (an inferred end, a re-dispatch under the same key, parking);
        what can simply go on is left to the runners, so the pass never waits on a user.
        """
        lines = []
        ids = list(
            Operation.objects.filter(
                outcome__isnull=True, parked_at__isnull=True, waiting_since__isnull=True
            )
            .order_by("created_at", "id")
            .values_list("id", flat=True)
        )
        for op_id in ids:
            lease = self.claim(op_id, counted=False)  # a look, not a crash-loop attempt
            if lease is None:
                lines.append(f"{op_id}: held by a live runner; left alone")
                continue
            try:
                if self._given_up(lease):
                    lines.append(f"{op_id}: given up after too many claims")
                    continue
                lines.append(f"{op_id}: {self._operation_run(lease).recover()}")
            except UnreadableAppState as exc:
                lines.append(f"{op_id}: {self._end_unreadable(lease, str(exc))} (bad app state)")
            except CorruptedOperationLog as exc:
                lines.append(
                    f"{op_id}: corrupted log ({exc.reason}): "
                    f"{self._park(lease, f'the operation log is corrupted: {exc.reason}')}"
                    ", left for an admin"
                )
            except Exception as exc:  # one bad operation must not stop the pass
                log.exception("recovery of %s failed", op_id)
                lines.append(
                    f"{op_id}: could not be recovered ({type(exc).__name__}: {exc}); left as it is"
                )
            finally:
                lease_release(lease=lease)
        return lines + self.parked_settle()

    def parked_settle(self) -> list[str]:
        """Settle the parked calls whose evidence decides them now (a render that was still
        in progress when its operation was parked, say); what leaves the inbox is claimable
        at once. One line per operation settled."""
        lines = parked_reconcile()
        if lines:
            work_announce()
            wake_local_runners()
        return lines

    def takeover(self) -> str:
        """Run a long-running runner's start-up pass, and return a line saying what it found.

        The pass frees the leases of dead local holders, settles the parked calls the evidence now
        decides, and counts what is unfinished. Each operation is then recovered when it is
        claimed, since the loop acts on every verdict. So the first operation resumes at once
        instead of after a pass over all of them."""
        released = leases_of_dead_holders_release(is_dead=holder_is_gone, now=timezone.now())
        settled = self.parked_settle()
        waiting = Operation.objects.filter(outcome__isnull=True, parked_at__isnull=True).count()
        parked = Operation.objects.filter(outcome__isnull=True, parked_at__isnull=False).count()
        return (
            f"{waiting} unfinished operation(s) to resume ({len(released)} from runners "
            f"of this host that are gone); {parked} waiting in the recovery inbox"
            + (f"; {len(settled)} settled from their evidence" if settled else "")
        )

    def run_until(self, stop: threading.Event) -> None:
        """Threads only (``runagents``): claim and run until ``stop`` is set."""
        listener = WorkListener.for_database(self.wake.set)
        if listener is not None:
            listener.start()
        try:
            self._claim_until(stop)
        finally:
            if listener is not None:
                listener.stop()

    def _threads(self) -> int:
        return self.config.workers + self.config.outside_waits

    def _claim_until(self, stop: threading.Event) -> None:
        with ThreadPoolExecutor(self._threads(), thread_name_prefix="jaiweb-run") as pool:
            busy = threading.Semaphore(self.config.workers)
            slot = Slot(release=busy.release, acquire=busy.acquire)
            while not stop.is_set() and not self.stopping.is_set():
                if not busy.acquire(timeout=self.config.poll_seconds):
                    continue
                lease = self.claim_or_wait()
                close_old_connections()
                if lease is None:
                    busy.release()
                    self.wake.wait(self.config.poll_seconds)
                    self.wake.clear()
                    continue

                def run(lease=lease):
                    try:
                        with holding(slot):
                            self.run_claimed(lease)
                    finally:
                        busy.release()
                        close_old_connections()

                pool.submit(run)
            self.stopping.set()  # the runs in hand hand back at their next step boundary

    async def serve(self, stop: asyncio.Event) -> None:
        """On daphne's loop (``studio``): the recovery pass, then claims; runs go to threads."""
        loop = asyncio.get_running_loop()
        pool = ThreadPoolExecutor(self._threads(), thread_name_prefix="jaiweb-run")
        # A thread semaphore, not an asyncio one: an operation lends its slot back and takes
        # one again from its worker thread (jaiweb.agent.slots).
        busy = threading.Semaphore(self.config.workers)
        slot = Slot(release=busy.release, acquire=busy.acquire)

        def run_in_slot(lease: Lease) -> str:
            with holding(slot):
                return self.run_claimed(lease)

        def in_thread(fn, *args):
            def call():
                try:
                    return fn(*args)
                finally:
                    close_old_connections()

            return loop.run_in_executor(pool, call)

        while not stop.is_set():
            try:
                log.warning("recovery: %s", await in_thread(self.takeover))
                break
            except DatabaseError as exc:  # the web side serves on; the runner waits
                log.warning("runner %s: no recovery pass yet (%s)", self.identity, exc)
                await asyncio.sleep(MAX_BACKOFF)
        listener = WorkListener.for_database(self.wake.set)
        if listener is not None:  # prompts accepted by the other web processes
            listener.start()
        while not stop.is_set() and not self.stopping.is_set():
            if not await asyncio.to_thread(busy.acquire, timeout=self.config.poll_seconds):
                continue
            if self.stopping.is_set() or stop.is_set():
                busy.release()
                break
            lease = await in_thread(self.claim_or_wait)
            if lease is None:
                busy.release()
                await asyncio.to_thread(self.wake.wait, self.config.poll_seconds)
                self.wake.clear()
                continue
            task = in_thread(run_in_slot, lease)
            task.add_done_callback(lambda _f: busy.release())
        if listener is not None:
            await asyncio.to_thread(listener.stop)
        pool.shutdown(wait=False)
