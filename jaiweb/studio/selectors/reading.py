"""Reads of the active branch as readers see it: the studio's Read mode and the export."""

from __future__ import annotations

import base64
from pathlib import Path

from django.conf import settings
from django.urls import reverse

from jaiweb.comic.reading import Reading, reading_of
from jaiweb.render.selectors import images_by_id
from jaiweb.store.models import ComicSession


def episode_reading(*, session: ComicSession) -> Reading:
    """The active branch as readers see it, each picture inlined as a ``data:`` URI (an
    empty frame when its file is gone): the episode export needs nothing from elsewhere."""
    reading = reading_of(session=session)
    ids = [f.image_id for page in reading.pages for f in page.frames if f.image_id]
    images = images_by_id(ids=ids, owner_id=session.owner_id)
    inlined: dict[str, str] = {}
    for image_id, image in images.items():
        path = Path(settings.MEDIA_ROOT) / image.path
        if path.is_file():
            encoded = base64.b64encode(path.read_bytes()).decode()
            inlined[image_id] = f"data:{image.content_type};base64,{encoded}"
    return reading.sourced(lambda image_id: inlined.get(image_id, ""))


def studio_reading(*, session: ComicSession) -> Reading:
    """The active branch as readers see it (the studio's Read mode), each picture loaded
    from the panel's own address."""
    return reading_of(session=session).sourced(
        lambda image_id: reverse("panel-image", args=[image_id])
    )
