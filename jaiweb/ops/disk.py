"""Is there room to write? What /healthz reports as ``disk``, and pages' writes on a full disk.

The disk counts as full while a write of this process failed for lack of space in the
last minute (``jaiweb.store.space``), or while a filesystem this process writes to has
less than ``JAIWEB_DISK_MIN_FREE_MB`` free: the one holding ``JAIWEB_MEDIA_ROOT`` and,
on SQLite, the one holding the database file. A PostgreSQL server's disk is not
visible from here; it shows through the writes that fail.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from jaiweb.store.space import space_failure_note, space_failure_recent

log = logging.getLogger(__name__)

MB = 1024 * 1024


def _existing(path: Path) -> Path:
    """Return ``path``, or its nearest parent that exists (MEDIA_ROOT is made on the first
    render)."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path("/")


def written_paths() -> dict[str, Path]:
    """Return the places this process writes files to, by name."""
    paths = {"media": Path(settings.MEDIA_ROOT)}
    if connection.vendor == "sqlite":
        paths["database"] = Path(connection.settings_dict["NAME"]).parent
    return paths


def short_of_space() -> list[str]:
    """Say what lacks space: "writes" when a write failed for lack of it in the last
    minute, and the name of each written place with less than JAIWEB_DISK_MIN_FREE_MB
    free. An empty list means there is room."""
    short = ["writes"] if space_failure_recent() else []
    floor = settings.JAIWEB_DISK_MIN_FREE_MB * MB
    if floor:
        for name, path in written_paths().items():
            try:
                free = shutil.disk_usage(_existing(path)).free
            except OSError as exc:
                log.warning("cannot measure the free space of %s (%s): %s", name, path, exc)
                continue
            if free < floor:
                short.append(name)
    return short


class OutOfSpaceMiddleware:
    """A page's write that failed for lack of disk space answers 503, saying so, instead
    of 500, and is noted for /healthz. (The JSON API does the same in its own handlers.)"""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not space_failure_note(exc=exc):
            return None
        return HttpResponse(
            _("The server is out of disk space; nothing was saved. Try again later."),
            status=503,
            content_type="text/plain; charset=utf-8",
        )
