"""The studio's websocket address: one consumer per watched session."""

from django.urls import path

from jaiweb.studio import consumers

websocket_urlpatterns = [
    path("ws/sessions/<str:session_id>/", consumers.SessionConsumer.as_asgi()),
]
