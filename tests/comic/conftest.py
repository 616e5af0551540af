"""Fixtures for the comic exports: a media folder of the test's own, and a session to draw."""

from tests.support.fixtures import episode, media  # noqa: F401 - fixtures
