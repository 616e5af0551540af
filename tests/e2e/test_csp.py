"""The site's Content-Security-Policy in Chromium (issue 27.6): the main pages, walked as
people use them, make no violation at all.

Every page of the walk is served with the strict policy (the test checks each document's
header), and the policy is enforced (an inline script injected into the first page does
not run, and its violation is reported, so the watch sees what it is meant to see).
Then: log-in and sign-up, the sessions list, the studio page over its websocket with a
panel drawn, the prompt box emptied, the tree clicked, a share link made from the
inspector, a panel published; the timeline, compare, credits, feed, tokens, password,
import and API-docs pages, the language switch; a stranger's share page; a staff user's
inbox, whose list polls while it is quiet and only the count while a field is being
written in, and the admin.
"""

from __future__ import annotations

import pytest

from tests.support.browser import (
    PASSWORD,
    approve_next,
    branch_entry_ids,
    login,
    new_session,
    run_with_approval,
    send_prompt,
    signup,
    unique,
    user_for_the_studio,
    wait_run_finished,
    wait_until,
    wait_ws_open,
    watch_csp,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]

DRAW = "Draw a panel: the hero bows to the crowd"
INJECTED = """() => {
  const s = document.createElement("script");
  s.textContent = "window.__inlineRan = true";
  document.head.appendChild(s);
  return window.__inlineRan === true;
}"""


class Walk:
    """Pages of one browser context, each document's policy checked as it is loaded."""

    def __init__(self, new_page, violations: list[str] | None = None):
        self.page = new_page()
        self.violations = watch_csp(self.page.context, violations)
        self.documents: list[tuple[str, str]] = []  # (url, its policy)
        self.page.on("response", self._document)

    def _document(self, response) -> None:
        request = response.request
        if request.resource_type != "document" or request.frame != self.page.main_frame:
            return
        if 300 <= response.status < 400:
            return
        self.documents.append((response.url, response.headers.get("content-security-policy", "")))

    def visit(self, url: str, ready: str) -> None:
        response = self.page.goto(url)
        assert response is not None and response.ok, f"{url}: {response and response.status}"
        self.page.locator(ready).first.wait_for()

    def image_shown(self, selector: str) -> None:
        img = self.page.locator(selector).first
        img.wait_for()
        wait_until(lambda: img.evaluate("e => e.complete && e.naturalWidth > 0"), 10, f"{selector}")

    def clean(self, where: str) -> None:
        self.page.evaluate("1")  # a round trip: reports sent before it have arrived
        assert not self.violations, f"after {where}:\n" + "\n".join(self.violations)
        for url, policy in self.documents:
            assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy, (
                f"{url} was served with {policy!r}"
            )


def loaded_requests(page, path: str) -> list[str]:
    """The URLs of the page's requests to ``path`` from now on."""
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url) if r.url.split("?")[0].endswith(path) else None)
    return seen


def test_the_main_pages_make_no_csp_violation(shared_studio, new_page):
    from jaiweb.store.services import session_create
    from tests.support.builders import parked_call

    base = shared_studio.url
    me = Walk(new_page)
    page = me.page

    # the policy is there and enforced, and the watch hears a violation
    me.visit(f"{base}/accounts/login/", "#login-form")
    with page.expect_console_message(lambda m: "Content Security Policy" in m.text):
        assert page.evaluate(INJECTED) is False, "an inline script ran"
    wait_until_reported(page, me.violations)
    assert any("script-src" in v for v in me.violations), me.violations
    me.violations.clear()

    me.visit(f"{base}/accounts/signup/", "#signup-form")
    signup(page, base, unique("csp_"))  # → the sessions list
    page.locator('[data-action="create-session"]').wait_for()
    me.clean("log-in, sign-up and the sessions list")

    # the studio: its socket, a panel drawn, the prompt box emptied, the tree clicked
    session_id = new_session(page, base, "policy <b>walk</b>")
    wait_ws_open(page)
    run_with_approval(page, session_id, DRAW)
    me.image_shown("#strip [data-panel] img")
    assert page.locator('#prompt-form textarea[name="text"]').input_value() == ""
    page.locator("#tree .node").last.click()
    page.locator("#inspector ol.steps").wait_for()
    page.locator('#inspector [data-action="share-up-to-here"]').click()
    made = page.locator("[data-share-url]")
    made.wait_for(state="visible")  # "Share up to here" opened the share panel
    assert page.locator("details#share").evaluate("d => d.open")
    share_url = made.input_value()
    send_prompt(page, "/publish The hero takes a bow")
    approve_next(page)  # publishing is public: always asked
    wait_run_finished(session_id)
    me.clean("the studio page")

    me.visit(f"{base}/sessions/{session_id}/timeline", "#timeline .tl-node")
    path = branch_entry_ids(session_id)
    compare = f"{base}/sessions/{session_id}/compare?left={path[0]}&right={path[-1]}"
    me.visit(compare, ".compare-side img")
    me.visit(f"{base}/credits/", "main")
    me.visit(f"{base}/feed/", ".feed-post")
    me.image_shown(".feed-post img")
    me.visit(f"{base}/accounts/tokens/", '[data-action="create-token"]')
    me.visit(f"{base}/accounts/password/", "form")
    me.visit(f"{base}/sessions/import", '[data-action="import-session"]')
    me.visit(f"{base}/api/v1/docs", "#swagger-ui .info")
    me.clean("the pages beside the studio")

    # the language menu sends itself (site.js), and back
    me.visit(f"{base}/", '[data-action="create-session"]')
    page.locator("header select[name=language]").select_option("zh-hans")
    page.locator('html[lang="zh-hans"]').wait_for(state="attached")
    page.locator("header select[name=language]").select_option("en")
    page.locator('html[lang="en"]').wait_for(state="attached")
    me.clean("the language switch")

    # a stranger's share page
    stranger = Walk(new_page, me.violations)
    stranger.visit(share_url, "[data-shared-branch]")
    stranger.image_shown("[data-shared-branch] [data-panel] img")
    stranger.visit(f"{base}/feed/", ".feed-post")
    stranger.clean("the share page")

    # a staff user's inbox: the list polls while quiet, only the count while written in
    staff_name = unique("staff_")
    staff_user = user_for_the_studio(staff_name, PASSWORD, is_staff=True)
    op = parked_call(session_create(owner=staff_user, title="parked"))
    admin = Walk(new_page, me.violations)
    login(admin.page, base, staff_name)
    lists = loaded_requests(admin.page, "/inbox/list")
    admin.visit(f"{base}/inbox/", f'[data-inbox-item][data-operation-id="{op}"]')
    wait_for_request(admin.page, lists, 1, "the quiet list's poll")
    counts = loaded_requests(admin.page, "/inbox/count")
    reason = admin.page.locator(f'[data-operation-id="{op}"] textarea[name="reason"]')
    reason.fill("looking at it")  # focused, and unsent text in it
    polled = len(lists)
    wait_for_request(admin.page, counts, 2, "the count's polls while the list is paused")
    assert len(lists) == polled, "the list was refreshed while someone wrote in it"
    assert reason.input_value() == "looking at it"
    admin.visit(f"{base}/admin/", "#content")
    admin.clean("the inbox and the admin")

    assert len(me.documents) >= 12 and stranger.documents and admin.documents


def wait_until_reported(page, violations: list[str], timeout_ms: int = 10_000) -> None:
    """Until the binding's report has come (page round trips let it through)."""
    for _ in range(timeout_ms // 50):
        if any(v.startswith("[event]") for v in violations):
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"no securitypolicyviolation event reported: {violations}")


def wait_for_request(page, seen: list[str], n: int, what: str, timeout_ms: int = 15_000) -> None:
    """Until ``seen`` holds ``n`` requests (the page's 3 s polls)."""
    for _ in range(timeout_ms // 100):
        if len(seen) >= n:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"{what}: {len(seen)} of {n} came")
