"""Long exports in the background: a request starts one, a thread of the web process draws
it, and its progress and file are kept in the media folder under a key of what it draws.

An export is a pure projection of (session, node, format, layout, chapter), so that tuple
(with the versions of the libraries that write the bytes) is the key: starting the same
export twice, from two tabs or two web processes, finds the one already made or being
made, and a job lost with its process is made again by the next start, giving the same
bytes. The request only reads the branch and the owner's images; the thread reads panel
files and writes the export, never the database. docs/EXPORTS.md says why it is built so.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from django.conf import settings

from jaiweb.comic.errors import ExportUnavailable
from jaiweb.comic.exports import ComicWork, comic_work, comic_work_write
from jaiweb.store.models import ComicSession

log = logging.getLogger("jaiweb.comic")

FOLDER = "comic-exports"  # under MEDIA_ROOT: each job's status (.json) and file
STALE_SECONDS = 120  # a job whose status has not moved for this long is taken as lost
KEEP_SECONDS = 24 * 3600  # finished files are swept this long after they were last touched
JOB_FORMATS = ("pdf", "cbz")
KEY_LENGTH = 32
LOST = "the export stopped before it was done: start it again"

# One export drawn at a time per process: the others wait, and the web keeps a core.
_drawer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="comic-export")
_lock = threading.Lock()
_here: dict[str, Future] = {}  # the jobs this process queued or draws, by key


@dataclass(frozen=True, slots=True)
class ExportJob:
    key: str
    session_id: str
    leaf_id: str  # the node whose branch it draws
    format: str
    state: str  # queued, drawing, done or failed
    pages_done: int
    pages: int
    filename: str
    content_type: str
    error: str = ""
    updated: float = 0.0  # seconds since the epoch when the status was written

    @property
    def finished(self) -> bool:
        return self.state in ("done", "failed")

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "updated"}


def _folder() -> Path:
    return Path(settings.MEDIA_ROOT) / FOLDER


def _versions() -> list[str]:
    """The versions of what writes an export's bytes: another version may write others."""
    import cairosvg
    import fontTools
    import fpdf
    import pikepdf
    import PIL

    return [
        PIL.__version__,
        fpdf.FPDF_VERSION,
        cairosvg.__version__,
        fontTools.version,
        pikepdf.__version__,
        pikepdf.__libqpdf_version__,
    ]


def comic_job_key(
    *,
    session: ComicSession,
    leaf_id: str | None,
    format: str,
    layout: str | None,
    chapter: int | None,
) -> str:
    """The key of an export: the same for every start of the same file."""
    what = [session.id, leaf_id or session.leaf_id, format, layout, chapter, *_versions()]
    return hashlib.sha256(json.dumps(what).encode()).hexdigest()[:KEY_LENGTH]


def _status_path(key: str) -> Path:
    return _folder() / f"{key}.json"


def _file_path(job: ExportJob) -> Path:
    return _folder() / f"{job.key}.{job.format}"


def _write_status(job: ExportJob) -> ExportJob:
    """Keeps the job's status, replacing the last one whole (a reader never sees half)."""
    job = replace(job, updated=time.time())
    path = _status_path(job.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}")
    part.write_text(json.dumps(asdict(job)), encoding="utf-8")
    os.replace(part, path)
    return job


def _read_status(key: str) -> ExportJob | None:
    try:
        return ExportJob(**json.loads(_status_path(key).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def _lost(job: ExportJob) -> bool:
    """Whether a job must be started again: it failed, its file is gone, or it is no job
    of this process and its status has not moved for a while."""
    if job.state == "failed":
        return True
    if job.state == "done":
        return not _file_path(job).is_file()
    with _lock:
        if job.key in _here:
            return False
    return time.time() - job.updated > STALE_SECONDS


def _draw(job: ExportJob, work: ComicWork) -> None:
    """Draws the export into its file (whole or not at all) and keeps its progress."""
    target = _file_path(job)
    part = target.with_name(f"{target.name}.{os.getpid()}.part")
    try:
        job = _write_status(replace(job, state="drawing"))
        with part.open("wb") as out:
            comic_work_write(work, out, done=lambda n: _write_status(replace(job, pages_done=n)))
        os.replace(part, target)
        _write_status(replace(job, state="done", pages_done=job.pages))
    except Exception as exc:
        detail = str(exc) if isinstance(exc, ExportUnavailable) else "the export failed"
        log.exception("comic export %s failed", job.key)
        part.unlink(missing_ok=True)
        _write_status(replace(job, state="failed", error=detail))
    finally:
        with _lock:
            _here.pop(job.key, None)


def _sweep(now: float) -> None:
    """Removes exports and statuses nobody touched for a day."""
    for path in _folder().glob("*"):
        try:
            if now - path.stat().st_mtime > KEEP_SECONDS:
                path.unlink()
        except OSError:
            continue


def comic_job_start(
    *,
    session: ComicSession,
    leaf_id: str | None,
    format: str,
    layout: str | None = None,
    chapter: int | None = None,
) -> ExportJob:
    """Starts drawing a PDF or CBZ of root → ``leaf_id`` in the background, unless the same
    export is made or being made, and says where it is. Refused as ``comic_export`` refuses
    (an unknown node or chapter, no font), before anything is started."""
    if format not in JOB_FORMATS:
        raise ValueError(f"format must be one of {', '.join(JOB_FORMATS)}")
    key = comic_job_key(
        session=session, leaf_id=leaf_id, format=format, layout=layout, chapter=chapter
    )
    known = _read_status(key)
    if known is not None and not _lost(known):
        return known
    work = comic_work(
        session=session, leaf_id=leaf_id, format=format, layout=layout, chapter=chapter
    )
    pages = len(work.pages)
    job = ExportJob(
        key, session.id, work.meta.leaf_id, format, "queued", 0, pages, work.filename,
        work.content_type,
    )  # fmt: skip
    with _lock:
        if key in _here:  # another request of this process started it meanwhile
            return _read_status(key) or job
        _folder().mkdir(parents=True, exist_ok=True)
        _sweep(time.time())
        job = _write_status(job)
        _here[key] = _drawer.submit(_draw, job, work)
    return job


def comic_job_status(*, session: ComicSession, key: str) -> ExportJob | None:
    """The job of this session under ``key``; None when there is none. A job lost with
    its process says it failed, so the page stops waiting and a new start makes it."""
    if len(key) != KEY_LENGTH or not all(c in "0123456789abcdef" for c in key):
        return None
    job = _read_status(key)
    if job is None or job.session_id != session.id:
        return None
    if not job.finished and _lost(job):
        return replace(job, state="failed", error=LOST)
    return job


def comic_job_file(*, session: ComicSession, key: str) -> tuple[ExportJob, Path] | None:
    """The finished job of this session under ``key`` and its file; None when it is not
    there (unknown, not finished, failed or swept)."""
    job = comic_job_status(session=session, key=key)
    if job is None or job.state != "done" or not _file_path(job).is_file():
        return None
    return job, _file_path(job)


def comic_job_wait(key: str, timeout: float) -> None:
    """Waits until this process has drawn the job under ``key`` (tests and benches)."""
    with _lock:
        future = _here.get(key)
    if future is not None:
        future.result(timeout=timeout)
