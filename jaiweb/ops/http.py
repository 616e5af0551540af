"""The web processes' HTTP handler: a request's middleware and view run on one kept thread.

Django's own ASGI handler builds the middleware chain for async: its sync middleware run
in a thread, the innermost of them (``ApiMiddleware``) hands the request back to the event
loop, which hands the view to the thread again, and so on out. Each of these passes
waits until the event loop, busy with every websocket of the process, gets round to it,
and the thread holds its pooled database connection meanwhile. It also starts a thread
for each request (and another to join it).

``KeptThreadHandler`` builds the chain as a WSGI server does, one sync call from the
outermost middleware to the view, and runs it on a thread lent to the request from a set
kept for the life of the process. The request's signals (``request_started``, and
``request_finished`` when the answer closes: Django opens and returns the database
connection of the thread there) run on that same thread, so a request reaches the event
loop only to read its body and to send its answer. What the middleware and the views do
is unchanged; an async view (``/healthz``) is called from the thread as Django calls one
under WSGI.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpRequest, HttpResponse

from jaiweb.requests_first import answering

THREAD_NAME = "jaiweb-http"

# How long a thread may keep the GIL while another waits for it (CPython's default is
# 5 ms). A request thread gives the GIL up at each database and Redis round trip and then
# waits to get it back from whichever thread runs Python meanwhile: in a busy web process,
# the renderers of the watchers' catch-ups (jaiweb/studio/consumers.py), which rarely give
# it up on their own. A request makes a dozen round trips, so it waited out that many
# switch intervals. The web processes set this shorter one (jaiweb/asgi.py).
GIL_SWITCH_SECONDS = 0.001


# Idle request threads a web process keeps; a burst of more requests at once makes more,
# and those are let go as they come back.
MAX_IDLE_THREADS = 64


class KeptThreads:
    """One-thread executors kept between requests; a request borrows one while it runs.

    Used from the event loop only, so it needs no lock. The last one given back is the
    next one lent, so a quiet process uses few of them. Past ``max_idle`` idle ones, one
    given back is shut down (its thread ends once its work is done; nothing waits).
    """

    def __init__(self, name: str = THREAD_NAME, max_idle: int = MAX_IDLE_THREADS) -> None:
        self.name = name
        self.max_idle = max_idle
        self._idle: list[ThreadPoolExecutor] = []
        self.made = 0

    def lend(self) -> ThreadPoolExecutor:
        if self._idle:
            return self._idle.pop()
        self.made += 1
        return ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{self.name}-{self.made}")

    def give_back(self, executor: ThreadPoolExecutor) -> None:
        if len(self._idle) < self.max_idle:
            self._idle.append(executor)
        else:
            executor.shutdown(wait=False)

    @property
    def idle(self) -> int:
        return len(self._idle)


class KeptThreadHandler(ASGIHandler):
    """Django's ASGI handler with the whole sync chain on one kept thread per request."""

    def __init__(self) -> None:
        super(ASGIHandler, self).__init__()  # BaseHandler's: the chain is loaded below
        self.load_middleware(is_async=False)
        self.threads = KeptThreads()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        executor = self.threads.lend()
        try:
            # Every thread-sensitive call of the request (its signals, the chain, closing
            # the answer) goes to this executor's one thread.
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, receive, send)
        finally:
            self.threads.give_back(executor)

    async def get_response_async(self, request: HttpRequest) -> HttpResponse:
        return await sync_to_async(self._answer, thread_sensitive=True)(request)

    def _answer(self, request: HttpRequest) -> HttpResponse:
        with answering():  # the process's renderers and runners give way meanwhile
            return self.get_response(request)
