"""Shared fixtures for the Django-side tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test.utils import override_settings
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from tests.support.passes import PASSES, this_pass

# Hypothesis's wall-clock checks (an example's deadline, slow data generation) measure the
# box rather than the code: CI runs two passes at once on two cores, beside Chromium and
# servers, and a property that held would fail as "too slow". Tests that bound their own
# examples keep their settings; none relies on a wall-clock bound (tests/test_layout.py).
hypothesis_settings.register_profile(
    "jaiweb", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile("jaiweb")

# A local cluster's PostgreSQL database and environment (tests/ops, tests/e2e), and a
# Redis server of a test's own (tests/support/own_redis.py).
pytest_plugins = ["tests.support.clusters", "tests.support.own_redis"]

# `./dev test-all` runs the suite twice at once, one pass per database, and names the pass
# in JAIWEB_TEST_PASS. A test that does the same on either pass runs in one of them only:
# the pure core's (no database at all) in the SQLite pass, a local cluster's (always on a
# PostgreSQL database and Redis of its own) in the PostgreSQL pass, and whatever is marked
# ``one_pass("sqlite" | "postgres")``. `./dev test` (no JAIWEB_TEST_PASS) runs them all.
PURE = Path(__file__).parent / "journal"


def home_pass(item) -> str | None:
    """The one pass of test-all that runs ``item``, or None: both do."""
    marker = item.get_closest_marker("one_pass")
    if marker is not None:
        assert marker.args and marker.args[0] in PASSES, f"{item.nodeid}: one_pass({PASSES})"
        return marker.args[0]
    if "cluster_database" in getattr(item, "fixturenames", ()):
        return "postgres"
    if PURE in Path(item.path).parents:
        return "sqlite"
    return None


def _on_postgresql() -> bool:
    from django.conf import settings

    return "postgres" in settings.DATABASES["default"]["ENGINE"]


def pytest_collection_modifyitems(config, items):
    if not _on_postgresql():  # a PostgreSQL-only behaviour has nothing to show on SQLite
        only_there = [item for item in items if item.get_closest_marker("postgresql_only")]
        if only_there:
            config.hook.pytest_deselected(items=only_there)
            items[:] = [item for item in items if not item.get_closest_marker("postgresql_only")]
    this = this_pass()
    if this is None:
        return
    elsewhere = [item for item in items if home_pass(item) not in (None, this)]
    if elsewhere:
        config.hook.pytest_deselected(items=elsewhere)
        items[:] = [item for item in items if home_pass(item) in (None, this)]


@pytest.fixture(autouse=True, scope="session")
def _fast_passwords():
    """MD5 instead of PBKDF2 for the users this process makes: the real hasher spends about
    0.4 s per user on this machine, and most tests make one or two. Processes the tests
    start (``manage.py studio``, a cluster) keep the real hasher: they make few users."""
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


def _release_journal_rows(connection) -> None:
    """Let the test runner's flush clear the append-only tables (never done by the product)."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("UPDATE store_comicsession SET deleting = 1")
        else:
            cursor.execute("SET jaiweb.allow_truncate = 'on'")


@pytest.fixture(autouse=True)
def _the_default_language():
    """Each test starts in the site's default language: a request in Chinese leaves its
    language active on the thread, and the next test would render in it."""
    yield
    from django.utils import translation

    translation.deactivate()


@pytest.fixture(autouse=True)
def _journal_flush_allowed(request):
    """Transactional tests end with a flush of every table, which the triggers would refuse."""
    marker = request.node.get_closest_marker("django_db")
    transactional = "transactional_db" in request.fixturenames or bool(
        marker and marker.kwargs.get("transaction")
    )
    if not transactional:
        yield
        return
    request.getfixturevalue("transactional_db")
    yield
    from django.db import connections

    for connection in connections.all():
        _release_journal_rows(connection)


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password="alice-pass-1")


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob", password="bob-pass-1")
