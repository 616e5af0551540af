"""A real `manage.py studio` on the test database, for the gates that attack it from outside
(tests/api/test_fuzz.py, tests/studio/test_websocket_fuzz.py).

The child serves HTTP and websockets with daphne and runs the agent runner (the offline
director), exactly as `./dev studio` does; the test talks to it over loopback only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import httpx

from tests.support.children import Child, studio


@dataclass
class LiveStudio:
    child: Child
    url: str  # "http://127.0.0.1:PORT/"

    @property
    def ws_url(self) -> str:
        return "ws" + self.url.removeprefix("http")

    def healthy(self) -> bool:
        """The process is up and /healthz answers ok (database and channel layer)."""
        if self.child.process.poll() is not None:
            return False
        response = httpx.get(self.url + "healthz", timeout=30)
        return response.status_code == 200 and response.json()["ok"] is True

    def tracebacks(self) -> list[str]:
        """Every traceback the child wrote to stderr, each with the lines that follow it."""
        err = list(self.child.err)
        return ["\n".join(err[i : i + 80]) for i, line in enumerate(err) if "Traceback" in line]


@contextlib.contextmanager
def live_studio(settings_dict: dict, env: dict[str, str]) -> Iterator[LiveStudio]:
    child = studio(settings_dict, env=env)
    try:
        yield LiveStudio(child=child, url=child.listening_url(timeout=120))
    finally:
        child.stop()
