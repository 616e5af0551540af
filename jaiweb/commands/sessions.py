"""The commands a person gives a session: the writes behind the page, the API and the socket.

Each is the store's service plus what a user-facing request needs around it: the prompt
rate limit, waking this process's runner, and telling the session's watchers — after the
commit, so no one ever sees a state that was rolled back.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Literal

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import get_language
from pydantic import ValidationError

from jaiweb.agent.runner import wake_local_runners
from jaiweb.agent.state import AppState, Character, UnreadableAppState
from jaiweb.agent.tools.character import CharacterStateArgs
from jaiweb.commands import limits
from jaiweb.commands.inbox import inbox_resolve
from jaiweb.live.push import group_name, group_send_nowait
from jaiweb.live.versions import facts_bump
from jaiweb.render.selectors import image_owned
from jaiweb.store.conflicts import conflicts_retried
from jaiweb.store.errors import (
    ImageNotYours,
    InvalidEntry,
    NothingToGoBackTo,
    OperationStateConflict,
    PromptRateLimited,
    SessionBusy,
    SessionParked,
    StaleLeaf,
)
from jaiweb.store.ids import new_id
from jaiweb.store.models import ComicSession, Operation
from jaiweb.store.rows import index_of
from jaiweb.store.selectors import (
    app_state_at,
    branch_rows,
    chapters_at,
    entry_exists,
    unfinished_operation,
    where_i_was_of,
)
from jaiweb.store.services import (
    Accepted,
    Rewind,
    entry_append,
    operation_accept,
    operation_approval_decide,
    operation_stop_request,
    rewind_append,
)
from jaiweb.store.wakeups import work_announce
from journal.appstate import LOOK_FIELDS, describe
from journal.cast import DEFAULT_STATE, Ambiguous, Cast
from journal.chapters import (
    BadChapter,
    Chapter,
    state_with_chapter,
    state_without_chapter,
    title_check,
)
from journal.entries import AppStateEntry
from journal.errors import UnknownEntry

log = logging.getLogger(__name__)


def watchers_notify(session_id: str, event: dict[str, Any] | None = None) -> None:
    """After the commit, tell the session's watchers to catch up from the journal.

    Unnumbered events mean "re-read": the consumer re-renders from the journal, which is
    why a dropped or reordered one costs nothing. The bump of the session's counts rides
    with it (every kind: a command may change anything the regions show); in the on-commit
    callback, so a rolled-back command bumps nothing.
    """
    message = {"type": "session.event", "event": event or {"type": "journal_changed"}}

    def send() -> None:
        try:
            change = facts_bump(session_id=session_id, facts=["session"])
            group_send_nowait(group_name(session_id), {**message, "change": change})
        except Exception:  # a watcher's socket must never fail a request
            log.exception("could not notify %s", session_id)

    transaction.on_commit(send)


def runners_wake() -> None:
    """When the transaction commits: this process's runners now, and every other
    process's through the database (PostgreSQL), instead of at their next poll."""
    work_announce()
    transaction.on_commit(wake_local_runners)


def prompt_rate_check(user_id: Any, now: float | None = None) -> None:
    """Count a prompt of the user's, and raise ``PromptRateLimited`` past the minute's
    limit. ``now`` defaults to the limits' clock (``limits.clock``)."""
    now = limits.clock() if now is None else now
    limit = settings.JAIWEB_PROMPTS_PER_MINUTE
    if limits.minute_count(f"jaiweb:prompts:{user_id}", now) > limit:
        raise PromptRateLimited(limit, retry_after=limits.seconds_left_in_minute(now))


def prompt_submit(
    *,
    session: ComicSession,
    user: Any,
    text: str,
    expected_leaf_id: str | None = None,
    language: str | None = None,
    framing: int = 0,
) -> Accepted:
    """A prompt from the session's owner: a new run on an idle session, steering otherwise;
    ``StaleLeaf`` when the session is idle and no longer at the leaf the sender saw.
    ``framing``: characters the studio wrapped around the typed text (operation_accept)."""
    prompt_rate_check(user.pk)
    return _prompt_accept(
        session, user, text, expected_leaf_id, language or get_language(), framing
    )


@conflicts_retried
def _prompt_accept(session, user, text, expected_leaf_id, language, framing=0) -> Accepted:
    with transaction.atomic():
        accepted = operation_accept(
            session_id=session.id,
            text=text,
            by=f"user:{user.pk}",
            expected_leaf_id=expected_leaf_id,
            language=language or "",
            framing=framing,
        )
        runners_wake()
        watchers_notify(session.id)
    return accepted


@conflicts_retried
def session_rewind(
    *,
    session: ComicSession,
    entry_id: str,
    expected_leaf_id: str | None = None,
    keep_characters: bool = False,
) -> Rewind:
    """Continue from any node: a branch entry; refused unless idle or when the leaf is stale.

    ``keep_characters``: "story only" — the characters the leaf has now are written back
    after the rewind, in the same transaction (``rewind_append``)."""
    with transaction.atomic():
        nav = rewind_append(
            session_id=session.id,
            target_id=entry_id,
            expected_leaf_id=expected_leaf_id,
            keep_characters=keep_characters,
        )
        watchers_notify(session.id)
    return nav


def session_back(*, session: ComicSession, expected_leaf_id: str | None = None) -> Rewind:
    """Go "back to where I was": rewind to the leaf the latest rewind on the active path left.

    That leaf is the ``from_id`` of the rewind's ``branch`` entry. Raise ``NothingToGoBackTo``
    when the path has no rewind. Otherwise the refusals are those of any rewind: busy, parked,
    or a stale leaf."""
    session.refresh_from_db(fields=["leaf_id", "entry_count"])
    if expected_leaf_id is not None and expected_leaf_id != session.leaf_id:
        raise StaleLeaf(session.id, expected_leaf_id, session.leaf_id)
    target = where_i_was_of(branch_rows(session=session, lazy=True))
    if target is None:
        raise NothingToGoBackTo(session.id)
    return session_rewind(session=session, entry_id=target, expected_leaf_id=session.leaf_id)


# --- chapters (journal/chapters.py) ------------------------------------------------------


def chapter_set(
    *,
    session: ComicSession,
    entry_id: str,
    title: str,
    expected_leaf_id: str | None,
    now: datetime | None = None,
) -> list[Chapter]:
    """Mark a node of the active branch as the start of a chapter titled ``title``.

    When the node starts a chapter already, this renames it. The mark is an ``app_state`` entry
    at the leaf, so it is session state. Raise ``InvalidEntry`` for a bad title or a node off
    the active branch, and ``UnknownEntry`` for an unknown node; nothing is written then."""
    try:
        title = title_check(title)
    except BadChapter as exc:
        raise InvalidEntry(f"title: {exc}") from None
    state = _state_now(session, expected_leaf_id)
    rows = branch_rows(session=session, lazy=True)
    if index_of(rows, entry_id) is None:
        if not entry_exists(session=session, entry_id=entry_id):
            raise UnknownEntry(entry_id)
        raise InvalidEntry("a chapter starts at a node of the active branch")
    try:
        value = state_with_chapter(state.as_json(), entry_id, title)
    except BadChapter as exc:
        raise InvalidEntry(str(exc)) from None
    _state_append(session, value, expected_leaf_id, now or timezone.now())
    session.refresh_from_db(fields=["leaf_id", "entry_count"])
    return chapters_at(session=session)


def chapter_clear(
    *,
    session: ComicSession,
    entry_id: str,
    expected_leaf_id: str | None,
    now: datetime | None = None,
) -> list[Chapter]:
    """Unmark a chapter's start: an ``app_state`` entry without it. ``UnknownEntry`` when
    the leaf's state has no chapter there (nothing is written)."""
    state = _state_now(session, expected_leaf_id)
    value = state_without_chapter(state.as_json(), entry_id)
    if value is None:
        raise UnknownEntry(entry_id)
    _state_append(session, value, expected_leaf_id, now or timezone.now())
    session.refresh_from_db(fields=["leaf_id", "entry_count"])
    return chapters_at(session=session)


def session_stop(*, session: ComicSession, user: Any) -> str:
    """Ask the running operation to stop; idle and parked sessions have nothing to stop."""
    op = unfinished_operation(session=session)
    if op is None:
        raise OperationStateConflict("nothing is running in this session")
    if op.is_parked:
        raise SessionParked(session.id, op.id)
    _stop_request(op, user)
    return op.id


@conflicts_retried
def _stop_request(op: Operation, user: Any) -> None:
    with transaction.atomic():
        operation_stop_request(operation_id=op.id, by=f"user:{user.pk}")
        runners_wake()  # a run waiting for an approval holds no runner: one must come
        watchers_notify(op.session_id)


@conflicts_retried
def approval_decide(
    *,
    operation: Operation,
    tool_call_id: str,
    decision: Literal["approved", "denied"],
    user: Any,
    auto_from_now: bool = False,
) -> None:
    with transaction.atomic():
        operation_approval_decide(
            operation_id=operation.id,
            tool_call_id=tool_call_id,
            decision=decision,
            by=f"user:{user.pk}",
            auto_from_now=auto_from_now,
        )
        runners_wake()  # the run was handed back while it waited for this decision
        watchers_notify(operation.session_id)


@conflicts_retried
def inbox_call_resolve(
    *,
    user: Any,
    operation: Operation,
    tool_call_id: str,
    resolution: str,
    reason: str,
    result: dict[str, Any] | None = None,
) -> None:
    """An admin's resolution of a parked call; then the run goes on and its owner sees it."""
    with transaction.atomic():
        inbox_resolve(
            user=user,
            operation_id=operation.id,
            tool_call_id=tool_call_id,
            resolution=resolution,
            reason=reason,
            result=result,
        )
        runners_wake()
        watchers_notify(operation.session_id)


def _state_now(session: ComicSession, expected_leaf_id: str | None) -> AppState:
    """The state to edit: the leaf's, when the session is idle and the caller saw that leaf."""
    session.refresh_from_db(fields=["leaf_id", "entry_count"])
    op = unfinished_operation(session=session)
    if op is not None:
        if op.is_parked:
            raise SessionParked(session.id, op.id)
        raise SessionBusy(session.id, op.id, parked=False)
    if expected_leaf_id != session.leaf_id:
        raise StaleLeaf(session.id, expected_leaf_id, session.leaf_id)
    try:
        return AppState.of(app_state_at(session=session))
    except UnreadableAppState as exc:  # a row from before states were checked
        raise InvalidEntry(f"the session's app state cannot be read: {exc}") from None


@conflicts_retried
def _state_append(
    session: ComicSession, state: dict, expected_leaf_id: str | None, now: datetime
) -> dict:
    # The append's own statement checks the leaf and idleness again, against races.
    entry = AppStateEntry(id=new_id("e"), parent_id=expected_leaf_id, timestamp=now, value=state)
    with transaction.atomic():
        entry_append(session_id=session.id, entries=[entry], expected_leaf_id=expected_leaf_id)
        watchers_notify(session.id)
    return state


def state_to_edit(*, session: ComicSession, expected_leaf_id: str | None) -> AppState:
    """The app state a hand edit starts from: the leaf's, when the session is idle and the
    caller saw that leaf (``SessionBusy``, ``SessionParked``, ``StaleLeaf`` otherwise)."""
    return _state_now(session, expected_leaf_id)


def state_edit_append(
    *, session: ComicSession, state: dict, expected_leaf_id: str | None, now: datetime | None = None
) -> dict:
    """Append a hand-edited app state at the leaf the caller saw, and tell the watchers."""
    return _state_append(session, state, expected_leaf_id, now or timezone.now())


def character_set(
    *,
    session: ComicSession,
    name: str,
    fields: dict[str, Any],
    expected_leaf_id: str | None,
    now: datetime | None = None,
) -> dict:
    """Edit (or add) one character by hand: an ``app_state`` entry at the leaf. The name
    is resolved by the session's one cast (an alias edits the character it stands for).

    The limits of buff, skill and mood are the ``set_character_state`` tool's
    (``CharacterStateArgs``): what a person may type is what the agent may write. The look
    (``seed``, ``reference_image_id``) is the app state's own; a reference must be one of
    the session owner's images (``ImageNotYours`` otherwise, and nothing is written)."""
    look = {k: fields[k] for k in LOOK_FIELDS if fields.get(k) is not None}
    texts = {k: v for k, v in fields.items() if k not in LOOK_FIELDS}
    try:
        args = CharacterStateArgs.model_validate({"character": name.strip(), **texts})
        Character.model_validate(look)
    except ValidationError as exc:
        raise InvalidEntry(describe(exc)) from None
    image = look.get("reference_image_id")
    if image is not None and not image_owned(image_id=image, owner_id=session.owner_id):
        raise ImageNotYours("reference_image_id", image)
    fields = {**args.model_dump(exclude={"character"}, exclude_none=True), **look}
    state = _state_now(session, expected_leaf_id)
    language = getattr(state, "language", None)
    try:  # the one cast: 猪猪侠 typed in a session with "Pig-Man" edits Pig-Man
        cast = Cast.of(state.as_json()["characters"], "en" if language == "en" else "zh")
        name = cast.resolve(args.character) or args.character
    except Ambiguous as exc:
        raise InvalidEntry(f"character: {exc}; name the character") from None
    fresh = Character(**DEFAULT_STATE["en"]) if language == "en" else Character()
    current = state.characters.get(name, fresh).model_dump(mode="json")
    state.characters[name] = Character.model_validate({**current, **fields})
    return _state_append(session, state.as_json(), expected_leaf_id, now or timezone.now())


def permission_mode_set(
    *,
    session: ComicSession,
    mode: Literal["ask", "auto"],
    expected_leaf_id: str | None,
    now: datetime | None = None,
) -> dict:
    """Ask before paid tools, or not: app state, so a rewind brings the old mode back."""
    if mode not in ("ask", "auto"):
        raise InvalidEntry("the permission mode is 'ask' or 'auto'")
    state = _state_now(session, expected_leaf_id)
    state.permission_mode = mode
    return _state_append(session, state.as_json(), expected_leaf_id, now or timezone.now())
