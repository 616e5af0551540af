"""Fixtures for the tests of the recovery inbox and the admin (tests/support/fixtures.py)."""

from tests.support.fixtures import media  # noqa: F401 - a fixture
