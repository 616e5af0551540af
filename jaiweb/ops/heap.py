"""Keeps the garbage collector's passes short and rare in a long-running process.

A full collection visits every object the collector tracks, holding the GIL throughout. A
serving process holds hundreds of thousands of them from its start (modules, the URLconf
and every view, the API's schemas, the templates, the model provider's client) that live as
long as it does, and a full pass over them stopped every socket of the process at once in
the middle of a narration. ``heap_settle`` collects once and moves what is left into the
permanent generation (``gc.freeze``), so that later passes visit only what the process made
after it.

A process serving a hundred sockets also makes young objects fast, so at CPython's default
threshold it started a collection every few hundred allocations and a full one every few
seconds. The young generation here holds more before it is collected: each pass costs a
little more and they come far less often, and cyclic garbage is still collected.
"""

from __future__ import annotations

import gc

# Container objects allocated (less those freed) before the youngest generation is
# collected; the two older generations keep CPython's default.
YOUNG_THRESHOLD = 10_000


def heap_settle() -> None:
    """Collect what start-up left behind, keep the rest out of every later pass, and let
    the young generation grow further between passes."""
    gc.collect()
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
