from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from jaiweb.accounts.services import account_create


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
