from django.urls import path

from jaiweb.studio import views

urlpatterns = [
    path("", views.home, name="studio-home"),
    path("healthz", views.healthz, name="studio-healthz"),
]
