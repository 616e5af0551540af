"""The designed interface in Chromium (issue 29.7): the README's pictures, and axe-core.

One studio with DEBUG left to its default (off, as `./dev studio` serves). A newcomer signs
up, draws two panels and shares the branch; then the studio, its Read mode, the shared
branch (the reader's view), the credits page and a 404 are shot at 1440 and 390 px wide,
in English and in
Chinese, and axe-core (vendored under tests/e2e/vendor/, run through Playwright with the
page's own policy still enforced) checks each of them for serious or critical accessibility
violations. A revoked share link answers the studio's own 404, not Django's debug page.
Last, a crash around a publication parks the run, and a staff user's recovery inbox is shot
and checked the same way.

The pictures go to var/screenshots/look/; `./dev screenshots` copies them to
docs/screenshots/, where the README shows them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.browser import (
    SCREENSHOTS,
    approve_next,
    login,
    open_new_session,
    panels,
    run_with_approval,
    send_prompt,
    unfinished_operations,
    unique,
    user_for_the_studio,
    wait_until,
    wait_ws_open,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]

AXE = Path(__file__).parent / "vendor" / "axe-core-4.14.1.min.js"
WIDTHS = {1440: 900, 390: 844}  # width: height
LANGUAGES = ("en", "zh-hans")
SHOTS = SCREENSHOTS / "look"
# The pictures a person can see that are still loading: a picture in a folded or hidden
# part (no layout box) is not shown, and a lazy one below the fold is not fetched yet.
PICTURES_PENDING = """() => [...document.images]
  .filter(i => i.getClientRects().length > 0)
  .filter(i => i.loading !== "lazy" || i.getBoundingClientRect().top < innerHeight)
  .filter(i => !i.complete)
  .map(i => i.currentSrc || i.src)"""
BLOCKING = ("serious", "critical")

AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 4).map(n => n.target.join(" ") + " :: " + n.failureSummary),
  }));
}"""


def look_shot(page, name: str) -> Path:
    """A viewport screenshot to var/screenshots/look/<name>.png, renamed into place."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    part = path.with_name(f".{name}.{os.getpid()}.png")
    part.write_bytes(page.screenshot())
    os.replace(part, path)
    return path


def axe_violations(page) -> list[dict]:
    """The page's serious and critical violations by axe-core's rules. The script is
    evaluated through the DevTools protocol, so the page's policy stays as it is served."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    return [v for v in page.evaluate(AXE_RUN) if v["impact"] in BLOCKING]


def settle(page) -> None:
    """Fonts loaded and every picture on screen decoded, so the shot is what a person sees."""
    page.evaluate("() => document.fonts.ready.then(() => true)")
    pending: list[str] = []

    def settled() -> bool:
        pending[:] = page.evaluate(PICTURES_PENDING)
        return not pending

    try:
        wait_until(settled, 15, "the pictures")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; still loading: {pending}") from None


def speak(page, language: str, url: str) -> None:
    """The language cookie for the whole site (the page's websocket reads it too)."""
    host = url.split("/")[2].split(":")[0]
    cookie = {"name": "django_language", "value": language, "domain": host, "path": "/"}
    page.context.add_cookies([cookie])


def each_look(page, name: str, url: str, ready: str, found: dict[str, list]) -> None:
    """``url`` in both languages at both widths: shot, and checked by axe-core."""
    for language in LANGUAGES:
        speak(page, language, url)
        for width, height in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": height})
            page.goto(url)
            page.locator(ready).first.wait_for()
            assert page.locator("html").get_attribute("lang") == language
            settle(page)
            look_shot(page, f"{name}-{'zh' if language != 'en' else 'en'}-{width}")
            bad = axe_violations(page)
            if bad:
                found[f"{name} {language} {width}"] = bad
    speak(page, "en", url)


def test_the_pages_look_finished_and_pass_axe(own_studio, new_page):
    own_studio.start({"JAIWEB_CRASH_AT": "after_t1:publish_panel"})
    base = own_studio.url
    page = new_page()
    page.set_viewport_size({"width": 1440, "height": 900})
    session_id = open_new_session(page, base, "The lollipop bout")
    run_with_approval(page, session_id, "Draw a panel: Pig-Man eats the super lollipop in the ring")
    run_with_approval(page, session_id, "Draw a panel: Super Strong flies out of the ring")
    panels(page).nth(1).wait_for()

    # a share link for the reader's view, and a second one, revoked
    page.locator('[data-action="open-share"]').click()
    page.locator('[data-action="create-share"]').click()
    shared = page.locator("[data-share-url]").input_value()
    page.locator('[data-action="create-share"]').click()
    page.locator("[data-share-made]").wait_for()
    wait_until(lambda: page.locator("[data-share-url]").input_value() != shared, 10, "link 2")
    revoked = page.locator("[data-share-url]").input_value()
    page.locator('[data-action="revoke-share"]').first.click()
    page.locator("tr[data-revoked]").wait_for()

    found: dict[str, list] = {}
    each_look(page, "studio", f"{base}/sessions/{session_id}/", "#strip [data-panel]", found)
    read = f"{base}/sessions/{session_id}/read"
    each_look(page, "read", read, "[data-reading] [data-panel]", found)
    each_look(page, "share", shared, "[data-shared-branch] [data-panel]", found)
    each_look(page, "credits", f"{base}/credits/", "#credits-balance", found)
    each_look(page, "404", f"{base}/no/such/page/", '[data-status="404"]', found)

    # a revoked link, seen by a stranger: the studio's 404, never Django's debug page
    which = [shared, revoked]
    stranger = new_page()
    answers = {url: stranger.goto(url) for url in which}
    assert sum(r.status == 404 for r in answers.values()) == 1, {
        u: r.status for u, r in answers.items()
    }
    stranger.goto(next(u for u, r in answers.items() if r.status == 404))
    stranger.locator('[data-status="404"]').wait_for()
    body = stranger.content()
    assert "Page not found" not in body and "DEBUG = True" not in body
    assert stranger.evaluate("() => getComputedStyle(document.body).fontFamily").startswith(
        "system-ui"
    ), "the stylesheet is served with DEBUG off"
    icon = stranger.request.get(f"{base}/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"] == "image/x-icon"

    # a crash around a publication: the run waits in the recovery inbox
    page.goto(f"{base}/sessions/{session_id}/")
    wait_ws_open(page)
    send_prompt(page, "/publish The winning slap")
    approve_next(page)
    assert own_studio.wait_exit(60) == 137, own_studio.output()
    [op] = unfinished_operations(session_id)
    from jaiweb.store.models import Operation

    own_studio.restart()
    wait_until(lambda: Operation.objects.get(pk=op.id).is_parked, 60, "the run to be parked")
    staff = unique("staff_")
    user_for_the_studio(staff, "staff-Pass-1", is_staff=True)
    admin = new_page()
    login(admin, base, staff, "staff-Pass-1")
    each_look(admin, "inbox", f"{base}/inbox/", "[data-inbox-item]", found)

    assert not found, "axe-core found serious or critical violations:\n" + "\n".join(
        f"{where}: {v['id']} ({v['impact']}) {v['help']}\n    " + "\n    ".join(v["nodes"])
        for where, violations in found.items()
        for v in violations
    )
