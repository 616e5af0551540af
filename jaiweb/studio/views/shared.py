"""A shared branch: the read-only comic a share link shows to anyone holding it, as its
readers see it (pages, captions, speech; no narration, no costs)."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST, require_safe

from jaiweb.comic.jobs import comic_job_file, comic_job_status
from jaiweb.comic.reading import reading_of
from jaiweb.commands import limits
from jaiweb.render.selectors import images_by_id
from jaiweb.store.errors import ShareLinkNotFound
from jaiweb.store.selectors import branch_rows
from jaiweb.store.shares import share_link_open, share_panel_ref
from jaiweb.studio.selectors.strip import strip_panels
from jaiweb.studio.views.files import (
    comic_file,
    comic_job_begin,
    comic_job_download,
    comic_job_json,
    panel_file,
)


def _too_many(request: HttpRequest) -> HttpResponse | None:
    """Count a view of a share link by the client's address; past the limit, answer 429.

    The address is REMOTE_ADDR as ``ClientAddressMiddleware`` leaves it: the peer's, or
    the one the last trusted proxy saw (``JAIWEB_TRUSTED_PROXIES``), never one the client
    wrote in X-Forwarded-For itself.
    """
    now = limits.clock()
    count = limits.minute_count(f"jaiweb:shares:{request.META.get('REMOTE_ADDR', '')}", now)
    if count <= settings.JAIWEB_SHARE_VIEWS_PER_MINUTE:
        return None
    response = HttpResponse(_("Too many views of shared pages; try again in a minute."), status=429)
    response["Retry-After"] = str(limits.seconds_left_in_minute(now))
    return response


def _opened(token: str):
    try:
        session, leaf = share_link_open(token=token)
    except ShareLinkNotFound:
        raise Http404("no such share link") from None
    return session, strip_panels(branch_rows(session=session, leaf_id=leaf))


@require_safe
def shared_branch(request: HttpRequest, token: str) -> HttpResponse:
    if (refused := _too_many(request)) is not None:
        return refused
    try:
        session, leaf = share_link_open(token=token)
    except ShareLinkNotFound:
        raise Http404("no such share link") from None
    reading = reading_of(session=session, leaf_id=leaf).sourced(
        lambda image_id: reverse(
            "shared-panel", args=[token, share_panel_ref(token=token, image_id=image_id)]
        )
    )
    ctx = {"title": session.title, "reading": reading, "token": token}
    response = render(request, "studio/shared.html", ctx)
    response["Cache-Control"] = "private, no-store"
    response["Referrer-Policy"] = "no-referrer"  # the token is in the address
    response["X-Robots-Tag"] = "noindex"
    return response


@require_safe
def shared_panel(request: HttpRequest, token: str, ref: str) -> HttpResponse:
    """A panel of the shared branch, and no other: found by its address under this link,
    and only when the image is the session owner's."""
    if (refused := _too_many(request)) is not None:
        return refused
    session, panels = _opened(token)
    by_ref = {share_panel_ref(token=token, image_id=p.image_id): p.image_id for p in panels}
    image_id = by_ref.get(ref)
    if image_id is None:
        raise Http404("no such panel")
    image = images_by_id(ids=[image_id], owner_id=session.owner_id).get(image_id)
    if image is None:
        raise Http404("no such panel")
    response = panel_file(image, private=True)
    response["Cache-Control"] = "private, no-store"  # a revoked link's panels are not kept
    response["Referrer-Policy"] = "no-referrer"
    return response


@require_safe
def shared_comic(request: HttpRequest, token: str, fmt: str) -> HttpResponse:
    """The shared branch as a comic: the link's pinned node, nothing else of the session."""
    if (refused := _too_many(request)) is not None:
        return refused
    try:
        session, leaf = share_link_open(token=token)
    except ShareLinkNotFound:
        raise Http404("no such share link") from None
    response = comic_file(request, session, fmt=fmt, leaf_id=leaf)
    response["Cache-Control"] = "private, no-store"
    response["Referrer-Policy"] = "no-referrer"
    return response


def _job_urls(token: str, key: str) -> dict[str, str]:
    return {
        "status_url": reverse("shared-comic-job-status", args=[token, key]),
        "file_url": reverse("shared-comic-job-file", args=[token, key]),
    }


def _shared_job(token: str, key: str, *, finished: bool):
    """The link's session and its background export ``key`` (with its file when
    ``finished``), when the export draws the link's pinned node; else 404."""
    try:
        session, leaf = share_link_open(token=token)
    except ShareLinkNotFound:
        raise Http404("no such share link") from None
    job = comic_job_status(session=session, key=key)
    if job is None or job.leaf_id != (leaf or session.leaf_id or ""):
        raise Http404("no such export")
    found = comic_job_file(session=session, key=key) if finished else (job, None)
    if found is None:
        raise Http404("no such export")
    return found


def _private(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "private, no-store"
    response["Referrer-Policy"] = "no-referrer"
    return response


@csrf_exempt  # whoever holds the link may read this export; starting it changes nothing
@require_POST
def shared_comic_job(request: HttpRequest, token: str, fmt: str) -> HttpResponse:
    """Start drawing the shared branch as a PDF or CBZ in the background; answers its
    progress and where to fetch it."""
    if (refused := _too_many(request)) is not None:
        return refused
    try:
        session, leaf = share_link_open(token=token)
    except ShareLinkNotFound:
        raise Http404("no such share link") from None
    job = comic_job_begin(request, session, fmt=fmt, leaf_id=leaf)
    if isinstance(job, HttpResponse):
        return _private(job)
    return _private(comic_job_json(job, **_job_urls(token, job.key)))


@require_safe
def shared_comic_job_status(request: HttpRequest, token: str, key: str) -> HttpResponse:
    """How far a background export of the shared branch is."""
    if (refused := _too_many(request)) is not None:
        return refused
    job, _path = _shared_job(token, key, finished=False)
    return _private(comic_job_json(job, **_job_urls(token, job.key)))


@require_safe
def shared_comic_job_file(request: HttpRequest, token: str, key: str) -> HttpResponse:
    """The file of a finished background export of the shared branch."""
    if (refused := _too_many(request)) is not None:
        return refused
    job, path = _shared_job(token, key, finished=True)
    return _private(comic_job_download(job, path))
