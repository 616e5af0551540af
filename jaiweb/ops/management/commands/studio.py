"""`python manage.py studio`: the embedded mode.

Serves the ASGI application with daphne in this process. daphne implements no ASGI
lifespan, so this command is where the in-process agent runner gets scheduled on
daphne's event loop (see `schedule_agent_runner`).

It serves with DEBUG off unless asked: visitors get the studio's own 404, 403 and 500
pages, never Django's debug pages (a revoked share link's address, a traceback). The
settings were read with DEBUG's default (on) first, so the embedded mode keeps what that
gives a checkout with no environment: the generated secret key, the derived feed secret,
plain HTTP cookies. ``--debug`` (or DEBUG=1 in the environment) keeps DEBUG on: the
development settings. Static files are served by this process either way.
"""

import asyncio
import os
import sys

from daphne.access import AccessLogGenerator
from daphne.endpoints import build_endpoint_description_strings
from daphne.server import Server  # installs Twisted's asyncio reactor (daphne's app too)
from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from jaiweb.ops.startup import refuse_a_broken_image_backend

# How long a stopping studio waits for its runs to reach a step boundary and hand their
# operations back; a run still inside a step then (a slow model, a render) is left to the
# next runner, which sees this process gone and takes its lease over at once.
SHUTDOWN_SECONDS = 8.0


def schedule_agent_runner(loop: asyncio.AbstractEventLoop):
    """Run the in-process agent runner on daphne's loop (the one serving the consumers).

    The recovery pass comes first, then claims; each run goes to a worker thread, and
    its events are sent on this loop, where the in-memory channel layer lives.
    """
    from jaiweb.agent.runner import Runner
    from jaiweb.live.push import ChannelLayerSink

    runner = Runner(events=ChannelLayerSink(loop))
    loop.create_task(runner.serve(asyncio.Event()))
    return runner


def debug_mode(asked: bool) -> bool:
    """DEBUG for the embedded studio: on with --debug or a DEBUG the environment sets
    (DEBUG=0 stays off), off when nothing says."""
    if asked:
        return True
    if settings.JAIWEB_DEBUG_FROM_ENVIRONMENT:
        return bool(settings.DEBUG)
    return False


def format_url(host: str, port: int) -> str:
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/"


class Command(BaseCommand):
    help = "Serve the studio with daphne in this process (the embedded mode)."
    # Django's system checks walk every model, admin and URL pattern before the first
    # line, a noticeable share of every start (and of every restart a crash test makes),
    # for mistakes `manage.py check` and the test suite catch.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument(
            "--no-migrate",
            action="store_false",
            dest="migrate",
            help="do not run `migrate --noinput` first",
        )
        parser.add_argument(
            "--insecure",
            action="store_true",
            help="kept for old scripts: static files are always served by the studio",
        )
        parser.add_argument(
            "--debug",
            action="store_true",
            help="the development settings: DEBUG on (Django's debug pages, tracebacks)",
        )

    def handle(self, *args, **options):
        host, port = options["host"], options["port"]
        if not 0 <= port <= 65535:
            raise CommandError(f"--port must be between 0 and 65535, got {port}")
        verbosity = options["verbosity"]
        settings.DEBUG = debug_mode(options["debug"])
        refuse_a_broken_image_backend()

        if options["migrate"]:
            call_command("migrate", interactive=False, verbosity=max(verbosity - 1, 0))

        # Importing it loads every view and live template before the studio listens: a
        # page reconnecting after a restart is answered fast (jaiweb/ops/startup.py).
        from jaiweb.asgi import application

        # The embedded studio is its own static server (no collectstatic, no proxy in
        # front), with DEBUG off too.
        application = ASGIStaticFilesHandler(application)

        server = None
        runners = []

        def ready() -> None:
            # Called by daphne after its endpoints are bound, before the reactor runs.
            bound_host, bound_port = (server.listening_addresses or [(host, port)])[0]
            url = format_url(bound_host, bound_port)
            if settings.JAIWEB_PUBLIC_URL is None:
                settings.JAIWEB_PUBLIC_URL = url
            # A frame past daphne's 1 MiB limit or a text frame that is not UTF-8: answer
            # with a close frame (1009, 1007), not autobahn's default of dropping the TCP
            # connection, which a client sees as a network failure (the websocket fuzz test).
            server.ws_factory.setProtocolOptions(failByDrop=False)
            runners.append(schedule_agent_runner(asyncio.get_event_loop()))
            self.stdout.write(f"jaiweb studio listening on {url}")
            self.stdout.flush()

        server = Server(
            application=application,
            endpoints=build_endpoint_description_strings(host=host, port=port),
            action_logger=AccessLogGenerator(sys.stderr) if verbosity >= 1 else None,
            ready_callable=ready,
            verbosity=verbosity,
        )
        server.run()  # until SIGTERM or SIGINT: Twisted stops the reactor
        if server.abort_start:
            raise CommandError(f"could not listen on {format_url(host, port)}")
        self._stop_runners(runners)

    def _stop_runners(self, runners) -> None:
        """Hand every run back at its next step boundary, then exit within the bound."""
        left = sum(runner.shutdown(SHUTDOWN_SECONDS) for runner in runners)
        if left:
            self.stdout.write(
                f"jaiweb studio stopped; {left} run(s) still inside a step are left to the "
                "next runner (it takes over this process's leases at once)"
            )
            self.stdout.flush()
            sys.stderr.flush()
            os._exit(0)  # the worker threads are not joined: that could take a step's time
        self.stdout.write("jaiweb studio stopped; every run was handed back")
