"""Panels that arrive with an imported session: kept like rendered ones, for nothing.

An imported panel is an ``Image`` of its importer, private until published, with its
file under MEDIA_ROOT like a rendered one. Its ``RenderJob`` (every image has one) is a
record of the import, not of a render: backend ``import``, cost 0, no charge in the
ledger and no wallet touched, so an import neither spends nor grants a credit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings

from jaiweb.render.models import Image, RenderJob
from jaiweb.render.services import _write_file

IMPORT_BACKEND = "import"


@dataclass(frozen=True, slots=True)
class KnownImage:
    """What an import needs to know of an image id that is taken already."""

    image_id: str
    user_id: Any
    sha256: str | None  # of its file; None when the file is gone


def images_known(*, ids: list[str]) -> dict[str, KnownImage]:
    """The images among ``ids`` that exist, with the digest of each one's file."""
    known = {}
    for image in Image.objects.filter(id__in=ids):
        path = Path(settings.MEDIA_ROOT) / image.path
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
        known[image.id] = KnownImage(image.id, image.user_id, digest)
    return known


def image_bytes(*, image_id: str, owner_id: Any) -> tuple[str, bytes] | None:
    """``(content_type, data)`` of an image of ``owner_id`` whose file is there, else None."""
    image = Image.objects.filter(pk=image_id, user_id=owner_id).first()
    if image is None:
        return None
    path = Path(settings.MEDIA_ROOT) / image.path
    if not path.is_file():
        return None
    return image.content_type, path.read_bytes()


def images_of_owner(*, ids: list[str], owner_id: Any) -> list[str]:
    """Those of ``ids`` that are images of ``owner_id`` with their file there, in order."""
    rows = dict(Image.objects.filter(id__in=ids, user_id=owner_id).values_list("id", "path"))
    return [i for i in ids if i in rows and (Path(settings.MEDIA_ROOT) / rows[i]).is_file()]


def image_import(
    *,
    user: Any,
    image_id: str,
    content_type: str,
    extension: str,
    data: bytes,
    now: datetime,
    source: str = "",
) -> Image:
    """A new image of ``user`` from an import (inside the caller's transaction).

    The file is written (durably, as a render's is) before the rows; a transaction rolled
    back afterwards leaves a file that no row names, which nothing serves."""
    relative = Path("panels") / str(user.pk) / f"{image_id}.{extension}"
    _write_file(Path(settings.MEDIA_ROOT) / relative, data)
    digest = hashlib.sha256(data).hexdigest()
    job = RenderJob.objects.create(
        key=f"import_{image_id}",
        user=user,
        params={"imported": source[:200], "sha256": digest},
        params_hash=digest,
        backend=IMPORT_BACKEND,
        cost=0,
        status=RenderJob.SUCCEEDED,
        result={"image_id": image_id, "content_type": content_type, "backend": IMPORT_BACKEND},
        created_at=now,
        finished_at=now,
    )
    return Image.objects.create(
        id=image_id,
        user=user,
        job=job,
        path=str(relative),
        content_type=content_type,
        created_at=now,
    )
