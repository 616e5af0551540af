"""`python manage.py cluster [--web 2] [--runners 1] [--port 8100] [--logs DIR]`.

Starts N daphne web processes (ports PORT, PORT+1, …) and M `runagents` processes on
PostgreSQL + Redis, after running the migrations once; prints one line per process and a
ready line once every web process answers /healthz; on SIGINT or SIGTERM stops them all
(SIGTERM, then SIGKILL after --stop-timeout) and exits 0.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from jaiweb.devtools.cluster import Cluster, ClusterError


class Command(BaseCommand):
    help = "Run a local scale-out cluster: N daphne web processes and M runner processes."

    def add_arguments(self, parser):
        parser.add_argument("--web", type=int, default=2, help="web processes (default 2)")
        parser.add_argument("--runners", type=int, default=1, help="runner processes (default 1)")
        parser.add_argument(
            "--port", type=int, default=8100, help="first web port (default 8100); 0: free ports"
        )
        parser.add_argument("--host", default="127.0.0.1", help="address to bind")
        parser.add_argument(
            "--logs", type=Path, help="directory for <name>.log (default: a new temporary one)"
        )
        parser.add_argument(
            "--workers", type=int, default=4, help="operations run at once per runner"
        )
        parser.add_argument(
            "--insecure",
            action="store_true",
            help="serve /static/ from the web processes even when DEBUG is off",
        )
        parser.add_argument(
            "--stop-timeout",
            type=float,
            default=10,
            help="seconds between SIGTERM and SIGKILL when stopping (default 10)",
        )

    def handle(self, *args, **options):
        if options["web"] < 1 or options["runners"] < 0:
            raise CommandError("--web must be at least 1 and --runners at least 0")
        if not 0 <= options["port"] <= 65535 - options["web"]:
            raise CommandError(f"--port must leave room for {options['web']} ports")
        logs = options["logs"] or Path(tempfile.mkdtemp(prefix="jaiweb-cluster-"))
        cluster = Cluster(
            web=options["web"],
            runners=options["runners"],
            port=options["port"],
            host=options["host"],
            logs=logs,
            env=os.environ,
            workers=max(1, options["workers"]),
            serve_static=settings.DEBUG or options["insecure"],
            stop_timeout=options["stop_timeout"],
        )
        try:
            cluster.check()
        except ClusterError as exc:
            raise CommandError(str(exc)) from None

        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())

        self.stdout.write(
            f"migrating, then starting {options['web']} web and {options['runners']} runner "
            f"process(es); logs in {logs}"
        )
        self.stdout.flush()
        try:
            cluster.start()
        except ClusterError as exc:
            raise CommandError(str(exc)) from None
        for m in cluster.members.values():
            self.stdout.write(m.describe())
        self.stdout.write(
            f"jaiweb cluster ready: {len(cluster.urls)} web, "
            f"{len(cluster.members) - len(cluster.urls)} runner(s); Ctrl-C stops them all"
        )
        self.stdout.flush()

        reported: set[str] = set()
        while not stop.wait(0.5):
            for m in cluster.members.values():
                if m.name not in reported and m.process is not None and not m.running:
                    reported.add(m.name)
                    self.stderr.write(
                        f"{m.name} (pid {m.pid}) exited with code {m.process.returncode}; "
                        f"see {m.log}"
                    )
        self.stdout.write("stopping the cluster")
        self.stdout.flush()
        codes = cluster.stop()
        self.stdout.write(
            "jaiweb cluster stopped: " + ", ".join(f"{n} {code}" for n, code in codes.items())
        )
