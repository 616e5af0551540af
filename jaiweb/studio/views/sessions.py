"""My sessions: the list, and creating, renaming and deleting one."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from jaiweb.agent.tools.character import max_length
from jaiweb.store.errors import InvalidEntry, SessionBusy
from jaiweb.store.services import session_create, session_delete, session_rename
from jaiweb.studio.selectors import my_sessions
from jaiweb.studio.views.access import own_session


class SessionForm(forms.Form):
    title = forms.CharField(label=gettext_lazy("Title"), max_length=200, strip=True)
    characters = forms.CharField(
        label=gettext_lazy("Starting characters"), required=False, max_length=2000
    )

    def clean_characters(self) -> list[str]:
        names = [n.strip() for n in self.cleaned_data["characters"].splitlines() if n.strip()]
        limit = max_length("character")
        for name in names:
            if len(name) > limit:
                raise forms.ValidationError(
                    _("a character's name has 1 to %(limit)s characters") % {"limit": limit}
                )
        return list(dict.fromkeys(names))


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """My sessions (logged in), or what the studio is and how to get in."""
    if not request.user.is_authenticated:
        return render(request, "studio/home.html")
    ctx = {"cards": my_sessions(owner=request.user), "form": SessionForm()}
    return render(request, "studio/sessions.html", ctx)


@login_required
@require_POST
def session_new(request: HttpRequest) -> HttpResponse:
    form = SessionForm(request.POST)
    if form.is_valid():
        names = form.cleaned_data["characters"]
        state = {
            "characters": {n: {"buff": "无", "skill": "无", "mood": "平静"} for n in names},
            "permission_mode": "ask",
        }
        try:
            session = session_create(
                owner=request.user, title=form.cleaned_data["title"], initial_app_state=state
            )
        except InvalidEntry as exc:
            form.add_error("title", str(exc))
        else:
            return redirect("studio-session", session.id)
    ctx = {"cards": my_sessions(owner=request.user), "form": form}
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
