"""Browser tests: real Chromium (Debian's) against a real `manage.py studio` child.

The studio runs as a child process on pytest-django's test database, which is a file
(SQLite) or a real PostgreSQL database, so the child and this process see the same rows.
Tests drive it only through the browser; the ORM is used here to set things up (a staff
user) and to wait for the server to be done before the flush.

Playwright's sync API keeps an asyncio loop running in this thread, which Django's ORM
refuses to touch: ``DJANGO_ALLOW_ASYNC_UNSAFE`` is set for the length of the e2e package
only, and the browser is stopped at its end, so the test modules after it see an ordinary
thread again. One browser serves the whole package (each test gets its own browser
context): launching it per module cost a second or two a module on this machine. The
shared studio stays per module: kept alive for the package, on PostgreSQL + Redis its
runner took the runs of the tests that start a studio of their own (a pause or a crash
they set up never came).

Run: ``python -m pytest tests/e2e`` (``./dev test`` runs them too, and installs Debian's
chromium first when /usr/bin/chromium is missing). Screenshots go to var/screenshots/
(ignored; `./dev screenshots` refreshes the README's).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.db import connection

from tests.support.browser import TIMEOUT_MS, VIEWPORT, Studio

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="package", autouse=True)
def _allow_orm_beside_playwright() -> Iterator[None]:
    """Playwright's sync API runs an event loop here; the ORM may still be used."""
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if before is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


@pytest.fixture(scope="module")
def studio_env(tmp_path_factory) -> dict[str, str]:
    media = tmp_path_factory.mktemp("e2e-media")
    return {
        "JAIWEB_MEDIA_ROOT": str(media),
        "JAIWEB_LEASE_SECONDS": "5",
        # DEBUG left unset: the studio serves as `./dev studio` does, with DEBUG off, its own
        # error pages and its own static files (htmx, the stylesheet)
        "JAIWEB_PROMPTS_PER_MINUTE": "1000",
    }


def _start_studio(settings_dict: dict, env: dict[str, str]) -> Iterator[Studio]:
    studio = Studio(dict(settings_dict), env)
    try:
        studio.start()
        yield studio
    finally:
        studio.kill()


@pytest.fixture(scope="module")
def shared_studio(django_db_setup, studio_env) -> Iterator[Studio]:
    """One studio for every test of a module that needs no restart."""
    yield from _start_studio(connection.settings_dict, studio_env)


@pytest.fixture
def own_studio(django_db_setup, studio_env) -> Iterator[Studio]:
    """A studio of this test alone, not started yet: ``start(env)``, ``kill()``, ``restart()``
    on the same database (and the same port once it has one)."""
    studio = Studio(dict(connection.settings_dict), studio_env)
    try:
        yield studio
    finally:
        studio.kill()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for name in ("shared_studio", "own_studio"):
            studio = item.funcargs.get(name) if hasattr(item, "funcargs") else None
            if isinstance(studio, Studio):
                report.sections.append((f"{name} output", studio.output()))
        for p in getattr(item, "_e2e_pages", []):
            log = getattr(p, "_e2e_log", None)
            if log:
                report.sections.append(("browser console", "\n".join(log[-60:])))


@pytest.fixture(autouse=True)
def _shared_studio_idle_before_flush(request) -> Iterator[None]:
    """Leave the shared studio idle before the test's flush empties the tables.

    Autouse here, so it is set up after tests/conftest.py's fixture that brings in
    ``transactional_db``, and torn down before that flush: a run still going (or waiting
    for an approval) is asked to stop and waited for.
    """
    yield
    if "shared_studio" not in request.fixturenames:
        return
    from jaiweb.store.models import Operation
    from jaiweb.store.services import operation_stop_request

    def running():
        return list(Operation.objects.filter(outcome__isnull=True, parked_at__isnull=True))

    for op in running():
        try:
            operation_stop_request(operation_id=op.id, by="e2e-teardown")
        except Exception as exc:  # already stopping or finished: fine
            print(f"stop {op.id}: {exc!r}")
    deadline = time.monotonic() + 20
    while running() and time.monotonic() < deadline:
        time.sleep(0.1)


# --- the browser -------------------------------------------------------------------------


def _chromium_or_fail() -> str:
    if not Path(CHROMIUM).exists():
        found = shutil.which("chromium")
        pytest.fail(
            f"{CHROMIUM} is missing (found: {found}); install Debian's chromium: "
            "apt-get update && apt-get install -y chromium (./dev test does this)",
            pytrace=False,
        )
    return CHROMIUM


@pytest.fixture(scope="package")
def browser():
    """Debian's Chromium, headless. Playwright's launch gives it a fresh temporary profile;
    each test's pages get their own context (cookies) on top of it."""
    from playwright.sync_api import sync_playwright

    executable = _chromium_or_fail()
    pw = sync_playwright().start()
    try:
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
    finally:
        pw.stop()


def _watch(page, request) -> None:
    log: list[str] = []
    page._e2e_log = log
    page.on("console", lambda m: log.append(f"[console.{m.type}] {m.text}"))
    page.on("pageerror", lambda e: log.append(f"[pageerror] {e}"))
    page.on(
        "requestfailed",
        lambda r: log.append(f"[requestfailed] {r.method} {r.url} {r.failure}"),
    )
    page.set_default_timeout(TIMEOUT_MS)
    pages = getattr(request.node, "_e2e_pages", [])
    pages.append(page)
    request.node._e2e_pages = pages


@pytest.fixture
def new_page(browser, request) -> Iterator[Callable]:
    """new_page() → a page in a fresh context (its own cookies: one per user);
    new_page(other.context) → another tab of the same browser context (the same user)."""
    contexts = []

    def make(context=None):
        if context is None:
            context = browser.new_context(viewport=VIEWPORT, locale="en-US")
            contexts.append(context)
        page = context.new_page()
        _watch(page, request)
        return page

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def page(new_page):
    return new_page()
