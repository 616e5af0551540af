"""ASGI entry point: `daphne jaiweb.asgi:application` serves web only.

`python manage.py studio` serves this same application and, later, runs the agent
runner on daphne's loop.
"""

import os
import sys

import django

from jaiweb.ops.http import GIL_SWITCH_SECONDS, KeptThreadHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jaiweb.settings")
# Set Django up (apps, models) before importing anything that may touch models, as
# django.core.asgi.get_asgi_application does. HTTP is Django's handler with each request's
# middleware and view on one kept thread (jaiweb/ops/http.py).
django.setup(set_prefix=False)
django_asgi_app = KeptThreadHandler()
# A request thread back from a round trip gets the GIL sooner from the render threads.
sys.setswitchinterval(GIL_SWITCH_SECONDS)

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import re_path  # noqa: E402

from jaiweb.ops.heap import heap_settle  # noqa: E402
from jaiweb.ops.origins import SameOriginOnly  # noqa: E402
from jaiweb.ops.startup import warm_up  # noqa: E402
from jaiweb.ops.watchers import CountWebsockets  # noqa: E402
from jaiweb.studio.routing import websocket_urlpatterns  # noqa: E402


async def websocket_not_found(scope, receive, send) -> None:
    """A socket to an address no consumer serves: refused at the handshake (daphne answers
    403), quietly. URLRouter itself raised ValueError, a 30-line traceback per attempt."""
    message = await receive()
    if message["type"] == "websocket.connect":
        await send({"type": "websocket.close", "code": 4404})


websocket_routes = [*websocket_urlpatterns, re_path(r"", websocket_not_found)]

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Counted for /metrics (jaiweb_websocket_watchers): open sockets of this process.
        # Only pages of the site's own origin (scheme, host and port) may open one.
        "websocket": CountWebsockets(
            SameOriginOnly(AuthMiddlewareStack(URLRouter(websocket_routes)))
        ),
    }
)

# A serving process answers its first page and socket with every view and live template
# loaded, and its collector's full passes skip what start-up loaded (jaiweb/ops/heap.py).
warm_up()
heap_settle()
