"""`python manage.py runagents`: runners only, for scale-out (web processes run daphne)."""

import signal
import threading

from django.conf import settings
from django.core.management.base import BaseCommand

from jaiweb.agent.runner import Runner, RunnerConfig
from jaiweb.live.push import ChannelLayerSink
from jaiweb.ops.heap import heap_settle
from jaiweb.ops.niceness import process_niceness_raise
from jaiweb.ops.startup import import_model_provider, refuse_a_broken_image_backend


class Command(BaseCommand):
    help = "Recover unfinished operations, then claim and run accepted ones until stopped."
    # Django's system checks load the URLconf (every view, the API and its schemas) and
    # walk every model and admin, a noticeable share of a restart, for a process that
    # serves no URL. `manage.py check` and the test suite run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--workers", type=int, default=4, help="operations run at once")

    def handle(self, *args, workers, **options):
        refuse_a_broken_image_backend()  # a start refused changes nothing, priority included
        nice = process_niceness_raise(nice=settings.JAIWEB_RUNNER_NICE)
        if not settings.REDIS_URL:
            self.stderr.write(
                "warning: REDIS_URL is not set, so browsers watching through a web process "
                "will not see this runner's live events (the journal still has everything)"
            )
        runner = Runner(events=ChannelLayerSink(), config=RunnerConfig(workers=max(1, workers)))
        self.stdout.write(f"recovery: {runner.takeover()}")
        import_model_provider()
        heap_settle()  # the collector's full passes skip what start-up loaded
        self.stdout.write(
            f"jaiweb runner {runner.identity} running {workers} worker(s) at niceness {nice}"
        )
        self.stdout.flush()
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        runner.run_until(stop)
        self.stdout.write("jaiweb runner stopped")
