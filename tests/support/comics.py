"""Sessions with drawn panels, for the comic export tests (tests/comic, tests/api,
tests/studio): each ``/draw`` prompt run to its end by the offline director."""

from __future__ import annotations

import io
import zipfile
from xml.etree import ElementTree

from jaiweb.render.models import Wallet
from jaiweb.store.services import operation_accept
from tests.support.runs import run_pending


def draw_panels(session, texts: list[str]) -> str:
    """One panel per text, drawn on the session's leaf; the new leaf (credits topped up so
    that any number of panels can be drawn)."""
    Wallet.objects.filter(user_id=session.owner_id).update(balance=10_000)
    for text in texts:
        operation_accept(session_id=session.id, text=f"/draw {text}")
        run_pending()
    session.refresh_from_db()
    return session.leaf_id


def cbz_contents(data: bytes) -> tuple[list[str], ElementTree.Element]:
    """The archive's entry names, in order, and its parsed ComicInfo.xml."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        info = ElementTree.fromstring(archive.read("ComicInfo.xml"))
    return names, info
