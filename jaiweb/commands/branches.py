"""The branch tools a person uses: fork into a new session, edit and resend a prompt,
regenerate a reply, put a panel from another branch on this one (a cherry-pick), and
label a node."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import get_language

from jaiweb.commands.sessions import prompt_rate_check, runners_wake, watchers_notify
from jaiweb.store.conflicts import conflicts_retried
from jaiweb.store.errors import NotApplicable
from jaiweb.store.forks import session_fork as store_session_fork
from jaiweb.store.ids import new_id
from jaiweb.store.labels import NodeLabel, label_add, label_remove
from jaiweb.store.models import ComicSession
from jaiweb.store.selectors import app_state_at, branch_get, entry_get
from jaiweb.store.services import Accepted, entry_append, operation_accept, rewind_append
from journal.branches import cherry_pick_entries, panel_image_of
from journal.entries import BranchEntry, MessageEntry, UserMessage


def session_fork(
    *, session: ComicSession, user: Any, entry_id: str, title: str | None = None
) -> ComicSession:
    """A new session of ``user`` with this session's path root → ``entry_id``, one branch."""
    return store_session_fork(session_id=session.id, entry_id=entry_id, owner=user, title=title)


def _before(session: ComicSession, prompt: MessageEntry) -> str:
    """Where a prompt sent again goes: its parent, or, when that is a rewind's ``branch``
    entry, the node the rewind went to (so forks hang on story nodes, not on rewinds)."""
    path = branch_get(session=session, leaf_id=prompt.id)
    for entry in reversed(path[:-1]):
        if not isinstance(entry, BranchEntry):
            return entry.id
    raise NotApplicable("the first prompt cannot be sent again in this session")


def _prompt_of(session: ComicSession, entry_id: str) -> MessageEntry:
    """The user message that began the turn ``entry_id`` belongs to (it, or above it)."""
    for entry in reversed(branch_get(session=session, leaf_id=entry_id)):
        if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
            return entry
    raise NotApplicable(f"no prompt at or above {entry_id!r}")


def prompt_resend(
    *,
    session: ComicSession,
    user: Any,
    entry_id: str,
    text: str,
    expected_leaf_id: str | None = None,
) -> Accepted:
    """Edit an earlier prompt and send it again: a rewind to the prompt's parent and the
    new prompt there, in one transaction (the old branch stays, as every branch does)."""
    prompt = entry_get(session=session, entry_id=entry_id).entry
    if not (isinstance(prompt, MessageEntry) and isinstance(prompt.message, UserMessage)):
        raise NotApplicable("only a prompt can be edited and sent again")
    if prompt.parent_id is None:
        raise NotApplicable(
            "the first prompt of a session cannot be sent again in it: fork into a new "
            "session from it instead"
        )
    prompt_rate_check(user.pk)
    return _resend(session, user, _before(session, prompt), text, expected_leaf_id)


def reply_regenerate(
    *, session: ComicSession, user: Any, entry_id: str, expected_leaf_id: str | None = None
) -> Accepted:
    """Another reply to the prompt of ``entry_id``'s turn, as a sibling branch of this one."""
    prompt = _prompt_of(session, entry_id)
    if prompt.parent_id is None:
        raise NotApplicable(
            "the first prompt's reply cannot be drawn again in this session: fork into a "
            "new session from the prompt instead"
        )
    prompt_rate_check(user.pk)
    return _resend(
        session, user, _before(session, prompt), prompt.message.content, expected_leaf_id
    )


@conflicts_retried
def _resend(
    session: ComicSession, user: Any, parent_id: str, text: str, expected_leaf_id: str | None
) -> Accepted:
    with transaction.atomic():
        rewound = rewind_append(
            session_id=session.id, target_id=parent_id, expected_leaf_id=expected_leaf_id
        )
        accepted = operation_accept(
            session_id=session.id,
            text=text,
            by=f"user:{user.pk}",
            expected_leaf_id=rewound.leaf_id,
            language=get_language() or "",
        )
        runners_wake()
        watchers_notify(session.id)
    return accepted


@conflicts_retried
def panel_cherry_pick(
    *,
    session: ComicSession,
    entry_id: str,
    expected_leaf_id: str | None,
    take_state: bool = False,
) -> str:
    """Put the panel of ``entry_id`` (from any branch) on the active branch, without
    drawing or charging it again; with ``take_state``, that panel's state comes too.
    Returns the new leaf."""
    panel = entry_get(session=session, entry_id=entry_id).entry
    if panel_image_of(panel) is None:
        raise NotApplicable("only a panel can be put on another branch")
    session.refresh_from_db(fields=["leaf_id", "entry_count"])
    leaf = expected_leaf_id or session.leaf_id  # left out: the leaf as it is now
    state = app_state_at(session=session, leaf_id=entry_id) if take_state else None
    entries = cherry_pick_entries(
        panel,
        leaf_id=leaf,
        ids=(new_id("e"), new_id("e"), new_id("e")),
        now=timezone.now(),
        state=state,
    )
    with transaction.atomic():
        entry_append(session_id=session.id, entries=entries, expected_leaf_id=leaf)
        watchers_notify(session.id)
    return entries[-1].id


def session_label_add(
    *, session: ComicSession, entry_id: str, text: str, kind: str = "label"
) -> NodeLabel:
    """A label or bookmark on a node; the session's open pages redraw their tree chips."""
    with transaction.atomic():
        label = label_add(session_id=session.id, entry_id=entry_id, text=text, kind=kind)
        watchers_notify(session.id)
    return label


def session_label_remove(*, session: ComicSession, label_id: int) -> None:
    """A label or bookmark taken off; the session's open pages redraw their tree chips."""
    with transaction.atomic():
        label_remove(session_id=session.id, label_id=label_id)
        watchers_notify(session.id)
