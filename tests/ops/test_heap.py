"""A serving process's heap after start-up (jaiweb/ops/heap.py): what start-up loaded is
kept out of the collector's passes, the young generation holds more between them, and
garbage made later is still collected."""

from __future__ import annotations

import json
import subprocess
import sys

from jaiweb.ops.heap import YOUNG_THRESHOLD
from tests.support.children import ROOT, clean_env

# What `daphne jaiweb.asgi:application` and `manage.py studio` import before they serve.
_PROBE = """
import gc, json, sys
import jaiweb.asgi
frozen, threshold = gc.get_freeze_count(), gc.get_threshold()
a, b = [], []
a.append(b)
b.append(a)  # a cycle made after start-up, unreachable once these names go
del a, b
print(json.dumps({
    "frozen": frozen,
    "threshold": threshold,
    "views_loaded": "jaiweb.api.sessions" in sys.modules,
    "collected": gc.collect(),
}))
"""


def test_importing_the_asgi_application_settles_the_heap():
    run = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env=clean_env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout)
    assert found["views_loaded"]  # warmed up before it serves
    assert found["frozen"] > 10_000  # the modules, views and templates start-up loaded
    assert found["threshold"][0] == YOUNG_THRESHOLD
    assert found["collected"] >= 2  # a later cycle is still garbage to the collector
