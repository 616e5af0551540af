from django.urls import path

from jaiweb.studio import views

urlpatterns = [
    path("", views.home, name="studio-home"),
    path("panels/<str:image_id>", views.panel_image, name="panel-image"),
    path("credits/", views.credits_history, name="studio-credits"),
    path("sessions/new", views.session_new, name="studio-session-create"),
    path("sessions/<str:session_id>/", views.session_page, name="studio-session"),
    path(
        "sessions/<str:session_id>/rename", views.session_rename_view, name="studio-session-rename"
    ),
    path(
        "sessions/<str:session_id>/delete", views.session_delete_view, name="studio-session-delete"
    ),
    path("sessions/<str:session_id>/tree", views.tree_part, name="studio-tree"),
    path("sessions/<str:session_id>/strip", views.strip_part, name="studio-strip"),
    path(
        "sessions/<str:session_id>/entries/<str:entry_id>/",
        views.entry_inspect,
        name="studio-entry",
    ),
    path("sessions/<str:session_id>/prompts", views.prompt_view, name="studio-prompt"),
    path("sessions/<str:session_id>/navigate", views.navigate_view, name="studio-navigate"),
    path("sessions/<str:session_id>/stop", views.stop_view, name="studio-stop"),
    path("sessions/<str:session_id>/approvals", views.approval_view, name="studio-approval"),
    path("sessions/<str:session_id>/characters", views.character_view, name="studio-character"),
    path(
        "sessions/<str:session_id>/permission-mode",
        views.permission_mode_view,
        name="studio-permission-mode",
    ),
    path("sessions/<str:session_id>/episode.html", views.episode_export, name="studio-episode"),
    # Served by the websocket consumer (routing.py); named here so templates can link it.
    path("ws/sessions/<str:session_id>/", views.ws_placeholder, name="studio-ws"),
]
