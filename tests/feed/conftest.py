"""Fixtures for the tests of the episode feed (tests/support/fixtures.py)."""

from tests.support.fixtures import media  # noqa: F401 - a fixture
