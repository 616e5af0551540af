"""Reads behind the credits page: each movement with what it paid for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jaiweb.render.models import Image, LedgerEntry
from jaiweb.render.selectors import ledger_for
from jaiweb.store.models import ComicSession
from jaiweb.store.selectors import panel_sessions


@dataclass(frozen=True, slots=True)
class CreditRow:
    entry: LedgerEntry
    image_id: str | None = None  # the panel a charge paid for
    session_id: str | None = None  # … and the session it was drawn in
    session_title: str = ""

    @property
    def request_id(self) -> str:
        """The credit request a grant answered ("" for another movement)."""
        key = self.entry.job_key or ""
        return key.removeprefix("request:") if key.startswith("request:") else ""


def credit_rows(*, user: Any) -> list[CreditRow]:
    """The user's ledger, newest first, each charge with its panel and session."""
    ledger = ledger_for(user=user)
    keys = [e.job_key for e in ledger if e.job_key]
    images = dict(Image.objects.filter(job_id__in=keys).values_list("job_id", "id"))
    by_image = {image: key for key, image in images.items()}
    drawn_in = panel_sessions(owner=user, image_ids=list(by_image), keys=by_image)
    titles = dict(
        ComicSession.objects.filter(pk__in=set(drawn_in.values())).values_list("id", "title")
    )
    found = {image: (session_id, titles[session_id]) for image, session_id in drawn_in.items()}
    out = []
    for e in ledger:
        image = images.get(e.job_key) if e.job_key else None
        session_id, title = found.get(image, (None, "")) if image else (None, "")
        out.append(CreditRow(e, image, session_id, title))
    return out
