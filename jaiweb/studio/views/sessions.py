"""My sessions: the list, and creating, renaming and deleting one."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import RFC3986_SUBDELIMS
from django.utils.timezone import localtime
from django.utils.translation import get_language, gettext_lazy, ngettext
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from jaiweb.agent.tools.character import max_length
from jaiweb.store.errors import InvalidEntry, SessionBusy
from jaiweb.store.services import session_create, session_delete, session_rename
from jaiweb.studio.selectors.sessions_list import (
    SessionCard,
    SessionsPage,
    my_sessions,
    page_number,
)
from jaiweb.studio.views.access import own_session
from journal.cast import new_cast, starter_names, starter_of

NAME_SEPARATORS = re.compile(r"[\n,，、;；]+")


class SessionForm(forms.Form):
    title = forms.CharField(label=gettext_lazy("Title"), max_length=200, strip=True)
    characters = forms.CharField(
        label=gettext_lazy("Starting characters"), required=False, max_length=2000
    )
    starter = forms.BooleanField(required=False)

    def clean_characters(self) -> list[str]:
        """The names, one per line or separated by commas."""
        text = self.cleaned_data["characters"]
        names = [n.strip() for n in NAME_SEPARATORS.split(text) if n.strip()]
        limit = max_length("character")
        for name in names:
            if len(name) > limit:
                raise forms.ValidationError(
                    _("a character's name has 1 to %(limit)s characters") % {"limit": limit}
                )
        return list(dict.fromkeys(names))


def page_language() -> str:
    """``zh`` or ``en``: the language of the page being served."""
    return "zh" if (get_language() or "").lower().startswith("zh") else "en"


def _starter_cast() -> str:
    """The built-in starter cast as the creation form offers it, in the page's language."""
    lang = page_language()
    return ("，" if lang == "zh" else ", ").join(starter_names(lang))


@dataclass(frozen=True, slots=True)
class CardView:
    """What a session card shows of its session, as text: where its links and forms go,
    how many branches it has, and when it was last active on the studio's clock."""

    open: str
    rename: str
    delete: str
    thumbnail: str | None
    branches: str
    active: str


_MARK = "id-here"


def _path_of(name: str) -> Callable[[str], str]:
    """The path of the URL ``name`` for an id: reversed once, then filled in per id.

    A page of cards needs four paths a card, which differ only by the id; ``reverse`` for
    each was the dearest part of drawing a card."""
    head, tail = reverse(name, args=[_MARK]).split(_MARK)
    return lambda id_: f"{head}{quote(id_, safe=RFC3986_SUBDELIMS + '~:@')}{tail}"


def _shown(page: SessionsPage) -> list[tuple[SessionCard, CardView]]:
    """The page's cards, each with its text: made here once rather than by template tags
    per card, which cost most of a page of cards."""
    open_, rename, delete, image = map(
        _path_of,
        ("studio-session", "studio-session-rename", "studio-session-delete", "panel-image"),
    )
    return [
        (
            card,
            CardView(
                open_(card.session.id),
                rename(card.session.id),
                delete(card.session.id),
                image(card.thumbnail) if card.thumbnail else None,
                ngettext("%(n)s branch", "%(n)s branches", card.branches) % {"n": card.branches},
                localtime(card.session.updated_at).strftime("%Y-%m-%d %H:%M"),
            ),
        )
        for card in page.cards
    ]


def _list_context(page: SessionsPage, form: SessionForm) -> dict:
    """What the sessions list shows: the page's cards and pager, and the creation form."""
    return {"page": page, "cards": _shown(page), "form": form, "starter": _starter_cast()}


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """A page of my sessions (logged in), or what the studio is and how to get in."""
    if not request.user.is_authenticated:
        return render(request, "studio/home.html")
    page = my_sessions(owner=request.user, page=page_number(request.GET.get("page")))
    return render(request, "studio/sessions.html", _list_context(page, SessionForm()))


@login_required
@require_POST
def session_new(request: HttpRequest) -> HttpResponse:
    form = SessionForm(request.POST)
    if form.is_valid():
        # The session's language is the page's: its built-in names, states and defaults
        # are written in it, and the one cast maps the built-ins' aliases onto these names.
        lang = page_language()
        names = form.cleaned_data["characters"]
        if form.cleaned_data["starter"]:  # but those a typed name already stands for
            taken = {s.role for s in map(starter_of, names) if s}
            names = [*names, *(n for n in starter_names(lang) if starter_of(n).role not in taken)]
        state = {"characters": new_cast(names, lang), "permission_mode": "ask", "language": lang}
        try:
            session = session_create(
                owner=request.user, title=form.cleaned_data["title"], initial_app_state=state
            )
        except InvalidEntry as exc:
            form.add_error("title", str(exc))
        else:
            return redirect("studio-session", session.id)
    ctx = _list_context(my_sessions(owner=request.user), form)
    return render(request, "studio/sessions.html", ctx, status=422)


@login_required
@require_POST
def session_rename_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = own_session(request, session_id, write=True)
    try:
        session_rename(session_id=session.id, title=request.POST.get("title", ""))
    except InvalidEntry as exc:
        messages.error(request, str(exc))
    return redirect("studio-home")


@login_required
@require_http_methods(["GET", "POST"])
def session_delete_view(request: HttpRequest, session_id: str) -> HttpResponse:
    session = own_session(request, session_id, write=True)
    if request.method == "POST":
        try:
            session_delete(session_id=session.id)
        except SessionBusy:
            error = _("A run of this session is not finished; it can be deleted when it is.")
            ctx = {"session": session, "error": error}
            return render(request, "studio/session_delete.html", ctx, status=409)
        messages.info(request, _("Deleted “%(title)s”.") % {"title": session.title})
        return redirect("studio-home")
    return render(request, "studio/session_delete.html", {"session": session})
