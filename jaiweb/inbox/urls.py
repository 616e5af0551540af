"""The recovery inbox's addresses."""

from django.urls import path

from jaiweb.inbox import views

urlpatterns = [
    path("", views.page, name="inbox"),
    path("list", views.item_list, name="inbox-list"),
    path("count", views.count, name="inbox-count"),
    path("credits/<int:request_id>", views.credits_decide, name="inbox-credits"),
    path("<str:operation_id>/<path:tool_call_id>", views.resolve, name="inbox-resolve"),
]
