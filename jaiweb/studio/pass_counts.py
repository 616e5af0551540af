"""How many catch-up passes this process's watchers made, by kind, and how many region
renders read the database, by what they read: what ``/metrics`` reports, and what the
load bench divides by the operations to see where the catch-ups' CPU goes.

Counters of this process only, since it started (each web process reports its own).
"""

from __future__ import annotations

import threading
from collections import Counter

# A watcher's passes that read every region from the database: ``asked`` (a connect, a
# gap, the page asking), ``quiet`` (the one after a burst, when this process's counts
# cannot tell what the page holds), ``unannounced`` (after an event that did not say what
# changed); and the others: ``changed`` (only the regions whose facts moved),
# ``unchanged`` (nothing moved: no query, nothing sent).
PASS_KINDS = ("asked", "quiet", "unannounced", "changed", "unchanged")
# A rendering from the database, shared by the watchers of a session and language:
# ``path`` (the tree and the strip: the whole context), ``run`` (the run and the leaf's
# state alone), ``credits`` (the balance alone), ``cached`` (a whole pass served by what
# the changed passes rendered), ``stream`` (the stream as the journal has it); and
# ``version``, the three short queries of the database version the whole passes and the
# renders are keyed by.
READ_KINDS = ("path", "run", "credits", "cached", "stream", "version")

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
