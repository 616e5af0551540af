"""Sign-up and the API tokens page."""

from django import forms
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods, require_POST

from jaiweb.accounts.selectors import api_tokens_for
from jaiweb.accounts.services import account_create, api_token_create, api_token_revoke


class ApiTokenForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=100, strip=True)


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("studio-home")
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = account_create(
            username=form.cleaned_data["username"], password=form.cleaned_data["password1"]
        )
        login(request, user)
        return redirect("studio-home")
    status = 400 if request.method == "POST" else 200
    return render(request, "accounts/signup.html", {"form": form}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def api_tokens(request: HttpRequest) -> HttpResponse:
    """List one's API tokens; POST creates one and shows its secret this once."""
    form = ApiTokenForm(request.POST or None)
    secret = None
    status = 200
    if request.method == "POST":
        if form.is_valid():
            _, secret = api_token_create(user=request.user, name=form.cleaned_data["name"])
            form = ApiTokenForm()
        else:
            status = 400
    ctx = {"form": form, "secret": secret, "tokens": api_tokens_for(user=request.user)}
    response = render(request, "accounts/tokens.html", ctx, status=status)
    # The page may carry a secret: no cache, anywhere, may keep it.
    add_never_cache_headers(response)
    return response


@login_required
@require_POST
def api_token_revoke_view(request: HttpRequest, token_id: int) -> HttpResponse:
    if not api_token_revoke(user=request.user, token_id=token_id):
        raise Http404("no such token")
    return redirect("api_tokens")
