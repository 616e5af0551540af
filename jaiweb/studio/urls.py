"""The studio's addresses: my sessions, one session's page, its parts and writes."""

from django.urls import path

from jaiweb.studio.views import (
    about,
    branch_writes,
    compare,
    files,
    lettering,
    pages,
    reading,
    sessions,
    share_links,
    shared,
    transfer,
    tree_tools,
    variants,
    writes,
)
from jaiweb.studio.views import timeline as timeline_views

urlpatterns = [
    path("", sessions.home, name="studio-home"),
    path("panels/<str:image_id>", files.panel_image, name="panel-image"),
    path("credits/", pages.credits_history, name="studio-credits"),
    path("about/", about.about, name="studio-about"),
    path("credits/ask", pages.credits_ask, name="studio-credits-ask"),
    path("s/<str:token>/", shared.shared_branch, name="shared-branch"),
    path("s/<str:token>/panels/<str:ref>", shared.shared_panel, name="shared-panel"),
    path("s/<str:token>/comic.<str:fmt>", shared.shared_comic, name="shared-comic"),
    path("s/<str:token>/comic.<str:fmt>/job", shared.shared_comic_job, name="shared-comic-job"),
    path(
        "s/<str:token>/comic-jobs/<str:key>",
        shared.shared_comic_job_status,
        name="shared-comic-job-status",
    ),
    path(
        "s/<str:token>/comic-jobs/<str:key>/file",
        shared.shared_comic_job_file,
        name="shared-comic-job-file",
    ),
    path("sessions/new", sessions.session_new, name="studio-session-create"),
    path("sessions/import", transfer.session_import_view, name="studio-session-import"),
    path("sessions/<str:session_id>/", pages.session_page, name="studio-session"),
    path(
        "sessions/<str:session_id>/rename",
        sessions.session_rename_view,
        name="studio-session-rename",
    ),
    path(
        "sessions/<str:session_id>/delete",
        sessions.session_delete_view,
        name="studio-session-delete",
    ),
    path("sessions/<str:session_id>/tree", pages.tree_part, name="studio-tree"),
    path(
        "sessions/<str:session_id>/timeline", timeline_views.timeline_page, name="studio-timeline"
    ),
    path("sessions/<str:session_id>/strip", pages.strip_part, name="studio-strip"),
    path("sessions/<str:session_id>/read", pages.read_view, name="studio-read"),
    path("sessions/<str:session_id>/tree/spent", tree_tools.tree_spent, name="studio-tree-spent"),
    path(
        "sessions/<str:session_id>/tree/search", tree_tools.tree_search, name="studio-tree-search"
    ),
    path("sessions/<str:session_id>/tree/jump", tree_tools.tree_jump, name="studio-tree-jump"),
    path(
        "sessions/<str:session_id>/entries/<str:entry_id>/labels",
        tree_tools.node_labels,
        name="studio-node-labels",
    ),
    path(
        "sessions/<str:session_id>/entries/<str:entry_id>/labels/add",
        tree_tools.node_label_add,
        name="studio-node-label-add",
    ),
    path(
        "sessions/<str:session_id>/entries/<str:entry_id>/labels/<int:label_id>/remove",
        tree_tools.node_label_remove,
        name="studio-node-label-remove",
    ),
    path(
        "sessions/<str:session_id>/entries/<str:entry_id>/",
        pages.entry_inspect,
        name="studio-entry",
    ),
    path(
        "sessions/<str:session_id>/entries/<str:entry_id>/fork",
        branch_writes.fork_view,
        name="studio-fork",
    ),
    path(
        "sessions/<str:session_id>/entries/<str:entry_id>/regenerate",
        branch_writes.regenerate_view,
        name="studio-regenerate",
    ),
    path(
        "sessions/<str:session_id>/entries/<str:entry_id>/resend",
        branch_writes.resend_view,
        name="studio-resend",
    ),
    path(
        "sessions/<str:session_id>/entries/<str:entry_id>/cherry-pick",
        branch_writes.cherry_pick_view,
        name="studio-cherry-pick",
    ),
    path("sessions/<str:session_id>/prompts", writes.prompt_view, name="studio-prompt"),
    path("sessions/<str:session_id>/variant", variants.variant_view, name="studio-variant"),
    path("sessions/<str:session_id>/rewind", writes.rewind_view, name="studio-rewind"),
    path("sessions/<str:session_id>/back", reading.back_view, name="studio-back"),
    path(
        "sessions/<str:session_id>/back/preview",
        reading.back_preview_view,
        name="studio-back-preview",
    ),
    path("sessions/<str:session_id>/chapters", reading.chapter_view, name="studio-chapter"),
    path("sessions/<str:session_id>/reading", reading.reading_view, name="studio-reading"),
    path(
        "sessions/<str:session_id>/tree/unread-next",
        reading.unread_next_view,
        name="studio-unread-next",
    ),
    path("sessions/<str:session_id>/stop", writes.stop_view, name="studio-stop"),
    path("sessions/<str:session_id>/approvals", writes.approval_view, name="studio-approval"),
    path("sessions/<str:session_id>/characters", writes.character_view, name="studio-character"),
    path(
        "sessions/<str:session_id>/characters/look",
        writes.character_look_view,
        name="studio-character-look",
    ),
    path(
        "sessions/<str:session_id>/permission-mode",
        writes.permission_mode_view,
        name="studio-permission-mode",
    ),
    path(
        "sessions/<str:session_id>/panels/<str:entry_id>/lettering",
        lettering.lettering_view,
        name="studio-lettering",
    ),
    path(
        "sessions/<str:session_id>/page-layout",
        lettering.page_layout_view,
        name="studio-page-layout",
    ),
    path(
        "sessions/<str:session_id>/page-order",
        lettering.panel_move_view,
        name="studio-page-order",
    ),
    path("sessions/<str:session_id>/episode.html", files.episode_export, name="studio-episode"),
    path(
        "sessions/<str:session_id>/comic.<str:fmt>",
        files.comic_export_view,
        name="studio-comic",
    ),
    path(
        "sessions/<str:session_id>/comic.<str:fmt>/job",
        files.comic_job_view,
        name="studio-comic-job",
    ),
    path(
        "sessions/<str:session_id>/comic-jobs/<str:key>",
        files.comic_job_status_view,
        name="studio-comic-job-status",
    ),
    path(
        "sessions/<str:session_id>/comic-jobs/<str:key>/file",
        files.comic_job_file_view,
        name="studio-comic-job-file",
    ),
    path(
        "sessions/<str:session_id>/session.jsonl",
        transfer.session_export_view,
        name="studio-session-export",
    ),
    path("sessions/<str:session_id>/compare", compare.compare_page, name="studio-compare"),
    path(
        "sessions/<str:session_id>/share-links",
        share_links.share_links_view,
        name="studio-share-links",
    ),
    path(
        "sessions/<str:session_id>/share-links/new",
        share_links.share_link_create_view,
        name="studio-share-create",
    ),
    path(
        "sessions/<str:session_id>/share-links/<int:link_id>/revoke",
        share_links.share_link_revoke_view,
        name="studio-share-revoke",
    ),
    # Served by the websocket consumer (routing.py); named here so templates can link it.
    path("ws/sessions/<str:session_id>/", pages.ws_placeholder, name="studio-ws"),
]
