"""Files: a rendered panel, the active branch as one self-contained episode page, and a
branch as a comic (PNG, PDF, CBZ)."""

from __future__ import annotations

import functools
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

from jaiweb.comic.errors import ExportUnavailable
from jaiweb.comic.exports import FORMATS, NoSuchChapter, NoSuchPage, comic_export
from jaiweb.comic.jobs import (
    JOB_FORMATS,
    ExportJob,
    comic_job_file,
    comic_job_start,
    comic_job_status,
)
from jaiweb.render.selectors import image_for_viewer
from jaiweb.studio.selectors.reading import episode_reading
from jaiweb.studio.views.access import own_session
from journal.errors import UnknownEntry
from journal.pages import LAYOUTS


@functools.cache
def reading_css() -> str:
    """The reading view's style sheet, inlined in the episode page (a file that loads
    nothing from elsewhere). It is the site's own file, so no user text is in it."""
    found = finders.find("studio/reading.css")
    return Path(found).read_text(encoding="utf-8") if found else ""


@login_required
@require_safe
def episode_export(request: HttpRequest, session_id: str) -> HttpResponse:
    """The active branch as one self-contained HTML page, as its readers see it: pages of
    panels (inlined) with their captions and speech, no outside links, no narration."""
    session = own_session(request, session_id)
    reading = episode_reading(session=session)
    ctx = {
        "session": session,
        "reading": reading,
        "reading_css": reading_css(),
        "exported_at": timezone.now(),
    }
    response = render(request, "studio/episode.html", ctx)
    response["Content-Disposition"] = f'attachment; filename="episode-{session.id}.html"'
    # Panels are inline SVG data: nothing in the page may run or load from elsewhere.
    response["Content-Security-Policy"] = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    )
    return response


@require_safe
def panel_image(request: HttpRequest, image_id: str) -> FileResponse:
    """A rendered panel: to its owner, or to anyone once it was published to the feed."""
    viewer = request.user if request.user.is_authenticated else None
    image = image_for_viewer(image_id=image_id, viewer=viewer)
    if image is None:
        raise Http404("no such panel")
    return panel_file(image, private=image.published_at is None)


def panel_file(image, *, private: bool) -> FileResponse:
    """A panel's file as a picture that can never run as a page."""
    path = Path(settings.MEDIA_ROOT) / image.path
    if not path.is_file():
        raise Http404("no such panel")
    response = FileResponse(path.open("rb"), content_type=image.content_type)
    # A panel is a picture, never a page: no script in it may run, whatever it holds.
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, max-age=3600" if private else "public, max-age=86400"
    return response


def _comic_params(request: HttpRequest, fmt: str) -> tuple[str | None, int, int | None]:
    """The ``layout``, ``page`` and ``chapter`` of a comic request; 404 when one is not
    a comic this server makes."""
    layout = request.GET.get("layout") or None
    page = request.GET.get("page") or "1"
    chapter = request.GET.get("chapter") or ""  # a chapter of the branch alone (from 1)
    known = layout is None or layout in LAYOUTS
    if fmt not in FORMATS or not known or not page.isdigit() or len(page) > 6:
        raise Http404("no such comic")
    if chapter and (not chapter.isdigit() or len(chapter) > 4):
        raise Http404("no such comic")
    return layout, int(page), int(chapter) if chapter else None


def comic_file(request: HttpRequest, session, *, fmt: str, leaf_id: str | None) -> HttpResponse:
    """The branch root → ``leaf_id`` as a comic file in ``fmt``, laid out as the ``layout``
    parameter says (default: the layout chosen at that node; ``page`` for a PNG,
    ``chapter`` for one chapter of the branch); 404 for an unknown format, layout, node,
    page or chapter, 503 with what to install when this server cannot draw one."""
    layout, page, chapter = _comic_params(request, fmt)
    try:
        comic = comic_export(
            session=session,
            leaf_id=leaf_id,
            format=fmt,
            layout=layout,
            page=page,
            chapter=chapter,
        )
    except (UnknownEntry, NoSuchPage, NoSuchChapter):
        raise Http404("no such comic") from None
    except ExportUnavailable as exc:
        return HttpResponse(str(exc), status=503, content_type="text/plain; charset=utf-8")
    response = HttpResponse(comic.data, content_type=comic.content_type)
    response["Content-Disposition"] = f'attachment; filename="{comic.filename}"'
    response["X-Comic-Pages"] = str(comic.page_count)
    response["X-Content-Type-Options"] = "nosniff"
    return response


def comic_job_json(job: ExportJob, *, status_url: str, file_url: str) -> JsonResponse:
    """A background export's progress, with where to ask again and where its file is."""
    body = {**job.as_json(), "status_url": status_url, "file_url": file_url}
    return JsonResponse(body, status=200 if job.finished else 202)


def comic_job_begin(
    request: HttpRequest, session, *, fmt: str, leaf_id: str | None
) -> ExportJob | HttpResponse:
    """Starts (or finds) the background export of a PDF or CBZ that ``comic_file`` would
    answer; 404 and 503 as it does."""
    layout, _page, chapter = _comic_params(request, fmt)
    if fmt not in JOB_FORMATS:
        raise Http404("no such comic")
    try:
        return comic_job_start(
            session=session, leaf_id=leaf_id, format=fmt, layout=layout, chapter=chapter
        )
    except (UnknownEntry, NoSuchChapter):
        raise Http404("no such comic") from None
    except ExportUnavailable as exc:
        return HttpResponse(str(exc), status=503, content_type="text/plain; charset=utf-8")


def comic_job_download(job: ExportJob, path: Path) -> FileResponse:
    """A finished background export's file, as ``comic_file`` answers it."""
    response = FileResponse(path.open("rb"), content_type=job.content_type)
    response["Content-Disposition"] = f'attachment; filename="{job.filename}"'
    response["X-Comic-Pages"] = str(job.pages)
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _job_urls(session_id: str, key: str) -> dict[str, str]:
    return {
        "status_url": reverse("studio-comic-job-status", args=[session_id, key]),
        "file_url": reverse("studio-comic-job-file", args=[session_id, key]),
    }


@login_required
@require_POST
def comic_job_view(request: HttpRequest, session_id: str, fmt: str) -> HttpResponse:
    """Start drawing a branch of my session as a PDF or CBZ in the background (the node in
    ``leaf_id``, default: the leaf); answers its progress and where to fetch it."""
    session = own_session(request, session_id)
    leaf_id = request.GET.get("leaf_id") or None
    if leaf_id is not None and len(leaf_id) > 64:
        raise Http404("no such comic")
    job = comic_job_begin(request, session, fmt=fmt, leaf_id=leaf_id)
    if isinstance(job, HttpResponse):
        return job
    return comic_job_json(job, **_job_urls(session.id, job.key))


@login_required
@require_safe
def comic_job_status_view(request: HttpRequest, session_id: str, key: str) -> HttpResponse:
    """How far the background export ``key`` of my session is."""
    session = own_session(request, session_id)
    job = comic_job_status(session=session, key=key)
    if job is None:
        raise Http404("no such export")
    return comic_job_json(job, **_job_urls(session.id, job.key))


@login_required
@require_safe
def comic_job_file_view(request: HttpRequest, session_id: str, key: str) -> FileResponse:
    """The file of the finished background export ``key`` of my session."""
    session = own_session(request, session_id)
    found = comic_job_file(session=session, key=key)
    if found is None:
        raise Http404("no such export")
    return comic_job_download(*found)


@login_required
@require_safe
def comic_export_view(request: HttpRequest, session_id: str, fmt: str) -> HttpResponse:
    """A branch of my session as a comic: the node in ``leaf_id`` (default: the leaf)."""
    session = own_session(request, session_id)
    leaf_id = request.GET.get("leaf_id") or None
    if leaf_id is not None and len(leaf_id) > 64:
        raise Http404("no such comic")
    return comic_file(request, session, fmt=fmt, leaf_id=leaf_id)
