"""The API's mount point."""

from django.urls import path

from jaiweb.api.api import api

urlpatterns = [path("", api.urls)]
