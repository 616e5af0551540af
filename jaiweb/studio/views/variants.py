"""The strip's variant switcher: choose which variant of a panel readers see."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from jaiweb.commands.variants import variant_choose
from jaiweb.store.errors import InvalidField, StoreError
from jaiweb.studio.views.access import own_session
from jaiweb.studio.views.answers import input_refused, write_done, write_refused
from journal.errors import UnknownEntry


@login_required
@require_POST
def variant_view(request: HttpRequest, session_id: str) -> HttpResponse:
    """ "‹ 2/4 ›" on a panel: an ``app_state`` entry choosing that variant, free, undone by
    a rewind past it. An entry that is no variant set on the active branch is 404, a
    variant not drawn 422, a page behind the session 409 (with the regions as they are)."""
    session = own_session(request, session_id, write=True)
    raw = request.POST.get("variant", "")
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 2:
        return input_refused(request, session, _("Choose a variant by its number."))
    try:
        variant_choose(
            session=session,
            entry_id=request.POST.get("entry_id", ""),
            variant=int(raw),
            expected_leaf_id=request.POST.get("expected_leaf_id") or None,
        )
    except UnknownEntry:
        raise Http404("no such variant set on the active branch") from None
    except InvalidField:
        return input_refused(request, session, _("This panel has no such variant."))
    except StoreError as exc:
        return write_refused(request, session, exc)
    return write_done(request, session)
