from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("jaiweb.studio.urls")),
    path("", include("jaiweb.feed.urls")),
    path("accounts/", include("jaiweb.accounts.urls")),
    path("admin/", admin.site.urls),
]
