"""jaiweb.comic.jobs: a PDF or CBZ drawn in the background, its progress kept, its file the
same bytes as the export made in a request."""

from __future__ import annotations

import json
import time

import pytest

from jaiweb.comic import jobs
from jaiweb.comic.exports import NoSuchChapter, comic_export
from jaiweb.comic.jobs import (
    comic_job_file,
    comic_job_start,
    comic_job_status,
    comic_job_wait,
)
from journal.errors import UnknownEntry
from tests.support.comics import draw_panels

pytestmark = pytest.mark.django_db

STORY = ["猪猪侠吃下超级棒棒糖", "the pig climbs into the ring", "降龙十巴掌", "a bow", "the end"]


def finished(session, fmt: str, **kwargs):
    job = comic_job_start(session=session, leaf_id=kwargs.pop("leaf_id", None), format=fmt,
                          **kwargs)  # fmt: skip
    comic_job_wait(job.key, timeout=60)
    return comic_job_status(session=session, key=job.key)


@pytest.mark.parametrize("fmt", ["pdf", "cbz"])
def test_a_background_export_is_the_same_file_as_one_made_in_the_request(episode, fmt):
    draw_panels(episode, STORY)
    job = finished(episode, fmt)
    assert job.state == "done" and job.pages_done == job.pages == 2
    found, path = comic_job_file(session=episode, key=job.key)
    made = comic_export(session=episode, leaf_id=None, format=fmt)
    assert path.read_bytes() == made.data
    assert (found.filename, found.content_type) == (made.filename, made.content_type)


def test_starting_it_again_finds_the_same_job_and_a_later_node_is_another(episode):
    first = draw_panels(episode, STORY[:2])
    job = finished(episode, "pdf")
    again = comic_job_start(session=episode, leaf_id=first, format="pdf")
    assert again.key == job.key and again.state == "done"  # nothing drawn twice
    draw_panels(episode, STORY[2:])
    assert finished(episode, "pdf").key != job.key  # the leaf moved: another comic
    assert finished(episode, "pdf", leaf_id=first).key == job.key  # the old node's file


def test_progress_is_counted_page_by_page(episode, monkeypatch):
    draw_panels(episode, STORY)
    seen = []
    real = jobs._write_status

    def kept(job):
        seen.append((job.state, job.pages_done))
        return real(job)

    monkeypatch.setattr(jobs, "_write_status", kept)
    finished(episode, "cbz")
    assert seen == [("queued", 0), ("drawing", 0), ("drawing", 1), ("drawing", 2), ("done", 2)]


def test_a_lost_job_is_started_again(episode):
    draw_panels(episode, STORY[:1])
    job = finished(episode, "cbz")
    status = jobs._status_path(job.key)
    lost = json.loads(status.read_text()) | {"state": "drawing", "updated": time.time() - 3600}
    status.write_text(json.dumps(lost))  # a process died drawing it an hour ago
    jobs._file_path(job).unlink()
    seen = comic_job_status(session=episode, key=job.key)
    assert seen.state == "failed" and seen.error == jobs.LOST  # the page stops waiting
    assert comic_job_start(session=episode, leaf_id=None, format="cbz").state == "queued"
    comic_job_wait(job.key, timeout=60)
    assert comic_job_file(session=episode, key=job.key) is not None


def test_a_failed_drawing_says_so_and_leaves_no_file(episode, monkeypatch):
    draw_panels(episode, STORY[:1])

    def broken(*args, **kwargs):
        raise RuntimeError("a disk error")

    monkeypatch.setattr(jobs, "comic_work_write", broken)
    job = finished(episode, "pdf")
    assert job.state == "failed" and job.error == "the export failed"  # no inner detail
    assert comic_job_file(session=episode, key=job.key) is None
    assert not list(jobs._folder().glob("*.part"))


def test_another_session_or_a_made_up_key_finds_nothing(episode, alice):
    from jaiweb.store.services import session_create

    draw_panels(episode, STORY[:1])
    job = finished(episode, "pdf")
    other = session_create(owner=alice, title="another")
    assert comic_job_status(session=other, key=job.key) is None
    assert comic_job_file(session=other, key=job.key) is None
    for key in ("../" + job.key[3:], job.key.upper(), "", job.key + "0"):
        assert comic_job_status(session=episode, key=key) is None


def test_an_unknown_node_or_chapter_is_refused_before_anything_starts(episode):
    draw_panels(episode, STORY[:1])
    with pytest.raises(UnknownEntry):
        comic_job_start(session=episode, leaf_id="e_nowhere", format="pdf")
    with pytest.raises(NoSuchChapter):
        comic_job_start(session=episode, leaf_id=None, format="pdf", chapter=3)
    with pytest.raises(ValueError):
        comic_job_start(session=episode, leaf_id=None, format="png")
    assert not jobs._folder().exists() or not list(jobs._folder().iterdir())
