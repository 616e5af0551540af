"""Shared fixtures for the Django-side tests."""

from __future__ import annotations

import pytest
from django.test.utils import override_settings

# A local cluster's PostgreSQL database and environment (tests/ops, tests/e2e).
pytest_plugins = ["tests.clusters"]


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
