"""Which pass of `./dev test-all` this process is: ``sqlite``, ``postgres``, or None when the
suite runs alone (`./dev test`). test-all runs both passes at once and names each in
JAIWEB_TEST_PASS."""

from __future__ import annotations

import os

PASSES = ("sqlite", "postgres")


def this_pass() -> str | None:
    name = os.environ.get("JAIWEB_TEST_PASS") or None
    assert name in (None, *PASSES), f"JAIWEB_TEST_PASS={name!r}: one of {PASSES}"
    return name
