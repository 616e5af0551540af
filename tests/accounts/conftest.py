"""Fixtures for the tests of accounts: sign-up, log-in, passwords, API tokens.

From tests/support/fixtures.py."""

from tests.support.fixtures import media  # noqa: F401 - a fixture
