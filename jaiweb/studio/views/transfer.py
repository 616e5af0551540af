"""Files of a whole session: download one as a bundle, upload one as a new session.

The download is ``export_session --images`` (docs/BUNDLES.md) for whoever may read the
session. The upload page takes any file ``import_session`` takes — jaiweb's own, a pi
session, a Claude Code transcript — up to ``JAIWEB_MAX_BUNDLE_BYTES``: a new session of
the uploader's, or the refusal naming the line of the first problem, with nothing written.
"""

from __future__ import annotations

import io
from itertools import chain

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods, require_safe

from jaiweb.store.transfer import (
    IMPORTED_TITLE,
    BundleTooLarge,
    ImportConflict,
    ImportRefused,
    session_export,
    session_import,
)
from jaiweb.studio.views.access import own_session

# A form's boundaries and its other fields, around the file itself.
FORM_ROOM = 64 * 1024


@login_required
@require_safe
def session_export_view(request: HttpRequest, session_id: str) -> StreamingHttpResponse:
    """The session as a session file; ``?images=1``: a bundle, with its panel images."""
    session = own_session(request, session_id)
    images = request.GET.get("images") in ("1", "true", "yes")
    lines = session_export(session=session, images=images)
    first = next(lines)  # the header now: a session deleted meanwhile is a 404
    response = StreamingHttpResponse(
        (line + "\n" for line in chain([first], lines)),
        content_type="application/jsonl; charset=utf-8",
    )
    name = f"{session.id}.bundle.jsonl" if images else f"{session.id}.jsonl"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _page(request: HttpRequest, *, error: str = "", line: int | None = None, status: int = 200):
    ctx = {"error": error, "line": line, "limit": settings.JAIWEB_MAX_BUNDLE_BYTES}
    return render(request, "studio/import.html", ctx, status=status)


def _too_large(request: HttpRequest) -> bool:
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return False
    return length > settings.JAIWEB_MAX_BUNDLE_BYTES + FORM_ROOM


def _limit_text() -> str:
    return BundleTooLarge(settings.JAIWEB_MAX_BUNDLE_BYTES).user_message()


@csrf_exempt  # the size is checked before the form is read; the CSRF check comes right after
@login_required
@require_http_methods(["GET", "POST"])
def session_import_view(request: HttpRequest) -> HttpResponse:
    if request.method == "POST" and _too_large(request):
        return _page(request, error=_limit_text(), status=413)
    return _import(request)


@csrf_protect
def _import(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _page(request)
    upload = request.FILES.get("file")
    if upload is None:
        return _page(request, error=_("Choose a session file to import."), status=422)
    if upload.size > settings.JAIWEB_MAX_BUNDLE_BYTES:
        return _page(request, error=_limit_text(), status=413)
    try:
        # Lines end at "\n" only, as for the command and the API: the same line numbers.
        session = session_import(
            owner=request.user, lines=io.BytesIO(upload.read()), title_format=str(IMPORTED_TITLE)
        )
    except ImportRefused as exc:
        return _page(request, error=exc.user_message(), line=exc.line_no, status=422)
    except (BundleTooLarge, ImportConflict) as exc:
        return _page(request, error=exc.user_message(), status=exc.http_status)
    return redirect("studio-session", session.id)
