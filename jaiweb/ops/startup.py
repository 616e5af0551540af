"""Checks a serving process makes before it starts (the full system checks are skipped to
start fast; these are the ones a misconfiguration would otherwise hide until a render)."""

from __future__ import annotations

from django.core.management.base import CommandError

from jaiweb.render.backends import image_backend_problems


def refuse_a_broken_image_backend() -> None:
    """Stop with the reason when the configured image backend cannot be built."""
    problems = image_backend_problems()
    if problems:
        raise CommandError("; ".join(problems))
