"""How many websockets this process holds open: an ASGI wrapper counts them.

The count lives in this process only (each web process reports its own in /metrics). A
socket counts from the moment the application accepts it until its consumer returns, so a
refused handshake never counts.
"""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_open = 0


def open_websockets() -> int:
    return _open


def _change(by: int) -> None:
    global _open
    with _lock:
        _open += by


class CountWebsockets:
    """Wrap the websocket side of the ASGI application; other scopes pass straight through."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        accepted = False

        async def counting_send(message: dict) -> None:
            nonlocal accepted
            if message.get("type") == "websocket.accept" and not accepted:
                accepted = True
                _change(+1)
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            if accepted:
                _change(-1)
