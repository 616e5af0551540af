"""The feed's addresses."""

from django.urls import path

from jaiweb.feed import views

urlpatterns = [
    path("feed/", views.feed, name="feed"),
    path("feed/webhook", views.webhook, name="feed-webhook"),
]
