"""The project's addresses: each app's, under one root."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("jaiweb.studio.urls")),
    path("", include("jaiweb.ops.urls")),
    path("", include("jaiweb.feed.urls")),
    path("accounts/", include("jaiweb.accounts.urls")),
    path("api/v1/", include("jaiweb.api.urls")),
    path("inbox/", include("jaiweb.inbox.urls")),
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
]
