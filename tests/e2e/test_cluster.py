"""Scale-out end to end, in Chromium: two daphne processes and runner processes on
PostgreSQL + Redis (jaiweb.devtools.cluster).

The browser watches a session on web A; the prompt is posted through web B; the run
executes in a runner process, which is killed (SIGKILL) inside the paid render. Another
runner — on "another host": its own pid namespace, so it cannot tell the dead runner's pid
from a live one — takes the operation over only once the dead runner's lease has expired,
dispatches the render again under the same key (no second charge), and the browser sees
the panel and the end of the run without a reload.
"""

from __future__ import annotations

import json
import re
import signal
from datetime import datetime

import pytest

from jaiweb.devtools.cluster import Cluster
from tests.support.browser import VIEWPORT, panels, wait_ws_open
from tests.support.clusters import SETUP, Api, lease_of, metrics, wait_until

pytestmark = pytest.mark.slow

LEASE_SECONDS = 6  # long enough that a takeover before the expiry would show
ANOTHER_HOST = ("unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGTERM")


def test_a_browser_on_web_a_sees_a_run_from_web_b_survive_its_runner(
    browser, cluster_env, cluster_database, tmp_path
):
    paused = tmp_path / "paused-render"
    cluster = Cluster(
        web=2,
        runners=1,
        port=0,
        logs=tmp_path / "logs",
        env={**cluster_env, "JAIWEB_LEASE_SECONDS": str(LEASE_SECONDS)},
        runner_env={
            "JAIWEB_PAUSE_AT": "during_tool:generate_image",
            "JAIWEB_PAUSE_FILE": str(paused),
        },
        stop_timeout=5,
    )
    cluster.start()
    context = None
    try:
        web_a, web_b = cluster.urls
        secrets = json.loads(cluster.manage("shell", "-c", SETUP).strip().splitlines()[-1])
        api_b = Api(web_b, secrets["token"])
        session_id = api_b.session_create("across processes")

        context = browser.new_context(viewport=VIEWPORT, locale="en-US")
        context.add_cookies([{"name": "sessionid", "value": secrets["cookie"], "url": web_a}])
        page = context.new_page()
        page.goto(f"{web_a}sessions/{session_id}/")
        wait_ws_open(page)
        assert panels(page).count() == 0

        op = api_b.prompt(session_id, "/draw 擂台对决")
        # The runner's narration reaches web A's socket through Redis, then the render step.
        page.locator("#stream-text").filter(has_text=re.compile(r"\S")).wait_for()
        page.locator('#stream-steps [data-tool="generate_image"][data-done="false"]').wait_for()
        wait_until(paused.exists, 30, "the runner to pause inside the render")

        assert cluster.kill("runner-1", signal.SIGKILL) == -signal.SIGKILL
        owner, fencing, expires = lease_of(cluster_database, op)
        assert fencing == 1 and f":{cluster.members['runner-1'].pid}:" in owner
        cluster.add_runner(wrap=ANOTHER_HOST)  # no pause this time

        # The browser sees the panel and the end, live.
        panels(page).first.wait_for(timeout=60_000)
        page.locator("#stream-steps").filter(has_text="Finished: completed").wait_for()
        done = api_b.finished(op)
        assert done["outcome"] == "completed"
        assert lease_of(cluster_database, op)[1] == 2  # one takeover (the lease is released)
        assert datetime.fromisoformat(done["finished_at"]) > expires  # waited for the expiry
        renders = [
            r["dispatch_attempt"]
            for r in done["records"]
            if r["type"] == "tool_dispatched" and r["tool_name"] == "generate_image"
        ]
        assert renders == [1, 2]  # dispatched again under the same key
        after = metrics(web_a)
        assert after["jaiweb_render_charges"] == 1 and after["jaiweb_render_charged_credits"] == 10
        assert after["jaiweb_operation_reclaims"] == 1
        assert panels(page).count() == 1
        cluster.manage("journal_check")
    finally:
        if context is not None:
            context.close()
        codes = cluster.stop()
    assert codes["web-1"] == 0 and codes["web-2"] == 0, codes
