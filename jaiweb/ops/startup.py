"""Checks a serving process makes before it starts (the full system checks are skipped to
start fast; these are the ones a misconfiguration would otherwise hide until a render)."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from django.core.management.base import CommandError

from jaiweb.render.backends import image_backend_problems


def refuse_a_broken_image_backend() -> None:
    """Stop with the reason when the configured image backend cannot be built."""
    problems = image_backend_problems()
    if problems:
        raise CommandError("; ".join(problems))


# The templates a watcher's first catch-up renders (the regions, the stream's fragments).
WARM_TEMPLATE_DIRS = ("studio/regions", "studio/stream", "studio/strip", "studio/tree")


def warm_up() -> None:
    """Load the URLconf (every view, the API and its schemas), the studio's live templates
    and the configured model provider's module before the first request or run does.

    Without it, the first page or socket after a start paid for them: the first catch-up
    of a page reconnecting after a restart took seconds on a busy machine, and the page
    showed the state from before the restart all that while. A serving process loads all
    of this for its first answer anyway; here it is done before it answers at all.
    """
    from django.conf import settings
    from django.template.loader import get_template
    from django.urls import get_resolver

    get_resolver().reverse_dict  # noqa: B018 - populating it imports every view
    import_model_provider()
    for folder in WARM_TEMPLATE_DIRS:
        for base in settings.TEMPLATES[0]["DIRS"]:
            for path in sorted((Path(base) / folder).glob("*.html")):
                get_template(f"{folder}/{path.name}")


def import_model_provider() -> None:
    """Import the configured model provider's module: its client library is large, and the
    first run paid for loading it while the process's sockets waited."""
    from django.conf import settings

    if settings.JAIWEB_LLM_MODEL:
        import_module("jaiweb.agent.providers.openai_compat")
