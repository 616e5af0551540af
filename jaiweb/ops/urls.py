"""The addresses of health and metrics."""

from django.urls import path

from jaiweb.ops import views

urlpatterns = [
    path("healthz", views.healthz, name="studio-healthz"),
    path("metrics", views.metrics, name="ops-metrics"),
]
