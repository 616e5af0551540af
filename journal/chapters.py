"""Chapters: named starts on a branch, kept in the app state under ``chapters``.

A chapter starts at a node of the branch and runs to the node before the next chapter's
start (or to the end of the branch). The marks are session state (docs/ARCHITECTURE.md
§5 chapters): they are written with an ``app_state`` entry, so they survive an export and
an import, roll back with a rewind and come back with "back to where I was". Everything
here is pure: the shell passes in the path's ids and the state at its end, and the
numbering, the spans and the edits are read off them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from journal.jsonvalues import Id, Text

CHAPTERS_KEY = "chapters"  # where the marks live in the app state
TITLE_MAX = 120  # characters in a chapter's title, after trimming
CHAPTERS_MAX = 500  # marks one state may hold


class ChapterMark(BaseModel):
    """One mark as the app state keeps it: the node a chapter starts at and its title."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    entry_id: Id
    title: Text = Field(min_length=1, max_length=TITLE_MAX)

    @field_validator("title")
    @classmethod
    def _trimmed_not_blank(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("a chapter needs a title")
        return value


class ChapterMarks(BaseModel):
    """The ``chapters`` value of an app state: a list of marks, one per node."""

    marks: list[ChapterMark] = Field(max_length=CHAPTERS_MAX)

    @field_validator("marks")
    @classmethod
    def _one_per_node(cls, marks: list[ChapterMark]) -> list[ChapterMark]:
        ids = [m.entry_id for m in marks]
        if len(set(ids)) != len(ids):
            raise ValueError("a node starts at most one chapter")
        return marks


class BadChapter(ValueError):
    """A title or a list of marks that cannot be kept; the message says why."""


def title_check(title: Any) -> str:
    """The title trimmed, or ``BadChapter`` (empty, too long, U+0000, a lone surrogate)."""
    if not isinstance(title, str):
        raise BadChapter("a chapter's title is text")
    try:
        return ChapterMark(entry_id="x", title=title).title
    except ValidationError as exc:
        raise BadChapter(_first_message(exc)) from None


def marks_check(value: Any) -> list[dict]:
    """A state's ``chapters`` value when it reads as marks; ``BadChapter`` otherwise."""
    try:
        marks = ChapterMarks(marks=value).marks
    except ValidationError as exc:
        raise BadChapter(_first_message(exc)) from None
    return [m.model_dump() for m in marks]


def _first_message(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"] if p != "marks")
    message = error["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def marks_of(state: Mapping[str, Any] | None) -> list[ChapterMark]:
    """The marks a state holds, read leniently: a mark that does not read is skipped, so a
    state written by hand never breaks a page."""
    raw = (state or {}).get(CHAPTERS_KEY)
    if not isinstance(raw, list):
        return []
    marks: list[ChapterMark] = []
    seen: set[str] = set()
    for item in raw:
        try:
            mark = ChapterMark.model_validate(item)
        except ValidationError:
            continue
        if mark.entry_id not in seen:
            seen.add(mark.entry_id)
            marks.append(mark)
    return marks


@dataclass(frozen=True, slots=True)
class Chapter:
    """A chapter of a path: its number (from 1, in path order), the node it starts at, its
    title, and where it runs on the path (indexes ``start`` up to, not including, ``stop``)."""

    number: int
    entry_id: str
    title: str
    start: int
    stop: int


def chapters_on(path_ids: Sequence[str], state: Mapping[str, Any] | None) -> list[Chapter]:
    """The chapters of the path whose ids are ``path_ids`` (root first), from the marks of
    ``state`` (the app state at the path's end). A mark on a node that is not on the path
    (a state copied from another branch) is not a chapter of it."""
    return chapters_placed(
        {entry_id: i for i, entry_id in enumerate(path_ids)}, len(path_ids), state
    )


def chapters_placed(
    where: Mapping[str, int], length: int, state: Mapping[str, Any] | None
) -> list[Chapter]:
    """``chapters_on`` for a caller that knows where the marked nodes are on a path of
    ``length`` entries (``where``: an id → its index, for the ids on the path) without
    reading the whole path."""
    found = sorted((where[m.entry_id], m) for m in marks_of(state) if m.entry_id in where)
    chapters = []
    for n, (start, mark) in enumerate(found, start=1):
        stop = found[n][0] if n < len(found) else length
        chapters.append(Chapter(n, mark.entry_id, mark.title, start, stop))
    return chapters


def chapter_numbered(chapters: Sequence[Chapter], number: int) -> Chapter | None:
    """The chapter called ``number`` (from 1), or None when the path has no such chapter."""
    return chapters[number - 1] if 1 <= number <= len(chapters) else None


def state_with_chapter(state: Mapping[str, Any], entry_id: str, title: str) -> dict:
    """The state with a chapter starting at ``entry_id`` titled ``title`` (a mark already
    there is renamed); ``BadChapter`` for a title that cannot be kept."""
    title = title_check(title)
    marks = [m.model_dump() for m in marks_of(state) if m.entry_id != entry_id]
    if len(marks) >= CHAPTERS_MAX:
        raise BadChapter(f"a branch has at most {CHAPTERS_MAX} chapters")
    marks.append({"entry_id": entry_id, "title": title})
    return {**state, CHAPTERS_KEY: marks}


def state_without_chapter(state: Mapping[str, Any], entry_id: str) -> dict | None:
    """The state without the chapter at ``entry_id``; None when it has no such mark."""
    marks = marks_of(state)
    if not any(m.entry_id == entry_id for m in marks):
        return None
    return {**state, CHAPTERS_KEY: [m.model_dump() for m in marks if m.entry_id != entry_id]}
