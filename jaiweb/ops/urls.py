"""The addresses of health, metrics and the site's icon."""

from django.urls import path

from jaiweb.ops import views

urlpatterns = [
    path("healthz", views.healthz, name="studio-healthz"),
    path("metrics", views.metrics, name="ops-metrics"),
    path("favicon.ico", views.favicon, name="favicon"),
]
