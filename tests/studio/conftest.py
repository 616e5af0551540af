"""Fixtures for the tests of the studio's pages, parts and socket (tests/support/fixtures.py)."""

from tests.support.fixtures import episode, media  # noqa: F401 - fixtures
