from django.urls import path

from jaiweb.studio import views

urlpatterns = [
    path("panels/<str:image_id>", views.panel_image, name="panel-image"),
    path("", views.home, name="studio-home"),
    path("healthz", views.healthz, name="studio-healthz"),
]
