"""The figures of GET /metrics, in the Prometheus text exposition format (version 0.0.4).

The journal figures come from the database with three aggregate queries (sessions,
operations grouped by outcome, the credit ledger's charges), so every web process
answers the same numbers. They count rows as stored: deleting a session removes its
entries and operations, so they are gauges, never counters (use ``delta()``, not
``rate()``). The process figures (start time, uptime, open websockets) are this
process's own.
"""

from __future__ import annotations

import os
import time

import psutil
from django.db import connection
from django.db.models import Count, F, Min, Q, Sum
from django.utils import timezone
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from jaiweb import requests_first
from jaiweb.ops.watchers import open_websockets
from jaiweb.render.models import LedgerEntry
from jaiweb.store.models import ComicSession, Operation
from jaiweb.studio.pass_counts import pass_counts

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
OUTCOMES = ("completed", "failed", "aborted", "interrupted")
_STARTED_AT = psutil.Process().create_time()


def journal_figures(now=None) -> dict:
    """The database's figures: three aggregate queries, no per-row Python."""
    now = now or timezone.now()
    sessions = ComicSession.objects.aggregate(
        sessions=Count("pk"), entries=Sum("entry_count", default=0)
    )
    unclaimed = Q(parked_at__isnull=True) & (
        Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now)
    )
    groups = list(
        Operation.objects.values("outcome")
        .order_by("outcome")
        .annotate(
            n=Count("pk"),
            parked=Count("pk", filter=Q(parked_at__isnull=False)),
            waiting=Count("pk", filter=unclaimed),
            claims=Sum("fencing", default=0),
            reclaims=Sum(F("fencing") - 1, filter=Q(fencing__gt=1), default=0),
            records=Sum("record_count", default=0),
            oldest=Min("created_at", filter=Q(parked_at__isnull=True)),
        )
    )
    charges = LedgerEntry.objects.filter(kind="charge").aggregate(
        n=Count("pk"), spent=Sum("amount", default=0)
    )
    by_outcome = {outcome: 0 for outcome in OUTCOMES}
    figures = {
        "sessions": sessions["sessions"],
        "entries": sessions["entries"],
        "running": 0,
        "parked": 0,
        "waiting": 0,
        "oldest_running_age": 0.0,
        "claims": 0,
        "reclaims": 0,
        "records": 0,
        "finished": by_outcome,
        "charges": charges["n"],
        "charged_credits": -charges["spent"],
    }
    for g in groups:
        figures["claims"] += g["claims"]
        figures["reclaims"] += g["reclaims"]
        figures["records"] += g["records"]
        if g["outcome"] is None:
            figures["parked"] = g["parked"]
            figures["running"] = g["n"] - g["parked"]
            figures["waiting"] = g["waiting"]
            if g["oldest"] is not None:
                figures["oldest_running_age"] = max(0.0, (now - g["oldest"]).total_seconds())
        else:
            by_outcome[g["outcome"]] = by_outcome.get(g["outcome"], 0) + g["n"]
    return figures


def exposition(*, layer: str) -> str:
    """The text of one scrape: every figure read now, written by prometheus_client."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Scrape(layer))
    return generate_latest(registry).decode("utf-8")


class _Scrape:
    """A collector that reads the figures afresh on each scrape (none is kept between)."""

    def __init__(self, layer: str) -> None:
        self.layer = layer

    def collect(self) -> list[Metric]:
        began = time.perf_counter()
        f = journal_figures()
        query_seconds = time.perf_counter() - began
        operations = GaugeMetricFamily(
            "jaiweb_operations",
            "Operations stored, by state: running = unfinished and not parked (claimed, or "
            "waiting for a runner); parked = unfinished, in the recovery inbox; the others "
            "finished with that outcome.",
            labels=["state"],
        )
        operations.add_metric(["running"], f["running"])
        operations.add_metric(["parked"], f["parked"])
        for outcome, n in sorted(f["finished"].items()):
            operations.add_metric([outcome], n)
        out: list[Metric] = [operations]
        out += [
            GaugeMetricFamily(name, help_text, value=value)
            for name, help_text, value in _gauges(f, query_seconds)
        ]
        counts = pass_counts()
        passes = CounterMetricFamily(
            "jaiweb_catch_up_passes",
            "Catch-up passes of this process's studio websockets, by kind: asked (a connect, "
            "lost events, the page asking), quiet (after a burst) and unannounced (after a "
            "change that did not say what it changed) read every region from the database; "
            "changed reads only the regions the announced facts can change.",
            labels=["kind"],
        )
        for kind, n in counts["passes"].items():
            passes.add_metric([kind], n)
        reads = CounterMetricFamily(
            "jaiweb_catch_up_reads",
            "Region renderings of this process read from the database, shared by a session's "
            "watchers of one language, by what they read: path (the tree and the strip), run "
            "(the run and the leaf's state), credits (the balance), cached (a whole pass "
            "served by what changed passes rendered, or a changed pass by what a whole pass "
            "or an answer rendered), stream (the latest run's stream), answer (the whole "
            "context for a studio write's answer), version (the three queries a whole pass "
            "is keyed by).",
            labels=["read"],
        )
        for kind, n in counts["reads"].items():
            reads.add_metric([kind], n)
        waits, waited = requests_first.waits()
        out.append(
            CounterMetricFamily(
                "jaiweb_background_waits",
                "Times this process's catch-up renders and agent loop steps waited for the "
                "requests it was answering (requests go first).",
                value=waits,
            )
        )
        out.append(
            CounterMetricFamily(
                "jaiweb_background_wait_seconds",
                "Seconds this process's catch-up renders and agent loop steps spent waiting "
                "for the requests it was answering.",
                value=waited,
            )
        )
        info = GaugeMetricFamily(
            "jaiweb_process_info",
            "This process: its pid, database vendor and channel layer backend.",
            labels=["pid", "database", "channel_layer"],
        )
        info.add_metric([str(os.getpid()), connection.vendor, self.layer], 1)
        return [*out, passes, reads, info]


def _gauges(f: dict, query_seconds: float) -> tuple[tuple[str, str, float], ...]:
    """The gauges with one value each: name, help, value."""
    return (
        (
            "jaiweb_operations_waiting_for_runner",
            "Running operations that no runner holds right now (never claimed, released, or "
            "their lease expired): claimable at once. Staying above 0 means no runner is alive.",
            f["waiting"],
        ),
        (
            "jaiweb_operation_oldest_running_age_seconds",
            "Age of the oldest running (unfinished, unparked) operation; 0 when there is none.",
            f["oldest_running_age"],
        ),
        (
            "jaiweb_operation_claims",
            "Claims of the stored operations by runners: the sum of their fencing numbers "
            "(each claim adds 1; a recovery pass's claim counts too).",
            f["claims"],
        ),
        (
            "jaiweb_operation_reclaims",
            "Claims beyond each operation's first (sum of fencing - 1): lease takeovers after "
            "a runner died or its lease expired, plus re-claims after a lease was given back "
            "(a recovery pass, an inbox resolution, an error in a runner).",
            f["reclaims"],
        ),
        ("jaiweb_operation_records", "Operation Journal records stored.", f["records"]),
        ("jaiweb_sessions", "Comic sessions stored.", f["sessions"]),
        (
            "jaiweb_entries",
            "Session Journal entries stored (the sum of the sessions' entry counts).",
            f["entries"],
        ),
        (
            "jaiweb_render_charges",
            "Render charges in the credit ledger (one per render key, ever).",
            f["charges"],
        ),
        (
            "jaiweb_render_charged_credits",
            "Credits spent on renders: the sum of the ledger's charges, as a positive number.",
            f["charged_credits"],
        ),
        (
            "jaiweb_metrics_query_seconds",
            "Time this scrape spent on the database queries above.",
            round(query_seconds, 6),
        ),
        (
            "jaiweb_process_start_time_seconds",
            "When this process started, in seconds since the Unix epoch.",
            round(_STARTED_AT, 3),
        ),
        (
            "jaiweb_process_uptime_seconds",
            "Seconds since this process started.",
            round(max(0.0, time.time() - _STARTED_AT), 3),
        ),
        (
            "jaiweb_websocket_watchers",
            "Studio websockets open on this process (accepted and not yet closed).",
            open_websockets(),
        ),
    )
