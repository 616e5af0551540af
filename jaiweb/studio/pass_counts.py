"""How many catch-up passes this process's watchers made, by kind, and how many region
renders read the database, by what they read: what ``/metrics`` reports, and what the
load bench divides by the operations to see where the catch-ups' CPU goes.

Counters of this process only, since it started (each web process reports its own).
"""

from __future__ import annotations

import threading
from collections import Counter

# A watcher's passes (``jaiweb.live.catch_up.Read``): ``asked`` (a connect, lost events, the
# page asking), ``quiet`` (the one after a burst) and ``unannounced`` (after a change that
# did not say what it changed) read every region from the database; ``changed`` reads only
# the regions the announced facts can change.
PASS_KINDS = ("asked", "quiet", "unannounced", "changed")
# A rendering from the database, shared by the watchers of a session and language:
# ``path`` (the tree and the strip: the whole context), ``run`` (the run and the leaf's
# state alone), ``credits`` (the balance alone), ``cached`` (a whole pass served by what
# the changed passes rendered, or a changed pass served by what a whole pass or an answer
# rendered), ``stream`` (the stream as the journal has it), ``answer`` (the whole context
# for a studio write's HTTP answer, which the passes after it then find); and
# ``version``, the three short queries of the database version the whole passes and the
# renders are keyed by.
READ_KINDS = ("path", "run", "credits", "cached", "stream", "answer", "version")

_lock = threading.Lock()
_passes: Counter[str] = Counter()
_reads: Counter[str] = Counter()


def pass_count(kind: str) -> None:
    with _lock:
        _passes[kind] += 1


def read_count(kind: str) -> None:
    with _lock:
        _reads[kind] += 1


def pass_counts() -> dict[str, dict[str, int]]:
    """{"passes": {kind: n}, "reads": {kind: n}}, every kind present."""
    with _lock:
        return {
            "passes": {k: _passes[k] for k in PASS_KINDS},
            "reads": {k: _reads[k] for k in READ_KINDS},
        }
