"""/sessions/{id}/… tools on the tree: compare two branches, preview a rewind, the state at
a node, the hand edits of the state (characters, permission mode), labels and search."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from django.http import HttpRequest
from django.urls import reverse
from ninja import Router, Status
from pydantic import Field

from jaiweb.api.links import SESSION_IN_PATH, link, links
from jaiweb.api.schemas import (
    AppStateOut,
    CharacterIn,
    CherryPickIn,
    CherryPickOut,
    ComparisonOut,
    EffectsOut,
    ErrorOut,
    ForkIn,
    LabelIn,
    LabelOut,
    NotBlankText,
    PermissionModeIn,
    PromptOut,
    RegenerateIn,
    ResendIn,
    RewindPreviewOut,
    SearchHitOut,
    SessionOut,
    ShareLinkIn,
    ShareLinkMadeOut,
    ShareLinkOut,
    StateWriteOut,
)
from jaiweb.api.selectors import entries_out, session_detail
from jaiweb.commands.access import session_for
from jaiweb.commands.branches import (
    panel_cherry_pick,
    prompt_resend,
    reply_regenerate,
    session_fork,
    session_label_add,
    session_label_remove,
)
from jaiweb.commands.sessions import character_set, permission_mode_set
from jaiweb.store.comparisons import branches_compare, effects_under, rewind_preview_at
from jaiweb.store.labels import labels_of
from jaiweb.store.search import QUERY_MAX, session_search
from jaiweb.store.selectors import app_state_at
from jaiweb.store.shares import share_link_create, share_link_revoke, share_links_of
from journal.jsonvalues import Id

router = Router(tags=["branches"])

# A comparison's entries per side, by default and at most: the fold reads both whole paths,
# but encoding (and validating) thousands of entries would cost more than the fold itself.
COMPARE_ENTRIES = 100
COMPARE_ENTRIES_MAX = 1000

E404 = {401: ErrorOut, 404: ErrorOut, 422: ErrorOut}
E409 = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut, 413: ErrorOut, 422: ErrorOut}


@router.get("/sessions/{session_id}/compare", response={200: ComparisonOut, **E404})
def compare_branches(
    request: HttpRequest,
    session_id: str,
    left: Id,
    right: Id,
    limit: Annotated[int, Field(ge=0, le=COMPARE_ENTRIES_MAX)] = COMPARE_ENTRIES,
):
    """The branches ending at ``left`` and ``right`` side by side from where they part: their
    first ``limit`` entries each (``entry_count`` says how many there are), the state at each
    end and what differs, and what each spent and published."""
    session = session_for(user=request.auth, session_id=session_id)
    got = branches_compare(session=session, left_id=left, right_id=right)
    c = got.comparison

    def side(s, rows):
        return {
            "node_id": s.node_id,
            "entry_count": len(rows),
            "entries": entries_out(rows[:limit]),
            "app_state": s.state,
            "effects": asdict(s.effects),
        }

    return {
        "fork_id": c.fork_id,
        "left": side(c.left, got.left_rows),
        "right": side(c.right, got.right_rows),
        "changes": [asdict(change) for change in c.changes],
    }


@router.get(
    "/sessions/{session_id}/entries/{entry_id}/rewind-preview",
    response={200: RewindPreviewOut, **E404},
)
def preview_rewind(request: HttpRequest, session_id: str, entry_id: str):
    """What "continue from here" at ``entry_id`` would roll back (each character's state,
    the permission mode) and what it would not (credits spent, posts published)."""
    session = session_for(user=request.auth, session_id=session_id)
    preview = rewind_preview_at(session=session, target_id=entry_id)
    return {
        "target_id": preview.target_id,
        "changes": [asdict(change) for change in preview.changes],
        "story_only_changes": [asdict(change) for change in preview.story_only_changes],
        "left_behind": preview.left_behind,
        "stays": asdict(preview.stays),
        "choices": preview.choices,
        "lettering": preview.comic.panels,
        "layout": preview.comic.layout,
        "order": preview.comic.order,
    }


@router.get("/sessions/{session_id}/entries/{entry_id}/effects", response={200: EffectsOut, **E404})
def read_effects(request: HttpRequest, session_id: str, entry_id: str):
    """What the subtree under a node spent and published, every branch of it: credits
    charged, panels drawn or placed, posts published."""
    session = session_for(user=request.auth, session_id=session_id)
    return asdict(effects_under(session=session, node_id=entry_id))


@router.get("/sessions/{session_id}/state", response={200: AppStateOut, **E404})
def read_state(request: HttpRequest, session_id: str, at: Id | None = None):
    """The app state at a node (default: the leaf)."""
    session = session_for(user=request.auth, session_id=session_id)
    node = at or session.leaf_id
    return {"entry_id": node, "app_state": app_state_at(session=session, leaf_id=node)}


@router.post("/sessions/{session_id}/characters", response={200: StateWriteOut, **E409})
def edit_character(request: HttpRequest, session_id: str, body: CharacterIn):
    """Edit or add one character by hand, its look included.

    The edit is an ``app_state`` entry at the leaf. Answer 409 unless the session is idle, or
    when ``expected_leaf_id`` is not the leaf; left out, it is the leaf as it is now. Answer
    422 when ``reference_image_id`` is not one of the owner's images."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    fields = {
        k: v
        for k in ("buff", "skill", "mood", "seed", "reference_image_id")
        if (v := getattr(body, k)) is not None
    }
    state = character_set(
        session=session,
        name=body.name,
        fields=fields,
        expected_leaf_id=body.expected_leaf_id or session.leaf_id,
    )
    session.refresh_from_db(fields=["leaf_id"])
    return {"leaf_id": session.leaf_id, "app_state": state}


@router.post("/sessions/{session_id}/permission-mode", response={200: StateWriteOut, **E409})
def set_permission_mode(request: HttpRequest, session_id: str, body: PermissionModeIn):
    """Set whether the agent asks before paid tools (``ask``) or not (``auto``).

    The mode is app state, so a rewind brings the old mode back. Answer 409 unless the
    session is idle, or when ``expected_leaf_id`` is not the leaf; left out, it is the leaf
    as it is now."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    state = permission_mode_set(
        session=session, mode=body.mode, expected_leaf_id=body.expected_leaf_id or session.leaf_id
    )
    session.refresh_from_db(fields=["leaf_id"])
    return {"leaf_id": session.leaf_id, "app_state": state}


@router.get("/sessions/{session_id}/labels", response={200: list[LabelOut], **E404})
def list_labels(request: HttpRequest, session_id: str):
    """Every label and bookmark on the session's nodes, oldest first."""
    session = session_for(user=request.auth, session_id=session_id)
    return [asdict(label) for label in labels_of(session_id=session.id)]


@router.post(
    "/sessions/{session_id}/labels",
    response={201: LabelOut, **E409},
    openapi_extra=links(
        201,
        RemoveLabel=link("remove_label", label_id="$response.body#/id", **SESSION_IN_PATH),
    ),
)
def add_label(request: HttpRequest, session_id: str, body: LabelIn):
    """Label or bookmark a node (any node, on any branch; a rewind never moves it)."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    label = session_label_add(
        session=session, entry_id=body.entry_id, text=body.text, kind=body.kind
    )
    return Status(201, asdict(label))


@router.delete(
    "/sessions/{session_id}/labels/{label_id}",
    response={204: None, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut},
)
def remove_label(
    request: HttpRequest, session_id: str, label_id: Annotated[int, Field(ge=1, le=2**63 - 1)]
):
    session = session_for(user=request.auth, session_id=session_id, write=True)
    session_label_remove(session=session, label_id=label_id)
    return Status(204, None)


@router.get("/sessions/{session_id}/search", response={200: list[SearchHitOut], **E404})
def search_session(
    request: HttpRequest,
    session_id: str,
    q: Annotated[NotBlankText, Field(min_length=1, max_length=QUERY_MAX)],
):
    """The whole tree, abandoned branches too: prompts, narration, character states and
    labels, in append order; each hit names its node."""
    session = session_for(user=request.auth, session_id=session_id)
    return [asdict(hit) for hit in session_search(session=session, query=q)]


@router.post("/sessions/{session_id}/fork", response={201: SessionOut, **E409})
def fork_session(request: HttpRequest, session_id: str, body: ForkIn):
    """A new session with this one's path root → ``entry_id`` as its one branch (rewinds on
    the way left out); where it came from is in its ``origin``."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    fork = session_fork(
        session=session, user=request.auth, entry_id=body.entry_id, title=body.title
    )
    return Status(201, session_detail(session=fork))


@router.post(
    "/sessions/{session_id}/entries/{entry_id}/resend",
    response={202: PromptOut, 429: ErrorOut, **E409},
)
def resend_prompt(request: HttpRequest, session_id: str, entry_id: str, body: ResendIn):
    """Edit the prompt ``entry_id`` and send it again: a branch at its parent with the new
    text (the old branch stays). 409 unless idle, and for anything but a later prompt."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    accepted = prompt_resend(
        session=session,
        user=request.auth,
        entry_id=entry_id,
        text=body.text,
        expected_leaf_id=body.expected_leaf_id,
    )
    return Status(202, accepted)


@router.post(
    "/sessions/{session_id}/entries/{entry_id}/regenerate",
    response={202: PromptOut, 429: ErrorOut, **E409},
)
def regenerate_reply(request: HttpRequest, session_id: str, entry_id: str, body: RegenerateIn):
    """Another reply to the prompt of ``entry_id``'s turn, as a sibling branch. 409 unless
    idle."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    accepted = reply_regenerate(
        session=session,
        user=request.auth,
        entry_id=entry_id,
        expected_leaf_id=body.expected_leaf_id,
    )
    return Status(202, accepted)


@router.post(
    "/sessions/{session_id}/entries/{entry_id}/cherry-pick",
    response={200: CherryPickOut, **E409},
)
def cherry_pick_panel(request: HttpRequest, session_id: str, entry_id: str, body: CherryPickIn):
    """Put the panel ``entry_id`` (from any branch) on the active branch: never drawn or
    charged again; with ``take_state`` its state comes too. 409 unless idle, and for what
    is not a panel."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    leaf = panel_cherry_pick(
        session=session,
        entry_id=entry_id,
        expected_leaf_id=body.expected_leaf_id,
        take_state=body.take_state,
    )
    return {"leaf_id": leaf}


@router.get("/sessions/{session_id}/share-links", response={200: list[ShareLinkOut], **E404})
def list_share_links(request: HttpRequest, session_id: str):
    """The session's share links, revoked ones too (their addresses are never shown again)."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    return [asdict(share) for share in share_links_of(session_id=session.id)]


@router.post(
    "/sessions/{session_id}/share-links",
    response={201: ShareLinkMadeOut, **E409},
    openapi_extra=links(
        201,
        RevokeShareLink=link("revoke_share_link", link_id="$response.body#/id", **SESSION_IN_PATH),
    ),
)
def create_share_link(request: HttpRequest, session_id: str, body: ShareLinkIn):
    """A read-only link to the branch ending at ``leaf_id``: whoever holds it sees that
    branch's strip, and nothing else, until it is revoked."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    share, token = share_link_create(session_id=session.id, leaf_id=body.leaf_id)
    url = request.build_absolute_uri(reverse("shared-branch", args=[token]))
    return Status(201, {**asdict(share), "url": url})


@router.delete(
    "/sessions/{session_id}/share-links/{link_id}",
    response={204: None, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut},
)
def revoke_share_link(
    request: HttpRequest, session_id: str, link_id: Annotated[int, Field(ge=1, le=2**63 - 1)]
):
    """The link opens nothing from now on (404, as a link that never was)."""
    session = session_for(user=request.auth, session_id=session_id, write=True)
    share_link_revoke(session_id=session.id, link_id=link_id)
    return Status(204, None)
